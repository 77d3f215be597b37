//! Range requests (RFC 9110 §14): from a `Range` header and a length to the
//! byte ranges to send.
//!
//! Input is the header value and the representation length; output is a
//! [`RangeDecision`]. Invalid syntax or another unit means the header is
//! ignored (§14.2: "MAY ignore"), as does asking for more than `max_ranges`
//! ranges, which caps the amplification a client can cause (nginx `max_ranges`).
//! Invariant: every range in a `Ranges` value is non-empty and inside the
//! representation, sorted, with overlapping and adjacent ranges coalesced.

use crate::fields::trim;

/// The most ranges a request may ask for before the header is ignored.
pub const MAX_RANGES: usize = 16;

/// A satisfiable byte range, `start..end` (end exclusive).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ByteRange {
    pub start: u64,
    pub end: u64,
}

impl ByteRange {
    /// Number of bytes in the range.
    pub fn len(&self) -> u64 {
        self.end - self.start
    }

    /// Always false: empty ranges are never constructed.
    pub fn is_empty(&self) -> bool {
        self.start == self.end
    }
}

/// Satisfiable ranges, stored inline: no allocation on the request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Ranges {
    items: [ByteRange; MAX_RANGES],
    count: usize,
}

impl Ranges {
    /// The ranges, sorted and coalesced.
    pub fn as_slice(&self) -> &[ByteRange] {
        &self.items[..self.count]
    }
}

/// What to do with a Range header.
// The ranges stay inline (264 bytes) on purpose: a range request allocates nothing.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeDecision {
    /// Send the whole representation with 200.
    Full,
    /// Send these ranges with 206 (multipart when there is more than one).
    Partial(Ranges),
    /// 416 with `Content-Range: bytes */len`.
    Unsatisfiable,
}

/// Resolves `header` against a representation of `len` bytes.
pub fn decide(header: &[u8], len: u64, max_ranges: usize) -> RangeDecision {
    let header = trim(header);
    let Some(spec) = header.strip_prefix(b"bytes=") else {
        return RangeDecision::Full;
    };
    let mut ranges = Ranges {
        items: [ByteRange { start: 0, end: 0 }; MAX_RANGES],
        count: 0,
    };
    let mut seen = 0;
    for part in spec.split(|&b| b == b',').map(trim) {
        if part.is_empty() {
            continue; // RFC 9110 §5.6.1: empty list elements are ignored
        }
        seen += 1;
        if seen > max_ranges.min(MAX_RANGES) {
            return RangeDecision::Full;
        }
        let Some(dash) = part.iter().position(|&b| b == b'-') else {
            return RangeDecision::Full;
        };
        let (first, last) = (&part[..dash], &part[dash + 1..]);
        let range = if first.is_empty() {
            // suffix-range: the last N bytes
            let Some(n) = number(last) else {
                return RangeDecision::Full;
            };
            if n == 0 || len == 0 {
                None
            } else {
                Some(ByteRange {
                    start: len.saturating_sub(n),
                    end: len,
                })
            }
        } else {
            let Some(start) = number(first) else {
                return RangeDecision::Full;
            };
            let end = if last.is_empty() {
                len
            } else {
                let Some(last) = number(last) else {
                    return RangeDecision::Full;
                };
                if last < start {
                    return RangeDecision::Full; // invalid range-spec: ignore the header
                }
                last.saturating_add(1).min(len)
            };
            (start < len).then_some(ByteRange { start, end })
        };
        if let Some(range) = range {
            ranges.items[ranges.count] = range;
            ranges.count += 1;
        }
    }
    if seen == 0 {
        return RangeDecision::Full;
    }
    if ranges.count == 0 {
        return RangeDecision::Unsatisfiable;
    }
    coalesce(&mut ranges);
    RangeDecision::Partial(ranges)
}

/// Sorts and merges overlapping or touching ranges (RFC 9110 §14.2 allows it,
/// and it stops `bytes=0-,0-,0-…` from multiplying the response).
fn coalesce(ranges: &mut Ranges) {
    let items = &mut ranges.items[..ranges.count];
    items.sort_unstable_by_key(|r| r.start);
    let mut kept = 0;
    for i in 0..items.len() {
        if kept > 0 && items[i].start <= items[kept - 1].end {
            items[kept - 1].end = items[kept - 1].end.max(items[i].end);
        } else {
            items[kept] = items[i];
            kept += 1;
        }
    }
    ranges.count = kept;
}

fn number(digits: &[u8]) -> Option<u64> {
    if digits.is_empty() || !digits.iter().all(u8::is_ascii_digit) {
        return None;
    }
    // Saturate: a huge last-byte-pos just means "to the end".
    Some(digits.iter().fold(0u64, |acc, &b| {
        acc.saturating_mul(10).saturating_add(u64::from(b - b'0'))
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn spans(header: &str, len: u64) -> Vec<(u64, u64)> {
        match decide(header.as_bytes(), len, MAX_RANGES) {
            RangeDecision::Partial(r) => r.as_slice().iter().map(|r| (r.start, r.end)).collect(),
            other => panic!("{header}: expected ranges, got {other:?}"),
        }
    }

    #[test]
    fn single_and_suffix_ranges() {
        assert_eq!(spans("bytes=0-0", 10), [(0, 1)]);
        assert_eq!(spans("bytes=2-5", 10), [(2, 6)]);
        assert_eq!(spans("bytes=2-", 10), [(2, 10)]);
        assert_eq!(spans("bytes=-3", 10), [(7, 10)]);
        assert_eq!(
            spans("bytes=-30", 10),
            [(0, 10)],
            "suffix longer than the file"
        );
        assert_eq!(
            spans("bytes=5-999999999999999999999", 10),
            [(5, 10)],
            "end clamped"
        );
    }

    #[test]
    fn several_ranges_are_sorted_and_coalesced() {
        assert_eq!(spans("bytes=6-7, 0-1", 10), [(0, 2), (6, 8)]);
        assert_eq!(spans("bytes=0-4,3-6", 10), [(0, 7)], "overlap");
        assert_eq!(spans("bytes=0-1,2-3", 10), [(0, 4)], "adjacent");
        assert_eq!(
            spans("bytes=0-1,20-30", 10),
            [(0, 2)],
            "unsatisfiable part dropped"
        );
    }

    #[test]
    fn unsatisfiable_and_ignored_headers() {
        assert_eq!(
            decide(b"bytes=10-", 10, MAX_RANGES),
            RangeDecision::Unsatisfiable
        );
        assert_eq!(
            decide(b"bytes=-0", 10, MAX_RANGES),
            RangeDecision::Unsatisfiable
        );
        assert_eq!(
            decide(b"bytes=0-", 0, MAX_RANGES),
            RangeDecision::Unsatisfiable
        );
        assert_eq!(
            decide(b"bytes=5-2", 10, MAX_RANGES),
            RangeDecision::Full,
            "last < first"
        );
        assert_eq!(
            decide(b"items=0-1", 10, MAX_RANGES),
            RangeDecision::Full,
            "other unit"
        );
        assert_eq!(
            decide(b"bytes=a-b", 10, MAX_RANGES),
            RangeDecision::Full,
            "garbage"
        );
        assert_eq!(
            decide(b"bytes=", 10, MAX_RANGES),
            RangeDecision::Full,
            "empty set"
        );
        assert_eq!(
            decide(b"bytes=0-0,1-1,2-2", 10, 2),
            RangeDecision::Full,
            "over max_ranges"
        );
    }
}
