//! The body of a `multipart/byteranges` response (RFC 9110 §14.6): part
//! heads and the closing delimiter around slices of one representation.
//! The same bytes in every protocol; the caller interleaves the slices.
//!
//! Invariant: [`Multipart::body_len`] is exactly the number of bytes the parts
//! and slices add up to, so the response can be sent with a length rather
//! than chunked.

use crate::range::ByteRange;

/// The multipart framing of one representation.
pub struct Multipart<'a> {
    /// Unique within the body: derived from the content hash, so it is
    /// stable per representation and vanishingly unlikely to occur inside it.
    pub boundary: &'a [u8],
    /// The representation's own Content-Type, repeated in each part.
    pub content_type: &'a str,
    /// The representation's length.
    pub total: u64,
}

impl Multipart<'_> {
    /// The `Content-Type` value of the whole response, in parts.
    pub fn content_type_parts(&self) -> [&[u8]; 2] {
        [b"multipart/byteranges; boundary=tachyon-", self.boundary]
    }

    /// Appends the delimiter and head of the part holding `range`.
    pub fn part_head(&self, buf: &mut Vec<u8>, range: ByteRange) {
        buf.extend_from_slice(b"\r\n--tachyon-");
        buf.extend_from_slice(self.boundary);
        buf.extend_from_slice(b"\r\nContent-Type: ");
        buf.extend_from_slice(self.content_type.as_bytes());
        buf.extend_from_slice(b"\r\n");
        write_content_range(buf, range, self.total);
        buf.extend_from_slice(b"\r\n");
    }

    /// Appends the closing delimiter.
    pub fn closing(&self, buf: &mut Vec<u8>) {
        buf.extend_from_slice(b"\r\n--tachyon-");
        buf.extend_from_slice(self.boundary);
        buf.extend_from_slice(b"--\r\n");
    }

    /// The body's length for these ranges.
    pub fn body_len(&self, ranges: &[ByteRange]) -> u64 {
        let mut scratch = Vec::with_capacity(160);
        self.closing(&mut scratch);
        let mut total = scratch.len() as u64;
        for range in ranges {
            scratch.clear();
            self.part_head(&mut scratch, *range);
            total += scratch.len() as u64 + range.len();
        }
        total
    }
}

/// Appends a part head's `Content-Range` field line (RFC 9110 §14.6).
fn write_content_range(buf: &mut Vec<u8>, range: ByteRange, len: u64) {
    let mut num = itoa::Buffer::new();
    buf.extend_from_slice(b"Content-Range: bytes ");
    buf.extend_from_slice(num.format(range.start).as_bytes());
    buf.push(b'-');
    buf.extend_from_slice(num.format(range.end - 1).as_bytes());
    buf.push(b'/');
    buf.extend_from_slice(num.format(len).as_bytes());
    buf.extend_from_slice(b"\r\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_announced_length_is_the_written_length() {
        let data: Vec<u8> = (0..200u8).collect();
        let m = Multipart {
            boundary: b"0123abcd",
            content_type: "text/plain",
            total: data.len() as u64,
        };
        let ranges = [
            ByteRange { start: 0, end: 10 },
            ByteRange {
                start: 99,
                end: 200,
            },
        ];
        let mut body = Vec::new();
        for r in ranges {
            m.part_head(&mut body, r);
            body.extend_from_slice(&data[r.start as usize..r.end as usize]);
        }
        m.closing(&mut body);
        assert_eq!(m.body_len(&ranges), body.len() as u64);
        let text = String::from_utf8_lossy(&body);
        assert!(text.starts_with(
            "\r\n--tachyon-0123abcd\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-9/200\r\n\r\n"
        ));
        assert!(text.ends_with("\r\n--tachyon-0123abcd--\r\n"));
    }
}
