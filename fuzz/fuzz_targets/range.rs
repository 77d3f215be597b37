//! Range decisions: every satisfiable range lies inside the representation,
//! and no more than the cap come back.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tachyon_http::range::{self, RangeDecision, MAX_RANGES};

fuzz_target!(|input: (u64, u8, &[u8])| {
    let (len, max, header) = input;
    let max = usize::from(max % 20);
    if let RangeDecision::Partial(ranges) = range::decide(header, len, max) {
        let ranges = ranges.as_slice();
        assert!(!ranges.is_empty());
        assert!(ranges.len() <= max.min(MAX_RANGES));
        for r in ranges {
            assert!(r.start < r.end, "{r:?}");
            assert!(r.end <= len, "{r:?} beyond {len}");
        }
    }
});
