//! Content-coding negotiation: the choice is always one of the codings on
//! offer, and a field that names none of them never yields an encoding.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_http::encoding::{self, Choice, Coding};

fuzz_target!(|input: (u8, &[u8])| {
    let (mask, field) = input;
    let offered: Vec<Coding> = Coding::ALL
        .into_iter()
        .enumerate()
        .filter(|(i, _)| mask & (1 << i) != 0)
        .map(|(_, c)| c)
        .collect();
    match encoding::choose(Some(field), &offered) {
        Choice::Encoded(c) => assert!(offered.contains(&c), "{c:?} not offered"),
        Choice::Identity | Choice::NotAcceptable => {}
    }
    // Without the field the client has not said it decodes anything.
    assert_eq!(encoding::choose(None, &offered), Choice::Identity);
});
