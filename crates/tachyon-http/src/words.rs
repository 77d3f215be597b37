//! Byte classes tested eight bytes at a time, a `u64` word per test: what
//! the field scanners use to find the end of a value, a name or a target
//! (HTTP/1.1's [`crate::request::syntax`]) and a byte a value may not hold
//! (HTTP/2's and HTTP/3's [`crate::section`]). A browser's fields are
//! short, and a search call per field (memchr) cost more than these
//! (`bench/results/user-time-2026-12-04/`).
//!
//! Each test marks a byte by setting its high bit in the result. Which
//! marks are exact is said per test: every one, or only the lowest (a sum
//! or a borrow may cross into the next byte, but only out of a marked
//! byte, so the bytes above the lowest mark can be marked wrongly and the
//! ones below it cannot). The specs below hold each test to its
//! byte-at-a-time definition for every byte in every lane.
//!
//! Safe Rust only: SSE2 intrinsics need `unsafe` to call, and `unsafe`
//! lives in `tachyon-sys`.

/// 0x01 in every byte: `ONES * b` is `b` in every byte.
pub(crate) const ONES: u64 = 0x0101_0101_0101_0101;
const HIGHS: u64 = 0x8080_8080_8080_8080;
const LOWS: u64 = !HIGHS;

/// The eight bytes from `at`, little-endian, if there are eight.
#[inline(always)]
pub(crate) fn word_at(input: &[u8], at: usize) -> Option<u64> {
    let bytes = input.get(at..at + 8)?;
    Some(u64::from_le_bytes(bytes.try_into().expect("eight bytes")))
}

/// The index in its word of the byte a mark (a nonzero result) marks
/// lowest: the first in input order.
#[inline(always)]
pub(crate) fn lowest_lane(marks: u64) -> usize {
    (marks.trailing_zeros() / 8) as usize
}

/// Marks each byte of `word` below `below` (0x20 or more), DEL or from
/// 0x80. The lowest mark is exact.
#[inline(always)]
pub(crate) fn stops(word: u64, below: u8) -> u64 {
    let at_least = word.wrapping_add(ONES * (0x80 - u64::from(below))); // high bit: not below
    let del_or_more = word.wrapping_add(ONES); // high bit: 0x7f (or from 0x80)
    (!at_least | del_or_more | word) & HIGHS
}

/// Marks each byte of `word` that is not an ASCII letter or `-`. Every
/// mark is exact: each sum stays within its byte.
#[inline(always)]
pub(crate) fn not_letters(word: u64) -> u64 {
    let low = (word | (ONES * 0x20)) & LOWS; // lower case, high bit cleared
    let from_a = low + ONES * (0x80 - u64::from(b'a'));
    let past_z = low + ONES * (0x80 - u64::from(b'z') - 1);
    let letter = from_a & !past_z & !word;
    let dash = word ^ (ONES * u64::from(b'-'));
    let is_dash = !(((dash & LOWS) + LOWS) | dash);
    !(letter | is_dash) & HIGHS
}

/// Marks each byte of `word` that is NUL, CR or LF. The lowest mark is
/// exact (a borrow crosses a byte only out of one equal to the byte
/// sought), so a nonzero result is exactly "the word holds one".
#[inline(always)]
pub(crate) fn nul_cr_lf(word: u64) -> u64 {
    let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
    zero(word) | zero(word ^ (ONES * u64::from(b'\r'))) | zero(word ^ (ONES * u64::from(b'\n')))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The marks a byte-at-a-time test gives `word`.
    fn marks(word: [u8; 8], marked: &dyn Fn(u8) -> bool) -> u64 {
        word.iter().enumerate().fold(0u64, |m, (lane, &c)| {
            m | (u64::from(marked(c)) << (lane * 8 + 7))
        })
    }

    fn lowest(marks: u64) -> u64 {
        marks & marks.wrapping_neg()
    }

    #[test]
    fn the_word_tests_agree_with_the_byte_tests() {
        // Every byte in every lane, beside bytes that pass and bytes that
        // do not, and beside bytes one away from those sought (a borrow or
        // a carry must not make them look alike).
        for b in 0..=255u8 {
            for lane in 0..8 {
                for filler in [
                    b'a', b'Z', b'-', b'~', b' ', b'\t', 0, 0x01, 0x0b, 0x0c, 0x0e, 0x1f, 0x7f,
                    0x80, 0x8a, 0x8d, 0xff,
                ] {
                    let mut word = [filler; 8];
                    word[lane] = b;
                    let x = u64::from_le_bytes(word);
                    let letter = |c: u8| !(c.is_ascii_alphabetic() || c == b'-');
                    assert_eq!(not_letters(x), marks(word, &letter), "not_letters {word:?}");
                    for below in [b' ', b'!'] {
                        let stop = |c: u8| c < below || c >= 0x7f;
                        assert_eq!(
                            lowest(stops(x, below)),
                            lowest(marks(word, &stop)),
                            "stops {below:#x} {word:?}"
                        );
                    }
                    let forbidden = |c: u8| matches!(c, 0 | b'\r' | b'\n');
                    assert_eq!(
                        lowest(nul_cr_lf(x)),
                        lowest(marks(word, &forbidden)),
                        "nul_cr_lf {word:?}"
                    );
                }
            }
        }
    }

    #[test]
    fn a_lane_is_counted_from_the_first_byte() {
        for lane in 0..8 {
            let mut word = *b"abcdefgh";
            word[lane] = b'\n';
            let marks = nul_cr_lf(u64::from_le_bytes(word));
            assert_eq!(lowest_lane(marks), lane);
            assert_eq!(word_at(&word, 0), Some(u64::from_le_bytes(word)));
        }
        assert_eq!(word_at(b"1234567", 0), None);
        assert_eq!(
            word_at(b"123456789", 1),
            Some(u64::from_le_bytes(*b"23456789"))
        );
        assert_eq!(word_at(b"123456789", 2), None);
    }
}
