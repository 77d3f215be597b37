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

use crate::encoding::Coding;
use crate::range::ByteRange;
use crate::request::{BodyFraming, Method, RequestHead, Version};
use crate::response::{
    self, ErrorPage, Exchange, Field, FieldWriter, Name, Status, ALLOWED_METHODS, NOSNIFF,
    RETRY_AFTER_SECS, SERVER,
};

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
fn integer(buf: &mut Vec<u8>, first: u8, prefix_bits: u8, mut value: usize) {
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

/// A response header block being written into an output buffer (the
/// HEADERS frame around it is the caller's).
pub struct Block<'b> {
    buf: &'b mut Vec<u8>,
}

impl FieldWriter for Block<'_> {
    fn written(&self) -> usize {
        self.buf.len()
    }

    fn write_field(&mut self, name: &Name, value: &[u8]) {
        self.field(name, value);
    }

    fn write_content_length(&mut self, len: u64) {
        self.content_length(len);
    }
}

impl<'b> Block<'b> {
    /// Starts a block with `:status` and the fields every response carries.
    pub fn start(buf: &'b mut Vec<u8>, status: Status) -> Block<'b> {
        let mut block = Block { buf };
        block.status(status);
        block.common();
        block
    }

    /// Starts a block from one prepared at load that already holds
    /// `:status: 200` (a representation's 200).
    pub fn prepared(buf: &'b mut Vec<u8>, block: &[u8]) -> Block<'b> {
        buf.extend_from_slice(block);
        Block { buf }
    }

    fn status(&mut self, status: Status) {
        match static_status(status) {
            Some(index) => integer(self.buf, 0x80, 7, index as usize),
            None => {
                integer(self.buf, 0, 4, STATUS_NAME as usize);
                string_parts(self.buf, &[status.code_text().as_bytes()]);
            }
        }
    }

    fn common(&mut self) {
        self.field(&Name::Server, SERVER.as_bytes());
        self.field(&Name::XContentTypeOptions, NOSNIFF.as_bytes());
    }

    /// Appends fields encoded at load (see [`Prepared`]).
    pub fn block(&mut self, block: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(block);
        self
    }

    pub fn field(&mut self, name: &Name, value: &[u8]) -> &mut Self {
        self.field_parts(name, &[value])
    }

    /// One field whose value is the concatenation of `parts`.
    pub fn field_parts(&mut self, name: &Name, parts: &[&[u8]]) -> &mut Self {
        match static_name(name) {
            Some(index) => integer(self.buf, 0, 4, index as usize),
            None => {
                // A new name: HTTP/2 field names are lowercase (RFC 9113 §8.2.1).
                self.buf.push(0);
                let lower = name.as_str().to_ascii_lowercase();
                string_parts(self.buf, &[lower.as_bytes()]);
            }
        }
        string_parts(self.buf, parts);
        self
    }

    pub fn content_length(&mut self, len: u64) -> &mut Self {
        self.field(
            &Name::ContentLength,
            itoa::Buffer::new().format(len).as_bytes(),
        )
    }

    /// `content-range: bytes START-END/LEN` (RFC 9110 §14.4).
    pub fn content_range(&mut self, range: ByteRange, len: u64) -> &mut Self {
        let mut a = itoa::Buffer::new();
        let mut b = itoa::Buffer::new();
        let mut c = itoa::Buffer::new();
        self.field_parts(
            &Name::ContentRange,
            &[
                b"bytes ",
                a.format(range.start).as_bytes(),
                b"-",
                b.format(range.end - 1).as_bytes(),
                b"/",
                c.format(len).as_bytes(),
            ],
        )
    }

    /// `content-range: bytes */LEN`, sent with a 416.
    pub fn unsatisfied_range(&mut self, len: u64) -> &mut Self {
        let mut n = itoa::Buffer::new();
        self.field_parts(
            &Name::ContentRange,
            &[b"bytes */", n.format(len).as_bytes()],
        )
    }

    /// Ends the block: the connection's fields and `date`. HTTP/2 has no
    /// `Connection` field (RFC 9113 §8.2.2).
    pub fn finish(self, exchange: &Exchange<'_>) {
        let mut block = self;
        for field in exchange.fields {
            block.field(field.name(), field.value().as_bytes());
        }
        block.field(&Name::Date, exchange.date.bytes());
    }
}

/// A representation's header block encoded once at load, the HTTP/2 twin
/// of [`crate::h1::Prepared`]: `:status: 200` and the common fields, the
/// representation's own fields (also sent with 206 and 304), its content
/// fields, then `content-length`.
#[derive(Debug, Default)]
pub struct Prepared {
    bytes: Box<[u8]>,
    validators: Range<usize>,
    content: Range<usize>,
}

impl Prepared {
    pub fn new(fields: &[Field], content_type: &str, coding: Option<Coding>, len: u64) -> Prepared {
        let mut buf = Vec::with_capacity(192);
        let (validators, content) = response::representation(
            &mut Block::start(&mut buf, Status::Ok),
            fields,
            content_type,
            coding,
            len,
        );
        Prepared {
            bytes: buf.into_boxed_slice(),
            validators,
            content,
        }
    }

    /// The whole 200 block without the per-request fields.
    pub fn ok_block(&self) -> &[u8] {
        &self.bytes
    }

    pub fn validators(&self) -> &[u8] {
        &self.bytes[self.validators.clone()]
    }

    pub fn content(&self) -> &[u8] {
        &self.bytes[self.content.clone()]
    }
}

/// The block of an error response; its page is the body.
pub fn error(buf: &mut Vec<u8>, status: Status, exchange: &Exchange<'_>) {
    let page = ErrorPage(status);
    let mut block = Block::start(buf, status);
    block
        .field(&Name::ContentType, b"text/html; charset=utf-8")
        .field(&Name::CacheControl, b"no-store")
        .content_length(page.byte_len() as u64);
    match status {
        Status::MethodNotAllowed => {
            block.field(&Name::Allow, ALLOWED_METHODS.as_bytes());
        }
        Status::ServiceUnavailable => {
            block.field(&Name::RetryAfter, RETRY_AFTER_SECS.as_bytes());
        }
        _ => {}
    }
    block.finish(exchange);
}

/// The block answering OPTIONS.
pub fn options(buf: &mut Vec<u8>, exchange: &Exchange<'_>) {
    let mut block = Block::start(buf, Status::NoContent);
    block.field(&Name::Allow, ALLOWED_METHODS.as_bytes());
    block.finish(exchange);
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
mod tests {
    use super::*;
    use crate::date::DateCache;
    use crate::response::Persistence;

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
        Block::prepared(&mut buf, prepared.ok_block()).finish(&Exchange {
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
        error(&mut buf, Status::MethodNotAllowed, &exchange);
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
