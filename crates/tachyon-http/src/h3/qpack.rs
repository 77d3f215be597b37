//! QPACK (RFC 9204) for tachyon: response field sections encoded with the
//! static table and literals only, request field sections decoded with a
//! dynamic table of capacity zero, and checked into a request
//! (`crate::section`, shared with HTTP/2).
//!
//! We announce SETTINGS_QPACK_MAX_TABLE_CAPACITY 0, so a peer may never
//! refer to a dynamic table (§3.2.3): a Required Insert Count other than
//! zero, a dynamic or post-base reference, or an insert on the peer's
//! encoder stream is an error, and no stream can ever be blocked. The
//! encoder never uses the peer's table either, so a section encoded once
//! at load ([`Prepared`]) is valid on every connection.
//!
//! Invariant: decoding holds nothing between sections but its scratch
//! buffer, and a section costs its input's length in work.

// QPACK writes integers and literals as HPACK does (RFC 9204 §4.1.1-§4.1.2).
use crate::h2::hpack::{huffman, integer, lowercase_name, string_parts};
use crate::head::{self, Dialect};
use crate::request::Version;
use crate::response::{Name, Persistence, Status};
use crate::section::{Checker, DecodeError, DecodeLimits, FieldBytes, Fields};

/// The static table (RFC 9204 Appendix A).
pub const STATIC: [(&str, &str); 99] = [
    (":authority", ""),
    (":path", "/"),
    ("age", "0"),
    ("content-disposition", ""),
    ("content-length", "0"),
    ("cookie", ""),
    ("date", ""),
    ("etag", ""),
    ("if-modified-since", ""),
    ("if-none-match", ""),
    ("last-modified", ""),
    ("link", ""),
    ("location", ""),
    ("referer", ""),
    ("set-cookie", ""),
    (":method", "CONNECT"),
    (":method", "DELETE"),
    (":method", "GET"),
    (":method", "HEAD"),
    (":method", "OPTIONS"),
    (":method", "POST"),
    (":method", "PUT"),
    (":scheme", "http"),
    (":scheme", "https"),
    (":status", "103"),
    (":status", "200"),
    (":status", "304"),
    (":status", "404"),
    (":status", "503"),
    ("accept", "*/*"),
    ("accept", "application/dns-message"),
    ("accept-encoding", "gzip, deflate, br"),
    ("accept-ranges", "bytes"),
    ("access-control-allow-headers", "cache-control"),
    ("access-control-allow-headers", "content-type"),
    ("access-control-allow-origin", "*"),
    ("cache-control", "max-age=0"),
    ("cache-control", "max-age=2592000"),
    ("cache-control", "max-age=604800"),
    ("cache-control", "no-cache"),
    ("cache-control", "no-store"),
    ("cache-control", "public, max-age=31536000"),
    ("content-encoding", "br"),
    ("content-encoding", "gzip"),
    ("content-type", "application/dns-message"),
    ("content-type", "application/javascript"),
    ("content-type", "application/json"),
    ("content-type", "application/x-www-form-urlencoded"),
    ("content-type", "image/gif"),
    ("content-type", "image/jpeg"),
    ("content-type", "image/png"),
    ("content-type", "text/css"),
    ("content-type", "text/html; charset=utf-8"),
    ("content-type", "text/plain"),
    ("content-type", "text/plain;charset=utf-8"),
    ("range", "bytes=0-"),
    ("strict-transport-security", "max-age=31536000"),
    (
        "strict-transport-security",
        "max-age=31536000; includesubdomains",
    ),
    (
        "strict-transport-security",
        "max-age=31536000; includesubdomains; preload",
    ),
    ("vary", "accept-encoding"),
    ("vary", "origin"),
    ("x-content-type-options", "nosniff"),
    ("x-xss-protection", "1; mode=block"),
    (":status", "100"),
    (":status", "204"),
    (":status", "206"),
    (":status", "302"),
    (":status", "400"),
    (":status", "403"),
    (":status", "421"),
    (":status", "425"),
    (":status", "500"),
    ("accept-language", ""),
    ("access-control-allow-credentials", "FALSE"),
    ("access-control-allow-credentials", "TRUE"),
    ("access-control-allow-headers", "*"),
    ("access-control-allow-methods", "get"),
    ("access-control-allow-methods", "get, post, options"),
    ("access-control-allow-methods", "options"),
    ("access-control-expose-headers", "content-length"),
    ("access-control-request-headers", "content-type"),
    ("access-control-request-method", "get"),
    ("access-control-request-method", "post"),
    ("alt-svc", "clear"),
    ("authorization", ""),
    (
        "content-security-policy",
        "script-src 'none'; object-src 'none'; base-uri 'none'",
    ),
    ("early-data", "1"),
    ("expect-ct", ""),
    ("forwarded", ""),
    ("if-range", ""),
    ("origin", ""),
    ("purpose", "prefetch"),
    ("server", ""),
    ("timing-allow-origin", "*"),
    ("upgrade-insecure-requests", "1"),
    ("user-agent", ""),
    ("x-forwarded-for", ""),
    ("x-frame-options", "deny"),
    ("x-frame-options", "sameorigin"),
];

/// Static index of the first entry named `:status` (for a literal value).
const STATUS_NAME: usize = 24;

/// Static-table index of a name the server sends.
fn static_name(name: &Name) -> Option<usize> {
    Some(match name {
        Name::AcceptRanges => 32,
        Name::CacheControl => 36,
        Name::ContentEncoding => 42,
        Name::ContentLength => 4,
        Name::ContentType => 44,
        Name::Date => 6,
        Name::ETag => 7,
        Name::LastModified => 10,
        Name::Location => 12,
        Name::Server => 92,
        Name::StrictTransportSecurity => 56,
        Name::Vary => 59,
        Name::XContentTypeOptions => 61,
        Name::Allow
        | Name::ContentRange
        | Name::RetryAfter
        | Name::UseAsDictionary
        | Name::Custom(_) => return None,
    })
}

/// Static index of `:status: CODE`, for the codes that have one.
fn static_status(status: Status) -> Option<usize> {
    Some(match status.code() {
        200 => 25,
        304 => 26,
        404 => 27,
        503 => 28,
        204 => 64,
        206 => 65,
        302 => 66,
        400 => 67,
        500 => 71,
        _ => return None,
    })
}

/// QPACK for HTTP/3 response heads: the fields of a head as an encoded
/// field section, never using the dynamic table.
#[derive(Debug)]
pub struct Qpack;

/// A head written as a QPACK field section (the HEADERS frame around it
/// is the caller's).
pub type Section<'b> = head::Head<'b, Qpack>;
/// A representation's fields prepared as a QPACK field section.
pub type Prepared = head::Prepared<Qpack>;

impl Dialect for Qpack {
    /// The section prefix (§4.5.1: Required Insert Count 0, Base 0), then
    /// `:status`: a head always begins with its status.
    fn status(buf: &mut Vec<u8>, status: Status) {
        buf.extend_from_slice(&[0, 0]);
        match static_status(status) {
            // Indexed field line, static (§4.5.2): 11xxxxxx.
            Some(index) => integer(buf, 0xc0, 6, index),
            None => {
                // Literal with a static name reference (§4.5.4): 0101xxxx.
                integer(buf, 0x50, 4, STATUS_NAME);
                string_parts(buf, 0, 7, &[status.code_text().as_bytes()]);
            }
        }
    }

    fn field(buf: &mut Vec<u8>, name: &Name, parts: &[&[u8]]) {
        match static_name(name) {
            Some(index) => {
                if let [value] = parts {
                    if STATIC[index].1.as_bytes() == *value && !value.is_empty() {
                        return integer(buf, 0xc0, 6, index);
                    }
                }
                integer(buf, 0x50, 4, index);
            }
            None => {
                // Literal with a literal name (§4.5.6): 0010xxxx; HTTP/3
                // field names are lowercase (RFC 9114 §4.2).
                lowercase_name(buf, 0x20, 3, name.as_str());
            }
        }
        string_parts(buf, 0, 7, parts);
    }

    fn end(_: &mut Vec<u8>, _: Persistence) {}
}

/// The decoding side of a connection's QPACK state: with no dynamic
/// table, only a scratch buffer for Huffman-coded strings.
#[derive(Debug, Default)]
pub struct Decoder {
    name: Vec<u8>,
    value: Vec<u8>,
}

impl Decoder {
    /// Decodes one field section into `fields`. [`DecodeError::Compression`]
    /// is QPACK_DECOMPRESSION_FAILED, a connection error (§2.2.3); the
    /// others concern this request only.
    pub fn decode(
        &mut self,
        section: &[u8],
        limits: &DecodeLimits,
        fields: &mut Fields,
    ) -> Result<(), DecodeError> {
        let mut checker = Checker::new(fields, limits, Version::Http3);
        self.each(section, |name, value| {
            checker.field(name, value, FieldBytes::Unchecked)
        })
        .map_err(|Invalid| DecodeError::Compression)?;
        checker.finish()
    }

    /// Calls `on` for each field line of `section`, unchecked (the specs
    /// of every head writer read sections with it).
    pub fn each(
        &mut self,
        section: &[u8],
        mut on: impl FnMut(&[u8], &[u8]),
    ) -> Result<(), Invalid> {
        let mut input = Input(section);
        // §4.5.1: Required Insert Count, then the Base. With no table the
        // count must be 0; the Base then means nothing.
        if input.integer(8)? != 0 {
            return Err(Invalid);
        }
        input.integer(7)?;
        while let Some(&first) = input.0.first() {
            match first {
                // Indexed field line (§4.5.2): T=1 static only.
                0x80..=0xff => {
                    if first & 0x40 == 0 {
                        return Err(Invalid);
                    }
                    let (name, value) = entry(input.integer(6)?)?;
                    on(name.as_bytes(), value.as_bytes());
                }
                // Literal with a name reference (§4.5.4): T=1 static only.
                0x40..=0x7f => {
                    if first & 0x10 == 0 {
                        return Err(Invalid);
                    }
                    let (name, _) = entry(input.integer(4)?)?;
                    let value = input.string(7, &mut self.value)?;
                    on(name.as_bytes(), value);
                }
                // Literal with a literal name (§4.5.6).
                0x20..=0x3f => {
                    let name = input.string(3, &mut self.name)?;
                    let value = input.string(7, &mut self.value)?;
                    on(name, value);
                }
                // Post-base references (§4.5.3, §4.5.5) need a table.
                _ => return Err(Invalid),
            }
        }
        Ok(())
    }
}

/// Not valid QPACK under our settings (a zero-capacity table).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Invalid;

fn entry(index: usize) -> Result<(&'static str, &'static str), Invalid> {
    STATIC.get(index).copied().ok_or(Invalid)
}

/// What is left of a field section.
struct Input<'a>(&'a [u8]);

impl<'a> Input<'a> {
    /// An integer with an N-bit prefix (RFC 7541 §5.1), at most 2^62.
    fn integer(&mut self, prefix_bits: u8) -> Result<usize, Invalid> {
        let (&first, mut rest) = self.0.split_first().ok_or(Invalid)?;
        let max = (1usize << prefix_bits) - 1;
        let mut value = usize::from(first) & max;
        if value == max {
            let mut shift = 0u32;
            loop {
                let (&b, more) = rest.split_first().ok_or(Invalid)?;
                rest = more;
                if shift > 56 {
                    return Err(Invalid);
                }
                value += usize::from(b & 0x7f) << shift;
                shift += 7;
                if b & 0x80 == 0 {
                    break;
                }
            }
        }
        self.0 = rest;
        Ok(value)
    }

    /// A string literal whose H bit sits just above an N-bit length
    /// prefix; Huffman-coded ones are decoded into `scratch`.
    fn string<'s>(&mut self, prefix_bits: u8, scratch: &'s mut Vec<u8>) -> Result<&'s [u8], Invalid>
    where
        'a: 's,
    {
        let huffman = self.0.first().ok_or(Invalid)? & (1 << prefix_bits) != 0;
        let len = self.integer(prefix_bits)?;
        if len > self.0.len() {
            return Err(Invalid);
        }
        let (bytes, rest) = self.0.split_at(len);
        self.0 = rest;
        if !huffman {
            return Ok(bytes);
        }
        scratch.clear();
        huffman::decode(bytes, scratch).map_err(|_| Invalid)?;
        Ok(scratch)
    }
}

/// A peer's QPACK encoder stream asked for more than our zero-capacity
/// table allows: QPACK_ENCODER_STREAM_ERROR (RFC 9204 §4.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EncoderStreamError;

/// What a peer's QPACK encoder stream may carry when our table capacity is
/// zero (§4.3): only Set Dynamic Table Capacity to 0, whose only encoding
/// is the byte 0x20 (001 and a 5-bit prefix of 0), so the check holds
/// however the stream is cut into pieces.
pub fn check_encoder_stream(bytes: &[u8]) -> Result<(), EncoderStreamError> {
    match bytes.iter().all(|&b| b == 0x20) {
        true => Ok(()),
        false => Err(EncoderStreamError),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date::DateCache;
    use crate::encoding::Coding;
    use crate::head::error;
    use crate::response::{Exchange, Field, ALLOWED_METHODS};

    const LIMITS: DecodeLimits = DecodeLimits {
        max_list_size: 16 * 1024,
        max_path: 8 * 1024,
    };

    /// Every field line of a section, as text.
    fn lines(section: &[u8]) -> Vec<(String, String)> {
        let mut out = Vec::new();
        Decoder::default()
            .each(section, |n, v| {
                out.push((
                    String::from_utf8(n.to_vec()).unwrap(),
                    String::from_utf8(v.to_vec()).unwrap(),
                ))
            })
            .unwrap();
        out
    }

    fn exchange(date: &DateCache) -> Exchange<'_> {
        Exchange {
            date,
            persistence: Persistence::KeepAlive,
            head_only: false,
            fields: &[],
        }
    }

    #[test]
    fn the_static_table_is_rfc9204s() {
        assert_eq!(STATIC[0], (":authority", ""));
        assert_eq!(STATIC[17], (":method", "GET"));
        assert_eq!(STATIC[25], (":status", "200"));
        assert_eq!(STATIC[63], (":status", "100"));
        assert_eq!(STATIC[92], ("server", ""));
        assert_eq!(STATIC[98], ("x-frame-options", "sameorigin"));
        for (name, index) in [
            (Name::AcceptRanges, "accept-ranges"),
            (Name::CacheControl, "cache-control"),
            (Name::ContentEncoding, "content-encoding"),
            (Name::ContentLength, "content-length"),
            (Name::ContentType, "content-type"),
            (Name::Date, "date"),
            (Name::ETag, "etag"),
            (Name::LastModified, "last-modified"),
            (Name::Location, "location"),
            (Name::Server, "server"),
            (Name::StrictTransportSecurity, "strict-transport-security"),
            (Name::Vary, "vary"),
            (Name::XContentTypeOptions, "x-content-type-options"),
        ] {
            assert_eq!(STATIC[static_name(&name).unwrap()].0, index);
        }
        for code in [200, 204, 206, 302, 304, 400, 404, 500, 503] {
            let status = [
                Status::Ok,
                Status::NoContent,
                Status::PartialContent,
                Status::Found,
                Status::NotModified,
                Status::BadRequest,
                Status::NotFound,
                Status::ServiceUnavailable,
            ]
            .into_iter()
            .find(|s| s.code() == code);
            if let Some(status) = status {
                let index = static_status(status).unwrap();
                assert_eq!(STATIC[index], (":status", status.code_text()));
            }
        }
    }

    /// A 200 prepared at load: its bytes, field line by field line.
    #[test]
    fn a_prepared_head_is_a_static_only_section() {
        let date = DateCache::new();
        let fields = [
            Field::new(Name::ETag, "\"abc\"").unwrap(),
            Field::new(Name::Custom("X-Frame-Options".into()), "DENY").unwrap(),
            Field::new(Name::AcceptRanges, "bytes").unwrap(),
        ];
        let prepared = Prepared::new(&fields, "text/css", Some(Coding::Br), 1234);
        let mut buf = Vec::new();
        Section::prepared(&mut buf, prepared.ok_head()).finish(&exchange(&date));
        assert_eq!(
            &buf[..3],
            [0x00, 0x00, 0xc0 | 25],
            "prefix, then :status 200 indexed"
        );
        let decoded = lines(&buf);
        let names: Vec<&str> = decoded.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            names,
            [
                ":status",
                "server",
                "x-content-type-options",
                "etag",
                "x-frame-options",
                "accept-ranges",
                "content-type",
                "content-encoding",
                "content-length",
                "date"
            ]
        );
        assert_eq!(decoded[2].1, "nosniff");
        assert_eq!(decoded[5].1, "bytes");
        assert_eq!(decoded[6].1, "text/css");
        assert_eq!(decoded[7].1, "br");
        assert_eq!(decoded[8].1, "1234");
        assert!(
            buf.windows(1).any(|w| w[0] == 0xc0 | 61),
            "x-content-type-options: nosniff is one byte"
        );
    }

    #[test]
    fn statuses_without_a_static_entry_are_literals() {
        let date = DateCache::new();
        let mut buf = Vec::new();
        error::<Qpack>(&mut buf, Status::MethodNotAllowed, &exchange(&date));
        let decoded = lines(&buf);
        assert_eq!(decoded[0], (":status".into(), "405".into()));
        assert!(decoded.contains(&("allow".into(), ALLOWED_METHODS.into())));
    }

    /// A request as a browser's QPACK encoder writes it without a table:
    /// static references, a Huffman-coded authority (RFC 7541 C.4.1's
    /// `www.example.com`) and a literal name.
    #[test]
    fn a_request_decodes_into_a_head() {
        let mut section = vec![0x00, 0x00, 0xc0 | 17, 0xc0 | 23, 0xc0 | 1];
        section.push(0x50);
        section.extend([
            0x8c, 0xf1, 0xe3, 0xc2, 0xe5, 0xf2, 0x3a, 0x6b, 0xa0, 0xab, 0x90, 0xf4, 0xff,
        ]);
        section.push(0x23);
        section.extend(b"dnt");
        section.push(0x01);
        section.extend(b"1");
        let mut fields = Fields::default();
        Decoder::default()
            .decode(&section, &LIMITS, &mut fields)
            .unwrap();
        let head = fields.head();
        assert_eq!(head.method, crate::request::Method::Get);
        assert_eq!(head.raw_target, b"/");
        assert_eq!(head.host, Some(&b"www.example.com"[..]));
        assert_eq!(head.version, Version::Http3);
    }

    #[test]
    fn references_to_a_table_we_do_not_have_are_refused() {
        let refused = |section: &[u8]| {
            Decoder::default().decode(section, &LIMITS, &mut Fields::default())
                == Err(DecodeError::Compression)
        };
        // Required Insert Count 1; a dynamic indexed line; a dynamic name
        // reference; post-base forms; an index past the static table.
        assert!(refused(&[0x01, 0x00, 0xc0 | 17]));
        assert!(refused(&[0x00, 0x00, 0x80]));
        assert!(refused(&[0x00, 0x00, 0x40, 0x01, b'x']));
        assert!(refused(&[0x00, 0x00, 0x10]));
        assert!(refused(&[0x00, 0x00, 0x00]));
        assert!(refused(&[0x00, 0x00, 0xff, 0x24]));
        // Cut short: a length past the end, an integer with no end.
        assert!(refused(&[0x00, 0x00, 0x23, b'a']));
        assert!(refused(&[0x00, 0x00, 0xff, 0xff]));
        assert!(refused(&[0x00]));
    }

    #[test]
    fn the_encoder_stream_may_only_set_a_zero_capacity() {
        assert_eq!(check_encoder_stream(&[0x20]), Ok(()));
        assert_eq!(check_encoder_stream(&[0x20, 0x20]), Ok(()));
        assert_eq!(check_encoder_stream(&[0x21]), Err(EncoderStreamError));
        assert_eq!(
            check_encoder_stream(&[0xc0 | 17]),
            Err(EncoderStreamError),
            "an insert"
        );
        assert_eq!(
            check_encoder_stream(&[0x3f, 0x01]),
            Err(EncoderStreamError),
            "a capacity of 32"
        );
    }
}
