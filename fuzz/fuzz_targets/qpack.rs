//! The QPACK decoder (zero-capacity table, through the request checks
//! shared with HPACK) on arbitrary field sections: never panics, and a
//! section it accepts is a request within the limits (a method, a
//! non-empty path no longer than the limit, values without CR, LF or NUL).
//! The encoder-stream check sees the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_http::h3::qpack::{check_encoder_stream, Decoder};
use tachyon_http::section::{DecodeLimits, Fields};

fuzz_target!(|data: &[u8]| {
    let limits = DecodeLimits {
        max_list_size: 4096,
        max_path: 256,
    };
    let mut decoder = Decoder::default();
    let mut fields = Fields::default();
    // Sections are separated by 0xff bytes: one decoder, many requests.
    for section in data.split(|&b| b == 0xff) {
        if decoder.decode(section, &limits, &mut fields).is_ok() {
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
    }
    let _ = check_encoder_stream(data);
});
