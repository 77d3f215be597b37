//! HPACK (RFC 7541) for tachyon: response header blocks encoded by hand,
//! request header blocks decoded by [`decode`] and checked into a
//! [`RequestHead`].
//!
//! Encoding never touches the dynamic table: every field is an indexed
//! static entry or a literal "without indexing" whose name is a static
//! index where one exists (§6.2.2). So a block encoded once at load
//! ([`Prepared`]) is valid on every connection whatever the peer's table
//! size, and the encoder carries no per-connection state. Decoding keeps
//! the client's dynamic table (bounded by our SETTINGS_HEADER_TABLE_SIZE)
//! and checks the request as RFC 9113 §8.2–8.3 require: lowercase names,
//! pseudo-fields first and once each, no connection-specific fields, and
//! the sizes of [`DecodeLimits`], counted without copying, so an HPACK
//! bomb costs its input's length in work and nothing in memory.
//!
//! Invariant: a [`RequestHead`] handed out here has a method, a scheme and
//! a non-empty path, and no field value in it holds NUL, CR or LF.

pub mod decode;
pub mod huffman;

use std::ops::Range;

use crate::head::{self, Dialect};
use crate::request::{BodyFraming, Method, RequestHead, Version};
use crate::response::{Name, Persistence, Status};

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
        Name::XContentTypeOptions | Name::Custom(_) => return None,
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
pub fn integer(buf: &mut Vec<u8>, first: u8, prefix_bits: u8, mut value: usize) {
    let max = (1usize << prefix_bits) - 1;
    if value < max {
        buf.push(first | value as u8);
        return;
    }
    buf.push(first | max as u8);
    value -= max;
    while value >= 128 {
        buf.push((value % 128) as u8 | 0x80);
        value /= 128;
    }
    buf.push(value as u8);
}

/// Appends a string literal without Huffman coding (§5.2): the values are
/// short and the block is built once, so the smaller encoding would save
/// a few bytes per response at a per-byte cost on every one.
fn string_parts(buf: &mut Vec<u8>, parts: &[&[u8]]) {
    let len = parts.iter().map(|p| p.len()).sum();
    integer(buf, 0, 7, len);
    for part in parts {
        buf.extend_from_slice(part);
    }
}

/// HPACK (RFC 7541) for HTTP/2 response heads: the fields of a head as
/// a header block, never using the dynamic table.
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
                string_parts(buf, &[status.code_text().as_bytes()]);
            }
        }
    }

    fn field(buf: &mut Vec<u8>, name: &Name, parts: &[&[u8]]) {
        match static_name(name) {
            Some(index) => integer(buf, 0, 4, index as usize),
            None => {
                // A new name: HTTP/2 field names are lowercase (RFC 9113 §8.2.1).
                buf.push(0);
                let lower = name.as_str().to_ascii_lowercase();
                string_parts(buf, &[lower.as_bytes()]);
            }
        }
        string_parts(buf, parts);
    }

    fn end(_: &mut Vec<u8>, _: Persistence) {}
}

/// How much of a request's fields a decoder accepts.
#[derive(Debug, Clone, Copy)]
pub struct DecodeLimits {
    /// Decoded size in RFC 9113's measure (name + value + 32 per field),
    /// what SETTINGS_MAX_HEADER_LIST_SIZE announces; beyond it the request
    /// gets 431.
    pub max_list_size: usize,
    /// Longest `:path`; beyond it the request gets 414.
    pub max_path: usize,
}

/// Why a header block could not become a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DecodeError {
    /// Not valid HPACK: the connection's table is lost (COMPRESSION_ERROR).
    Compression,
    /// Valid HPACK, not a valid request (RFC 9113 §8.1.1): a stream error.
    Malformed,
    /// Larger than SETTINGS_MAX_HEADER_LIST_SIZE: answered with 431.
    TooLarge,
    /// `:path` longer than the limit: answered with 414.
    PathTooLong,
}

/// Which request field a decoded value belongs to.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Slot {
    Method,
    Scheme,
    Path,
    Authority,
    Host,
    IfNoneMatch,
    IfModifiedSince,
    IfMatch,
    IfUnmodifiedSince,
    Range,
    IfRange,
    AcceptEncoding,
    Accept,
    UserAgent,
    Referer,
    Priority,
    ContentLength,
}
const SLOTS: usize = Slot::ContentLength as usize + 1;

impl Slot {
    fn of(name: &[u8]) -> Option<Slot> {
        Some(match name {
            b":method" => Slot::Method,
            b":scheme" => Slot::Scheme,
            b":path" => Slot::Path,
            b":authority" => Slot::Authority,
            b"host" => Slot::Host,
            b"if-none-match" => Slot::IfNoneMatch,
            b"if-modified-since" => Slot::IfModifiedSince,
            b"if-match" => Slot::IfMatch,
            b"if-unmodified-since" => Slot::IfUnmodifiedSince,
            b"range" => Slot::Range,
            b"if-range" => Slot::IfRange,
            b"accept-encoding" => Slot::AcceptEncoding,
            b"accept" => Slot::Accept,
            b"user-agent" => Slot::UserAgent,
            b"referer" => Slot::Referer,
            b"priority" => Slot::Priority,
            b"content-length" => Slot::ContentLength,
            _ => return None,
        })
    }

    /// Lists whose repeated lines are joined with commas (RFC 9110 §5.3).
    fn is_list(self) -> bool {
        matches!(
            self,
            Slot::IfNoneMatch
                | Slot::IfMatch
                | Slot::AcceptEncoding
                | Slot::Accept
                | Slot::Priority
        )
    }
}

/// The values of one decoded request, kept in one buffer the connection
/// reuses, so decoding allocates nothing once warm.
#[derive(Default)]
pub struct Fields {
    buf: Vec<u8>,
    slots: [Option<Range<usize>>; SLOTS],
}

impl Fields {
    fn get(&self, slot: Slot) -> Option<&[u8]> {
        self.slots[slot as usize].clone().map(|r| &self.buf[r])
    }

    /// The request's `content-length`, if it sent a valid one.
    pub fn content_length(&self) -> Option<u64> {
        let v = self.get(Slot::ContentLength)?;
        std::str::from_utf8(v).ok()?.parse().ok()
    }

    /// The urgency the request asked for in its `priority` field (RFC 9218
    /// §4.1: `u=0` most urgent to `u=7`, 3 when absent or not understood).
    /// The last `u` of the dictionary wins; other members are ignored.
    pub fn urgency(&self) -> u8 {
        const DEFAULT: u8 = 3;
        let Some(value) = self.get(Slot::Priority) else {
            return DEFAULT;
        };
        value
            .split(|&b| b == b',')
            .rev()
            .find_map(|member| {
                let member = member.trim_ascii();
                // A member's parameters follow ';' and do not change it.
                let member = member.split(|&b| b == b';').next().unwrap_or_default();
                match member {
                    [b'u', b'=', digit @ b'0'..=b'7'] => Some(digit - b'0'),
                    _ => None,
                }
            })
            .unwrap_or(DEFAULT)
    }

    fn put(&mut self, slot: Slot, value: &[u8]) -> Result<(), DecodeError> {
        match self.slots[slot as usize].clone() {
            None => {
                let start = self.buf.len();
                self.buf.extend_from_slice(value);
                self.slots[slot as usize] = Some(start..self.buf.len());
            }
            Some(old) if slot.is_list() => {
                // Join repeated lines; move the earlier value to the end
                // first when something was written after it.
                let start = if old.end == self.buf.len() {
                    old.start
                } else {
                    let start = self.buf.len();
                    self.buf.extend_from_within(old);
                    start
                };
                self.buf.extend_from_slice(b", ");
                self.buf.extend_from_slice(value);
                self.slots[slot as usize] = Some(start..self.buf.len());
            }
            // A pseudo-field twice (§8.3), or two different lengths.
            Some(old) => {
                if slot != Slot::ContentLength || self.buf[old] != *value {
                    return Err(DecodeError::Malformed);
                }
            }
        }
        Ok(())
    }

    /// The request these fields describe; `head_len` and `body` are the
    /// HTTP/1.1 framing and mean nothing here.
    pub fn head(&self) -> RequestHead<'_> {
        let raw_method = self.get(Slot::Method).unwrap_or(b"");
        RequestHead {
            method: match raw_method {
                b"GET" => Method::Get,
                b"HEAD" => Method::Head,
                b"OPTIONS" => Method::Options,
                _ => Method::Other,
            },
            raw_method,
            raw_target: self.get(Slot::Path).unwrap_or(b""),
            version: Version::Http2,
            head_len: 0,
            keep_alive: true,
            body: BodyFraming::None,
            // RFC 9113 §8.3.1: :authority, else Host.
            host: self.get(Slot::Authority).or_else(|| self.get(Slot::Host)),
            if_none_match: self.get(Slot::IfNoneMatch),
            if_modified_since: self.get(Slot::IfModifiedSince),
            if_match: self.get(Slot::IfMatch),
            if_unmodified_since: self.get(Slot::IfUnmodifiedSince),
            range: self.get(Slot::Range),
            if_range: self.get(Slot::IfRange),
            accept_encoding: self.get(Slot::AcceptEncoding),
            accept: self.get(Slot::Accept),
            user_agent: self.get(Slot::UserAgent),
            referer: self.get(Slot::Referer),
        }
    }
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
        fields.buf.clear();
        fields.slots = Default::default();
        let mut size = 0usize;
        let mut verdict: Result<(), DecodeError> = Ok(());
        let mut regular_seen = false;
        let mut pseudo_response = false;
        self.inner
            .decode(block, |name, value| {
                size = size.saturating_add(name.len() + value.len() + 32);
                if verdict.is_err() {
                    return;
                }
                if size > limits.max_list_size {
                    verdict = Err(DecodeError::TooLarge);
                    return;
                }
                verdict = check_field(
                    name,
                    value,
                    fields,
                    &mut regular_seen,
                    &mut pseudo_response,
                    limits,
                );
            })
            .map_err(|_| DecodeError::Compression)?;
        verdict?;
        // §8.3.1: every request has :method, :scheme and a non-empty :path
        // (CONNECT is not a static server's business: it lacks them and
        // is answered 405 by its method alone).
        let method = fields.get(Slot::Method);
        if method.is_none() || pseudo_response {
            return Err(DecodeError::Malformed);
        }
        if method != Some(b"CONNECT")
            && (fields.get(Slot::Scheme).is_none() || fields.get(Slot::Path).is_none())
        {
            return Err(DecodeError::Malformed);
        }
        Ok(())
    }
}

/// A token character (RFC 9110 §5.6.2).
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

fn check_field(
    name: &[u8],
    value: &[u8],
    fields: &mut Fields,
    regular_seen: &mut bool,
    pseudo_response: &mut bool,
    limits: &DecodeLimits,
) -> Result<(), DecodeError> {
    // §8.2.1: no uppercase in names, no NUL/CR/LF in values, and no
    // leading or trailing whitespace in values.
    if name.is_empty()
        || name
            .iter()
            .any(|b| b.is_ascii_uppercase() || *b <= 0x20 || *b == 0x7f)
        || value.iter().any(|b| matches!(b, 0 | b'\r' | b'\n'))
        || value
            .first()
            .into_iter()
            .chain(value.last())
            .any(|b| matches!(b, b' ' | b'\t'))
    {
        return Err(DecodeError::Malformed);
    }
    if name[0] == b':' {
        // §8.3: pseudo-fields come first; only the request ones.
        if *regular_seen {
            return Err(DecodeError::Malformed);
        }
        let slot = match Slot::of(name) {
            Some(slot @ (Slot::Method | Slot::Scheme | Slot::Path | Slot::Authority)) => slot,
            _ if name == b":status" => {
                *pseudo_response = true;
                return Err(DecodeError::Malformed);
            }
            _ => return Err(DecodeError::Malformed),
        };
        match slot {
            Slot::Path if value.is_empty() => return Err(DecodeError::Malformed),
            Slot::Path if value.len() > limits.max_path => return Err(DecodeError::PathTooLong),
            // §8.3.1: `:method` is a method token (RFC 9110 §9.1) and
            // `:scheme` a scheme; neither may be empty (found by the hpack
            // fuzz target: an empty `:method` was taken).
            Slot::Method if value.is_empty() || !value.iter().all(|&b| is_tchar(b)) => {
                return Err(DecodeError::Malformed)
            }
            Slot::Scheme if value.is_empty() => return Err(DecodeError::Malformed),
            _ => {}
        }
        return fields.put(slot, value);
    }
    *regular_seen = true;
    // §8.2.2: connection-specific fields make a request malformed; TE may
    // only say "trailers".
    match name {
        b"connection" | b"keep-alive" | b"proxy-connection" | b"transfer-encoding" | b"upgrade" => {
            return Err(DecodeError::Malformed)
        }
        b"te" if value != b"trailers" => return Err(DecodeError::Malformed),
        _ => {}
    }
    match Slot::of(name) {
        Some(slot) => fields.put(slot, value),
        None => Ok(()),
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::date::DateCache;
    use crate::encoding::Coding;
    use crate::head::error;
    use crate::response::{Exchange, Field, ALLOWED_METHODS};

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
        let mut buf = Vec::new();
        Block::prepared(&mut buf, prepared.ok_head()).finish(&Exchange {
            date: &date,
            persistence: Persistence::KeepAlive,
            head_only: false,
            fields: &[],
        });
        let decoded = decode_with_reference(&buf);
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
            string_parts(&mut buf, &[n.as_bytes()]);
            string_parts(&mut buf, &[v.as_bytes()]);
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
