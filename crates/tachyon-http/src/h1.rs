//! The HTTP/1.1 encoder: the only code that spells the response model of
//! [`crate::response`] as HTTP/1.1 bytes.
//!
//! Two layers, as the fast path needs: [`Prepared`] holds a representation's
//! fields encoded once at load (the 200 head is a single copy per request),
//! and [`Head`] writes the per-request rest around them. Does not decide
//! anything: which status and fields a request gets is the caller's choice.
//! Invariant: a head written through [`Head`] ends in exactly one blank
//! line, and every field value in it was checked when its [`Field`] was built.

use crate::encoding::Coding;
use crate::range::ByteRange;
use crate::response::{
    self, ErrorPage, Exchange, Field, FieldWriter, Name, Persistence, Status, ALLOWED_METHODS,
    NOSNIFF, RETRY_AFTER_SECS, SERVER,
};

/// A response head being written into an output buffer.
pub struct Head<'b> {
    buf: &'b mut Vec<u8>,
}

impl FieldWriter for Head<'_> {
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

impl<'b> Head<'b> {
    /// Starts a head with its status line and the fields every response
    /// carries. Always `HTTP/1.1`, which RFC 9110 §6.2 allows for 1.0
    /// clients too (the major version is what counts).
    pub fn start(buf: &'b mut Vec<u8>, status: Status) -> Head<'b> {
        buf.extend_from_slice(b"HTTP/1.1 ");
        buf.extend_from_slice(status.code_text().as_bytes());
        buf.push(b' ');
        buf.extend_from_slice(status.reason().as_bytes());
        buf.extend_from_slice(b"\r\n");
        let mut head = Head { buf };
        head.common();
        head
    }

    /// Starts a head from a block prepared at load that already holds the
    /// status line (a representation's 200).
    pub fn prepared(buf: &'b mut Vec<u8>, block: &[u8]) -> Head<'b> {
        buf.extend_from_slice(block);
        Head { buf }
    }

    /// Appends fields encoded at load (see [`Prepared`]).
    pub fn block(&mut self, block: &[u8]) -> &mut Self {
        self.buf.extend_from_slice(block);
        self
    }

    /// Appends one field.
    pub fn field(&mut self, name: &Name, value: &[u8]) -> &mut Self {
        self.field_parts(name, &[value])
    }

    /// Appends one field whose value is the concatenation of `parts` (a
    /// location and the request's query), without joining them first.
    pub fn field_parts(&mut self, name: &Name, parts: &[&[u8]]) -> &mut Self {
        self.buf.extend_from_slice(name.as_str().as_bytes());
        self.buf.extend_from_slice(b": ");
        for part in parts {
            self.buf.extend_from_slice(part);
        }
        self.buf.extend_from_slice(b"\r\n");
        self
    }

    pub fn content_length(&mut self, len: u64) -> &mut Self {
        self.field(
            &Name::ContentLength,
            itoa::Buffer::new().format(len).as_bytes(),
        )
    }

    /// `Content-Range: bytes START-END/LEN` (RFC 9110 §14.4).
    pub fn content_range(&mut self, range: ByteRange, len: u64) -> &mut Self {
        write_content_range(self.buf, range, len);
        self
    }

    /// `Content-Range: bytes */LEN`, sent with a 416.
    pub fn unsatisfied_range(&mut self, len: u64) -> &mut Self {
        self.buf.extend_from_slice(b"Content-Range: bytes */");
        self.buf
            .extend_from_slice(itoa::Buffer::new().format(len).as_bytes());
        self.buf.extend_from_slice(b"\r\n");
        self
    }

    /// Ends the head: the connection's fields, `Date`, `Connection` when
    /// needed, the blank line.
    pub fn finish(self, exchange: &Exchange<'_>) {
        for field in exchange.fields {
            self.buf.extend_from_slice(field.name().as_str().as_bytes());
            self.buf.extend_from_slice(b": ");
            self.buf.extend_from_slice(field.value().as_bytes());
            self.buf.extend_from_slice(b"\r\n");
        }
        self.buf.extend_from_slice(b"Date: ");
        self.buf.extend_from_slice(exchange.date.bytes());
        self.buf.extend_from_slice(b"\r\n");
        self.buf.extend_from_slice(match exchange.persistence {
            Persistence::KeepAlive => b"",
            Persistence::KeepAliveEcho => b"Connection: keep-alive\r\n",
            Persistence::Close => b"Connection: close\r\n",
        });
        self.buf.extend_from_slice(b"\r\n");
    }

    fn common(&mut self) {
        self.field(&Name::Server, SERVER.as_bytes());
        self.field(&Name::XContentTypeOptions, NOSNIFF.as_bytes());
    }
}

/// Appends a `Content-Range` field line; multipart part heads use it too.
pub fn write_content_range(buf: &mut Vec<u8>, range: ByteRange, len: u64) {
    let mut num = itoa::Buffer::new();
    buf.extend_from_slice(b"Content-Range: bytes ");
    buf.extend_from_slice(num.format(range.start).as_bytes());
    buf.push(b'-');
    buf.extend_from_slice(num.format(range.end - 1).as_bytes());
    buf.push(b'/');
    buf.extend_from_slice(num.format(len).as_bytes());
    buf.extend_from_slice(b"\r\n");
}

/// An extra field an error response carries, chosen by its status.
fn error_field(status: Status) -> Option<(Name, &'static str)> {
    match status {
        Status::MethodNotAllowed => Some((Name::Allow, ALLOWED_METHODS)),
        Status::ServiceUnavailable => Some((Name::RetryAfter, RETRY_AFTER_SECS)),
        _ => None,
    }
}

/// Appends a complete error response with its small HTML page (the page is
/// left out for HEAD; its length is still announced, RFC 9110 §9.3.2).
pub fn error(buf: &mut Vec<u8>, status: Status, exchange: &Exchange<'_>) {
    let page = ErrorPage(status);
    let mut head = Head::start(buf, status);
    head.field(&Name::ContentType, b"text/html; charset=utf-8")
        .field(&Name::CacheControl, b"no-store")
        .content_length(page.byte_len() as u64);
    if let Some((name, value)) = error_field(status) {
        head.field(&name, value.as_bytes());
    }
    head.finish(exchange);
    if !exchange.head_only {
        page.write(buf);
    }
}

/// The answer to OPTIONS: what a static site allows.
pub fn options(buf: &mut Vec<u8>, exchange: &Exchange<'_>) {
    let mut head = Head::start(buf, Status::NoContent);
    head.field(&Name::Allow, ALLOWED_METHODS.as_bytes());
    head.finish(exchange);
}

/// A representation's fields, encoded once at load: one buffer holding
/// the 200 status line and common fields, the representation's own fields
/// (validators and the rest, also sent with 206 and 304),
/// then the content fields (`Content-Type`, `Content-Encoding`, sent with
/// 200 and 206 but not 304, RFC 9110 §15.4.5) and `Content-Length`.
#[derive(Debug, Default)]
pub struct Prepared {
    bytes: Box<[u8]>,
    validators: std::ops::Range<usize>,
    content: std::ops::Range<usize>,
}

impl Prepared {
    /// Encodes `fields` (the representation's own, in order), its type,
    /// coding and length.
    pub fn new(fields: &[Field], content_type: &str, coding: Option<Coding>, len: u64) -> Prepared {
        let mut buf = Vec::with_capacity(256);
        let (validators, content) = response::representation(
            &mut Head::start(&mut buf, Status::Ok),
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

    /// The whole 200 head without `Date`, `Connection` and the blank line.
    pub fn ok_head(&self) -> &[u8] {
        &self.bytes
    }

    /// The representation's own fields (validators, caching, configured
    /// headers), without the ones [`Head::start`] writes.
    pub fn validators(&self) -> &[u8] {
        &self.bytes[self.validators.clone()]
    }

    /// `Content-Type`, and `Content-Encoding` for an encoded representation.
    pub fn content(&self) -> &[u8] {
        &self.bytes[self.content.clone()]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date::DateCache;

    fn exchange(date: &DateCache, persistence: Persistence, head_only: bool) -> Exchange<'_> {
        Exchange {
            date,
            persistence,
            head_only,
            fields: &[],
        }
    }

    fn text(buf: &[u8]) -> String {
        String::from_utf8(buf.to_vec()).unwrap()
    }

    #[test]
    fn an_error_is_a_complete_head_and_page_of_the_announced_length() {
        let date = DateCache::new();
        let mut out = Vec::new();
        error(
            &mut out,
            Status::NotFound,
            &exchange(&date, Persistence::KeepAlive, false),
        );
        let expected = format!(
            "HTTP/1.1 404 Not Found\r\n\
             Server: tachyon\r\n\
             X-Content-Type-Options: nosniff\r\n\
             Content-Type: text/html; charset=utf-8\r\n\
             Cache-Control: no-store\r\n\
             Content-Length: 68\r\n\
             Date: {}\r\n\
             \r\n\
             <!doctype html>\n<title>404 Not Found</title>\n<h1>404 Not Found</h1>\n",
            String::from_utf8_lossy(date.bytes())
        );
        assert_eq!(text(&out), expected);
    }

    #[test]
    fn a_head_only_405_names_the_allowed_methods_and_closes() {
        let date = DateCache::new();
        let mut out = Vec::new();
        error(
            &mut out,
            Status::MethodNotAllowed,
            &exchange(&date, Persistence::Close, true),
        );
        let expected = format!(
            "HTTP/1.1 405 Method Not Allowed\r\n\
             Server: tachyon\r\n\
             X-Content-Type-Options: nosniff\r\n\
             Content-Type: text/html; charset=utf-8\r\n\
             Cache-Control: no-store\r\n\
             Content-Length: {}\r\n\
             Allow: GET, HEAD, OPTIONS\r\n\
             Date: {}\r\n\
             Connection: close\r\n\
             \r\n",
            ErrorPage(Status::MethodNotAllowed).byte_len(),
            String::from_utf8_lossy(date.bytes())
        );
        assert_eq!(text(&out), expected);
    }

    #[test]
    fn connection_fields_come_before_the_date_on_every_head() {
        let date = DateCache::new();
        let hsts = [Field::new(Name::StrictTransportSecurity, "max-age=63072000").unwrap()];
        let exchange = Exchange {
            fields: &hsts,
            ..exchange(&date, Persistence::KeepAlive, false)
        };
        let mut out = Vec::new();
        options(&mut out, &exchange);
        let expected = format!(
            "HTTP/1.1 204 No Content\r\n\
             Server: tachyon\r\n\
             X-Content-Type-Options: nosniff\r\n\
             Allow: GET, HEAD, OPTIONS\r\n\
             Strict-Transport-Security: max-age=63072000\r\n\
             Date: {}\r\n\r\n",
            text(date.bytes())
        );
        assert_eq!(text(&out), expected);
    }

    #[test]
    fn an_unavailable_file_asks_the_client_to_retry() {
        let date = DateCache::new();
        let mut out = Vec::new();
        error(
            &mut out,
            Status::ServiceUnavailable,
            &exchange(&date, Persistence::KeepAliveEcho, false),
        );
        let out = text(&out);
        assert!(out.contains("\r\nRetry-After: 1\r\n"), "{out}");
        assert!(out.contains("\r\nConnection: keep-alive\r\n"), "{out}");
    }

    #[test]
    fn a_prepared_head_splits_into_validators_and_content_fields() {
        let fields = [
            Field::new(Name::ETag, "\"abc-br\"").unwrap(),
            Field::new(Name::CacheControl, "no-cache").unwrap(),
            Field::new(
                Name::custom("Content-Security-Policy").unwrap(),
                " default-src 'self' ",
            )
            .unwrap(),
        ];
        let prepared = Prepared::new(&fields, "text/html", Some(Coding::Br), 1234);
        assert_eq!(
            text(prepared.ok_head()),
            "HTTP/1.1 200 OK\r\n\
             Server: tachyon\r\n\
             X-Content-Type-Options: nosniff\r\n\
             ETag: \"abc-br\"\r\n\
             Cache-Control: no-cache\r\n\
             Content-Security-Policy: default-src 'self'\r\n\
             Content-Type: text/html\r\n\
             Content-Encoding: br\r\n\
             Content-Length: 1234\r\n"
        );
        assert_eq!(
            text(prepared.validators()),
            "ETag: \"abc-br\"\r\n\
             Cache-Control: no-cache\r\n\
             Content-Security-Policy: default-src 'self'\r\n"
        );
        assert_eq!(
            text(prepared.content()),
            "Content-Type: text/html\r\nContent-Encoding: br\r\n"
        );
    }

    #[test]
    fn a_range_head_names_the_slice_and_the_whole() {
        let date = DateCache::new();
        let mut out = Vec::new();
        let mut head = Head::start(&mut out, Status::PartialContent);
        head.content_range(ByteRange { start: 10, end: 20 }, 100)
            .content_length(10);
        head.finish(&exchange(&date, Persistence::KeepAlive, false));
        let out = text(&out);
        assert!(out.starts_with("HTTP/1.1 206 Partial Content\r\n"), "{out}");
        assert!(out.contains("\r\nContent-Range: bytes 10-19/100\r\nContent-Length: 10\r\n"));
        assert!(out.ends_with("\r\n\r\n") && !out.contains("Connection"));
    }

    #[test]
    fn field_values_with_line_breaks_cannot_be_built() {
        assert!(Field::new(Name::Location, "/a\r\nSet-Cookie: x").is_none());
        assert!(Name::custom("X Bad").is_none());
        assert!(Name::custom("").is_none());
    }
}
