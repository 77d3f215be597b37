//! HTTP/2 connections: the sans-I/O [`Connection`] of `tachyon_http::h2`
//! driven with what a socket delivered, its requests answered through the
//! same [`decide`] as HTTP/1.1, and the answers written as frames.
//!
//! Owns what is HTTP/2's alone on the server side: header blocks framed as
//! HEADERS and CONTINUATION, bodies cut into DATA frames as the flow-control
//! windows allow, and the order streams take turns in: the most urgent
//! first (RFC 9218 `priority: u=N`), round-robin among equals, and a
//! stream whose window is shut is skipped, never waited on; and the
//! buffers quiet connections lend to the next that wakes ([`Spares`]).
//! Does not own sockets or timeouts ([`crate::conn`]) nor frames'
//! meaning ([`tachyon_http::h2::conn`]).
//!
//! Invariant: a stream's frames are written in order — HEADERS, then its
//! DATA, the last one with END_STREAM — and a stream the client reset
//! gets nothing more. DATA is written only when it is about to be sent, so
//! what a connection holds in memory is its streams' positions in bodies
//! shared with the snapshot, not copies of them.

use std::collections::VecDeque;
use std::fs::File;
use std::ops::Range;
use std::sync::Arc;

use bytes::Bytes;
use smallvec::SmallVec;
use tachyon_http::h2::frame::{self, flag, kind, Reason};
use tachyon_http::h2::hpack::{Fields, Hpack};
use tachyon_http::h2::{Buffers, Connection, Event, Limits};
use tachyon_http::head::Prepared;
use tachyon_http::response::{Exchange, Persistence};
use tachyon_http::{Method, Status};
use tachyon_snapshot::{Body, Representation};

use crate::access::Client;
use crate::answer::{self, Carrier};
use crate::outbox::Outbox;
use crate::reply::{check_for_sending, decide, open_for_sending, to_https, Reply, Summary};
use crate::serving::Serving;

/// Memory body slices up to this size are copied next to their frame
/// header; larger ones go out as their own iovec.
const INLINE_DATA_MAX: usize = 4 * 1024;

/// Bytes copied into the outbox (frame headers, small bodies) before
/// `produce` stops, whatever its budget: what a connection whose socket
/// is full keeps queued stays that of HTTP/1.1.
const MAX_COPIED: usize = crate::outbox::MAX_QUEUED as usize;

/// Streams of one connection that may hold a file opened for their body
/// (a disk-served file past the descriptors kept open) at once. A file is
/// opened when its stream's DATA can be sent, not when its request comes,
/// so a stream waiting for a window holds none; past this many, a frame's
/// file is opened for that frame alone (by the send) and closed once sent.
/// Four connections of 100 stalled streams had held all 400 descriptors of
/// a server capped at 202 connections.
const MAX_HELD_FILES: u32 = 4;

/// One connection's HTTP/2 state.
pub struct H2 {
    conn: Connection,
    /// The request being decoded and answered; a quiet connection gives it
    /// back (its slots are 430 bytes, a quarter of an idle HTTP/2-over-TLS
    /// connection's memory).
    fields: Option<Box<Fields>>,
    /// Responses with body left, in the order they take turns.
    sending: VecDeque<Outgoing>,
    /// How many of `sending` wait at each urgency: the most urgent level
    /// is known without a scan of every stream's window (a scan per call
    /// of `produce` was quadratic at 100 streams).
    waiting: [u16; 8],
    /// Body bytes of `sending` not yet written: what decides whether the
    /// connection is worth a raised unsent-bytes bound (`Conn::boost`).
    unwritten: u64,
    /// Body bytes written as DATA since the connection began: what the
    /// send timeout watches (control frames, a PING's ACK among them, are
    /// not progress).
    written: u64,
    /// Files the streams of `sending` hold open (at most [`MAX_HELD_FILES`]).
    held_files: u32,
    /// One header block being encoded.
    block: Vec<u8>,
}

/// Buffers of quiet HTTP/2 connections, kept by a worker for the next one
/// that wakes. Under load a connection goes quiet between its client's
/// batches; dropping its buffers there and growing them again on the next
/// batch was the largest share of allocation per request over HTTP/2
/// (`bench/results/user-time-2026-12-04`). Bounded in sets and in each set's
/// bytes, so what idle connections give back stays given back.
#[derive(Default)]
pub struct Spares {
    sets: Vec<Warm>,
}

/// Sets kept at most, and the most bytes one set may hold to be kept.
const SPARE_SETS: usize = 32;
const SPARE_SET_BYTES: usize = 16 * 1024;

/// One connection's buffers, empty.
struct Warm {
    fields: Option<Box<Fields>>,
    sending: VecDeque<Outgoing>,
    block: Vec<u8>,
    conn: Buffers,
}

impl Spares {
    /// Keeps `warm` for another connection, emptied (nothing of one
    /// client's requests reaches another), unless there are enough.
    fn keep(&mut self, mut warm: Warm) {
        let bytes = warm.fields.as_ref().map_or(0, |f| f.footprint())
            + warm.sending.capacity() * std::mem::size_of::<Outgoing>()
            + warm.block.capacity()
            + warm.conn.footprint();
        if bytes == 0 || bytes > SPARE_SET_BYTES || self.sets.len() >= SPARE_SETS {
            return;
        }
        if let Some(fields) = &mut warm.fields {
            fields.clear();
        }
        warm.block.clear();
        debug_assert!(warm.sending.is_empty());
        self.sets.push(warm);
    }
}

/// A response body still to send on a stream.
struct Outgoing {
    stream: u32,
    /// RFC 9218 urgency, 0 (first) to 7.
    urgency: u8,
    parts: Parts,
    /// Bytes left in `parts`.
    left: u64,
}

/// A response's body, the chunk to send next last (done with one, it is
/// popped); the usual body is one chunk, held inline, so a response
/// allocates no queue (`bench/results/user-time-2026-12-04`).
type Parts = SmallVec<[Chunk; 1]>;

enum Chunk {
    /// A range of a representation, in memory or on disk; `opened` is its
    /// file once opened for this stream (see [`MAX_HELD_FILES`]).
    Body {
        file: Arc<Representation>,
        range: Range<u64>,
        opened: Option<Arc<File>>,
    },
    /// Bytes made for this response (an error page, multipart framing).
    Made(Bytes),
}

impl Chunk {
    fn len(&self) -> u64 {
        match self {
            Chunk::Body { range, .. } => range.end - range.start,
            Chunk::Made(bytes) => bytes.len() as u64,
        }
    }

    /// Holds a file opened for this stream.
    fn holds_file(&self) -> bool {
        matches!(
            self,
            Chunk::Body {
                opened: Some(_),
                ..
            }
        )
    }

    /// A range of a file opened per response, not opened yet.
    fn wants_file(&self) -> bool {
        match self {
            Chunk::Body {
                file, opened: None, ..
            } => matches!(&file.body, Body::Disk(d) if d.opens_per_response()),
            _ => false,
        }
    }
}

/// Whether the connection goes on after a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    Open,
    /// A connection error: its GOAWAY is in the output; close once sent.
    Failed(Reason),
}

impl H2 {
    pub fn new(limits: Limits) -> Box<H2> {
        Box::new(H2 {
            conn: Connection::new(limits),
            fields: None,
            sending: VecDeque::new(),
            waiting: [0; 8],
            unwritten: 0,
            written: 0,
            held_files: 0,
            block: Vec::new(),
        })
    }

    /// Called when the connection goes quiet (nothing to read, nothing to
    /// send): gives the buffers kept warm for the next request to the
    /// worker's `spares`, so an idle connection holds none (the footprint
    /// cell, 2,000 idle h2c connections: `bench/results/unbuffered-2026-11-25`).
    pub fn settle(&mut self, spares: &mut Spares) {
        let sending = match self.sending.is_empty() {
            true => std::mem::take(&mut self.sending),
            false => VecDeque::new(),
        };
        spares.keep(Warm {
            fields: self.fields.take(),
            sending,
            block: std::mem::take(&mut self.block),
            conn: self.conn.settle(),
        });
    }

    /// Called before the connection reads again: takes a set of warm
    /// buffers from `spares` when it gave its own back.
    pub fn wake(&mut self, spares: &mut Spares) {
        if self.fields.is_some() {
            return;
        }
        let Some(warm) = spares.sets.pop() else {
            return;
        };
        self.fields = warm.fields;
        if self.sending.capacity() == 0 {
            self.sending = warm.sending;
        }
        if self.block.capacity() == 0 {
            self.block = warm.block;
        }
        self.conn.warm(warm.conn);
    }

    /// True when responses wait for the client to open a window: the send
    /// timeout runs, so a client that never does cannot hold them forever.
    pub fn is_stalled(&self) -> bool {
        !self.sending.is_empty()
    }

    /// Body bytes of the streams' responses not yet written as DATA.
    pub fn unwritten(&self) -> u64 {
        self.unwritten
    }

    /// Body bytes written as DATA so far.
    pub fn written(&self) -> u64 {
        self.written
    }

    /// A header block is open, its CONTINUATION frames awaited.
    pub fn in_header_block(&self) -> bool {
        self.conn.in_header_block()
    }

    /// True once the connection should close (it failed, or it drained).
    pub fn is_done(&self) -> bool {
        self.conn.is_done()
    }

    /// Reads frames from `data` and answers the requests in them into
    /// `cx.out`; returns the bytes used (a partial frame is left).
    pub fn receive(
        &mut self,
        data: &[u8],
        cx: &mut Serving<'_>,
        tls: bool,
        client: &Client<'_>,
    ) -> (usize, Progress) {
        self.conn.tick(cx.now);
        if cx.draining {
            self.conn.go_away();
        }
        let started = cx.observer.start();
        let mut pos = 0;
        loop {
            let fields = self.fields.get_or_insert_with(Box::default);
            let step = self.conn.receive(&data[pos..], fields);
            self.take_control(cx.out);
            let step = match step {
                Ok(step) => step,
                Err(reason) => return (pos, Progress::Failed(reason)),
            };
            pos += step.consumed;
            match step.event {
                None => return (pos, Progress::Open),
                Some(Event::Request { stream }) => {
                    self.respond(stream, None, cx, tls, client, started);
                }
                Some(Event::Refused { stream, status }) => {
                    self.respond(stream, Some(status), cx, tls, client, started);
                }
                Some(Event::Reset { stream }) => self.forget(stream),
            }
        }
    }

    /// Drops the response of a stream that ended early, and what it held.
    fn forget(&mut self, stream: u32) {
        let (waiting, unwritten, held) =
            (&mut self.waiting, &mut self.unwritten, &mut self.held_files);
        self.sending.retain(|o| {
            let gone = o.stream == stream;
            if gone {
                waiting[o.urgency as usize] -= 1;
                *unwritten -= o.left;
                *held -= o.parts.iter().filter(|c| c.holds_file()).count() as u32;
            }
            !gone
        });
    }

    /// Opens the file the next DATA of `o` is read from, when it is one
    /// opened per response and not opened yet: [`Held::Wait`] while the
    /// connection already holds [`MAX_HELD_FILES`], [`Held::Failed`] when it
    /// no longer holds the loaded bytes (or no descriptor is left).
    fn hold_file(&mut self, o: &mut Outgoing) -> Held {
        let Some(front) = o.parts.last_mut() else {
            return Held::Ready;
        };
        if !front.wants_file() {
            return Held::Ready;
        }
        if self.held_files >= MAX_HELD_FILES {
            return Held::Wait;
        }
        let Chunk::Body { file, opened, .. } = front else {
            return Held::Ready;
        };
        let Body::Disk(disk) = &file.body else {
            return Held::Ready;
        };
        match disk.open() {
            Ok(f) => {
                *opened = Some(f);
                self.held_files += 1;
                Held::Ready
            }
            Err(_) => Held::Failed,
        }
    }

    /// Moves the connection's control frames into the output.
    /// Queues GOAWAY(NO_ERROR) with the last stream opened into `out`.
    pub fn go_away(&mut self, out: &mut Outbox) {
        self.conn.go_away();
        self.take_control(out);
    }

    fn take_control(&mut self, out: &mut Outbox) {
        let control = self.conn.output();
        if !control.is_empty() {
            out.buf().extend_from_slice(control);
            control.clear();
        }
    }

    /// Answers the request in `self.fields` on `stream` (or with `status`
    /// when its fields could not be taken).
    fn respond(
        &mut self,
        stream: u32,
        status: Option<Status>,
        cx: &mut Serving<'_>,
        tls: bool,
        client: &Client<'_>,
        started: Option<std::time::Instant>,
    ) {
        let https = cx.https;
        let fields = self.fields.get_or_insert_with(Box::default);
        let head = fields.head();
        let exchange = Exchange {
            date: cx.date,
            persistence: Persistence::KeepAlive,
            head_only: head.method == Method::Head,
            fields: if tls { &https.fields } else { &[] },
        };
        let reply = match (status, tls, https.redirect_port) {
            (Some(status), _, _) => Reply::Error(status),
            (None, false, Some(port)) => to_https(&head, port),
            (None, _, _) => decide(&head, cx.generation.pick(head.host), cx.scratch),
        };
        // A file opened per response is opened now when its DATA can go at
        // once (a 503 if it cannot be, as over HTTP/1.1), else checked now
        // and opened when its window opens (`hold_file`).
        let sends_now = self.held_files < MAX_HELD_FILES && self.conn.data_allowance(stream) > 0;
        let (reply, opened) = match sends_now {
            true => open_for_sending(reply, exchange.head_only),
            false => (check_for_sending(reply, exchange.head_only), None),
        };
        let summary: Summary = reply.summary(exchange.head_only);
        self.block.clear();
        let body = write(reply, &exchange, opened, &mut self.block);
        self.held_files += body.iter().filter(|c| c.holds_file()).count() as u32;
        cx.observer.request(&head, &summary, client, started);
        let left: u64 = body.iter().map(Chunk::len).sum();
        let urgency = fields.urgency();
        self.headers(stream, left == 0, cx.out);
        if left == 0 {
            self.conn.end_stream(stream);
            self.take_control(cx.out);
        } else {
            self.waiting[urgency as usize] += 1;
            self.unwritten += left;
            self.sending.push_back(Outgoing {
                stream,
                urgency,
                parts: body,
                left,
            });
        }
    }

    /// Writes `self.block` as HEADERS (and CONTINUATION frames when it is
    /// larger than the peer's frame size), indexed with the connection's
    /// HPACK table as it goes out: blocks are indexed in the order sent.
    fn headers(&mut self, stream: u32, end_stream: bool, out: &mut Outbox) {
        self.conn.index_block(&mut self.block);
        let max = self.conn.max_frame();
        let buf = out.buf();
        let mut chunks = self.block.chunks(max).peekable();
        let first = chunks.next().unwrap_or(&[]);
        let mut flags = if end_stream { flag::END_STREAM } else { 0 };
        if chunks.peek().is_none() {
            flags |= flag::END_HEADERS;
        }
        frame::write_head(buf, first.len(), kind::HEADERS, flags, stream);
        buf.extend_from_slice(first);
        while let Some(chunk) = chunks.next() {
            let flags = if chunks.peek().is_none() {
                flag::END_HEADERS
            } else {
                0
            };
            frame::write_head(buf, chunk.len(), kind::CONTINUATION, flags, stream);
            buf.extend_from_slice(chunk);
        }
    }

    /// Writes control frames, then DATA frames as the windows allow, until
    /// about `budget` bytes are queued in `out`: each pass serves, one
    /// frame each in turn, the streams of the most urgent level that can
    /// send. True when more DATA could be written at once (the caller
    /// flushes and calls again). With `splice` (a plain socket), frames
    /// of frozen bodies longer than HTTP/1.1 copies go out through a pipe,
    /// their headers stamped (`tachyon_sys::Stamp`), as HTTP/1.1 sends
    /// those bodies: a copy of them was HTTP/2's largest cost over
    /// HTTP/1.1's on the real docs site (`bench/results/h2c-splice-2026-12-06`).
    pub fn produce(&mut self, out: &mut Outbox, budget: u64, splice: bool) -> bool {
        self.take_control(out);
        let mut queued = out.pending_bytes();
        loop {
            let Some(level) = self.waiting.iter().position(|&n| n > 0) else {
                return false;
            };
            let mut turn = self.pass(level as u8, out, &mut queued, budget, splice);
            if turn == Pass::Idle {
                // Every stream of the most urgent level waits for its
                // window: the less urgent may use the connection meanwhile.
                let conn = &self.conn;
                let Some(level) = self
                    .sending
                    .iter()
                    .filter(|o| conn.data_allowance(o.stream) > 0)
                    .map(|o| o.urgency)
                    .min()
                else {
                    return false;
                };
                turn = self.pass(level, out, &mut queued, budget, splice);
            }
            match turn {
                Pass::Full => return !self.sending.is_empty(),
                Pass::Idle => return false,
                Pass::Progressed => {}
            }
        }
    }

    /// One DATA frame for each stream at urgency `level` that may send,
    /// in turn, until `queued` reaches `budget`.
    fn pass(
        &mut self,
        level: u8,
        out: &mut Outbox,
        queued: &mut u64,
        budget: u64,
        splice: bool,
    ) -> Pass {
        let mut turn = Pass::Idle;
        for _ in 0..self.sending.len() {
            let Some(mut o) = self.sending.pop_front() else {
                break;
            };
            let allowance = if o.urgency == level {
                self.conn.data_allowance(o.stream) as u64
            } else {
                0
            };
            if allowance == 0 {
                self.sending.push_back(o);
                continue;
            }
            let held = self.hold_file(&mut o);
            if held == Held::Wait {
                self.sending.push_back(o);
                continue;
            }
            if held == Held::Failed {
                // Its file changed, or no descriptor is left, after its 200
                // went: end the stream, not the connection.
                self.waiting[o.urgency as usize] -= 1;
                self.unwritten -= o.left;
                self.held_files -= o.parts.iter().filter(|c| c.holds_file()).count() as u32;
                self.conn.abort_stream(o.stream, Reason::InternalError);
                self.take_control(out);
                turn = Pass::Progressed;
                continue;
            }
            let len = allowance.min(o.left);
            let last = len == o.left;
            let flags = if last { flag::END_STREAM } else { 0 };
            let head = frame::head(len as usize, kind::DATA, flags, o.stream);
            let piped = splice && pipe_carries(&o.parts, len) && stamp(head, out);
            if !piped {
                out.buf().extend_from_slice(&head);
            }
            self.held_files -= take(&mut o.parts, len, out, piped);
            o.left -= len;
            self.unwritten -= len;
            self.written += len;
            self.conn.sent_data(o.stream, len as usize);
            if last {
                self.waiting[o.urgency as usize] -= 1;
                self.conn.end_stream(o.stream);
                self.take_control(out);
            } else {
                self.sending.push_back(o);
            }
            turn = Pass::Progressed;
            *queued += len + frame::HEADER_LEN as u64;
            if *queued >= budget || out.buf().len() >= MAX_COPIED {
                return Pass::Full;
            }
        }
        turn
    }
}

/// Whether a stream's next DATA can be read (see [`H2::hold_file`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Held {
    Ready,
    /// The connection holds as many files as it may: later.
    Wait,
    Failed,
}

/// What one pass of the DATA scheduler did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// No stream at the level could send.
    Idle,
    Progressed,
    /// The budget is spent.
    Full,
}

/// Whether a pipe should carry the next `len` bytes of `parts`: they lie in
/// one frozen body longer than HTTP/1.1 copies (`outbox::COPY_FROZEN_UP_TO`).
fn pipe_carries(parts: &Parts, len: u64) -> bool {
    match parts.last() {
        Some(Chunk::Body { file, range, .. }) => {
            range.end - range.start >= len
                && file.len > crate::outbox::COPY_FROZEN_UP_TO
                && file.frozen_copy().is_some()
        }
        _ => false,
    }
}

/// Queues a DATA frame's header as a stamp, for a pipe to carry with the
/// payload; false when no stamp could be made (it is copied then).
fn stamp(head: [u8; frame::HEADER_LEN], out: &mut Outbox) -> bool {
    match tachyon_sys::Stamp::new(&head) {
        Ok(stamp) => {
            out.push_stamp(stamp);
            true
        }
        Err(_) => false,
    }
}

/// Moves the first `len` bytes of `parts` into `out`, a frozen body's
/// as a part a pipe carries when `piped`; returns how many held files it
/// let go (chunks done with).
fn take(parts: &mut Parts, mut len: u64, out: &mut Outbox, piped: bool) -> u32 {
    let mut released = 0;
    while len > 0 {
        let Some(chunk) = parts.last_mut() else {
            return released;
        };
        let n = len.min(chunk.len());
        match chunk {
            Chunk::Body {
                file,
                range,
                opened,
            } => {
                let part = range.start..range.start + n;
                let (start, end) = (part.start as usize, part.end as usize);
                match file.memory() {
                    // A frozen body's frame, its header stamped before it.
                    _ if piped && out.push_frozen(file, part.clone()) => {}
                    Some(bytes) if n as usize <= INLINE_DATA_MAX => {
                        out.buf().extend_from_slice(&bytes[start..end]);
                    }
                    // Heap bodies, and frozen ones over TLS or short: a
                    // frame's body gathered from memory costs one writev
                    // with its neighbours, where sendfile is a call per
                    // 16 KiB frame (bench/results/h2c-2026-11-25).
                    Some(bytes) => out.push_bytes(bytes.slice(start..end)),
                    None => out.push_body(file, part, opened.as_ref()),
                }
                range.start += n;
            }
            Chunk::Made(bytes) => {
                out.buf().extend_from_slice(&bytes.split_to(n as usize));
            }
        }
        if chunk.len() == 0 {
            released += u32::from(chunk.holds_file());
            parts.pop();
        }
        len -= n;
    }
    released
}

/// HTTP/2's carrier: the header block on its own (framed as HEADERS and
/// CONTINUATION by [`H2::headers`]), the body as chunks sent in DATA frames
/// as the windows allow; `opened` is the body's file when opened now.
struct Carried<'b> {
    block: &'b mut Vec<u8>,
    /// In the order written; [`write`] turns it to [`Parts`]' order.
    body: Parts,
    opened: Option<Arc<File>>,
}

impl Carrier for Carried<'_> {
    type Dialect = Hpack;

    fn prepared(file: &Representation) -> &Prepared<Hpack> {
        &file.h2
    }

    fn head(&mut self) -> &mut Vec<u8> {
        self.block
    }

    fn file(&mut self, file: &Arc<Representation>, range: Range<u64>) {
        if range.end > range.start {
            self.body.push(Chunk::Body {
                file: Arc::clone(file),
                range,
                opened: self.opened.clone(),
            });
        }
    }

    fn made(&mut self, write: impl FnOnce(&mut Vec<u8>)) {
        let mut bytes = Vec::new();
        write(&mut bytes);
        self.body.push(Chunk::Made(bytes.into()));
    }
}

/// Encodes `reply`'s header block into `block` and returns its body.
fn write(
    reply: Reply<'_>,
    exchange: &Exchange<'_>,
    opened: Option<Arc<File>>,
    block: &mut Vec<u8>,
) -> Parts {
    let mut carried = Carried {
        block,
        body: Parts::new(),
        opened,
    };
    answer::write(reply, exchange, &mut carried);
    carried.body.reverse();
    carried.body
}

#[cfg(test)]
mod tests {
    use super::*;
    use tachyon_http::section::{Checker, DecodeLimits, FieldBytes};
    use tachyon_http::Version;

    /// A connection's buffers after it answered a request for `path`.
    fn used(path: &[u8]) -> Warm {
        let mut fields = Box::<Fields>::default();
        let limits = DecodeLimits {
            max_list_size: 16 * 1024,
            max_path: 8 * 1024,
        };
        let mut checker = Checker::new(&mut fields, &limits, Version::Http2);
        for (name, value) in [
            (&b":method"[..], &b"GET"[..]),
            (b":scheme", b"http"),
            (b":path", path),
        ] {
            checker.field(name, value, FieldBytes::Unchecked);
        }
        checker.finish().unwrap();
        Warm {
            fields: Some(fields),
            sending: VecDeque::with_capacity(8),
            block: b"an encoded header block".to_vec(),
            conn: Buffers::default(),
        }
    }

    #[test]
    fn a_kept_set_holds_nothing_of_its_last_request() {
        let mut spares = Spares::default();
        spares.keep(used(b"/private/page.html"));
        let warm = spares.sets.pop().expect("kept");
        let fields = warm.fields.expect("fields kept");
        assert_eq!(fields.head().raw_target, b"");
        assert_eq!(fields.head().method, Method::Other);
        assert!(warm.block.is_empty() && warm.block.capacity() > 0);
        assert!(warm.sending.capacity() >= 8);
    }

    #[test]
    fn sets_are_kept_up_to_their_count_and_size() {
        let mut spares = Spares::default();
        for _ in 0..SPARE_SETS + 5 {
            spares.keep(used(b"/"));
        }
        assert_eq!(spares.sets.len(), SPARE_SETS);
        let mut spares = Spares::default();
        let mut large = used(b"/");
        large.block = Vec::with_capacity(SPARE_SET_BYTES + 1);
        spares.keep(large);
        spares.keep(Warm {
            fields: None,
            sending: VecDeque::new(),
            block: Vec::new(),
            conn: Buffers::default(),
        });
        assert!(spares.sets.is_empty(), "a set too large, and an empty one");
    }
}
