//! A [`Reply`] written as HTTP/1.1 into an outbox: heads through
//! `tachyon_http::h1` (the only code that spells HTTP/1.1 fields), bodies
//! copied inline when small or queued as their own part.
//!
//! Owns what is HTTP/1.1's alone: a head followed by its body in one byte
//! stream, the body left out for HEAD. Does not decide the reply
//! ([`crate::reply`]) nor connection state ([`crate::conn`]).

use std::fs::File;
use std::sync::Arc;

use tachyon_http::h1::{self, Head};
use tachyon_http::multipart::Multipart;
use tachyon_http::range::ByteRange;
use tachyon_http::response::{Exchange, Name, Persistence};
use tachyon_http::{RequestHead, Status};
use tachyon_snapshot::{Body, Representation, Snapshot};

use crate::outbox::Outbox;
use crate::reply::{decide, open_for_sending, to_https, Reply, Scratch, Summary};

/// Bodies up to this size are copied next to their head so the response
/// leaves in one `send`; larger ones go out as their own part (writev of
/// the shared bytes, or a checked copy of a disk file) without a copy here.
const INLINE_BODY_MAX: u64 = 16 * 1024;

/// What the response did to the connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The connection may carry another request.
    Continue,
    /// The response said `Connection: close`.
    Close,
}

/// Where a request's answer comes from.
pub enum Source<'s> {
    /// The site.
    Site(&'s Snapshot),
    /// A redirect to HTTPS on this port (`--redirect-https`).
    Https(u16),
}

/// Decides the reply to `head` and writes it into `out`; returns what the
/// response did to the connection and what it was.
pub fn respond(
    head: &RequestHead<'_>,
    source: Source<'_>,
    exchange: Exchange<'_>,
    scratch: &mut Scratch,
    out: &mut Outbox,
) -> (Outcome, Summary) {
    let reply = match source {
        Source::Site(site) => decide(head, site, scratch),
        Source::Https(port) => to_https(head, port),
    };
    let exchange = if reply.closes() {
        exchange.closing()
    } else {
        exchange
    };
    let (reply, opened) = open_for_sending(reply, exchange.head_only);
    let summary = reply.summary(exchange.head_only);
    write(reply, &exchange, opened.as_ref(), out);
    let outcome = match exchange.persistence {
        Persistence::Close => Outcome::Close,
        Persistence::KeepAlive | Persistence::KeepAliveEcho => Outcome::Continue,
    };
    (outcome, summary)
}

/// Writes `reply` as HTTP/1.1; `opened` is its body's file when the
/// file is opened per response (see [`open_for_sending`]).
pub fn write(
    reply: Reply<'_>,
    exchange: &Exchange<'_>,
    opened: Option<&Arc<File>>,
    out: &mut Outbox,
) {
    let push = |file: &Arc<Representation>, range: std::ops::Range<u64>, out: &mut Outbox| {
        body(file, range, exchange, opened, out)
    };
    match reply {
        Reply::Whole(file) => {
            Head::prepared(out.buf(), file.h1.ok_head()).finish(exchange);
            push(file, 0..file.len, out);
        }
        Reply::NotModified(file) => {
            let mut head = Head::start(out.buf(), Status::NotModified);
            head.block(file.h1.validators());
            head.finish(exchange);
        }
        Reply::Slice(file, range) => {
            let mut head = Head::start(out.buf(), Status::PartialContent);
            head.block(file.h1.validators())
                .block(file.h1.content())
                .content_range(range, file.len)
                .content_length(range.len());
            head.finish(exchange);
            push(file, range.start..range.end, out);
        }
        Reply::Slices(file, ranges) => multipart(file, ranges.as_slice(), exchange, opened, out),
        Reply::Unsatisfiable(len) => {
            let mut head = Head::start(out.buf(), Status::RangeNotSatisfiable);
            head.unsatisfied_range(len).content_length(0);
            head.finish(exchange);
        }
        Reply::Redirect {
            status,
            location,
            query,
        } => {
            let mut head = Head::start(out.buf(), status);
            head.field_parts(&Name::Location, &[location, query])
                .content_length(0);
            head.finish(exchange);
        }
        Reply::ToHttps { host, port, target } => {
            let mut digits = itoa::Buffer::new();
            let (colon, port): (&[u8], &[u8]) = match port {
                Some(port) => (b":", digits.format(port).as_bytes()),
                None => (b"", b""),
            };
            let mut head = Head::start(out.buf(), Status::PermanentRedirect);
            head.field_parts(&Name::Location, &[b"https://", host, colon, port, target])
                .content_length(0);
            head.finish(exchange);
        }
        Reply::NotFoundPage(page) => {
            let mut head = Head::start(out.buf(), Status::NotFound);
            head.field(&Name::CacheControl, b"no-cache")
                .block(page.h1.content())
                .content_length(page.len);
            head.finish(exchange);
            push(page, 0..page.len, out);
        }
        Reply::Options => h1::options(out.buf(), exchange),
        Reply::Error(status) => h1::error(out.buf(), status, exchange),
        Reply::Rejected(error) => h1::error(out.buf(), error.status(), exchange),
    }
}

/// `multipart/byteranges` (RFC 9110 §14.6), with the length computed up front
/// so the response is not chunked.
fn multipart(
    file: &Arc<Representation>,
    ranges: &[ByteRange],
    exchange: &Exchange<'_>,
    opened: Option<&Arc<File>>,
    out: &mut Outbox,
) {
    let framing = Multipart {
        boundary: &file.etag[1..file.etag.len() - 1],
        content_type: &file.content_type,
        total: file.len,
    };
    let mut head = Head::start(out.buf(), Status::PartialContent);
    head.block(file.h1.validators())
        .field_parts(&Name::ContentType, &framing.content_type_parts())
        .content_length(framing.body_len(ranges));
    head.finish(exchange);
    if exchange.head_only {
        return;
    }
    for r in ranges {
        framing.part_head(out.buf(), *r);
        body(file, r.start..r.end, exchange, opened, out);
    }
    framing.closing(out.buf());
}

/// Appends a body range unless the exchange is head-only: copied inline
/// when small, else as its own part.
fn body(
    file: &Arc<Representation>,
    range: std::ops::Range<u64>,
    exchange: &Exchange<'_>,
    opened: Option<&Arc<File>>,
    out: &mut Outbox,
) {
    if exchange.head_only {
        return;
    }
    // Heap bodies only: a frozen copy is in memory too, but a pipe splices
    // it for less (see the snapshot's `FREEZE_FROM`).
    match &file.body {
        Body::Memory(bytes) if range.end - range.start <= INLINE_BODY_MAX => {
            out.buf()
                .extend_from_slice(&bytes[range.start as usize..range.end as usize]);
        }
        _ => out.push_body(file, range, opened),
    }
}
