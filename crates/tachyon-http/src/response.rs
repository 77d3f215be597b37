//! Status codes and the bytes of response heads that do not depend on a file.
//!
//! File responses carry a head that the snapshot serializes once at load; this
//! module supplies the pieces every head shares (status lines, `Server`,
//! `nosniff`) and whole error responses. Invariant: everything written here is
//! a complete, valid head fragment ending in CRLF.

use crate::date::DateCache;

/// `Server` and `X-Content-Type-Options` go on every response.
pub const COMMON_HEADERS: &[u8] = b"Server: tachyon\r\nX-Content-Type-Options: nosniff\r\n";

/// Methods a static site answers; sent in `Allow` on 405 and OPTIONS (RFC 9110 §15.5.6).
pub const ALLOW: &[u8] = b"Allow: GET, HEAD, OPTIONS\r\n";

/// The status codes tachyon sends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    Ok,
    NoContent,
    PartialContent,
    MovedPermanently,
    Found,
    TemporaryRedirect,
    PermanentRedirect,
    NotModified,
    BadRequest,
    Forbidden,
    NotFound,
    MethodNotAllowed,
    NotAcceptable,
    RequestTimeout,
    PreconditionFailed,
    ContentTooLarge,
    UriTooLong,
    RangeNotSatisfiable,
    HeadersTooLarge,
    InternalError,
    ServiceUnavailable,
    VersionNotSupported,
}

impl Status {
    /// The numeric code.
    pub fn code(self) -> u16 {
        match self {
            Status::Ok => 200,
            Status::NoContent => 204,
            Status::PartialContent => 206,
            Status::MovedPermanently => 301,
            Status::Found => 302,
            Status::TemporaryRedirect => 307,
            Status::PermanentRedirect => 308,
            Status::NotModified => 304,
            Status::BadRequest => 400,
            Status::Forbidden => 403,
            Status::NotFound => 404,
            Status::MethodNotAllowed => 405,
            Status::NotAcceptable => 406,
            Status::RequestTimeout => 408,
            Status::PreconditionFailed => 412,
            Status::ContentTooLarge => 413,
            Status::UriTooLong => 414,
            Status::RangeNotSatisfiable => 416,
            Status::HeadersTooLarge => 431,
            Status::InternalError => 500,
            Status::ServiceUnavailable => 503,
            Status::VersionNotSupported => 505,
        }
    }

    /// The reason phrase (RFC 9110 §15).
    pub fn reason(self) -> &'static str {
        match self {
            Status::Ok => "OK",
            Status::NoContent => "No Content",
            Status::PartialContent => "Partial Content",
            Status::MovedPermanently => "Moved Permanently",
            Status::Found => "Found",
            Status::TemporaryRedirect => "Temporary Redirect",
            Status::PermanentRedirect => "Permanent Redirect",
            Status::NotModified => "Not Modified",
            Status::BadRequest => "Bad Request",
            Status::Forbidden => "Forbidden",
            Status::NotFound => "Not Found",
            Status::MethodNotAllowed => "Method Not Allowed",
            Status::NotAcceptable => "Not Acceptable",
            Status::RequestTimeout => "Request Timeout",
            Status::PreconditionFailed => "Precondition Failed",
            Status::ContentTooLarge => "Content Too Large",
            Status::UriTooLong => "URI Too Long",
            Status::RangeNotSatisfiable => "Range Not Satisfiable",
            Status::HeadersTooLarge => "Request Header Fields Too Large",
            Status::InternalError => "Internal Server Error",
            Status::ServiceUnavailable => "Service Unavailable",
            Status::VersionNotSupported => "HTTP Version Not Supported",
        }
    }

    /// Appends `HTTP/1.1 CODE REASON\r\n`. We always answer as HTTP/1.1, which
    /// RFC 9110 §6.2 allows for 1.0 clients too (the major version is what counts).
    pub fn write_line(self, out: &mut Vec<u8>) {
        out.extend_from_slice(b"HTTP/1.1 ");
        out.extend_from_slice(itoa::Buffer::new().format(self.code()).as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.reason().as_bytes());
        out.extend_from_slice(b"\r\n");
    }
}

/// How the connection continues after a response, which decides the
/// `Connection` header (RFC 9112 §9.3).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Persistence {
    /// HTTP/1.1 default: no header needed.
    KeepAlive,
    /// An HTTP/1.0 client asked for keep-alive: echo it, or it will close (ab -k relies on this).
    KeepAliveEcho,
    /// The server closes after this response.
    Close,
}

impl Persistence {
    /// The `Connection` header line for this outcome, if any.
    pub fn header(self) -> &'static [u8] {
        match self {
            Persistence::KeepAlive => b"",
            Persistence::KeepAliveEcho => b"Connection: keep-alive\r\n",
            Persistence::Close => b"Connection: close\r\n",
        }
    }
}

/// Appends `Date: ...\r\n` from the worker's cache.
pub fn write_date(out: &mut Vec<u8>, date: &DateCache) {
    out.extend_from_slice(b"Date: ");
    out.extend_from_slice(date.bytes());
    out.extend_from_slice(b"\r\n");
}

/// Appends `Content-Length: N\r\n`.
pub fn write_content_length(out: &mut Vec<u8>, len: u64) {
    out.extend_from_slice(b"Content-Length: ");
    out.extend_from_slice(itoa::Buffer::new().format(len).as_bytes());
    out.extend_from_slice(b"\r\n");
}

/// Appends a complete error response with a small HTML body (omitted for HEAD).
/// `extra` is inserted verbatim among the headers (e.g. `Allow` for 405,
/// `Content-Range` for 416) and must be empty or end in CRLF.
pub fn write_error(
    out: &mut Vec<u8>,
    status: Status,
    date: &DateCache,
    persistence: Persistence,
    extra: &[u8],
    head_only: bool,
) {
    let body = error_body(status);
    status.write_line(out);
    out.extend_from_slice(COMMON_HEADERS);
    write_date(out, date);
    out.extend_from_slice(b"Content-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\n");
    write_content_length(out, body.len() as u64);
    out.extend_from_slice(extra);
    out.extend_from_slice(persistence.header());
    out.extend_from_slice(b"\r\n");
    if !head_only {
        out.extend_from_slice(body.as_bytes());
    }
}

/// The small HTML page sent with an error status.
pub fn error_body(status: Status) -> String {
    format!(
        "<!doctype html>\n<title>{code} {reason}</title>\n<h1>{code} {reason}</h1>\n",
        code = status.code(),
        reason = status.reason()
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_response_is_a_complete_head_with_matching_length() {
        let date = DateCache::new();
        let mut out = Vec::new();
        write_error(
            &mut out,
            Status::NotFound,
            &date,
            Persistence::KeepAlive,
            b"",
            false,
        );
        let text = String::from_utf8(out).unwrap();
        let (head, body) = text.split_once("\r\n\r\n").unwrap();
        assert!(head.starts_with("HTTP/1.1 404 Not Found\r\n"));
        assert!(head.contains("X-Content-Type-Options: nosniff"));
        assert!(head.contains(&format!("Content-Length: {}", body.len())));
        assert!(
            !head.contains("Connection:"),
            "1.1 keep-alive needs no header"
        );
    }

    #[test]
    fn head_only_error_has_no_body_but_the_same_length() {
        let date = DateCache::new();
        let mut out = Vec::new();
        write_error(
            &mut out,
            Status::MethodNotAllowed,
            &date,
            Persistence::Close,
            ALLOW,
            true,
        );
        let text = String::from_utf8(out).unwrap();
        assert!(text.ends_with("\r\n\r\n"));
        assert!(text.contains("Allow: GET, HEAD, OPTIONS\r\n"));
        assert!(text.contains("Connection: close\r\n"));
        let len = error_body(Status::MethodNotAllowed).len();
        assert!(text.contains(&format!("Content-Length: {len}\r\n")));
    }
}
