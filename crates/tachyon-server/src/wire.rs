//! The byte pipe under a connection: the socket itself, or a TLS session
//! in front of it.
//!
//! Owns the system calls that move a connection's bytes and, for HTTPS, the
//! rustls session that seals them. The plain path is the socket calls
//! alone (one branch on the variant per call); TLS adds a copy into
//! rustls's records and has no sendfile (userspace TLS must see the bytes).
//! Does not decide what to send (`outbox`) nor when (`conn`).
//!
//! Invariant: what a [`Session`] buffers belongs to its connection alone
//! and leaves only through its own socket; the worker's shared buffers are
//! never borrowed past a call.

use std::io::{self, Read, Write};
use std::os::fd::OwnedFd;
use std::sync::Arc;

use rustix::io::{Errno, IoSlice};
use rustix::net::{RecvFlags, SendFlags};
use rustls::{ServerConfig, ServerConnection};

/// Largest copy of a disk body per TLS send: what the session buffers at
/// most (rustls's default limit), so a copy is never read twice.
pub const TLS_COPY_CHUNK: u64 = 64 * 1024;

/// A connection's TLS state: the rustls session, boxed in the connection
/// (a plain connection pays one pointer).
pub struct Session {
    tls: ServerConnection,
    /// The first bytes were looked at (see [`Received::PlainHttp`]).
    sniffed: bool,
}

impl Session {
    pub fn new(config: Arc<ServerConfig>) -> Result<Box<Session>, rustls::Error> {
        let mut tls = ServerConnection::new(config)?;
        tls.set_buffer_limit(Some(TLS_COPY_CHUNK as usize));
        Ok(Box::new(Session {
            tls,
            sniffed: false,
        }))
    }

    pub fn is_handshaking(&self) -> bool {
        self.tls.is_handshaking()
    }

    /// The negotiated version and ALPN protocol, once the handshake is done.
    pub fn facts(&self) -> Option<crate::access::TlsFacts<'_>> {
        let version = self.tls.protocol_version()?;
        Some(crate::access::TlsFacts {
            version: u16::from(version),
            alpn: self.tls.alpn_protocol(),
        })
    }

    /// True when ALPN chose HTTP/2.
    pub fn is_h2(&self) -> bool {
        self.tls.alpn_protocol() == Some(b"h2")
    }

    /// Queues a `close_notify` alert (RFC 8446 §6.1), sent by the next drain.
    pub fn close_notify(&mut self) {
        self.tls.send_close_notify();
    }
}

/// What one read produced.
#[derive(Debug, PartialEq, Eq)]
pub enum Received {
    /// This many plaintext bytes are in the buffer.
    Data(usize),
    /// Nothing more until the next readiness edge.
    Drained,
    /// The peer closed, or the connection failed.
    Closed,
    /// The TLS session failed (a bad handshake or record): its alert is sent.
    Failed,
    /// A plain HTTP request arrived on a TLS port: answer it in plaintext
    /// and close (what nginx does, with its "plain HTTP request was sent
    /// to HTTPS port" page).
    PlainHttp,
}

/// The way to a connection's peer for one call.
pub enum Wire<'c> {
    Plain(&'c OwnedFd),
    Tls {
        fd: &'c OwnedFd,
        session: &'c mut Session,
    },
}

impl Wire<'_> {
    /// Whether disk bodies may go out by sendfile.
    pub fn can_sendfile(&self) -> bool {
        matches!(self, Wire::Plain(_))
    }

    /// Largest copy of a disk body worth making per send.
    pub fn copy_chunk(&self, plain: u64) -> u64 {
        match self {
            Wire::Plain(_) => plain,
            Wire::Tls { .. } => TLS_COPY_CHUNK,
        }
    }

    /// The socket itself.
    pub fn fd(&self) -> &OwnedFd {
        match self {
            Wire::Plain(fd) | Wire::Tls { fd, .. } => fd,
        }
    }

    /// Sends from `slices` in order; returns how many bytes were taken.
    /// `more` says a file region follows at once (plain only: the head
    /// then shares a segment with the body).
    pub fn send(&mut self, slices: &[IoSlice<'_>], more: bool) -> rustix::io::Result<usize> {
        match self {
            Wire::Plain(fd) => {
                if slices.len() == 1 {
                    let flags = if more {
                        SendFlags::MORE | SendFlags::NOSIGNAL
                    } else {
                        SendFlags::NOSIGNAL
                    };
                    rustix::net::send(fd, &slices[0], flags)
                } else {
                    rustix::io::writev(fd, slices)
                }
            }
            Wire::Tls { fd, session } => loop {
                let taken = session
                    .tls
                    .writer()
                    .write_vectored(slices)
                    .map_err(|_| Errno::IO)?;
                if taken > 0 {
                    // Push the records now; a full socket leaves them in
                    // the session until the next drain.
                    match push(fd, &mut session.tls) {
                        Ok(()) | Err(Errno::AGAIN) => return Ok(taken),
                        Err(e) => return Err(e),
                    }
                }
                // The session's buffer is full: make room or report the
                // socket full.
                push(fd, &mut session.tls)?;
            },
        }
    }

    /// Sends what the wire itself still holds (TLS records). `Ok` when
    /// nothing is left; `Err(AGAIN)` while the socket is full.
    pub fn drain(&mut self) -> rustix::io::Result<()> {
        match self {
            Wire::Plain(_) => Ok(()),
            Wire::Tls { fd, session } => push(fd, &mut session.tls),
        }
    }

    /// Reads what arrived: plaintext into `buf`. `readable` is the edge
    /// state the caller keeps (cleared once the socket is drained);
    /// `hung_up` says the peer's FIN was seen, so a short read no longer
    /// proves the socket drained.
    pub fn receive(&mut self, buf: &mut [u8], readable: &mut bool, hung_up: bool) -> Received {
        match self {
            Wire::Plain(fd) => loop {
                if !*readable {
                    return Received::Drained;
                }
                // recv, not read: the socket path skips the VFS layer (file
                // position lock, rw_verify_area), a few percent of the kernel
                // time of a small keep-alive request in `perf record`.
                let len = buf.len();
                match rustix::net::recv(*fd, &mut *buf, RecvFlags::empty()) {
                    Ok((0, _)) => return Received::Closed,
                    Ok((n, _)) => {
                        // Edge-triggered: a short read means the socket is
                        // drained, and any later data raises a new edge;
                        // saves the EAGAIN read per request.
                        if n < len && !hung_up {
                            *readable = false;
                        }
                        return Received::Data(n);
                    }
                    Err(Errno::AGAIN) => {
                        *readable = false;
                        return Received::Drained;
                    }
                    Err(Errno::INTR) => {}
                    Err(_) => return Received::Closed,
                }
            },
            Wire::Tls { fd, session } => receive_tls(fd, session, buf, readable, hung_up),
        }
    }
}

/// Plaintext first (rustls may hold records decrypted earlier), then more
/// records from the socket, then the handshake's answers.
fn receive_tls(
    fd: &OwnedFd,
    session: &mut Session,
    buf: &mut [u8],
    readable: &mut bool,
    hung_up: bool,
) -> Received {
    loop {
        match session.tls.reader().read(buf) {
            // close_notify: the peer finished cleanly.
            Ok(0) => return Received::Closed,
            Ok(n) => return Received::Data(n),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
            // A FIN without close_notify, or a failed session.
            Err(_) => return Received::Closed,
        }
        if !*readable {
            return Received::Drained;
        }
        // Decided on the first byte, once one has arrived (a client may
        // connect and write later): a TLS record starts with a content
        // type (20–24), an HTTP request with an uppercase method.
        if !session.sniffed {
            if let Some(byte) = first_byte(fd) {
                session.sniffed = true;
                if byte.is_ascii_uppercase() {
                    return Received::PlainHttp;
                }
            }
        }
        let mut socket = Socket { fd, short: false };
        match session.tls.read_tls(&mut socket) {
            Ok(0) => return Received::Closed,
            Ok(_) => {
                if socket.short && !hung_up {
                    *readable = false;
                }
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                *readable = false;
                return Received::Drained;
            }
            Err(_) => return Received::Closed,
        }
        if session.tls.process_new_packets().is_err() {
            // rustls queued the alert that says why: send it, then close.
            let _ = push(fd, &mut session.tls);
            return Received::Failed;
        }
        match push(fd, &mut session.tls) {
            Ok(()) | Err(Errno::AGAIN) => {}
            Err(_) => return Received::Closed,
        }
    }
}

/// True when the first bytes on a TLS port are an HTTP request line (an
/// uppercase method token) rather than a TLS record (content type 22).
fn first_byte(fd: &OwnedFd) -> Option<u8> {
    let mut first = [0u8; 1];
    match rustix::net::recv(fd, &mut first, RecvFlags::PEEK) {
        Ok((1, _)) => Some(first[0]),
        _ => None,
    }
}

/// Writes the session's records until none are left or the socket is full.
fn push(fd: &OwnedFd, tls: &mut ServerConnection) -> rustix::io::Result<()> {
    let mut socket = Socket { fd, short: false };
    while tls.wants_write() {
        match tls.write_tls(&mut socket) {
            Ok(0) => return Err(Errno::IO),
            Ok(_) => {}
            Err(e) => return Err(to_errno(&e)),
        }
    }
    Ok(())
}

fn to_errno(e: &io::Error) -> Errno {
    e.raw_os_error().map_or(Errno::IO, Errno::from_raw_os_error)
}

/// The socket as `io::Read`/`io::Write` for rustls; remembers whether a
/// read came back short (the socket then holds nothing more).
struct Socket<'a> {
    fd: &'a OwnedFd,
    short: bool,
}

impl Read for Socket<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        loop {
            let len = buf.len();
            match rustix::net::recv(self.fd, &mut *buf, RecvFlags::empty()) {
                Ok((n, _)) => {
                    self.short = n < len;
                    return Ok(n);
                }
                Err(Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
        }
    }
}

impl Write for Socket<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        Ok(rustix::net::send(self.fd, buf, SendFlags::NOSIGNAL)?)
    }

    fn write_vectored(&mut self, bufs: &[io::IoSlice<'_>]) -> io::Result<usize> {
        // rustls hands over one record per response on keep-alive: `send`
        // skips the VFS layer that `writev` goes through (vfs_writev and
        // the iovec import were 1.5% of a TLS 1 KiB keep-alive profile).
        match bufs {
            [one] => self.write(one),
            _ => Ok(rustix::io::writev(self.fd, bufs)?),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}
