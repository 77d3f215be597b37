//! The request parser on arbitrary bytes, then everything the server derives
//! from a parsed head: the site path, range and precondition decisions and
//! the coding choice. Checks the parser's invariants, not just "no panic".
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_http::conditional::{self, Validators};
use tachyon_http::encoding::{self, Choice, Coding};
use tachyon_http::range::{self, RangeDecision, MAX_RANGES};
use tachyon_http::request::{self, HeadLimits, Parsed};
use tachyon_http::target::site_path;

fuzz_target!(|data: &[u8]| {
    let mut combined = Vec::new();
    let limits = HeadLimits::default();
    let Ok(Parsed::Complete(head)) = request::parse(data, &mut combined, &limits) else {
        return;
    };
    assert!(head.head_len <= data.len());
    assert!(head.head_len <= limits.max_head_bytes);
    assert!(head.raw_target.len() <= limits.max_target_bytes);
    assert!(
        !data[..head.head_len]
            .iter()
            .enumerate()
            .any(|(i, &b)| b == b'\n' && (i == 0 || data[i - 1] != b'\r')),
        "a bare LF was accepted"
    );
    let mut scratch = Vec::new();
    if let Ok(path) = site_path(head.raw_target, &mut scratch) {
        assert!(path.starts_with(b"/"));
        assert!(!path.contains(&0));
        assert!(!path.windows(2).any(|w| w == b"//"));
        assert!(!path.split(|&b| b == b'/').any(|s| s == b".." || s == b"."));
    }
    if let Some(spec) = head.range {
        for len in [0u64, 1, 100, u64::MAX] {
            if let RangeDecision::Partial(ranges) = range::decide(spec, len, MAX_RANGES) {
                for r in ranges.as_slice() {
                    assert!(r.start < r.end && r.end <= len);
                }
            }
        }
    }
    let _ = conditional::evaluate(
        &head,
        Validators {
            etag: b"\"abc\"",
            last_modified: 784_111_777,
        },
    );
    if let Choice::Encoded(c) = encoding::choose(head.accept_encoding, &[Coding::Gzip]) {
        assert_eq!(c, Coding::Gzip);
    }
});
