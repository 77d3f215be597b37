//! HPACK (RFC 7541) for tachyon: response header blocks encoded by hand,
//! request header blocks decoded by [`decode`] and checked into a
//! request (`crate::section`, shared with HTTP/3).
//!
//! Encoding is in two steps. [`Hpack`] writes a head without the dynamic
//! table: every field an indexed static entry or a literal "without
//! indexing" whose name is a static index where one exists (§6.2.2). So
//! a block encoded once at load ([`Prepared`]) is valid on every
//! connection whatever the peer's table size. Then the connection's
//! [`Encoder`] rewrites the block as it is sent, a field the client's
//! table holds as its index. Decoding keeps the client's dynamic table
//! (bounded by our SETTINGS_HEADER_TABLE_SIZE) and hands each field to
//! `crate::section`'s checks, counted without copying, so an HPACK bomb
//! costs its input's length in work and nothing in memory.

pub mod decode;
pub mod encode;
pub mod huffman;

pub use encode::Encoder;

use crate::head::{self, Dialect};
use crate::request::Version;
use crate::response::{Name, Persistence, Status};
use crate::section::Checker;
pub use crate::section::{DecodeError, DecodeLimits, Fields};

/// Static-table index of a name the server sends (RFC 7541 Appendix A).
fn static_name(name: &Name) -> Option<u8> {
    Some(match name {
        Name::AcceptRanges => 18,
        Name::Allow => 22,
        Name::CacheControl => 24,
        Name::ContentEncoding => 26,
        Name::ContentLength => 28,
        Name::ContentRange => 30,
        Name::ContentType => 31,
        Name::Date => 33,
        Name::ETag => 34,
        Name::LastModified => 44,
        Name::Location => 46,
        Name::RetryAfter => 53,
        Name::Server => 54,
        Name::StrictTransportSecurity => 56,
        Name::Vary => 59,
        Name::UseAsDictionary | Name::XContentTypeOptions | Name::Custom(_) => return None,
    })
}

/// Static-table index of `:status: CODE`, for the codes that have one.
fn static_status(status: Status) -> Option<u8> {
    Some(match status.code() {
        200 => 8,
        204 => 9,
        206 => 10,
        304 => 11,
        400 => 12,
        404 => 13,
        _ => return None,
    })
}
/// Static-table index of the name `:status`.
const STATUS_NAME: u8 = 8;

/// Appends an integer with an N-bit prefix (RFC 7541 §5.1); `first` holds
/// the bits above the prefix.
pub fn integer(buf: &mut Vec<u8>, first: u8, prefix_bits: u8, value: usize) {
    buf.extend_from_slice(Integer::new(first, prefix_bits, value).octets());
}

/// An integer with an N-bit prefix (§5.1) encoded on the stack, for a
/// writer that places it itself ([`encode::Encoder`] rewrites a block in
/// place).
pub struct Integer {
    octets: [u8; 11],
    len: usize,
}

impl Integer {
    /// `value` after `first`'s bits above the prefix.
    pub fn new(first: u8, prefix_bits: u8, mut value: usize) -> Integer {
        let mut octets = [0u8; 11];
        let max = (1usize << prefix_bits) - 1;
        if value < max {
            octets[0] = first | value as u8;
            return Integer { octets, len: 1 };
        }
        octets[0] = first | max as u8;
        value -= max;
        let mut len = 1;
        while value >= 128 {
            octets[len] = (value % 128) as u8 | 0x80;
            value /= 128;
            len += 1;
        }
        octets[len] = value as u8;
        Integer {
            octets,
            len: len + 1,
        }
    }

    pub fn octets(&self) -> &[u8] {
        &self.octets[..self.len]
    }
}

/// Appends a string literal of `parts` without Huffman coding (§5.2), its
/// length with an N-bit prefix (7 in HPACK; QPACK's literal names use 3,
/// RFC 9204 §4.1.2): the values are short and the block is built once, so
/// the smaller encoding would save a few bytes per response at a per-byte
/// cost on every one.
pub fn string_parts(buf: &mut Vec<u8>, first: u8, prefix_bits: u8, parts: &[&[u8]]) {
    let len = parts.iter().map(|p| p.len()).sum();
    integer(buf, first, prefix_bits, len);
    for part in parts {
        buf.extend_from_slice(part);
    }
}

/// A field name as a string literal, lowercased on the way (HTTP/2 and
/// HTTP/3 names are lowercase: RFC 9113 §8.2.1, RFC 9114 §4.2) without a
/// copy of it first.
pub fn lowercase_name(buf: &mut Vec<u8>, first: u8, prefix_bits: u8, name: &str) {
    integer(buf, first, prefix_bits, name.len());
    buf.extend(name.bytes().map(|b| b.to_ascii_lowercase()));
}

/// HPACK (RFC 7541) for HTTP/2 response heads: the fields of a head as
/// a header block that does not use the dynamic table (a connection's
/// [`Encoder`] indexes it).
#[derive(Debug)]
pub struct Hpack;

/// A head written as an HPACK block (the HEADERS frame around it is the
/// caller's).
pub type Block<'b> = head::Head<'b, Hpack>;
/// A representation's fields prepared as an HPACK block.
pub type Prepared = head::Prepared<Hpack>;

impl Dialect for Hpack {
    fn status(buf: &mut Vec<u8>, status: Status) {
        match static_status(status) {
            Some(index) => integer(buf, 0x80, 7, index as usize),
            None => {
                integer(buf, 0, 4, STATUS_NAME as usize);
                string_parts(buf, 0, 7, &[status.code_text().as_bytes()]);
            }
        }
    }

    fn field(buf: &mut Vec<u8>, name: &Name, parts: &[&[u8]]) {
        match static_name(name) {
            Some(index) => integer(buf, 0, 4, index as usize),
            None => {
                // A new name: HTTP/2 field names are lowercase (RFC 9113 §8.2.1).
                buf.push(0);
                lowercase_name(buf, 0, 7, name.as_str());
            }
        }
        string_parts(buf, 0, 7, parts);
    }

    fn end(_: &mut Vec<u8>, _: Persistence) {}
}

/// The decoding half of a connection's HPACK state.
pub struct Decoder {
    inner: decode::BlockDecoder,
}

impl Decoder {
    /// A decoder whose dynamic table may grow to `table_size`, the value
    /// we announce in SETTINGS_HEADER_TABLE_SIZE.
    pub fn new(table_size: usize) -> Decoder {
        Decoder {
            inner: decode::BlockDecoder::new(table_size),
        }
    }

    /// Decodes one complete header block into `fields`. On
    /// [`DecodeError::TooLarge`] and [`DecodeError::Malformed`] the table
    /// is still in step (the whole block was decoded); on
    /// [`DecodeError::Compression`] the connection must end.
    pub fn decode(
        &mut self,
        block: &[u8],
        limits: &DecodeLimits,
        fields: &mut Fields,
    ) -> Result<(), DecodeError> {
        let mut checker = Checker::new(fields, limits, Version::Http2);
        self.inner
            .decode(block, |name, value, bytes| {
                checker.field(name, value, bytes)
            })
            .map_err(|_| DecodeError::Compression)?;
        checker.finish()
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::date::DateCache;
    use crate::encoding::Coding;
    use crate::head::error;
    use crate::response::{Exchange, Field, ALLOWED_METHODS};
    use crate::section::FieldBytes;
    use crate::Method;

    /// The bytes of RFC 7541 Appendix C's hex dumps (spaces ignored).
    pub(crate) fn hex(s: &str) -> Vec<u8> {
        let s: String = s.split_whitespace().collect();
        (0..s.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&s[i..i + 2], 16).unwrap())
            .collect()
    }

    const LIMITS: DecodeLimits = DecodeLimits {
        max_list_size: 16 * 1024,
        max_path: 8 * 1024,
    };

    fn decode_with_reference(block: &[u8]) -> Vec<(String, String)> {
        loona_hpack::Decoder::new()
            .decode(block)
            .unwrap()
            .into_iter()
            .map(|(n, v)| (String::from_utf8(n).unwrap(), String::from_utf8(v).unwrap()))
            .collect()
    }

    /// The 200 head of `prepared` on a keep-alive exchange, as `Hpack`
    /// writes it.
    pub(crate) fn ok_head(prepared: &Prepared, date: &DateCache) -> Vec<u8> {
        let mut block = Vec::new();
        Block::prepared(&mut block, prepared.ok_head()).finish(&Exchange {
            date,
            persistence: Persistence::KeepAlive,
            head_only: false,
            fields: &[],
        });
        block
    }

    #[test]
    fn integers_follow_rfc7541_c1() {
        // C.1.1: 10 with a 5-bit prefix; C.1.2: 1337 with a 5-bit prefix.
        let mut buf = Vec::new();
        integer(&mut buf, 0, 5, 10);
        assert_eq!(buf, [0x0a]);
        buf.clear();
        integer(&mut buf, 0, 5, 1337);
        assert_eq!(buf, [0x1f, 0x9a, 0x0a]);
        buf.clear();
        // C.1.3: 42 at an octet boundary.
        integer(&mut buf, 0, 8, 42);
        assert_eq!(buf, [0x2a]);
    }

    #[test]
    fn a_response_block_decodes_to_the_model() {
        let date = DateCache::new();
        let fields = [
            Field::new(Name::ETag, "\"abc\"").unwrap(),
            Field::new(Name::Custom("X-Frame-Options".into()), "DENY").unwrap(),
        ];
        let prepared = Prepared::new(&fields, "text/html", Some(Coding::Br), 1234);
        let decoded = decode_with_reference(&ok_head(&prepared, &date));
        let names: Vec<&str> = decoded.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                ":status",
                "server",
                "x-content-type-options",
                "etag",
                "x-frame-options",
                "content-type",
                "content-encoding",
                "content-length",
                "date"
            ]
        );
        assert_eq!(decoded[0].1, "200");
        assert_eq!(decoded[3].1, "\"abc\"");
        assert_eq!(decoded[6].1, "br");
        assert_eq!(decoded[7].1, "1234");
    }

    #[test]
    fn statuses_without_a_static_entry_are_literals() {
        let date = DateCache::new();
        let mut buf = Vec::new();
        let exchange = Exchange {
            date: &date,
            persistence: Persistence::KeepAlive,
            head_only: false,
            fields: &[],
        };
        error::<Hpack>(&mut buf, Status::MethodNotAllowed, &exchange);
        let decoded = decode_with_reference(&buf);
        assert_eq!(decoded[0], (":status".into(), "405".into()));
        assert!(decoded.contains(&("allow".into(), ALLOWED_METHODS.into())));
    }

    /// RFC 7541 C.3.1: the first request of C.3 without Huffman coding.
    const C31: &[u8] = &[
        0x82, 0x86, 0x84, 0x41, 0x0f, b'w', b'w', b'w', b'.', b'e', b'x', b'a', b'm', b'p', b'l',
        b'e', b'.', b'c', b'o', b'm',
    ];

    #[test]
    fn a_request_decodes_into_a_head() {
        let mut decoder = Decoder::new(4096);
        let mut fields = Fields::default();
        decoder.decode(C31, &LIMITS, &mut fields).unwrap();
        let head = fields.head();
        assert_eq!(head.method, Method::Get);
        assert_eq!(head.raw_target, b"/");
        assert_eq!(head.host, Some(&b"www.example.com"[..]));
        assert_eq!(head.version, Version::Http2);
    }

    /// RFC 7541 C.4.1: C.3.1 with its authority Huffman-coded.
    const C41: &[u8] = &[
        0x82, 0x86, 0x84, 0x41, 0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90,
        0xf4, 0xff,
    ];

    #[test]
    fn a_huffman_coded_request_decodes_into_the_same_head() {
        let mut decoder = Decoder::new(4096);
        let mut fields = Fields::default();
        decoder.decode(C41, &LIMITS, &mut fields).unwrap();
        assert_eq!(fields.head().host, Some(&b"www.example.com"[..]));
        // The second request indexes the authority the first one added.
        decoder
            .decode(&[0x82, 0x86, 0x84, 0xbe], &LIMITS, &mut fields)
            .unwrap();
        assert_eq!(fields.head().host, Some(&b"www.example.com"[..]));
    }

    /// Encodes a request with literal names (no dynamic table use).
    fn request(fields: &[(&str, &str)]) -> Vec<u8> {
        let mut buf = Vec::new();
        for (n, v) in fields {
            buf.push(0);
            string_parts(&mut buf, 0, 7, &[n.as_bytes()]);
            string_parts(&mut buf, 0, 7, &[v.as_bytes()]);
        }
        buf
    }

    fn verdict(fields: &[(&str, &str)]) -> Result<(), DecodeError> {
        Decoder::new(4096).decode(&request(fields), &LIMITS, &mut Fields::default())
    }

    const BASE: [(&str, &str); 3] = [(":method", "GET"), (":scheme", "https"), (":path", "/")];

    #[test]
    fn malformed_requests_are_refused() {
        let with = |extra: (&str, &str)| {
            let mut f = BASE.to_vec();
            f.push(extra);
            verdict(&f)
        };
        assert_eq!(verdict(&BASE), Ok(()));
        assert_eq!(with(("Accept", "x")), Err(DecodeError::Malformed));
        assert_eq!(with(("connection", "close")), Err(DecodeError::Malformed));
        assert_eq!(with(("te", "gzip")), Err(DecodeError::Malformed));
        assert_eq!(with(("te", "trailers")), Ok(()));
        assert_eq!(with((":method", "GET")), Err(DecodeError::Malformed));
        assert_eq!(with((":status", "200")), Err(DecodeError::Malformed));
        assert_eq!(with((":foo", "x")), Err(DecodeError::Malformed));
        assert_eq!(with(("x", "a\nb")), Err(DecodeError::Malformed));
        assert_eq!(with(("x", " a")), Err(DecodeError::Malformed));
        assert_eq!(with(("x", "a\t")), Err(DecodeError::Malformed));
    }

    #[test]
    fn a_table_entry_is_checked_once_and_refused_each_time_it_is_named() {
        // Literal with incremental indexing (0x40): the entry becomes 62.
        let indexed = |n: &str, v: &str| {
            let mut block = request(&BASE);
            block.push(0x40);
            string_parts(&mut block, 0, 7, &[n.as_bytes()]);
            string_parts(&mut block, 0, 7, &[v.as_bytes()]);
            block
        };
        let again = [request(&BASE), vec![0x80 | 62]].concat();
        let mut decoder = Decoder::new(4096);
        let mut fields = Fields::default();
        let mut decode = |block: &[u8]| decoder.decode(block, &LIMITS, &mut fields);
        assert_eq!(
            decode(&indexed("x-bad", "a\rb")),
            Err(DecodeError::Malformed)
        );
        assert_eq!(decode(&again), Err(DecodeError::Malformed), "named again");
        assert_eq!(decode(&indexed("x-Up", "v")), Err(DecodeError::Malformed));
        assert_eq!(decode(&again), Err(DecodeError::Malformed), "named again");
        assert_eq!(decode(&indexed("x-good", "v")), Ok(()));
        assert_eq!(decode(&again), Ok(()));
    }

    #[test]
    fn the_static_table_is_sound_as_its_entries_are_trusted() {
        for index in 1..=61 {
            let mut decoder = decode::BlockDecoder::new(4096);
            let mut seen = Vec::new();
            decoder
                .decode(&[0x80 | index], |n, v, bytes| {
                    seen.push((crate::section::sound_bytes(n, v), bytes))
                })
                .unwrap();
            assert_eq!(seen, [(true, FieldBytes::Checked)], "entry {index}");
        }
    }

    #[test]
    fn a_forbidden_byte_is_found_wherever_it_is_in_a_field() {
        // Long enough for the scan's vector loop and its tail both to matter.
        let with = |name: &str, value: &str| {
            let mut f = BASE.to_vec();
            f.push((name, value));
            verdict(&f)
        };
        let long = "v".repeat(70);
        for at in [0, 1, 15, 16, 31, 32, 47, 64, 69] {
            for bad in ['\0', '\r', '\n'] {
                let mut value = long.clone();
                value.replace_range(at..at + 1, &bad.to_string());
                assert_eq!(
                    with("x-long", &value),
                    Err(DecodeError::Malformed),
                    "{bad:?} at {at}"
                );
            }
            let name: String = "n".repeat(at + 1);
            for bad in ["N", " ", "\u{7f}", "\0"] {
                let mut broken = name.clone();
                broken.replace_range(at..at + 1, bad);
                assert_eq!(
                    with(&broken, "v"),
                    Err(DecodeError::Malformed),
                    "{bad:?} at {at}"
                );
            }
            assert_eq!(with(&name, &long), Ok(()));
        }
        assert_eq!(
            verdict(&[
                ("accept", "*/*"),
                (":method", "GET"),
                (":scheme", "http"),
                (":path", "/")
            ]),
            Err(DecodeError::Malformed)
        );
        assert_eq!(
            verdict(&[(":method", "GET"), (":scheme", "http")]),
            Err(DecodeError::Malformed)
        );
        // An empty or non-token method, an empty scheme (the first found
        // by the hpack fuzz target).
        for (method, scheme) in [("", "http"), ("G T", "http"), ("GET", "")] {
            assert_eq!(
                verdict(&[(":method", method), (":scheme", scheme), (":path", "/")]),
                Err(DecodeError::Malformed),
                "{method:?} {scheme:?}"
            );
        }
        assert_eq!(
            verdict(&[(":method", "GET"), (":scheme", "http"), (":path", "")]),
            Err(DecodeError::Malformed)
        );
    }

    #[test]
    fn oversized_lists_and_paths_are_told_apart() {
        let big = "a".repeat(20_000);
        let mut f = BASE.to_vec();
        f.push(("x-big", &big));
        assert_eq!(verdict(&f), Err(DecodeError::TooLarge));
        let long = format!("/{}", "p".repeat(9000));
        assert_eq!(
            verdict(&[(":method", "GET"), (":scheme", "http"), (":path", &long)]),
            Err(DecodeError::PathTooLong)
        );
    }

    #[test]
    fn repeated_list_fields_are_joined() {
        let mut f = BASE.to_vec();
        f.extend([
            ("if-none-match", "\"a\""),
            ("user-agent", "x"),
            ("if-none-match", "\"b\""),
        ]);
        let mut fields = Fields::default();
        Decoder::new(4096)
            .decode(&request(&f), &LIMITS, &mut fields)
            .unwrap();
        assert_eq!(fields.head().if_none_match, Some(&b"\"a\", \"b\""[..]));
        assert_eq!(fields.head().user_agent, Some(&b"x"[..]));
    }

    #[test]
    fn urgency_is_read_from_the_priority_field() {
        let urgency = |values: &[&'static str]| {
            let mut f = BASE.to_vec();
            f.extend(values.iter().map(|v| ("priority", *v)));
            let mut fields = Fields::default();
            Decoder::new(4096)
                .decode(&request(&f), &LIMITS, &mut fields)
                .unwrap();
            fields.urgency()
        };
        assert_eq!(urgency(&[]), 3);
        assert_eq!(urgency(&["u=0"]), 0);
        assert_eq!(urgency(&["i, u=6"]), 6);
        assert_eq!(urgency(&["u=1", "u=5"]), 5, "the last member wins");
        assert_eq!(urgency(&["u=9"]), 3, "out of range");
        assert_eq!(urgency(&["u=2;x=1"]), 2);
        assert_eq!(urgency(&["urgent"]), 3);
    }

    #[test]
    fn invalid_hpack_is_a_compression_error() {
        // Index 70 does not exist in an empty dynamic table.
        let block = [0xbf, 0x27];
        assert_eq!(
            Decoder::new(4096).decode(&block, &LIMITS, &mut Fields::default()),
            Err(DecodeError::Compression)
        );
    }
}
