//! The HTTP/3 frame reader on an arbitrary stream cut into arbitrary
//! pieces: never panics, sees the same frames (and the same error) however
//! the stream is cut, never holds more than its limit plus a frame header,
//! and SETTINGS payloads it hands over parse or fail without panicking.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_http::h3::frame::{parse_settings, Frame, FrameReader};

const LIMIT: usize = 512;

/// The frames of `stream` read in pieces of the sizes `cuts` cycles
/// through, as text, and the error that stopped it.
fn read(stream: &[u8], cuts: &[u8]) -> (Vec<String>, Option<u64>) {
    let mut reader = FrameReader::new(LIMIT);
    let mut seen = Vec::new();
    let mut at = 0;
    let mut i = 0;
    while at < stream.len() {
        let size = cuts
            .get(i % cuts.len().max(1))
            .map_or(stream.len(), |&c| c as usize + 1);
        let piece = &stream[at..(at + size).min(stream.len())];
        at += piece.len();
        i += 1;
        let fed = reader.feed(piece, &mut |frame| {
            if let Frame::Settings(payload) = frame {
                let _ = parse_settings(payload, |_, _| {});
            }
            seen.push(format!("{frame:?}"));
            Ok(())
        });
        assert!(reader.held() <= LIMIT.max(16) * 2 + 64, "{}", reader.held());
        if let Err(code) = fed {
            return (seen, Some(code.value()));
        }
    }
    (seen, None)
}

fuzz_target!(|data: &[u8]| {
    // The first 8 bytes choose the cuts; the rest is the stream.
    let (cuts, stream) = data.split_at(data.len().min(8));
    let whole = read(stream, &[]);
    let cut = read(stream, cuts);
    assert_eq!(whole, cut);
});
