//! HTTP/1.1 on a connection: the message loop that parses each request in
//! the input, frames its body to skip it, decides persistence and answers
//! ([`serve`]), and the carrier that writes a [`Reply`] as a head followed
//! by its body in one byte stream (small bodies copied inline, large ones
//! queued as their own part).
//!
//! Owns what is HTTP/1.1's alone: pipelining, `Connection`, request
//! bodies read and dropped, a request it cannot trust answered and the
//! connection closed, and the h2c upgrade by preface. Does not decide the
//! reply ([`crate::reply`]) nor the connection's life ([`crate::conn`]).

use std::fs::File;
use std::sync::Arc;
use std::time::Instant;

use tachyon_http::date::DateCache;
use tachyon_http::h1::Http1;
use tachyon_http::h2::PREFACE;
use tachyon_http::head::Prepared;
use tachyon_http::request::{self, BodyFraming, Parsed};
use tachyon_http::response::{Exchange, Persistence};
use tachyon_http::{Method, ParseError, RequestHead, Status, Version};
use tachyon_snapshot::{Body, Representation, Snapshot};

use crate::access::Client;
use crate::answer::{self, Carrier};
use crate::outbox::{Outbox, MAX_QUEUED};
use crate::reply::{decide, open_for_sending, to_https, Reply, Scratch, Summary};
use crate::serving::Serving;

/// What the HTTP/1.1 loop needs of its connection.
pub struct Facts<'f, 'c> {
    /// Who the client is, for the log.
    pub client: &'f Client<'c>,
    /// A TLS connection (HSTS fields; no h2c, no redirect to HTTPS).
    pub tls: bool,
    /// Request-body bytes still to be read and thrown away.
    pub discard: &'f mut u64,
}

/// What one pass of [`serve`] did.
pub struct Batch {
    /// Bytes of `data` used (heads and discarded bodies).
    pub consumed: usize,
    /// At least one request was answered.
    pub answered: bool,
    /// Stopped because enough output is queued; more requests may follow.
    pub held_back: bool,
    /// The last response closes the connection.
    pub close: bool,
    /// The close leaves client bytes unread (an error, a body not read,
    /// pipelined requests after `Connection: close`).
    pub linger: bool,
    /// The HTTP/2 preface starts at `consumed` (prior knowledge, RFC 9113
    /// §3.3): the rest of the input is HTTP/2.
    pub upgrade: bool,
}

/// Parses and answers requests from the start of `data` into `cx.out`;
/// `started` is when they arrived, when requests are timed.
pub fn serve(
    data: &[u8],
    conn: Facts<'_, '_>,
    cx: &mut Serving<'_>,
    started: Option<Instant>,
) -> Batch {
    let mut batch = Batch {
        consumed: 0,
        answered: false,
        held_back: false,
        close: false,
        linger: false,
        upgrade: false,
    };
    // A plain listener that also speaks HTTP/2 with prior knowledge.
    let h2c = cx.limits.h2.is_some() && !conn.tls;
    // Taken out for the loop: a parsed head borrows it while the rest of
    // `cx` answers.
    let mut combined = std::mem::take(cx.combined);
    while batch.consumed < data.len() {
        let rest = &data[batch.consumed..];
        if *conn.discard > 0 {
            let skip = (*conn.discard).min(rest.len() as u64);
            *conn.discard -= skip;
            batch.consumed += skip as usize;
            continue;
        }
        if cx.out.pending_bytes() > MAX_QUEUED {
            batch.held_back = true;
            break;
        }
        let head = match request::parse(rest, &mut combined, &cx.limits.head) {
            Ok(Parsed::Complete(head)) => head,
            Ok(Parsed::Partial) => break,
            Err(error) => {
                match unparsed(error, rest, h2c, &conn, cx) {
                    Unparsed::Upgrade => batch.upgrade = true,
                    Unparsed::Wait => {}
                    Unparsed::Close => {
                        batch.close = true;
                        batch.linger = true;
                    }
                }
                break;
            }
        };
        batch.consumed += head.head_len;
        batch.answered = true;
        let mut keep_alive = head.keep_alive && !cx.draining;
        match head.body {
            BodyFraming::None => {}
            BodyFraming::Length(n) if n <= cx.limits.max_discard_body => *conn.discard = n,
            BodyFraming::Length(_) => {
                reject(cx, ParseError::BodyTooLarge, first_line(rest), conn.client);
                batch.close = true;
                batch.linger = true;
                break;
            }
            // Chunked bodies are not decoded: answer, then close, so the
            // body is never taken for the next request (RFC 9112 §9.6).
            BodyFraming::Chunked => {
                keep_alive = false;
                batch.linger = true;
            }
        }
        if answer(&head, keep_alive, &conn, cx, started) == Outcome::Close {
            batch.close = true;
            break;
        }
    }
    *cx.combined = combined;
    if batch.close {
        batch.linger |= batch.consumed < data.len() || *conn.discard > 0;
        batch.consumed = data.len();
    }
    batch
}

/// What a head that does not parse as HTTP/1.x leads to.
enum Unparsed {
    /// It is the HTTP/2 preface (prior knowledge, RFC 9113 §3.3).
    Upgrade,
    /// It may be: the preface's first bytes alone, split by the network.
    Wait,
    /// The connection closes, answered or not.
    Close,
}

fn unparsed(
    error: ParseError,
    rest: &[u8],
    h2c: bool,
    conn: &Facts<'_, '_>,
    cx: &mut Serving<'_>,
) -> Unparsed {
    match error {
        // "PRI * HTTP/2.0" fails as a version: the check costs HTTP/1.1
        // requests nothing.
        ParseError::Version if h2c && rest.starts_with(&PREFACE[..16]) => Unparsed::Upgrade,
        ParseError::Version if h2c && PREFACE.starts_with(rest) => Unparsed::Wait,
        // A line whose version is not HTTP/x.y at all, on a listener that
        // also speaks h2c: the client may be an HTTP/2 speaker with a
        // broken preface, which must see the connection closed (RFC 9113
        // §3.4), not an HTTP/1.1 answer it would misread as frames. With
        // --no-h2 it gets its 505.
        ParseError::Version if h2c && !names_http_version(first_line(rest)) => Unparsed::Close,
        error => {
            reject(cx, error, first_line(rest), conn.client);
            Unparsed::Close
        }
    }
}

/// Answers one request whose body is dealt with; `keep_alive` is what
/// the request and its framing allow.
fn answer(
    head: &RequestHead<'_>,
    keep_alive: bool,
    conn: &Facts<'_, '_>,
    cx: &mut Serving<'_>,
    started: Option<Instant>,
) -> Outcome {
    let persistence = match (keep_alive, head.version) {
        (false, _) => Persistence::Close,
        (true, Version::Http10) => Persistence::KeepAliveEcho,
        (true, Version::Http11 | Version::Http2 | Version::Http3) => Persistence::KeepAlive,
    };
    // Before the site and the redirect: an ACME CA validating over plain
    // HTTP (RFC 8555 §8.3) is answered even when the rest goes to HTTPS.
    let challenge = match (&cx.https.challenges, conn.tls) {
        (Some(challenges), false) => challenges.http_answer(head.raw_target),
        _ => None,
    };
    let source = match (&challenge, conn.tls, cx.https.redirect_port) {
        (Some(answer), _, _) => Source::Text(answer.as_bytes()),
        (None, false, Some(port)) => Source::Https(port),
        _ => Source::Site(cx.generation.pick(head.host)),
    };
    let exchange = Exchange {
        date: cx.date,
        persistence,
        head_only: head.method == Method::Head,
        fields: if conn.tls { &cx.https.fields } else { &[] },
    };
    let (outcome, summary) = respond(head, source, exchange, cx.scratch, cx.out);
    cx.observer.request(head, &summary, conn.client, started);
    outcome
}

/// Whether a request line's last word starts `HTTP/`.
fn names_http_version(line: &[u8]) -> bool {
    let version = line.rsplit(|&b| b == b' ').next().unwrap_or_default();
    version.starts_with(b"HTTP/")
}

/// The first line of what a client sent (for the log of a request that
/// could not be parsed), at most 1 KiB of it.
fn first_line(input: &[u8]) -> &[u8] {
    let input = &input[..input.len().min(1024)];
    let end = memchr::memchr2(b'\r', b'\n', input).unwrap_or(input.len());
    &input[..end]
}

/// The error response for a request that cannot be served; the connection
/// closes after it.
fn reject(cx: &mut Serving<'_>, error: ParseError, line: &[u8], client: &Client<'_>) {
    let status = error.status();
    write_error(cx.out, cx.date, status);
    let summary = Summary {
        status,
        body: tachyon_http::response::ErrorPage(status).byte_len() as u64,
        coding: None,
        saved: 0,
    };
    cx.observer.rejected(line, &summary, client);
}

/// A complete error response after which the connection closes.
pub fn write_error(out: &mut Outbox, date: &DateCache, status: Status) {
    let exchange = Exchange {
        date,
        persistence: Persistence::Close,
        head_only: false,
        fields: &[],
    };
    tachyon_http::h1::error(out.buf(), status, &exchange);
}

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
    /// A text made in memory (an ACME HTTP-01 answer).
    Text(&'s [u8]),
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
        Source::Text(text) => Reply::Text(text),
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

/// HTTP/1.1's carrier: the head, then the body right after it in the
/// outbox, small bodies copied next to the head so the response leaves in
/// one `send`, larger ones as their own part; `opened` is the body's file
/// when it is opened per response (see [`open_for_sending`]).
struct Carried<'o> {
    out: &'o mut Outbox,
    opened: Option<&'o Arc<File>>,
}

impl Carrier for Carried<'_> {
    type Dialect = Http1;

    fn prepared(file: &Representation) -> &Prepared<Http1> {
        &file.h1
    }

    fn head(&mut self) -> &mut Vec<u8> {
        self.out.buf()
    }

    fn file(&mut self, file: &Arc<Representation>, range: std::ops::Range<u64>) {
        // Heap bodies only: a frozen copy is in memory too, and the outbox
        // gathers a small one in place and pipes a larger one
        // (`outbox::COPY_FROZEN_UP_TO`).
        match &file.body {
            Body::Memory(bytes) if range.end - range.start <= INLINE_BODY_MAX => {
                self.out
                    .buf()
                    .extend_from_slice(&bytes[range.start as usize..range.end as usize]);
            }
            _ => self.out.push_body(file, range, self.opened),
        }
    }

    fn made(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        write(self.out.buf());
    }
}

/// Writes `reply` as HTTP/1.1 into `out`.
pub fn write(
    reply: Reply<'_>,
    exchange: &Exchange<'_>,
    opened: Option<&Arc<File>>,
    out: &mut Outbox,
) {
    answer::write(reply, exchange, &mut Carried { out, opened });
}
