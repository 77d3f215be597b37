//! Request heads: from the bytes a client sent to a [`RequestHead`] that is
//! known to be well framed.
//!
//! This module owns what a head means: the head-size limits, the fields
//! tachyon acts on, and the framing rules of RFC 9112 §6.3 that stop request
//! smuggling; [`syntax`] owns the bytes' grammar.
//! It does not interpret the target (see [`crate::target`]) or any validator.
//! Invariant: a `RequestHead` returned here has a supported version, at most
//! one way of framing its body, a Host header when HTTP/1.1 requires one,
//! CRLF line endings only, and one value per list-valued field it exposes.
//!
//! A bare LF as a line ending is rejected with 400. RFC 9112 §2.2 lets a
//! recipient accept it, but a proxy in front that does not would see other
//! line boundaries than we do: the difference is a request-smuggling vector.

pub mod syntax;

use crate::error::ParseError;
use crate::fields::{parse_decimal, tokens};
use syntax::{FieldLine, Step};

/// Header fields beyond this count are a 431 (nginx and hyper both default near 100).
pub const MAX_HEADERS: usize = 100;

/// Limits on what a client may send in a head.
#[derive(Debug, Clone, Copy)]
pub struct HeadLimits {
    /// Bytes of request line plus headers (nginx: 4 x 8 KiB large_client_header_buffers).
    pub max_head_bytes: usize,
    /// Bytes of the request target.
    pub max_target_bytes: usize,
}

impl Default for HeadLimits {
    fn default() -> Self {
        HeadLimits {
            max_head_bytes: 16 * 1024,
            max_target_bytes: 8 * 1024,
        }
    }
}

/// Request methods; everything a static server does not implement is `Other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    Get,
    Head,
    Options,
    Other,
}

/// The protocol version of a request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Version {
    Http10,
    Http11,
    /// HTTP/2 ([`crate::h2`]): no HTTP/1.1 framing applies.
    Http2,
    /// HTTP/3 ([`crate::h3`]): no HTTP/1.1 framing applies.
    Http3,
}

/// How the request's body is framed (RFC 9112 §6.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFraming {
    None,
    Length(u64),
    Chunked,
}

/// The parts of a request head a static server acts on.
#[derive(Debug, Clone)]
pub struct RequestHead<'a> {
    pub method: Method,
    /// The method as sent (for logs: `Method::Other` forgets it).
    pub raw_method: &'a [u8],
    /// The request target as sent, before any decoding.
    pub raw_target: &'a [u8],
    pub version: Version,
    /// Bytes the head occupied in the input, CRLFCRLF included.
    pub head_len: usize,
    /// The client wants the connection kept open after this exchange.
    pub keep_alive: bool,
    pub body: BodyFraming,
    pub host: Option<&'a [u8]>,
    pub if_none_match: Option<&'a [u8]>,
    pub if_modified_since: Option<&'a [u8]>,
    pub if_match: Option<&'a [u8]>,
    pub if_unmodified_since: Option<&'a [u8]>,
    pub range: Option<&'a [u8]>,
    pub if_range: Option<&'a [u8]>,
    pub accept_encoding: Option<&'a [u8]>,
    /// The dictionary the client holds for this URL (RFC 9842 §2.2).
    pub available_dictionary: Option<&'a [u8]>,
    pub accept: Option<&'a [u8]>,
    /// Kept for the access log only.
    pub user_agent: Option<&'a [u8]>,
    pub referer: Option<&'a [u8]>,
}

impl<'a> RequestHead<'a> {
    /// What the request line says, before any header field is read.
    #[inline]
    fn of_line(line: &syntax::RequestLine<'a>) -> RequestHead<'a> {
        let method = match line.method {
            b"GET" => Method::Get,
            b"HEAD" => Method::Head,
            b"OPTIONS" => Method::Options,
            _ => Method::Other,
        };
        RequestHead {
            method,
            raw_method: line.method,
            raw_target: line.target,
            version: line.version,
            head_len: 0,
            keep_alive: line.version == Version::Http11,
            body: BodyFraming::None,
            host: None,
            if_none_match: None,
            if_modified_since: None,
            if_match: None,
            if_unmodified_since: None,
            range: None,
            if_range: None,
            accept_encoding: None,
            available_dictionary: None,
            accept: None,
            user_agent: None,
            referer: None,
        }
    }
}

/// The outcome of looking at the bytes received so far.
// The head is returned by value and lives on the stack for one request;
// boxing it to shrink `Partial` would cost an allocation per request.
#[allow(clippy::large_enum_variant)]
#[derive(Debug)]
pub enum Parsed<'a> {
    /// A whole head; the body (if any) starts at `head.head_len`.
    Complete(RequestHead<'a>),
    /// More bytes are needed; the input is within the limits so far.
    Partial,
}

/// List-valued fields a client may send in several lines, which mean the
/// same as one line with the values joined by commas (RFC 9110 §5.3).
const IF_NONE_MATCH: u8 = 1;
const IF_MATCH: u8 = 2;
const ACCEPT_ENCODING: u8 = 4;
const ACCEPT: u8 = 8;

/// Parses one request head from the start of `input`. `combined` holds the
/// joined values of list fields sent in several lines (rare: the common
/// case never touches it).
pub fn parse<'a>(
    input: &'a [u8],
    combined: &'a mut Vec<u8>,
    limits: &HeadLimits,
) -> Result<Parsed<'a>, ParseError> {
    let Step::Done(line) = syntax::request_line(input)? else {
        return partial(input, limits);
    };
    let mut head = RequestHead::of_line(&line);
    // One pass: each field is read and acted on in turn. A field's meaning
    // can be wrong (two Hosts) before a later byte is malformed; syntax is
    // judged first, as a whole, so the first such error waits for the end.
    let mut fields = syntax::Fields::new(input, line.len);
    let mut scan = FieldScan::default();
    let mut meaning = Ok(());
    let mut count = 0;
    head.head_len = loop {
        match fields.next_line()? {
            Step::Done(FieldLine::Field { name, value }) => {
                count += 1;
                if count > MAX_HEADERS {
                    return Err(ParseError::HeadTooLarge);
                }
                if meaning.is_ok() {
                    meaning = scan.field(&mut head, name, value);
                }
            }
            Step::Done(FieldLine::End { head_len }) => break head_len,
            Step::Partial => return partial(input, limits),
        }
    };
    if line.target.len() > limits.max_target_bytes {
        return Err(ParseError::UriTooLong);
    }
    if head.head_len > limits.max_head_bytes {
        return Err(ParseError::HeadTooLarge);
    }
    meaning?;
    head.body = scan.framing(line.version)?;
    if line.version == Version::Http11 && head.host.is_none() {
        return Err(ParseError::MissingHost);
    }
    // RFC 9112 §3.2.2: with an absolute-form target, the target's authority
    // names the host and the Host header is ignored.
    if let Some(form) = crate::target::absolute_form(line.target)? {
        head.host = Some(form.host);
    }
    if scan.repeated != 0 {
        combine(
            &mut head,
            syntax::Fields::new(input, line.len),
            scan.repeated,
            combined,
        );
    }
    Ok(Parsed::Complete(head))
}

/// What the header fields said about the body's framing, and which list
/// fields came in more than one line.
#[derive(Default)]
struct FieldScan {
    content_length: Option<u64>,
    transfer_encoding: bool,
    /// Bits of the list fields seen twice (see [`combine`]).
    repeated: u8,
}

impl FieldScan {
    fn framing(&self, version: Version) -> Result<BodyFraming, ParseError> {
        Ok(match (self.content_length, self.transfer_encoding) {
            // RFC 9112 §6.3 step 3: both present is the smuggling pattern; reject it.
            (Some(_), true) => return Err(ParseError::AmbiguousFraming),
            // RFC 9112 §6.1: Transfer-Encoding in a 1.0 request is faulty framing.
            (None, true) if version == Version::Http10 => return Err(ParseError::AmbiguousFraming),
            (None, true) => BodyFraming::Chunked,
            (Some(0), false) | (None, false) => BodyFraming::None,
            (Some(n), false) => BodyFraming::Length(n),
        })
    }

    /// Keeps the first value of a list field, and notes a second line of it.
    fn list<'a>(&mut self, field: &mut Option<&'a [u8]>, value: &'a [u8], bit: u8) {
        if field.is_some() {
            self.repeated |= bit;
        }
        field.get_or_insert(value);
    }

    /// Reads a field tachyon acts on into `head`; the rest are skipped.
    /// Inlined: it is the inner loop of every request.
    #[inline(always)]
    fn field<'a>(
        &mut self,
        head: &mut RequestHead<'a>,
        name: &'a [u8],
        value: &'a [u8],
    ) -> Result<(), ParseError> {
        // Dispatch on length first: most fields a browser sends are skipped
        // after one comparison.
        match name.len() {
            4 if syntax::is_name(name, b"host") => {
                // RFC 9112 §3.2: more than one Host is a 400.
                let first = head.host.replace(value).is_none();
                if !first {
                    return Err(ParseError::DuplicateHost);
                }
            }
            5 if syntax::is_name(name, b"range") => head.range = Some(value),
            6 if syntax::is_name(name, b"accept") => self.list(&mut head.accept, value, ACCEPT),
            7 if syntax::is_name(name, b"referer") => head.referer = Some(value),
            8 if syntax::is_name(name, b"if-match") => {
                self.list(&mut head.if_match, value, IF_MATCH)
            }
            8 if syntax::is_name(name, b"if-range") => head.if_range = Some(value),
            10 if syntax::is_name(name, b"connection") => {
                for token in tokens(value) {
                    if token.eq_ignore_ascii_case(b"close") {
                        head.keep_alive = false;
                    } else if token.eq_ignore_ascii_case(b"keep-alive")
                        && head.version == Version::Http10
                    {
                        head.keep_alive = true;
                    }
                }
            }
            10 if syntax::is_name(name, b"user-agent") => head.user_agent = Some(value),
            13 if syntax::is_name(name, b"if-none-match") => {
                self.list(&mut head.if_none_match, value, IF_NONE_MATCH)
            }
            15 if syntax::is_name(name, b"accept-encoding") => {
                self.list(&mut head.accept_encoding, value, ACCEPT_ENCODING)
            }
            20 if syntax::is_name(name, b"available-dictionary") => {
                head.available_dictionary = Some(value)
            }
            17 if syntax::is_name(name, b"if-modified-since") => {
                head.if_modified_since = Some(value)
            }
            19 if syntax::is_name(name, b"if-unmodified-since") => {
                head.if_unmodified_since = Some(value)
            }
            14 if syntax::is_name(name, b"content-length") => {
                let len = parse_decimal(value).ok_or(ParseError::BadContentLength)?;
                // Repeated identical values are tolerated (RFC 9110 §8.6); differing ones are not.
                if self.content_length.is_some_and(|prev| prev != len) {
                    return Err(ParseError::BadContentLength);
                }
                self.content_length = Some(len);
            }
            17 if syntax::is_name(name, b"transfer-encoding") => {
                // RFC 9112 §6.1: chunked must be the final coding, else the length is unknowable.
                let last = tokens(value).last().ok_or(ParseError::AmbiguousFraming)?;
                if !last.eq_ignore_ascii_case(b"chunked") || self.transfer_encoding {
                    return Err(ParseError::AmbiguousFraming);
                }
                self.transfer_encoding = true;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Joins the lines of each repeated list field into `combined` and points
/// the head at the joined values. Reads the field lines again (`lines`
/// starts where they do): they were found sound on the first pass.
fn combine<'a>(
    head: &mut RequestHead<'a>,
    lines: syntax::Fields<'a>,
    repeated: u8,
    combined: &'a mut Vec<u8>,
) {
    let fields: [(u8, &[u8]); 4] = [
        (IF_NONE_MATCH, b"if-none-match"),
        (IF_MATCH, b"if-match"),
        (ACCEPT_ENCODING, b"accept-encoding"),
        (ACCEPT, b"accept"),
    ];
    combined.clear();
    let mut spans = [0..0, 0..0, 0..0, 0..0];
    for (i, (bit, name)) in fields.iter().enumerate() {
        if repeated & bit == 0 {
            continue;
        }
        let start = combined.len();
        let mut lines = lines.clone();
        while let Ok(Step::Done(FieldLine::Field { name: seen, value })) = lines.next_line() {
            if !syntax::is_name(seen, name) {
                continue;
            }
            if combined.len() > start {
                combined.extend_from_slice(b", ");
            }
            combined.extend_from_slice(value);
        }
        spans[i] = start..combined.len();
    }
    let combined: &'a [u8] = combined;
    let slots = [
        &mut head.if_none_match,
        &mut head.if_match,
        &mut head.accept_encoding,
        &mut head.accept,
    ];
    for ((slot, span), (bit, _)) in slots.into_iter().zip(spans).zip(fields) {
        if repeated & bit != 0 {
            *slot = Some(&combined[span]);
        }
    }
}

/// Decides whether an incomplete head may still become valid.
fn partial<'a>(input: &[u8], limits: &HeadLimits) -> Result<Parsed<'a>, ParseError> {
    if input.len() <= limits.max_head_bytes {
        return Ok(Parsed::Partial);
    }
    // Over the limit: if the request line never ended, the target is what is too long.
    let line_end = memchr::memchr(b'\n', input).unwrap_or(input.len());
    if line_end > limits.max_target_bytes {
        Err(ParseError::UriTooLong)
    } else {
        Err(ParseError::HeadTooLarge)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(input: &[u8]) -> RequestHead<'_> {
        let combined = Box::leak(Box::default());
        match parse(input, combined, &HeadLimits::default()) {
            Ok(Parsed::Complete(head)) => head,
            other => panic!("expected a complete head, got {other:?}"),
        }
    }

    fn error(input: &[u8]) -> ParseError {
        match parse(input, &mut Vec::new(), &HeadLimits::default()) {
            Err(e) => e,
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn repeated_list_fields_are_combined() {
        let h = head(
            b"GET / HTTP/1.1\r\nHost: a\r\nIf-None-Match: \"x\"\r\nAccept-Encoding: gzip\r\n\
              if-none-match: \"y\", \"z\"\r\nAccept-Encoding: br;q=0.5\r\n\r\n",
        );
        assert_eq!(h.if_none_match, Some(&b"\"x\", \"y\", \"z\""[..]));
        assert_eq!(h.accept_encoding, Some(&b"gzip, br;q=0.5"[..]));
        assert_eq!(h.if_match, None);
    }

    #[test]
    fn an_absolute_form_target_names_the_host() {
        let h = head(b"GET http://b.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n");
        assert_eq!(h.host, Some(&b"b.test"[..]));
        let h = head(b"GET https://u@c.test:8443?q HTTP/1.1\r\nHost: a.test\r\n\r\n");
        assert_eq!(h.host, Some(&b"c.test:8443"[..]));
        assert_eq!(
            error(b"GET http:///x HTTP/1.1\r\nHost: a\r\n\r\n"),
            ParseError::BadTarget
        );
    }

    #[test]
    fn a_bare_lf_is_rejected() {
        assert_eq!(
            error(b"GET / HTTP/1.1\nHost: a\r\n\r\n"),
            ParseError::Malformed
        );
        assert_eq!(
            error(b"GET / HTTP/1.1\r\nHost: a\n\n"),
            ParseError::Malformed
        );
    }

    #[test]
    fn a_bare_lf_is_found_wherever_it_is_in_a_long_head() {
        let fields: Vec<String> = (0..12).map(|i| format!("X-Field-{i}: {i:0>40}")).collect();
        for bare in 0..fields.len() + 2 {
            let mut text = String::from("GET / HTTP/1.1");
            for (line, field) in std::iter::once("Host: a")
                .chain(fields.iter().map(String::as_str))
                .enumerate()
            {
                text.push_str(if line == bare { "\n" } else { "\r\n" });
                text.push_str(field);
            }
            text.push_str(if bare == fields.len() + 1 {
                "\n\n"
            } else {
                "\r\n\r\n"
            });
            assert_eq!(
                error(text.as_bytes()),
                ParseError::Malformed,
                "bare LF ending line {bare}"
            );
            let fixed = text.replace("\r\n", "\n").replace('\n', "\r\n");
            assert_eq!(head(fixed.as_bytes()).head_len, fixed.len());
        }
    }

    #[test]
    fn simple_get_keeps_alive_by_default() {
        let h = head(b"GET /a.html?x=1 HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(h.method, Method::Get);
        assert_eq!(h.raw_target, b"/a.html?x=1");
        assert!(h.keep_alive);
        assert_eq!(h.body, BodyFraming::None);
    }

    #[test]
    fn http10_closes_unless_keep_alive_is_asked() {
        assert!(!head(b"GET / HTTP/1.0\r\n\r\n").keep_alive);
        assert!(head(b"GET / HTTP/1.0\r\nConnection: Keep-Alive\r\n\r\n").keep_alive);
        assert!(!head(b"GET / HTTP/1.1\r\nHost: x\r\nConnection: foo, close\r\n\r\n").keep_alive);
    }

    #[test]
    fn every_split_point_is_partial_until_the_end() {
        // The shotgun approach (hyper decode.rs): the head arrives cut at every offset.
        let full = b"GET /x HTTP/1.1\r\nHost: a\r\nRange: bytes=0-1\r\n\r\n";
        for cut in 0..full.len() {
            assert!(
                matches!(
                    parse(&full[..cut], &mut Vec::new(), &HeadLimits::default()),
                    Ok(Parsed::Partial)
                ),
                "cut at {cut}"
            );
        }
        assert_eq!(head(full).head_len, full.len());
    }

    #[test]
    fn rejections_map_to_their_status() {
        let cases: &[(&[u8], ParseError, &str)] = &[
            (b"GET / HTTP/1.1\r\n\r\n", ParseError::MissingHost, "1.1 without Host"),
            (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", ParseError::DuplicateHost, "two Hosts"),
            (b"GET / HTTP/2.0\r\nHost: a\r\n\r\n", ParseError::Version, "HTTP/2.0 over h1"),
            (b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n", ParseError::BadContentLength, "differing CL"),
            (b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: -1\r\n\r\n", ParseError::BadContentLength, "negative CL"),
            (b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n", ParseError::AmbiguousFraming, "CL and TE"),
            (b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", ParseError::AmbiguousFraming, "chunked not last"),
            (b"GET / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n", ParseError::AmbiguousFraming, "TE in 1.0"),
            (b"GET /\x01 HTTP/1.1\r\nHost: a\r\n\r\n", ParseError::Malformed, "control byte in target"),
            (b"GET / HTTP/1.1\r\nHo st: a\r\n\r\n", ParseError::Malformed, "space in name"),
        ];
        for (input, expected, what) in cases {
            assert_eq!(error(input), *expected, "{what}");
        }
    }

    #[test]
    fn oversized_heads_are_414_or_431() {
        let limits = HeadLimits {
            max_head_bytes: 64,
            max_target_bytes: 32,
        };
        let long_line = [b"GET /".as_slice(), &[b'a'; 100]].concat();
        assert_eq!(
            parse(&long_line, &mut Vec::new(), &limits).unwrap_err(),
            ParseError::UriTooLong
        );
        let long_headers = [b"GET / HTTP/1.1\r\nX: ".as_slice(), &[b'a'; 100]].concat();
        assert_eq!(
            parse(&long_headers, &mut Vec::new(), &limits).unwrap_err(),
            ParseError::HeadTooLarge
        );
        assert_eq!(ParseError::UriTooLong.status().code(), 414);
        assert_eq!(ParseError::HeadTooLarge.status().code(), 431);
    }

    #[test]
    fn too_many_headers_is_431() {
        let mut input = b"GET / HTTP/1.1\r\nHost: a\r\n".to_vec();
        for i in 0..=MAX_HEADERS {
            input.extend_from_slice(format!("X-{i}: 1\r\n").as_bytes());
        }
        input.extend_from_slice(b"\r\n");
        let limits = HeadLimits {
            max_head_bytes: 1 << 20,
            max_target_bytes: 1024,
        };
        assert_eq!(
            parse(&input, &mut Vec::new(), &limits).unwrap_err(),
            ParseError::HeadTooLarge
        );
    }
}
