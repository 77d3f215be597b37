//! One connection: read, parse every complete request, respond, write.
//!
//! Owns the per-connection state machine and the keep-alive/close decision;
//! the socket is non-blocking and registered edge-triggered once, so a
//! connection never calls epoll_ctl again. Invariants: an idle connection owns
//! no buffers (reads land in the worker's buffer and only a partial head is
//! copied out), and while output is blocked no further request is parsed
//! (backpressure: a client that pipelines without reading cannot grow memory).

use std::os::fd::OwnedFd;

use rustix::io::Errno;
use rustix::net::RecvFlags;
use tachyon_http::date::DateCache;
use tachyon_http::request::{self, BodyFraming, Parsed};
use tachyon_http::response::{self, Persistence};
use tachyon_http::{ParseError, Version};

use crate::limits::Limits;
use crate::outbox::{Flushed, Outbox};
use crate::respond::{respond, Outcome, Scratch};
use crate::site::Hosts;

/// Stop parsing pipelined requests once this much output is queued.
const MAX_QUEUED_OUTPUT: u64 = 1024 * 1024;

/// Where a connection is in its life; the timer sweep reads it to pick the timeout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Waiting for the next request (keep-alive idle timeout).
    Idle,
    /// Part of a head has arrived (header timeout, counted from its first byte).
    Head,
    /// Output is blocked on a full socket buffer (send timeout, reset on progress).
    Sending,
    /// The last response is queued; close once it is sent.
    Closing,
}

/// A connection's state. Kept small: 10,000 idle connections must cost
/// little more than their sockets.
pub struct Conn {
    pub fd: OwnedFd,
    pub phase: Phase,
    /// When the current phase's timeout fires, in worker-clock seconds.
    pub deadline: u32,
    /// Bytes of an incomplete head, or requests held back by backpressure.
    input: Vec<u8>,
    /// Output that did not fit in the socket buffer.
    pending: Option<Box<Outbox>>,
    /// Request-body bytes still to be read and thrown away.
    discard: u64,
    /// False once a read came back short or EAGAIN: wait for the next edge.
    readable: bool,
}

/// What one pass of [`Conn::answer`] did.
struct Batch {
    /// Bytes of `data` used (heads and discarded bodies).
    consumed: usize,
    /// At least one request was answered.
    answered: bool,
    /// Stopped because enough output is queued; more requests may follow.
    held_back: bool,
    /// The last response closes the connection.
    close: bool,
}

/// What the worker should do with the connection afterwards.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    Keep,
    Close,
}

/// The worker-owned state a connection borrows while it runs.
pub struct Ctx<'a> {
    pub read_buf: &'a mut Vec<u8>,
    pub out: &'a mut Outbox,
    pub scratch: &'a mut Scratch,
    pub date: &'a DateCache,
    pub hosts: &'a Hosts,
    pub limits: &'a Limits,
    /// Worker-clock seconds now.
    pub now: u32,
    /// The server is draining: answer what is in flight, then close.
    pub draining: bool,
}

impl Conn {
    pub fn new(fd: OwnedFd, now: u32, limits: &Limits) -> Conn {
        Conn {
            fd,
            phase: Phase::Idle,
            deadline: now.saturating_add(secs(limits.idle_timeout)),
            input: Vec::new(),
            pending: None,
            discard: 0,
            readable: true,
        }
    }

    /// True when nothing is in flight: safe to close during a drain.
    pub fn is_quiet(&self) -> bool {
        self.phase == Phase::Idle && self.pending.is_none()
    }

    /// Runs the connection as far as it can go without blocking.
    pub fn drive(&mut self, readable: bool, cx: &mut Ctx<'_>) -> Next {
        self.readable |= readable;
        if let Some(pending) = self.pending.as_mut() {
            match pending.flush(&self.fd) {
                Err(_) => return Next::Close,
                Ok(Flushed::Blocked) => {
                    // Progress or not, the send timeout counts from the last edge.
                    self.deadline = cx.now.saturating_add(secs(cx.limits.send_timeout));
                    return Next::Keep;
                }
                Ok(Flushed::All) => {
                    self.pending = None;
                    if self.phase == Phase::Closing {
                        return Next::Close;
                    }
                    self.phase = Phase::Idle;
                    // Requests held back while output was blocked.
                    if !self.input.is_empty() {
                        let input = std::mem::take(&mut self.input);
                        if let Some(next) = self.serve(&input, cx) {
                            return next;
                        }
                    }
                }
            }
        }
        while self.readable {
            // recv, not read: the socket path skips the VFS layer (file
            // position lock, rw_verify_area), a few percent of the kernel time
            // of a small keep-alive request in `perf record`.
            let n = match rustix::net::recv(&self.fd, &mut cx.read_buf[..], RecvFlags::empty()) {
                Ok((0, _)) => return Next::Close,
                Ok((n, _)) => n,
                Err(Errno::AGAIN) => {
                    self.readable = false;
                    break;
                }
                Err(Errno::INTR) => continue,
                Err(_) => return Next::Close,
            };
            // Edge-triggered: a short read means the socket is drained, and any
            // later data raises a new edge. Saves the EAGAIN read per request.
            if n < cx.read_buf.len() {
                self.readable = false;
            }
            let next = if self.input.is_empty() {
                let data = std::mem::take(cx.read_buf);
                let next = self.serve(&data[..n], cx);
                *cx.read_buf = data;
                next
            } else {
                let mut input = std::mem::take(&mut self.input);
                input.extend_from_slice(&cx.read_buf[..n]);
                self.serve(&input, cx)
            };
            if let Some(next) = next {
                return next;
            }
        }
        if cx.draining && self.is_quiet() {
            return Next::Close;
        }
        Next::Keep
    }

    /// Answers every complete request in `data`, flushes, and keeps what
    /// remains. `Some` when the caller should stop driving.
    fn serve(&mut self, data: &[u8], cx: &mut Ctx<'_>) -> Option<Next> {
        let mut pos = 0;
        let mut answered = false;
        loop {
            let batch = self.answer(&data[pos..], cx);
            pos += batch.consumed;
            answered |= batch.answered;
            if batch.close {
                self.phase = Phase::Closing;
            }
            if !cx.out.is_empty() {
                match cx.out.flush(&self.fd) {
                    Err(_) => return Some(Next::Close),
                    Ok(Flushed::All) if batch.close => return Some(Next::Close),
                    Ok(Flushed::All) => {}
                    Ok(Flushed::Blocked) => {
                        self.pending = Some(Box::new(std::mem::take(cx.out)));
                        if !batch.close {
                            self.phase = Phase::Sending;
                            self.input = data[pos..].to_vec();
                        }
                        self.deadline = cx.now.saturating_add(secs(cx.limits.send_timeout));
                        return Some(Next::Keep);
                    }
                }
            }
            if !batch.held_back {
                break;
            }
        }
        let rest = &data[pos..];
        if rest.is_empty() {
            // Release the allocation: idle connections own no buffers.
            self.input = Vec::new();
            self.phase = Phase::Idle;
            self.deadline = cx.now.saturating_add(secs(cx.limits.idle_timeout));
        } else {
            // The header timeout runs from the first byte of this head; more
            // bytes of the same head do not extend it (slowloris).
            if answered || self.phase != Phase::Head {
                self.phase = Phase::Head;
                self.deadline = cx.now.saturating_add(secs(cx.limits.header_timeout));
            }
            self.input = rest.to_vec();
        }
        None
    }

    /// Parses and answers requests from the start of `data` into `cx.out`.
    fn answer(&mut self, data: &[u8], cx: &mut Ctx<'_>) -> Batch {
        let mut batch = Batch {
            consumed: 0,
            answered: false,
            held_back: false,
            close: false,
        };
        while batch.consumed < data.len() {
            let rest = &data[batch.consumed..];
            if self.discard > 0 {
                let skip = self.discard.min(rest.len() as u64);
                self.discard -= skip;
                batch.consumed += skip as usize;
                continue;
            }
            if cx.out.pending_bytes() > MAX_QUEUED_OUTPUT {
                batch.held_back = true;
                break;
            }
            let head = match request::parse(rest, &cx.limits.head) {
                Ok(Parsed::Complete(head)) => head,
                Ok(Parsed::Partial) => break,
                Err(error) => {
                    response::write_error(
                        cx.out.buf(),
                        error.status(),
                        cx.date,
                        Persistence::Close,
                        b"",
                        false,
                    );
                    batch.close = true;
                    break;
                }
            };
            batch.consumed += head.head_len;
            batch.answered = true;
            let mut keep_alive = head.keep_alive && !cx.draining;
            match head.body {
                BodyFraming::None => {}
                BodyFraming::Length(n) if n <= cx.limits.max_discard_body => self.discard = n,
                BodyFraming::Length(_) => {
                    let status = ParseError::BodyTooLarge.status();
                    response::write_error(
                        cx.out.buf(),
                        status,
                        cx.date,
                        Persistence::Close,
                        b"",
                        false,
                    );
                    batch.close = true;
                    break;
                }
                // Chunked bodies are not decoded: answer, then close, so the
                // body is never taken for the next request (RFC 9112 §9.6).
                BodyFraming::Chunked => keep_alive = false,
            }
            let persistence = match (keep_alive, head.version) {
                (false, _) => Persistence::Close,
                (true, Version::Http10) => Persistence::KeepAliveEcho,
                (true, Version::Http11) => Persistence::KeepAlive,
            };
            let site = cx.hosts.pick(head.host);
            if respond(&head, site, cx.date, persistence, cx.scratch, cx.out) == Outcome::Close {
                batch.close = true;
                break;
            }
        }
        if batch.close {
            batch.consumed = data.len();
        }
        batch
    }

    /// Called by the sweep when the deadline passed.
    pub fn on_timeout(&mut self, cx: &mut Ctx<'_>) -> Next {
        if self.phase == Phase::Head && self.pending.is_none() {
            // RFC 9110 §15.5.9: tell the client before closing.
            response::write_error(
                cx.out.buf(),
                tachyon_http::Status::RequestTimeout,
                cx.date,
                Persistence::Close,
                b"",
                false,
            );
            let _ = cx.out.flush(&self.fd);
            cx.out.clear();
        }
        Next::Close
    }
}

fn secs(d: std::time::Duration) -> u32 {
    u32::try_from(d.as_secs().max(1)).unwrap_or(u32::MAX)
}
