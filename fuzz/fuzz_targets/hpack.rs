//! The HPACK decoder (through the request checks of RFC 9113 §8) on a
//! sequence of arbitrary header blocks sharing one dynamic table, as on one
//! connection: never panics, and a block it accepts is a request within
//! the limits: a method, a non-empty path no longer than the limit, values
//! without CR, LF or NUL.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_http::h2::hpack::{DecodeError, DecodeLimits, Decoder, Fields};

fuzz_target!(|data: &[u8]| {
    let limits = DecodeLimits {
        max_list_size: 4096,
        max_path: 256,
    };
    let mut decoder = Decoder::new(4096);
    let mut fields = Fields::default();
    // Blocks are separated by 0xff bytes, so one input can hold several
    // blocks and exercise the table they share.
    for block in data.split(|&b| b == 0xff).filter(|b| !b.is_empty()) {
        match decoder.decode(block, &limits, &mut fields) {
            Ok(()) => {
                let head = fields.head();
                assert!(!head.raw_method.is_empty());
                if head.raw_method != b"CONNECT" {
                    assert!(!head.raw_target.is_empty());
                }
                assert!(head.raw_target.len() <= limits.max_path);
                for value in [head.raw_target, head.host.unwrap_or_default()] {
                    assert!(!value.iter().any(|b| matches!(b, 0 | b'\r' | b'\n')));
                }
            }
            // The table is lost: the connection would end here.
            Err(DecodeError::Compression) => return,
            Err(_) => {}
        }
    }
});
