//! A [`Reply`] written out: its head in the protocol's dialect, its body
//! handed to the protocol's [`Carrier`]. The one place that maps a reply
//! to a head and a body, for every protocol, as h2o flattens one response
//! for HTTP/1.1 and HTTP/2 alike.
//!
//! Owns the head of each kind of reply and the order of its body's parts.
//! Does not decide the reply ([`crate::reply`]) nor move bytes: HTTP/1.1
//! carries the body after its head in the outbox ([`crate::h1`]), HTTP/2 in
//! DATA frames under flow control ([`crate::h2`]).
//!
//! Invariant: a body is handed over in full, or not at all for a response
//! to HEAD, and its length is the one the head announced.

use std::ops::Range;
use std::sync::Arc;

use tachyon_http::head::{self, Dialect, Head, Prepared};
use tachyon_http::range::ByteRange;
use tachyon_http::response::{ErrorPage, Exchange, Name};
use tachyon_http::Status;
use tachyon_snapshot::Representation;

use crate::reply::{multipart, Reply};

/// How a protocol carries a response: the dialect of its heads, and where
/// the head and the body's parts go.
pub trait Carrier {
    type Dialect: Dialect;

    /// A representation's fields prepared at load in this dialect.
    fn prepared(file: &Representation) -> &Prepared<Self::Dialect>;

    /// The buffer the head is written into.
    fn head(&mut self) -> &mut Vec<u8>;

    /// A range of a representation's body.
    fn file(&mut self, file: &Arc<Representation>, range: Range<u64>);

    /// Bytes made for this response (an error page, multipart framing),
    /// written by `write` where the carrier wants them.
    fn made(&mut self, write: impl FnOnce(&mut Vec<u8>));
}

/// Writes `reply`'s head and hands its body to `carrier` (none for HEAD).
pub fn write<C: Carrier>(reply: Reply<'_>, exchange: &Exchange<'_>, carrier: &mut C) {
    let body = !exchange.head_only;
    match reply {
        Reply::Whole(file) => {
            Head::<C::Dialect>::prepared(carrier.head(), C::prepared(file).ok_head())
                .finish(exchange);
            if body {
                carrier.file(file, 0..file.len);
            }
        }
        Reply::NotModified(file) => {
            let mut head = Head::<C::Dialect>::start(carrier.head(), Status::NotModified);
            head.block(C::prepared(file).validators());
            head.finish(exchange);
        }
        Reply::Slice(file, range) => {
            let prepared = C::prepared(file);
            let mut head = Head::<C::Dialect>::start(carrier.head(), Status::PartialContent);
            head.block(prepared.validators())
                .block(prepared.content())
                .content_range(range, file.len)
                .content_length(range.len());
            head.finish(exchange);
            if body {
                carrier.file(file, range.start..range.end);
            }
        }
        Reply::Slices(file, ranges) => slices(file, ranges.as_slice(), exchange, carrier),
        Reply::Unsatisfiable(len) => {
            let mut head = Head::<C::Dialect>::start(carrier.head(), Status::RangeNotSatisfiable);
            head.unsatisfied_range(len).content_length(0);
            head.finish(exchange);
        }
        Reply::Redirect {
            status,
            location,
            query,
        } => {
            let mut head = Head::<C::Dialect>::start(carrier.head(), status);
            head.field_parts(&Name::Location, &[location, query])
                .content_length(0);
            head.finish(exchange);
        }
        Reply::ToHttps { host, port, target } => {
            to_https(host, port, target, exchange, carrier);
        }
        Reply::NotFoundPage(page) => {
            let mut head = Head::<C::Dialect>::start(carrier.head(), Status::NotFound);
            head.field(&Name::CacheControl, b"no-cache")
                .block(C::prepared(page).content())
                .content_length(page.len);
            head.finish(exchange);
            if body {
                carrier.file(page, 0..page.len);
            }
        }
        Reply::Options => head::options::<C::Dialect>(carrier.head(), exchange),
        Reply::Text(text) => {
            let mut head = Head::<C::Dialect>::start(carrier.head(), Status::Ok);
            head.field(&Name::ContentType, b"text/plain")
                .field(&Name::CacheControl, b"no-store")
                .content_length(text.len() as u64);
            head.finish(exchange);
            if body {
                carrier.made(|buf| buf.extend_from_slice(text));
            }
        }
        Reply::Error(status) => error(status, exchange, carrier),
        // HTTP/1.1 closes after it (`Reply::closes`); HTTP/2 ends only the
        // stream: its framing is not in doubt.
        Reply::Rejected(e) => error(e.status(), exchange, carrier),
    }
}

/// A 308 to the same target over HTTPS, on `port` when not 443.
fn to_https<C: Carrier>(
    host: &[u8],
    port: Option<u16>,
    target: &[u8],
    exchange: &Exchange<'_>,
    carrier: &mut C,
) {
    let mut digits = itoa::Buffer::new();
    let (colon, port): (&[u8], &[u8]) = match port {
        Some(port) => (b":", digits.format(port).as_bytes()),
        None => (b"", b""),
    };
    let mut head = Head::<C::Dialect>::start(carrier.head(), Status::PermanentRedirect);
    head.field_parts(&Name::Location, &[b"https://", host, colon, port, target])
        .content_length(0);
    head.finish(exchange);
}

fn error<C: Carrier>(status: Status, exchange: &Exchange<'_>, carrier: &mut C) {
    head::error::<C::Dialect>(carrier.head(), status, exchange);
    if !exchange.head_only {
        carrier.made(|buf| ErrorPage(status).write(buf));
    }
}

/// `multipart/byteranges` (RFC 9110 §14.6), its length announced, so the
/// response is not chunked.
fn slices<C: Carrier>(
    file: &Arc<Representation>,
    ranges: &[ByteRange],
    exchange: &Exchange<'_>,
    carrier: &mut C,
) {
    let framing = multipart(file);
    let mut head = Head::<C::Dialect>::start(carrier.head(), Status::PartialContent);
    head.block(C::prepared(file).validators())
        .field_parts(&Name::ContentType, &framing.content_type_parts())
        .content_length(framing.body_len(ranges));
    head.finish(exchange);
    if exchange.head_only {
        return;
    }
    for r in ranges {
        carrier.made(|buf| framing.part_head(buf, *r));
        carrier.file(file, r.start..r.end);
    }
    carrier.made(|buf| framing.closing(buf));
}

#[cfg(test)]
mod tests {
    //! Tables, hyper's role.rs style: each reply, the HTTP/1.1 bytes it
    //! is written as, and the HTTP/2 header block it is written as
    //! (decoded), with the body handed over in both.

    use bytes::Bytes;
    use tachyon_http::date::DateCache;
    use tachyon_http::encoding::Coding;
    use tachyon_http::h1::Http1;
    use tachyon_http::h2::hpack::decode::BlockDecoder;
    use tachyon_http::h2::hpack::Hpack;
    use tachyon_http::h3::qpack::{self, Qpack};
    use tachyon_http::range::{self, RangeDecision};
    use tachyon_http::response::{Field, Persistence};
    use tachyon_http::ParseError;
    use tachyon_snapshot::Body;

    use super::*;

    /// What a carrier was handed: the head, and the body as text
    /// (`[file a..b]` for a range of the representation).
    struct Recorded<D> {
        head: Vec<u8>,
        body: String,
        dialect: std::marker::PhantomData<D>,
    }

    impl<D: Dialect> Recorded<D> {
        fn new() -> Self {
            Recorded {
                head: Vec::new(),
                body: String::new(),
                dialect: std::marker::PhantomData,
            }
        }
    }

    /// Where each dialect's prepared fields are in a representation.
    trait Stored: Dialect + Sized {
        fn stored(file: &Representation) -> &Prepared<Self>;
    }

    impl Stored for Http1 {
        fn stored(file: &Representation) -> &Prepared<Http1> {
            &file.h1
        }
    }

    impl Stored for Hpack {
        fn stored(file: &Representation) -> &Prepared<Hpack> {
            &file.h2
        }
    }

    impl Stored for Qpack {
        fn stored(file: &Representation) -> &Prepared<Qpack> {
            &file.h3
        }
    }

    impl<D: Stored> Carrier for Recorded<D> {
        type Dialect = D;
        fn prepared(file: &Representation) -> &Prepared<D> {
            D::stored(file)
        }
        fn head(&mut self) -> &mut Vec<u8> {
            &mut self.head
        }
        fn file(&mut self, _: &Arc<Representation>, range: Range<u64>) {
            self.body += &format!("[file {}..{}]", range.start, range.end);
        }
        fn made(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
            let mut bytes = Vec::new();
            write(&mut bytes);
            self.body += &String::from_utf8(bytes).unwrap();
        }
    }

    /// A 100-byte br-encoded text file with an ETag and Cache-Control.
    fn file() -> Arc<Representation> {
        let fields = [
            Field::new(Name::ETag, "\"00ff-br\"").unwrap(),
            Field::new(Name::CacheControl, "no-cache").unwrap(),
        ];
        let (ty, coding, len) = ("text/plain", Some(Coding::Br), 100);
        Arc::new(Representation {
            body: Body::Memory(Bytes::from(vec![b'x'; 100])),
            len,
            etag: Box::from(&b"\"00ff-br\""[..]),
            last_modified: 0,
            content_type: ty.into(),
            coding,
            fields: fields.to_vec().into(),
            h1: Prepared::new(&fields, ty, coding, len),
            h2: Prepared::new(&fields, ty, coding, len),
            h3: Prepared::new(&fields, ty, coding, len),
            encoded: Box::default(),
            deltas: Box::default(),
            saving: 0,
        })
    }

    /// Writes `reply` both ways: (HTTP/1.1 head text, its body) and
    /// (HTTP/2 block decoded as `name: value` lines, its body); HTTP/3's
    /// section, written too, must decode to HTTP/2's lines.
    fn both(reply: impl Fn() -> Reply<'static>, head_only: bool) -> [(String, String); 2] {
        let date = Box::leak(Box::new(DateCache::new()));
        let exchange = Exchange {
            date,
            persistence: Persistence::KeepAlive,
            head_only,
            fields: &[],
        };
        let mut h1 = Recorded::<Http1>::new();
        write(reply(), &exchange, &mut h1);
        let mut h2 = Recorded::<Hpack>::new();
        write(reply(), &exchange, &mut h2);
        let date = String::from_utf8_lossy(date.bytes()).into_owned();
        let mut lines = Vec::new();
        BlockDecoder::new(4096)
            .decode(&h2.head, |n, v, _| {
                lines.push(format!(
                    "{}: {}",
                    String::from_utf8_lossy(n),
                    String::from_utf8_lossy(v)
                ))
            })
            .unwrap();
        // HTTP/3 carries HTTP/2's field lines, in its order, and its body.
        let mut h3 = Recorded::<Qpack>::new();
        write(reply(), &exchange, &mut h3);
        let mut h3_lines = Vec::new();
        qpack::Decoder::default()
            .each(&h3.head, |n, v| {
                h3_lines.push(format!(
                    "{}: {}",
                    String::from_utf8_lossy(n),
                    String::from_utf8_lossy(v)
                ))
            })
            .unwrap();
        assert_eq!(
            (&h3_lines, &h3.body),
            (&lines, &h2.body),
            "HTTP/3 as HTTP/2"
        );
        let undated = |s: String| s.replace(&date, "DATE");
        [
            (undated(String::from_utf8(h1.head).unwrap()), h1.body),
            (undated(lines.join("\n")), h2.body),
        ]
    }

    fn leak(file: Arc<Representation>) -> &'static Arc<Representation> {
        Box::leak(Box::new(file))
    }

    const COMMON_H1: &str = "Server: tachyon\r\nX-Content-Type-Options: nosniff\r\n";
    const COMMON_H2: &str = "server: tachyon\nx-content-type-options: nosniff\n";

    #[test]
    fn a_whole_file() {
        let f = leak(file());
        let [(h1, b1), (h2, b2)] = both(|| Reply::Whole(f), false);
        assert_eq!(
            h1,
            format!("HTTP/1.1 200 OK\r\n{COMMON_H1}ETag: \"00ff-br\"\r\nCache-Control: no-cache\r\nContent-Type: text/plain\r\nContent-Encoding: br\r\nContent-Length: 100\r\nDate: DATE\r\n\r\n")
        );
        assert_eq!(
            h2,
            format!(":status: 200\n{COMMON_H2}etag: \"00ff-br\"\ncache-control: no-cache\ncontent-type: text/plain\ncontent-encoding: br\ncontent-length: 100\ndate: DATE")
        );
        assert_eq!(
            (b1.as_str(), b2.as_str()),
            ("[file 0..100]", "[file 0..100]")
        );
    }

    #[test]
    fn a_whole_file_to_head_has_no_body() {
        let f = leak(file());
        let [(h1, b1), (_, b2)] = both(|| Reply::Whole(f), true);
        assert!(h1.contains("Content-Length: 100\r\n"), "{h1}");
        assert_eq!((b1.as_str(), b2.as_str()), ("", ""));
    }

    #[test]
    fn not_modified_carries_the_validators_only() {
        let f = leak(file());
        let [(h1, b1), (h2, _)] = both(|| Reply::NotModified(f), false);
        assert_eq!(
            h1,
            format!("HTTP/1.1 304 Not Modified\r\n{COMMON_H1}ETag: \"00ff-br\"\r\nCache-Control: no-cache\r\nDate: DATE\r\n\r\n")
        );
        assert_eq!(
            h2,
            format!(
                ":status: 304\n{COMMON_H2}etag: \"00ff-br\"\ncache-control: no-cache\ndate: DATE"
            )
        );
        assert_eq!(b1, "");
    }

    #[test]
    fn one_range() {
        let f = leak(file());
        let range = ByteRange { start: 10, end: 20 };
        let [(h1, b1), (h2, b2)] = both(|| Reply::Slice(f, range), false);
        assert_eq!(
            h1,
            format!("HTTP/1.1 206 Partial Content\r\n{COMMON_H1}ETag: \"00ff-br\"\r\nCache-Control: no-cache\r\nContent-Type: text/plain\r\nContent-Encoding: br\r\nContent-Range: bytes 10-19/100\r\nContent-Length: 10\r\nDate: DATE\r\n\r\n")
        );
        assert_eq!(
            h2,
            format!(":status: 206\n{COMMON_H2}etag: \"00ff-br\"\ncache-control: no-cache\ncontent-type: text/plain\ncontent-encoding: br\ncontent-range: bytes 10-19/100\ncontent-length: 10\ndate: DATE")
        );
        assert_eq!(
            (b1.as_str(), b2.as_str()),
            ("[file 10..20]", "[file 10..20]")
        );
    }

    #[test]
    fn several_ranges_are_multipart_with_their_length_announced() {
        let f = leak(file());
        let RangeDecision::Partial(ranges) = range::decide(b"bytes=0-1,50-51", 100, 16) else {
            panic!("two ranges");
        };
        let [(h1, b1), (h2, b2)] = both(|| Reply::Slices(f, Box::new(ranges)), false);
        let body = "\r\n--tachyon-00ff-br\r\nContent-Type: text/plain\r\nContent-Range: bytes 0-1/100\r\n\r\n[file 0..2]\r\n--tachyon-00ff-br\r\nContent-Type: text/plain\r\nContent-Range: bytes 50-51/100\r\n\r\n[file 50..52]\r\n--tachyon-00ff-br--\r\n";
        // The announced length counts the two slices as their bytes.
        let len = body.len() - "[file 0..2]".len() - "[file 50..52]".len() + 4;
        assert_eq!(
            h1,
            format!("HTTP/1.1 206 Partial Content\r\n{COMMON_H1}ETag: \"00ff-br\"\r\nCache-Control: no-cache\r\nContent-Type: multipart/byteranges; boundary=tachyon-00ff-br\r\nContent-Length: {len}\r\nDate: DATE\r\n\r\n")
        );
        assert_eq!(
            h2,
            format!(":status: 206\n{COMMON_H2}etag: \"00ff-br\"\ncache-control: no-cache\ncontent-type: multipart/byteranges; boundary=tachyon-00ff-br\ncontent-length: {len}\ndate: DATE")
        );
        assert_eq!((b1.as_str(), b2.as_str()), (body, body));
    }

    #[test]
    fn unsatisfiable_redirects_and_options() {
        let [(h1, _), (h2, _)] = both(|| Reply::Unsatisfiable(100), false);
        assert_eq!(h1, format!("HTTP/1.1 416 Range Not Satisfiable\r\n{COMMON_H1}Content-Range: bytes */100\r\nContent-Length: 0\r\nDate: DATE\r\n\r\n"));
        assert_eq!(h2, format!(":status: 416\n{COMMON_H2}content-range: bytes */100\ncontent-length: 0\ndate: DATE"));
        let redirect = || Reply::Redirect {
            status: Status::MovedPermanently,
            location: b"/blog/",
            query: b"?a=1",
        };
        let [(h1, _), (h2, _)] = both(redirect, false);
        assert_eq!(h1, format!("HTTP/1.1 301 Moved Permanently\r\n{COMMON_H1}Location: /blog/?a=1\r\nContent-Length: 0\r\nDate: DATE\r\n\r\n"));
        assert_eq!(
            h2,
            format!(":status: 301\n{COMMON_H2}location: /blog/?a=1\ncontent-length: 0\ndate: DATE")
        );
        let to_https = || Reply::ToHttps {
            host: b"example.com",
            port: Some(8443),
            target: b"/a?b",
        };
        let [(h1, _), (h2, _)] = both(to_https, false);
        assert!(
            h1.contains("\r\nLocation: https://example.com:8443/a?b\r\n"),
            "{h1}"
        );
        assert!(
            h2.contains("\nlocation: https://example.com:8443/a?b\n"),
            "{h2}"
        );
        let [(h1, _), (h2, _)] = both(|| Reply::Options, false);
        assert_eq!(h1, format!("HTTP/1.1 204 No Content\r\n{COMMON_H1}Allow: GET, HEAD, OPTIONS\r\nDate: DATE\r\n\r\n"));
        assert_eq!(
            h2,
            format!(":status: 204\n{COMMON_H2}allow: GET, HEAD, OPTIONS\ndate: DATE")
        );
    }

    #[test]
    fn an_acme_answer_is_plain_text_never_stored() {
        let text = b"token.thumbprint";
        let [(h1, b1), (h2, b2)] = both(|| Reply::Text(text), false);
        assert_eq!(
            h1,
            format!("HTTP/1.1 200 OK\r\n{COMMON_H1}Content-Type: text/plain\r\nCache-Control: no-store\r\nContent-Length: 16\r\nDate: DATE\r\n\r\n")
        );
        assert_eq!(
            h2,
            format!(":status: 200\n{COMMON_H2}content-type: text/plain\ncache-control: no-store\ncontent-length: 16\ndate: DATE")
        );
        assert_eq!(
            (b1.as_str(), b2.as_str()),
            ("token.thumbprint", "token.thumbprint")
        );
    }

    #[test]
    fn errors_carry_their_page_and_its_fields() {
        let page = "<!doctype html>\n<title>405 Method Not Allowed</title>\n<h1>405 Method Not Allowed</h1>\n";
        let [(h1, b1), (h2, b2)] = both(|| Reply::Error(Status::MethodNotAllowed), false);
        assert_eq!(
            h1,
            format!("HTTP/1.1 405 Method Not Allowed\r\n{COMMON_H1}Content-Type: text/html; charset=utf-8\r\nCache-Control: no-store\r\nContent-Length: {}\r\nAllow: GET, HEAD, OPTIONS\r\nDate: DATE\r\n\r\n", page.len())
        );
        assert_eq!(
            h2,
            format!(":status: 405\n{COMMON_H2}content-type: text/html; charset=utf-8\ncache-control: no-store\ncontent-length: {}\nallow: GET, HEAD, OPTIONS\ndate: DATE", page.len())
        );
        assert_eq!((b1.as_str(), b2.as_str()), (page, page));
        let [(h1, b1), _] = both(|| Reply::Rejected(ParseError::MissingHost), false);
        assert!(h1.starts_with("HTTP/1.1 400 Bad Request\r\n"), "{h1}");
        assert!(b1.contains("400 Bad Request"), "{b1}");
        let [(h1, _), _] = both(|| Reply::Error(Status::ServiceUnavailable), false);
        assert!(h1.contains("\r\nRetry-After: 1\r\n"), "{h1}");
    }

    #[test]
    fn the_site_s_404_page() {
        let f = leak(file());
        let [(h1, b1), (h2, b2)] = both(|| Reply::NotFoundPage(f), false);
        assert_eq!(
            h1,
            format!("HTTP/1.1 404 Not Found\r\n{COMMON_H1}Cache-Control: no-cache\r\nContent-Type: text/plain\r\nContent-Encoding: br\r\nContent-Length: 100\r\nDate: DATE\r\n\r\n")
        );
        assert_eq!(
            h2,
            format!(":status: 404\n{COMMON_H2}cache-control: no-cache\ncontent-type: text/plain\ncontent-encoding: br\ncontent-length: 100\ndate: DATE")
        );
        assert_eq!(
            (b1.as_str(), b2.as_str()),
            ("[file 0..100]", "[file 0..100]")
        );
    }
}
