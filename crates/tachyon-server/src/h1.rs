//! A [`Reply`] written as HTTP/1.1 into an outbox: heads through
//! `tachyon_http::h1` (the only code that spells HTTP/1.1 fields), bodies
//! copied inline when small or queued as their own part.
//!
//! Owns what is HTTP/1.1's alone: a head followed by its body in one byte
//! stream, the body left out for HEAD. Does not decide the reply
//! ([`crate::reply`]) nor connection state ([`crate::conn`]).

use std::fs::File;
use std::sync::Arc;

use tachyon_http::h1::Http1;
use tachyon_http::head::Prepared;
use tachyon_http::response::{Exchange, Persistence};
use tachyon_http::RequestHead;
use tachyon_snapshot::{Body, Representation, Snapshot};

use crate::answer::{self, Carrier};
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
        // Heap bodies only: a frozen copy is in memory too, but a pipe
        // splices it for less (see the snapshot's `FREEZE_FROM`).
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
