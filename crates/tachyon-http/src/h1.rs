//! HTTP/1.1's spelling of a response head ([`Http1`], the only code that
//! spells the response model as HTTP/1.1 text), and the complete error
//! answer a connection writes when it cannot trust a request enough to go
//! further ([`error`]).
//!
//! Invariant: a head written in this dialect ends in exactly one blank
//! line.

use crate::head::{self, Dialect};
use crate::response::{ErrorPage, Exchange, Name, Persistence, Status};

/// HTTP/1.1: a status line, `Name: value` lines, `Connection` when the
/// connection's future needs saying, a blank line. Always `HTTP/1.1`,
/// which RFC 9110 §6.2 allows for 1.0 clients too (the major version is
/// what counts).
#[derive(Debug)]
pub struct Http1;

/// A head written as HTTP/1.1.
pub type Head<'b> = head::Head<'b, Http1>;
/// A representation's fields prepared as HTTP/1.1.
pub type Prepared = head::Prepared<Http1>;

impl Dialect for Http1 {
    fn status(buf: &mut Vec<u8>, status: Status) {
        buf.extend_from_slice(b"HTTP/1.1 ");
        buf.extend_from_slice(status.code_text().as_bytes());
        buf.push(b' ');
        buf.extend_from_slice(status.reason().as_bytes());
        buf.extend_from_slice(b"\r\n");
    }

    fn field(buf: &mut Vec<u8>, name: &Name, parts: &[&[u8]]) {
        buf.extend_from_slice(name.as_str().as_bytes());
        buf.extend_from_slice(b": ");
        for part in parts {
            buf.extend_from_slice(part);
        }
        buf.extend_from_slice(b"\r\n");
    }

    fn end(buf: &mut Vec<u8>, persistence: Persistence) {
        buf.extend_from_slice(match persistence {
            Persistence::KeepAlive => b"",
            Persistence::KeepAliveEcho => b"Connection: keep-alive\r\n",
            Persistence::Close => b"Connection: close\r\n",
        });
        buf.extend_from_slice(b"\r\n");
    }
}

/// Appends a complete error response with its small HTML page (the page is
/// left out for HEAD; its length is still announced, RFC 9110 §9.3.2).
pub fn error(buf: &mut Vec<u8>, status: Status, exchange: &Exchange<'_>) {
    head::error::<Http1>(buf, status, exchange);
    if !exchange.head_only {
        ErrorPage(status).write(buf);
    }
}

/// The answer to OPTIONS: what a static site allows.
pub fn options(buf: &mut Vec<u8>, exchange: &Exchange<'_>) {
    head::options::<Http1>(buf, exchange);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::date::DateCache;
    use crate::encoding::Coding;
    use crate::range::ByteRange;
    use crate::response::Field;

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
