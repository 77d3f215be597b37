//! One connection: read, parse every complete request, respond, write.
//!
//! Owns the per-connection state machine and the keep-alive/close decision;
//! the socket is non-blocking and registered edge-triggered once, so a
//! connection never calls epoll_ctl again.
//!
//! Invariants:
//! - A connection touches the worker's shared buffers only through a
//!   [`Turn`], and a turn clears them when it ends, whichever way it ends
//!   (response sent, send failed, client reset, file changed mid-send): no
//!   byte meant for one connection can be sent on another.
//! - An idle connection owns no buffers (reads land in the worker's buffer
//!   and only a partial head is copied out).
//! - While output is blocked no further request is parsed, and a connection
//!   queues at most [`MAX_QUEUED_OUTPUT`] before it stops parsing pipelined
//!   requests, so a client that sends without reading cannot grow memory.
//! - The send timeout restarts only when bytes leave, never on readiness.
//! - A TLS connection's handshake runs under the header timeout, and its
//!   session (rustls's buffers) is its own: nothing in it is shared.

use std::net::SocketAddr;
use std::ops::{Deref, DerefMut};
use std::os::fd::OwnedFd;

use rustix::io::Errno;
use rustix::net::{RecvFlags, Shutdown};
use tachyon_http::date::DateCache;
use tachyon_http::Status;

use crate::access::Client;
use crate::boost::{Boost, Budget};
use crate::h2::{Progress, H2};
use crate::limits::Limits;
use crate::live::Generation;
use crate::outbox::{Carriers, Flush, Flushed, Outbox};
use crate::reply::Scratch;
use crate::serving::{Https, Serving};
use crate::stats::{Closed, Observer, Timeout};
use crate::wire::{Received, Session, Wire};

/// Bytes one connection may send per loop turn before the others get theirs
/// (nginx's `sendfile_max_chunk` idea, applied to all output).
const TURN_BUDGET: u64 = 1024 * 1024;

/// DATA written per `writev` on an HTTP/2 connection (bodies by reference,
/// so this is mostly not copied). 64 KiB, the HTTP/1.1 figure, cost 21.7
/// µs of server CPU per 64 KiB response over h2c at -c32 -m100; 256 KiB
/// cost 16.4 (fewer writes, fewer wake-ups of the reader); 1 MiB no less.
const H2_BATCH: u64 = 256 * 1024;

/// How long a closing connection keeps reading and discarding what the
/// client still sends, so that its close is not a reset that destroys the
/// response (RFC 9112 §9.6; nginx `lingering_timeout` is 5 s).
const LINGER_SECS: u32 = 2;
/// And how much it reads at most while doing so.
const LINGER_BYTES: u64 = 1024 * 1024;

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the next request (keep-alive idle timeout).
    Idle,
    /// Part of a head has arrived (header timeout, counted from its first
    /// byte; a timeout here is answered with 408).
    Head,
    /// Output is blocked on a full socket buffer (send timeout, restarted
    /// whenever bytes leave).
    Sending,
    /// The last response is queued; close once it is sent.
    Closing,
    /// The last response is sent and our side is shut; reading and
    /// discarding input until the client closes, for a bounded time.
    Lingering,
}

/// A connection's state. Kept small: 10,000 idle connections must cost
/// little more than their sockets.
pub struct Conn {
    pub fd: OwnedFd,
    phase: Phase,
    /// When the current phase's timeout fires, in worker-clock seconds.
    pub deadline: u32,
    /// Bytes of an incomplete head, or requests held back by backpressure.
    input: Vec<u8>,
    /// Output that did not fit in the socket buffer.
    pending: Option<Box<Outbox>>,
    /// Bytes of `pending` charged to the worker's queued-output budget.
    charged: usize,
    /// Request-body bytes still to be read and thrown away.
    discard: u64,
    /// False once a read came back short or EAGAIN: wait for the next edge.
    readable: bool,
    /// The peer shut its side (RDHUP/HUP seen): a short read no longer
    /// means drained, because the edge that announced the close is spent.
    hung_up: bool,
    /// With `Phase::Closing`: input may still arrive, so close lingering.
    linger: bool,
    /// Bytes discarded while lingering.
    lingered: u64,
    /// On the worker's list of connections to resume without an event.
    pub resuming: bool,
    /// Placed by CPU: the CPU the last sampled request arrived on
    /// (`SO_INCOMING_CPU`; `u16::MAX` before one), and whether the next
    /// one is to be sampled. Read when a request arrives, not when the
    /// connection is idle: then its last segment may be the client's ACK
    /// of our answer, which loopback sends from our own CPU.
    pub cpu: u16,
    pub sample_cpu: bool,
    /// The raised unsent-bytes bound, and what the client took toward it.
    boost: Boost,
    /// HTTPS: the TLS session in front of the socket.
    session: Option<Box<Session>>,
    /// HTTP/2 (ALPN h2, or the preface on a plain listener): the
    /// connection's frames are this state machine's, not HTTP/1.1's.
    h2: Option<Box<H2>>,
    /// The client's address, kept only when the access log needs it; boxed
    /// so that without a log it costs a connection 8 bytes, not 32
    /// (`--suite footprint`, bytes per idle connection: 99 before the log
    /// existed, 137 with the address inline, 108 boxed).
    peer: Option<Box<SocketAddr>>,
}

/// What the worker should do with the connection afterwards.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Wait for the next readiness event.
    Keep,
    /// Its turn's budget is spent with output left: drive it again soon,
    /// without waiting for an edge that will not come.
    Resume,
    /// Close it, for this reason.
    Close(Closed),
}

/// What a connection's bytes are, once TLS has had its say.
enum Speaks {
    H1,
    H2,
    /// A TLS-ALPN-01 validation (RFC 8737): no application data.
    AcmeValidation,
}

/// The worker-owned state connections borrow, one [`Turn`] at a time.
pub struct Ctx<'a> {
    pub read_buf: &'a mut Vec<u8>,
    pub out: &'a mut Outbox,
    /// What moves bodies to sockets: the bounce buffer for copies of disk
    /// bodies (refilled by every send, so it carries nothing between
    /// connections) and the pool of empty pipes.
    pub carriers: &'a mut Carriers,
    pub scratch: &'a mut Scratch,
    /// Buffers quiet HTTP/2 connections gave back, for the next to wake.
    pub h2_spares: &'a mut crate::h2::Spares,
    /// Joined values of list fields a request sent in several lines.
    pub combined: &'a mut Vec<u8>,
    pub date: &'a DateCache,
    pub generation: &'a Generation,
    pub limits: &'a Limits,
    /// Worker-clock seconds now.
    pub now: u32,
    /// The server is draining: every response says `Connection: close`.
    pub draining: bool,
    /// Draining, and past the grace in which a connection between two
    /// requests still gets its next one answered: close the quiet ones.
    pub close_quiet: bool,
    /// Bytes held by this worker's connections in blocked output.
    pub queued_output: &'a mut usize,
    /// Bytes of `sys::RAISED_BUDGET` held by this worker's connections'
    /// raised unsent-bytes bounds.
    pub boosted: &'a mut u64,
    /// The connections this worker holds.
    pub conns: usize,
    pub https: &'a Https,
    /// This worker's counters and access log.
    pub observer: &'a mut Observer,
}

impl<'a> Ctx<'a> {
    /// What answering requests needs of the worker (see `serving`).
    pub fn serving(&mut self) -> Serving<'_> {
        Serving {
            out: self.out,
            scratch: self.scratch,
            combined: self.combined,
            date: self.date,
            generation: self.generation,
            limits: self.limits,
            https: self.https,
            observer: self.observer,
            now: self.now,
            draining: self.draining,
        }
    }

    /// Lends the shared buffers to one connection until the turn is dropped.
    pub fn turn(&mut self) -> Turn<'_, 'a> {
        debug_assert!(self.out.is_empty(), "a turn starts with a clean outbox");
        Turn(self)
    }

    /// Sends the turn's output, up to the turn's budget.
    fn flush_out(&mut self, wire: &mut Wire<'_>) -> Result<Flush, crate::outbox::SendError> {
        let flush = self.out.flush(wire, TURN_BUDGET, self.carriers);
        if let Ok(flush) = &flush {
            self.observer.sent(flush.sent);
        }
        flush
    }

    /// Returns what a closed connection had charged to the worker.
    pub fn release(&mut self, conn: &Conn) {
        *self.queued_output -= conn.charged;
        *self.boosted -= u64::from(conn.boost.held());
    }
}

/// One connection's use of the worker's buffers. Dropping it empties the
/// outbox: whatever a connection left there (a send that failed, a
/// truncated file, an early return) never reaches the next one.
pub struct Turn<'c, 'a>(&'c mut Ctx<'a>);

impl Drop for Turn<'_, '_> {
    fn drop(&mut self) {
        self.0.out.clear();
    }
}

impl<'a> Deref for Turn<'_, 'a> {
    type Target = Ctx<'a>;
    fn deref(&self) -> &Ctx<'a> {
        self.0
    }
}

impl<'a> DerefMut for Turn<'_, 'a> {
    fn deref_mut(&mut self) -> &mut Ctx<'a> {
        self.0
    }
}

impl Conn {
    /// A new connection; with a session, its handshake must finish within
    /// the header timeout.
    pub fn new(
        fd: OwnedFd,
        now: u32,
        limits: &Limits,
        session: Option<Box<Session>>,
        peer: Option<SocketAddr>,
    ) -> Conn {
        let (phase, timeout) = match session {
            None => (Phase::Idle, limits.idle_timeout),
            Some(_) => (Phase::Head, limits.header_timeout),
        };
        Conn {
            fd,
            phase,
            deadline: now.saturating_add(secs(timeout)),
            input: Vec::new(),
            pending: None,
            charged: 0,
            discard: 0,
            readable: true,
            hung_up: false,
            linger: false,
            lingered: 0,
            resuming: false,
            cpu: u16::MAX,
            sample_cpu: false,
            boost: Boost::default(),
            session,
            h2: None,
            peer: peer.map(Box::new),
        }
    }

    /// The way to this connection's peer.
    fn wire(&mut self) -> Wire<'_> {
        wire(&self.fd, &mut self.session)
    }

    /// True when nothing is in flight: safe to close during a drain.
    pub fn is_quiet(&self) -> bool {
        self.phase == Phase::Idle && self.pending.is_none()
    }

    /// True when the connection holds nothing but its socket and sessions:
    /// between requests, no input kept, no output queued, no TLS handshake
    /// under way and no HTTP/2 response waiting for a window. Only such a
    /// connection moves to another worker (see `crate::balance`); nothing
    /// it holds refers to the worker it leaves.
    pub fn is_movable(&self) -> bool {
        self.phase == Phase::Idle
            && self.pending.is_none()
            && self.charged == 0
            && self.input.is_empty()
            && self.discard == 0
            && !self.resuming
            && self.boost.held() == 0
            && !self.hung_up
            && self.session.as_ref().is_none_or(|s| !s.is_handshaking())
            && self.h2.as_ref().is_none_or(|h| !h.is_stalled())
    }

    /// A quiet connection closed by a drain: an HTTP/2 client is told so
    /// first with GOAWAY(NO_ERROR) and the last stream it opened (RFC 9113
    /// §6.8), so it retries elsewhere without guessing. One non-blocking
    /// write, best effort: the outbox is emptied when the turn ends.
    pub fn farewell(&mut self, cx: &mut Turn<'_, '_>) {
        let Some(h2) = self.h2.as_mut() else {
            return;
        };
        h2.go_away(cx.out);
        let _ = cx.flush_out(&mut wire(&self.fd, &mut self.session));
        if let Some(session) = &mut self.session {
            session.close_notify();
            let _ = self.wire().drain();
        }
    }

    /// Runs the connection as far as it can go without blocking.
    pub fn take_turn(&mut self, readable: bool, hung_up: bool, cx: &mut Turn<'_, '_>) -> Next {
        self.readable |= readable;
        self.hung_up |= hung_up;
        if self.phase == Phase::Lingering {
            return self.discard_input(cx);
        }
        if let Some(next) = self.resume_pending(cx) {
            return next;
        }
        if self.pending.is_none() {
            // Handshake records the socket did not take at once.
            match self.wire().drain() {
                Ok(()) => {}
                Err(Errno::AGAIN) => return Next::Keep,
                Err(_) => return Next::Close(Closed::Client),
            }
        }
        if self.h2.as_ref().is_some_and(|h2| h2.is_stalled()) && self.pending.is_none() {
            // Resumed after the turn's budget: write the next DATA frames.
            let input = std::mem::take(&mut self.input);
            if let Some(next) = self.serve_h2(&input, cx) {
                return next;
            }
        }
        if let Some(next) = self.read_and_serve(cx) {
            return next;
        }
        if cx.close_quiet && self.is_quiet() {
            return Next::Close(Closed::Drain);
        }
        Next::Keep
    }

    /// Sends the output a full socket held back, and once all of it has
    /// left, what waited behind it (more HTTP/2 frames, requests held
    /// back). `Some` when the caller should stop driving.
    fn resume_pending(&mut self, cx: &mut Turn<'_, '_>) -> Option<Next> {
        let mut pending = self.pending.take()?;
        let flush = pending.flush(&mut self.wire(), TURN_BUDGET, &mut *cx.carriers);
        self.boost.took(flush.as_ref().map_or(0, |f| f.sent));
        self.pending = Some(pending);
        match self.after_flush(flush, cx) {
            Err(Next::Close(why)) => return Some(Next::Close(why)),
            Err(next) => {
                self.raise_bound(cx);
                return Some(next);
            }
            Ok(()) => self.release_pending(cx),
        }
        if self.phase == Phase::Closing {
            // The response waited for a slow reader, so its tail is still
            // in our send queue: closing with input unread would reset
            // and discard it.
            self.linger = true;
            return Some(self.finish(cx));
        }
        if self.h2.is_some() {
            // More DATA may be waiting on this connection's windows, and
            // frames held back while blocked.
            let input = std::mem::take(&mut self.input);
            return self.serve_h2(&input, cx);
        }
        self.become_idle(cx);
        // Requests held back while output was blocked.
        if self.input.is_empty() {
            return None;
        }
        let input = std::mem::take(&mut self.input);
        self.serve_input(&input, cx)
    }

    /// Reads until the socket is drained, answering what arrives. `Some`
    /// when the caller should stop driving.
    fn read_and_serve(&mut self, cx: &mut Turn<'_, '_>) -> Option<Next> {
        loop {
            let mut wire = wire(&self.fd, &mut self.session);
            let n = match wire.receive(&mut cx.read_buf[..], &mut self.readable, self.hung_up) {
                Received::Data(n) => n,
                Received::Drained => return None,
                Received::Closed => return Some(Next::Close(Closed::Client)),
                Received::Failed => return Some(Next::Close(Closed::Tls)),
                Received::PlainHttp => return Some(self.refuse_plain_http(cx)),
            };
            let next = if self.input.is_empty() {
                let data = std::mem::take(cx.read_buf);
                let next = self.serve_input(&data[..n], cx);
                *cx.read_buf = data;
                next
            } else {
                let mut input = std::mem::take(&mut self.input);
                input.extend_from_slice(&cx.read_buf[..n]);
                self.serve_input(&input, cx)
            };
            if next.is_some() {
                return next;
            }
        }
    }

    /// Accounts for a flush of pending output: `Ok` when all of it left,
    /// else what the worker should do now.
    fn after_flush(
        &mut self,
        flush: Result<Flush, crate::outbox::SendError>,
        cx: &mut Turn<'_, '_>,
    ) -> Result<(), Next> {
        let flush = flush.map_err(|_| Next::Close(Closed::Client))?;
        cx.observer.sent(flush.sent);
        if flush.sent > 0 {
            self.deadline = cx.now.saturating_add(secs(cx.limits.send_timeout));
        }
        match flush.state {
            Flushed::All => Ok(()),
            Flushed::Blocked => Err(Next::Keep),
            Flushed::Paused => Err(Next::Resume),
        }
    }

    /// Answers every complete request in `data`, flushes, and keeps what
    /// remains. `Some` when the caller should stop driving.
    fn serve_input(&mut self, data: &[u8], cx: &mut Turn<'_, '_>) -> Option<Next> {
        match self.speaks(cx) {
            Speaks::H2 => return self.serve_h2(data, cx),
            // RFC 8737 §3: a validation connection carries no application data.
            Speaks::AcmeValidation => return Some(Next::Close(Closed::Tls)),
            Speaks::H1 => {}
        }
        if self.pending.is_none() {
            // The client speaks again, so it has read the large body whose
            // raised bound this connection kept (see `Boost::body_sent`).
            self.boost.lower(&self.fd, cx.boosted);
        }
        let mut pos = 0;
        let mut answered = false;
        let started = cx.observer.start();
        loop {
            let client = client(self.peer.as_deref().copied(), &self.session);
            let facts = crate::h1::Facts {
                client: &client,
                tls: self.session.is_some(),
                discard: &mut self.discard,
            };
            let batch = crate::h1::serve(&data[pos..], facts, &mut cx.serving(), started);
            pos += batch.consumed;
            answered |= batch.answered;
            if batch.upgrade {
                if let Some(limits) = cx.limits.h2 {
                    self.h2 = Some(H2::new(limits));
                    return self.serve_h2(&data[pos..], cx);
                }
            }
            if batch.close {
                self.close_after_sending(batch.linger, cx);
            }
            if let Some(next) = self.send_answers(batch.close, &data[pos..], cx) {
                return Some(next);
            }
            if !batch.held_back {
                break;
            }
        }
        self.keep_rest(&data[pos..], answered, cx);
        None
    }

    /// Which protocol the bytes of this connection are, starting HTTP/2
    /// when TLS chose it.
    fn speaks(&mut self, cx: &Turn<'_, '_>) -> Speaks {
        if self.h2.is_some() {
            return Speaks::H2;
        }
        let Some(session) = &self.session else {
            return Speaks::H1;
        };
        if session.is_acme_validation() {
            return Speaks::AcmeValidation;
        }
        match cx.limits.h2 {
            Some(limits) if session.is_h2() => {
                self.h2 = Some(H2::new(limits));
                Speaks::H2
            }
            _ => Speaks::H1,
        }
    }

    /// The last response is answered: close once it is sent, lingering when
    /// more input may be on its way (`linger`, or a full read buffer).
    fn close_after_sending(&mut self, linger: bool, cx: &mut Turn<'_, '_>) {
        self.phase = Phase::Closing;
        self.linger = linger || self.readable;
        // The close (or shutdown) follows the last write, and over TLS the
        // close_notify leaves with it (the outbox's drain).
        cx.out.close_after();
        if let Some(session) = &mut self.session {
            session.close_notify();
        }
    }

    /// Sends a batch's answers. `Some` when the caller should stop
    /// driving: the connection is done, failed, or waits for the socket
    /// with the rest of the output (and `rest`, the requests not yet
    /// answered) kept.
    fn send_answers(&mut self, closing: bool, rest: &[u8], cx: &mut Turn<'_, '_>) -> Option<Next> {
        if cx.out.is_empty() {
            return closing.then(|| self.finish(cx));
        }
        match cx.flush_out(&mut wire(&self.fd, &mut self.session)) {
            Err(_) => Some(Next::Close(Closed::Client)),
            Ok(Flush {
                state: Flushed::All,
                ..
            }) => closing.then(|| self.finish(cx)),
            Ok(Flush { state, .. }) => {
                if !self.queue_unsent(cx) {
                    return Some(Next::Close(Closed::Backlog));
                }
                if !closing {
                    self.phase = Phase::Sending;
                    self.input = rest.to_vec();
                }
                self.deadline = cx.now.saturating_add(secs(cx.limits.send_timeout));
                Some(match state {
                    Flushed::Paused => Next::Resume,
                    _ => Next::Keep,
                })
            }
        }
    }

    /// Keeps the part of a head that has arrived (an idle connection keeps
    /// no buffer).
    fn keep_rest(&mut self, rest: &[u8], answered: bool, cx: &Turn<'_, '_>) {
        if rest.is_empty() {
            // Release the allocation: idle connections own no buffers.
            self.input = Vec::new();
            self.become_idle(cx);
            return;
        }
        // The header timeout runs from the first byte of this head; more
        // bytes of the same head do not extend it (slowloris).
        if answered || self.phase != Phase::Head {
            self.phase = Phase::Head;
            self.deadline = cx.now.saturating_add(secs(cx.limits.header_timeout));
        }
        self.input = rest.to_vec();
    }

    /// HTTP/2: reads the frames in `data`, answers their requests, and
    /// sends as much as the windows and the socket allow. `Some` when the
    /// caller should stop driving; otherwise the connection waits for input
    /// (idle, or mid-frame under the header timeout) or for a window
    /// (under the send timeout).
    fn serve_h2(&mut self, data: &[u8], cx: &mut Turn<'_, '_>) -> Option<Next> {
        let tls = self.session.is_some();
        let h2 = self.h2.as_mut()?;
        h2.wake(cx.h2_spares);
        let (used, progress) = {
            let client = client(self.peer.as_deref().copied(), &self.session);
            h2.receive(data, &mut cx.serving(), tls, &client)
        };
        let rest = &data[used..];
        let written_before = h2.written();
        if let Some(next) = self.send_h2(rest, written_before, cx) {
            return Some(next);
        }
        let h2 = self.h2.as_ref()?;
        if matches!(progress, Progress::Failed(_)) || h2.is_done() {
            // The GOAWAY is sent; the client may still be writing.
            self.linger = true;
            return Some(self.finish(cx));
        }
        self.await_h2(used, rest, written_before, cx);
        None
    }

    /// Writes DATA and other frames until the streams have none ready,
    /// the socket is full or the turn's budget is spent. `Some` when the
    /// caller should stop driving (output kept, with `rest`, the input not
    /// yet read as frames).
    fn send_h2(&mut self, rest: &[u8], written_before: u64, cx: &mut Turn<'_, '_>) -> Option<Next> {
        let h2 = self.h2.as_mut()?;
        let mut sent = 0u64;
        loop {
            let more = h2.produce(cx.out, H2_BATCH, self.session.is_none());
            if cx.out.is_empty() {
                return None;
            }
            let flush = cx.flush_out(&mut wire(&self.fd, &mut self.session));
            let Ok(Flush { state, sent: n }) = flush else {
                return Some(Next::Close(Closed::Client));
            };
            self.boost.took(n);
            if state != Flushed::All {
                let progressed = h2.written() > written_before;
                if !self.queue_unsent(cx) {
                    return Some(Next::Close(Closed::Backlog));
                }
                self.input = rest.to_vec();
                if progressed || self.phase != Phase::Sending {
                    self.start_sending(cx);
                }
                // Streams of large bodies to a client that reads fast: at
                // the common bound every 64 KiB it reads is a wake-up that
                // pushes DATA through the loopback path in our own context.
                self.raise_bound(cx);
                return Some(match state {
                    Flushed::Paused => Next::Resume,
                    _ => Next::Keep,
                });
            }
            sent += n;
            if !more {
                return None;
            }
            if sent >= TURN_BUDGET {
                // Fair to the worker's other connections: come back for
                // the next frames.
                self.input = rest.to_vec();
                self.start_sending(cx);
                return Some(Next::Resume);
            }
        }
    }

    /// Everything that could be written is: waits for the rest of a frame
    /// or header block (header timeout), a window (send timeout), or the
    /// next request (idle).
    fn await_h2(&mut self, used: usize, rest: &[u8], written_before: u64, cx: &mut Turn<'_, '_>) {
        let Some(h2) = self.h2.as_ref() else {
            return;
        };
        let stalled = h2.is_stalled();
        let progressed = h2.written() > written_before;
        let in_block = h2.in_header_block();
        if in_block || !rest.is_empty() {
            // Mid-frame, or mid header block (HEADERS, then CONTINUATION
            // frames, §6.10): the header timeout runs from its first byte,
            // and more bytes of it do not extend it (slowloris). Only a
            // new frame begun after whole ones restarts it, outside a block.
            if (used > 0 && !in_block) || self.phase != Phase::Head {
                self.phase = Phase::Head;
                self.deadline = cx.now.saturating_add(secs(cx.limits.header_timeout));
            }
            self.input = rest.to_vec();
        } else if stalled {
            self.input = Vec::new();
            // The send timeout restarts when response data leaves, not
            // when anything does: a PING's ACK is not progress.
            if progressed || self.phase != Phase::Sending {
                self.start_sending(cx);
            }
        } else {
            self.input = Vec::new();
            self.become_idle(cx);
            if let Some(h2) = self.h2.as_mut() {
                h2.settle(cx.h2_spares);
            }
        }
    }

    /// Moves the unsent rest of the turn's output into this connection,
    /// charged to the worker's budget; false when that budget is spent (the
    /// connection is then closed: its client is not reading, and the
    /// worker's memory is bounded whatever clients do).
    fn queue_unsent(&mut self, cx: &mut Turn<'_, '_>) -> bool {
        let rest = cx.out.take_unsent();
        let cost = rest.footprint();
        if *cx.queued_output + cost > cx.limits.max_queued_output {
            return false;
        }
        *cx.queued_output += cost;
        self.charged += cost;
        self.pending = Some(Box::new(rest));
        true
    }

    /// After a flush that left output waiting: the raised unsent-bytes
    /// bound when this connection's client qualifies (see `boost`).
    fn raise_bound(&mut self, cx: &mut Turn<'_, '_>) {
        let unframed = self.h2.as_ref().map_or(0, |h2| h2.unwritten());
        let queued = self.pending.as_ref().map_or(0, |p| p.pending_bytes());
        let conns = cx.conns;
        let budget = Budget {
            spent: &mut *cx.boosted,
            conns,
        };
        if self
            .boost
            .raise(&self.fd, self.h2.is_some(), unframed + queued, budget)
        {
            cx.observer.raised();
        }
    }

    fn release_pending(&mut self, cx: &mut Turn<'_, '_>) {
        *cx.queued_output -= self.charged;
        self.charged = 0;
        self.pending = None;
        self.boost.body_sent(self.h2.is_some());
    }

    /// Output waits for the client: the send timeout runs from now.
    fn start_sending(&mut self, cx: &Turn<'_, '_>) {
        self.phase = Phase::Sending;
        self.deadline = cx.now.saturating_add(secs(cx.limits.send_timeout));
    }

    /// Nothing to read or send: the idle timeout runs.
    fn become_idle(&mut self, cx: &Turn<'_, '_>) {
        self.phase = Phase::Idle;
        self.deadline = cx.now.saturating_add(secs(cx.limits.idle_timeout));
    }

    /// The last response has left: close now, or shut our side and keep
    /// reading for a while when the client may still be sending.
    fn finish(&mut self, cx: &mut Turn<'_, '_>) -> Next {
        if let Some(session) = &mut self.session {
            // Best effort: a client that stopped reading does not get it.
            session.close_notify();
            let _ = self.wire().drain();
        }
        if !self.linger || rustix::net::shutdown(&self.fd, Shutdown::Write).is_err() {
            return Next::Close(Closed::Done);
        }
        self.phase = Phase::Lingering;
        self.input = Vec::new();
        self.deadline = cx.now.saturating_add(LINGER_SECS);
        self.readable = true;
        self.discard_input(cx)
    }

    /// Reads and drops input while lingering; closes on EOF, on error, or
    /// once enough was read.
    fn discard_input(&mut self, cx: &mut Turn<'_, '_>) -> Next {
        loop {
            match rustix::net::recv(&self.fd, &mut cx.read_buf[..], RecvFlags::empty()) {
                Ok((0, _)) => return Next::Close(Closed::Done),
                Ok((n, _)) => {
                    self.lingered += n as u64;
                    if self.lingered > LINGER_BYTES {
                        return Next::Close(Closed::Done);
                    }
                }
                Err(Errno::AGAIN) => return Next::Keep,
                Err(Errno::INTR) => {}
                Err(_) => return Next::Close(Closed::Done),
            }
        }
    }

    /// A plain HTTP request on a TLS port: the session is dropped and the
    /// client told so in plaintext, then the connection closes (lingering,
    /// so the answer is not lost to a reset).
    fn refuse_plain_http(&mut self, cx: &mut Turn<'_, '_>) -> Next {
        self.session = None;
        let date = cx.date;
        crate::h1::write_error(cx.out, date, Status::BadRequest);
        match cx.flush_out(&mut Wire::Plain(&self.fd)) {
            Ok(Flush {
                state: Flushed::All,
                ..
            }) => {
                self.linger = true;
                match self.finish(cx) {
                    Next::Close(_) => Next::Close(Closed::Tls),
                    next => next,
                }
            }
            _ => Next::Close(Closed::Tls),
        }
    }

    /// Called by every sweep: what a quiet connection rebuilds cheaply
    /// when traffic resumes is given back (a TLS session's keys unused
    /// since the last sweep).
    pub fn on_sweep(&mut self) {
        if let Some(session) = &mut self.session {
            session.drop_unused_keys();
        }
    }

    /// Called by the sweep when the deadline passed.
    pub fn on_timeout(&mut self, cx: &mut Turn<'_, '_>) -> Next {
        if self.session.as_ref().is_some_and(|s| s.is_handshaking()) {
            // No HTTP yet, so no 408: the handshake timed out.
            cx.observer.timed_out(Timeout::Handshake);
            return Next::Close(Closed::Timeout);
        }
        cx.observer.timed_out(match self.phase {
            Phase::Idle => Timeout::Idle,
            Phase::Head => Timeout::Header,
            Phase::Sending | Phase::Closing | Phase::Lingering => Timeout::Send,
        });
        if self.phase == Phase::Head && self.pending.is_none() && self.h2.is_none() {
            // RFC 9110 §15.5.9: tell the client before closing, and linger
            // so that the 408 is not destroyed by a reset.
            let date = cx.date;
            crate::h1::write_error(cx.out, date, Status::RequestTimeout);
            if let Ok(Flush {
                state: Flushed::All,
                ..
            }) = cx.flush_out(&mut wire(&self.fd, &mut self.session))
            {
                self.linger = true;
                return match self.finish(cx) {
                    Next::Close(_) => Next::Close(Closed::Timeout),
                    next => next,
                };
            }
        }
        if self.phase == Phase::Idle {
            // An idle HTTP/2 client learns why, and that nothing was lost.
            self.farewell(cx);
        }
        Next::Close(Closed::Timeout)
    }
}

/// The way to a connection's peer (a free function, so that callers can
/// borrow the connection's other fields beside it).
fn wire<'c>(fd: &'c OwnedFd, session: &'c mut Option<Box<Session>>) -> Wire<'c> {
    match session {
        None => Wire::Plain(fd),
        Some(session) => Wire::Tls { fd, session },
    }
}

/// What the access log says about a connection.
fn client(peer: Option<SocketAddr>, session: &Option<Box<Session>>) -> Client<'_> {
    Client {
        addr: peer,
        tls: session.as_ref().and_then(|s| s.facts()),
    }
}

fn secs(d: std::time::Duration) -> u32 {
    u32::try_from(d.as_secs().max(1)).unwrap_or(u32::MAX)
}
