//! One HTTP/2 connection's state machine on arbitrary frames after a valid
//! preface: whatever the client sends, the connection never panics, never
//! claims more input than it was given, keeps its concurrency limit, and
//! every byte it queues to send is a well-formed frame. Requests are
//! answered (their streams ended) or left open as the input's own bytes
//! decide, so both paths are explored.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_http::h2::frame::{self, Head};
use tachyon_http::h2::hpack::Fields;
use tachyon_http::h2::{Connection, Event, Limits, PREFACE};

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_streams: 4,
        reset_budget: 20,
        control_budget: 50,
        ..Limits::default()
    };
    let mut conn = Connection::new(limits);
    let mut fields = Fields::default();
    let mut input = PREFACE.to_vec();
    frame::write_settings(&mut input, &[]);
    input.extend_from_slice(data);
    let mut pos = 0;
    let mut failed = None;
    // Every event consumes at least one frame: the loop ends.
    loop {
        match conn.receive(&input[pos..], &mut fields) {
            Err(reason) => {
                failed = Some(reason);
                break;
            }
            Ok(step) => {
                assert!(step.consumed <= input.len() - pos);
                pos += step.consumed;
                match step.event {
                    None => break,
                    Some(Event::Request { stream } | Event::Refused { stream, .. }) => {
                        assert!(stream % 2 == 1);
                        assert!(conn.open_streams() <= limits.max_streams as usize);
                        assert!(conn.data_allowance(stream) <= conn.max_frame());
                        // Answer every other request at once.
                        if stream % 4 == 1 {
                            conn.sent_data(stream, conn.data_allowance(stream));
                            conn.end_stream(stream);
                        }
                    }
                    Some(Event::Reset { stream }) => assert_eq!(conn.data_allowance(stream), 0),
                }
            }
        }
    }
    if let Some(reason) = failed {
        // A failed connection stays failed.
        assert_eq!(conn.receive(&input[pos..], &mut fields), Err(reason));
        assert!(conn.is_done());
    }
    // The queued output parses as whole frames.
    let out = conn.output();
    let mut at = 0;
    while at < out.len() {
        let head = Head::parse(&out[at..]).expect("a whole frame header");
        at += frame::HEADER_LEN + head.len as usize;
    }
    assert_eq!(at, out.len());
});
