//! The byte pipe under a connection: the socket itself, or a TLS session
//! in front of it.
//!
//! Owns the system calls that move a connection's bytes: on the plain path
//! the socket calls alone (one branch on the variant per call); for HTTPS
//! it reads ciphertext into the worker's buffers, has the [`Session`] open
//! and seal it (`session` is sans-I/O), and sends what it sealed. TLS has
//! no sendfile (userspace TLS must see the bytes). Does not decide what to
//! send (`outbox`) nor when (`conn`).
//!
//! Invariant: what a session buffers belongs to its connection alone and
//! leaves only through its own socket; the worker's scratch buffers are
//! never borrowed past a call.

use std::cell::RefCell;
use std::os::fd::OwnedFd;

use rustix::io::{Errno, IoSlice};
use rustix::net::{RecvFlags, SendFlags};

use crate::session::{Opening, Sealed, JOIN_UP_TO, MAX_INCOMING, MAX_RECORD};
pub use crate::session::{Session, TLS_COPY_CHUNK};

/// Bytes read per receive call: a few records (each at most 16 KiB and
/// 256 bytes of overhead).
const READ_CHUNK: usize = 64 * 1024;

/// The worker's buffers for opening and sealing records.
struct TlsBuffers {
    /// Ciphertext being opened: a session's leftover, then what was read.
    input: Vec<u8>,
    /// Records being sealed, before the socket takes them.
    output: Sealed,
    /// Small plaintext slices gathered into one record.
    gather: Vec<u8>,
}

thread_local! {
    /// Per worker thread; borrowed for one call of [`Wire`] and released
    /// before it returns.
    static BUFFERS: RefCell<TlsBuffers> = RefCell::new(TlsBuffers {
        input: vec![0; MAX_INCOMING + READ_CHUNK],
        output: Sealed::with_capacity(TLS_COPY_CHUNK as usize + 8 * 1024),
        gather: Vec::with_capacity(MAX_RECORD),
    });
}

/// Sends `sealed` after what the session still owes, both in one call,
/// keeping what the socket refuses. `Err(AGAIN)` while anything is left.
fn send_sealed(fd: &OwnedFd, session: &mut Session, sealed: &[u8]) -> rustix::io::Result<()> {
    let owed = session.owed().len();
    let (sent, result) = send_all(fd, session.owed(), sealed);
    let from_owed = sent.min(owed);
    session.took(from_owed);
    if result.is_err() {
        session.owe(&sealed[sent - from_owed..]);
    }
    result
}

/// Sends what the session still owes.
fn flush(fd: &OwnedFd, session: &mut Session) -> rustix::io::Result<()> {
    send_sealed(fd, session, &[])
}

/// Seals up to [`TLS_COPY_CHUNK`] of `slices` and sends them after what
/// the session owes, in one call; returns the plaintext bytes taken (what
/// the socket refused stays sealed in the session, sent by the next
/// drain). With `more` (the outbox sends or drains again at once: more of
/// the response, or the close) a small output that took all of `slices`
/// is held back to leave with what follows: a response to a fresh
/// connection then leaves with its session tickets and `close_notify` in
/// one segment, not three.
fn send_tls(
    fd: &OwnedFd,
    session: &mut Session,
    slices: &[IoSlice<'_>],
    more: bool,
) -> rustix::io::Result<usize> {
    if session.owed().len() > JOIN_UP_TO {
        // Refused earlier: the socket must take those before more is sealed.
        flush(fd, session)?;
    }
    BUFFERS.with(|buffers| {
        let TlsBuffers { output, gather, .. } = &mut *buffers.borrow_mut();
        output.clear();
        let taken = session.seal_data(slices, gather, output).ok_or(Errno::IO)?;
        let small = session.owed().len() + output.bytes().len() <= JOIN_UP_TO;
        if more && small && taken == slices.iter().map(|s| s.len()).sum::<usize>() {
            session.owe(output.bytes());
            return Ok(taken);
        }
        match send_sealed(fd, session, output.bytes()) {
            Ok(()) | Err(Errno::AGAIN) => Ok(taken),
            Err(e) => Err(e),
        }
    })
}

/// Sends what is owed and the `close_notify` if one was asked for, in
/// one call.
fn drain_tls(fd: &OwnedFd, session: &mut Session) -> rustix::io::Result<()> {
    BUFFERS.with(|buffers| {
        let TlsBuffers { output, .. } = &mut *buffers.borrow_mut();
        output.clear();
        session.seal_close(output);
        send_sealed(fd, session, output.bytes())
    })
}

/// Plaintext left from before, then records already received, then more
/// from the socket; the handshake's answers are sent on the way.
fn receive_tls(
    fd: &OwnedFd,
    session: &mut Session,
    buf: &mut [u8],
    readable: &mut bool,
    hung_up: bool,
) -> Received {
    if let Some(n) = session.take_plain(buf) {
        return Received::Data(n);
    }
    BUFFERS.with(|buffers| {
        let TlsBuffers { input, output, .. } = &mut *buffers.borrow_mut();
        output.clear();
        let mut end = session.kept().len();
        input[..end].copy_from_slice(session.kept());
        let mut start = 0;
        let received = loop {
            match session.open(&mut input[..end], &mut start, output, buf) {
                Opening::Data(n) => break Received::Data(n),
                Opening::Closed => break Received::Closed,
                Opening::Failed => break Received::Failed,
                Opening::Wait => {}
            }
            // The handshake's answers leave before more is awaited.
            if !output.is_empty() {
                match send_sealed(fd, session, output.bytes()) {
                    Ok(()) | Err(Errno::AGAIN) => output.clear(),
                    Err(_) => break Received::Closed,
                }
            }
            if !*readable {
                break Received::Drained;
            }
            // Decided on the first byte, once one has arrived (a client may
            // connect and write later): a TLS record starts with a content
            // type (20–24), an HTTP request with an uppercase method.
            if !session.sniffed() {
                if let Some(byte) = first_byte(fd) {
                    session.mark_sniffed();
                    if byte.is_ascii_uppercase() {
                        break Received::PlainHttp;
                    }
                }
            }
            input.copy_within(start..end, 0);
            end -= start;
            start = 0;
            if end >= MAX_INCOMING {
                break Received::Failed;
            }
            match recv_edge(fd, &mut input[end..end + READ_CHUNK], readable, hung_up) {
                Ok(n) => end += n,
                Err(ended) => break ended,
            }
        };
        session.hand_over();
        match received {
            // Records sealed on the way (the session tickets after the
            // handshake's last flight) leave with the answer to what was
            // read (`send_tls`), or with the next receive or drain.
            Received::Data(_) => session.owe(output.bytes()),
            // An alert, or tickets with nothing to answer yet: best effort
            // here, the rest leaves with the next drain.
            _ => {
                let _ = send_sealed(fd, session, output.bytes());
            }
        }
        session.keep(&input[start..end]);
        received
    })
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
    /// `more` says more follows at once, a file region or the close's FIN
    /// (plain only: what is sent then shares a segment with it).
    pub fn send(&mut self, slices: &[IoSlice<'_>], more: bool) -> rustix::io::Result<usize> {
        match self {
            Wire::Plain(fd) => {
                let flags = if more {
                    SendFlags::MORE | SendFlags::NOSIGNAL
                } else {
                    SendFlags::NOSIGNAL
                };
                match slices.len() {
                    1 => rustix::net::send(fd, &slices[0], flags),
                    _ if more => rustix::net::sendmsg(
                        fd,
                        slices,
                        &mut rustix::net::SendAncillaryBuffer::default(),
                        flags,
                    ),
                    _ => rustix::io::writev(fd, slices),
                }
            }
            Wire::Tls { fd, session } => send_tls(fd, session, slices, more),
        }
    }

    /// Sends what the wire itself still holds (TLS records). `Ok` when
    /// nothing is left; `Err(AGAIN)` while the socket is full.
    pub fn drain(&mut self) -> rustix::io::Result<()> {
        match self {
            Wire::Plain(_) => Ok(()),
            Wire::Tls { fd, session } => drain_tls(fd, session),
        }
    }

    /// Reads what arrived: plaintext into `buf`. `readable` is the edge
    /// state the caller keeps (cleared once the socket is drained);
    /// `hung_up` says the peer's FIN was seen, so a short read no longer
    /// proves the socket drained.
    pub fn receive(&mut self, buf: &mut [u8], readable: &mut bool, hung_up: bool) -> Received {
        match self {
            Wire::Plain(fd) => {
                if !*readable {
                    return Received::Drained;
                }
                match recv_edge(fd, buf, readable, hung_up) {
                    Ok(n) => Received::Data(n),
                    Err(ended) => ended,
                }
            }
            Wire::Tls { fd, session } => receive_tls(fd, session, buf, readable, hung_up),
        }
    }
}

/// One read on an edge-triggered socket: `Ok(n)` for `n` bytes, else
/// what ends the caller's reading (`Drained` or `Closed`). A short read
/// means the socket is drained, and any later data raises a new edge, so
/// it clears `readable` (saving the EAGAIN read per request) unless the
/// peer's FIN was seen, after which a short read proves nothing. `recv`,
/// not `read`: the socket path skips the VFS layer (file position lock,
/// rw_verify_area), a few percent of the kernel time of a small keep-alive
/// request in `perf record`.
fn recv_edge(
    fd: &OwnedFd,
    buf: &mut [u8],
    readable: &mut bool,
    hung_up: bool,
) -> Result<usize, Received> {
    let len = buf.len();
    loop {
        match rustix::net::recv(fd, &mut *buf, RecvFlags::empty()) {
            Ok((0, _)) => return Err(Received::Closed),
            Ok((n, _)) => {
                if n < len && !hung_up {
                    *readable = false;
                }
                return Ok(n);
            }
            Err(Errno::AGAIN) => {
                *readable = false;
                return Err(Received::Drained);
            }
            Err(Errno::INTR) => {}
            Err(_) => return Err(Received::Closed),
        }
    }
}

/// Sends `first` then `second` until all are taken or the socket refuses;
/// returns how many were taken and how it ended. One `send` while a
/// single part is left (cheaper than `sendmsg`), else one `sendmsg` of
/// both.
fn send_all(fd: &OwnedFd, first: &[u8], second: &[u8]) -> (usize, rustix::io::Result<()>) {
    let total = first.len() + second.len();
    let mut sent = 0;
    while sent < total {
        let result = match first.get(sent..) {
            Some(rest) if !rest.is_empty() && !second.is_empty() => {
                let slices = [IoSlice::new(rest), IoSlice::new(second)];
                let mut ancillary = rustix::net::SendAncillaryBuffer::default();
                rustix::net::sendmsg(fd, &slices, &mut ancillary, SendFlags::NOSIGNAL)
            }
            Some(rest) if !rest.is_empty() => rustix::net::send(fd, rest, SendFlags::NOSIGNAL),
            _ => rustix::net::send(fd, &second[sent - first.len()..], SendFlags::NOSIGNAL),
        };
        match result {
            Ok(n) => sent += n,
            Err(Errno::INTR) => {}
            Err(e) => return (sent, Err(e)),
        }
    }
    (sent, Ok(()))
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

#[cfg(test)]
mod tests {
    //! A session driven by hand against rustls's client over a socket
    //! pair: the orders and updates the end-to-end specs cannot arrange.

    use std::io::{ErrorKind, Read, Write};
    use std::os::unix::net::UnixStream;

    use rustls::ClientConnection;

    use super::*;
    use crate::session::tests::{client, pattern, server_config};

    struct Pair {
        client: ClientConnection,
        client_socket: UnixStream,
        server: Box<Session>,
        server_fd: OwnedFd,
    }

    impl Pair {
        /// A client and a server session over a socket pair, nothing
        /// sent yet.
        fn unstarted(version: &'static rustls::SupportedProtocolVersion) -> Pair {
            let (a, b) = UnixStream::pair().unwrap();
            a.set_nonblocking(true).unwrap();
            b.set_nonblocking(true).unwrap();
            Pair {
                client: client(version),
                client_socket: a,
                server: Session::new(server_config()).unwrap(),
                server_fd: OwnedFd::from(b),
            }
        }

        /// A pair whose handshake is done on both sides.
        fn new(version: &'static rustls::SupportedProtocolVersion) -> Pair {
            let mut pair = Pair::unstarted(version);
            while pair.client.is_handshaking() || pair.server.is_handshaking() {
                pair.client_flush();
                assert_eq!(pair.server_read(&mut [0; 1024]), 0);
                pair.client_read();
            }
            pair.client_flush();
            pair
        }

        fn client_flush(&mut self) {
            while self.client.wants_write() {
                self.client.write_tls(&mut self.client_socket).unwrap();
            }
        }

        /// Whatever the server sent, into the client's plaintext.
        fn client_read(&mut self) -> Vec<u8> {
            let mut got = Vec::new();
            loop {
                match self.client.read_tls(&mut self.client_socket) {
                    Ok(0) => break,
                    Ok(_) => {
                        self.client.process_new_packets().unwrap();
                        let mut chunk = vec![0; 64 * 1024];
                        while let Ok(n @ 1..) = self.client.reader().read(&mut chunk) {
                            got.extend_from_slice(&chunk[..n]);
                        }
                    }
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => panic!("{e}"),
                }
            }
            got
        }

        /// One receive call; the plaintext bytes it gave.
        fn server_read(&mut self, buf: &mut [u8]) -> usize {
            let mut readable = true;
            match receive_tls(&self.server_fd, &mut self.server, buf, &mut readable, false) {
                Received::Data(n) => n,
                Received::Drained => 0,
                other => panic!("the server's session ended: {other:?}"),
            }
        }
    }

    /// The bytes waiting on the client's socket, without reading them.
    fn waiting(socket: &UnixStream) -> usize {
        let mut probe = [0u8; 64 * 1024];
        match rustix::net::recv(socket, &mut probe, RecvFlags::PEEK) {
            Ok((n, _)) => n,
            Err(Errno::AGAIN) => 0,
            Err(e) => panic!("{e}"),
        }
    }

    /// A fresh connection's first answer: the session tickets sealed when
    /// the client's Finished arrived with its request, the response (sent
    /// with `more`: the close follows) and the close_notify leave together
    /// at the drain, in that order, not as three sends.
    #[test]
    fn tickets_response_and_close_notify_leave_in_one_send() {
        let mut pair = Pair::unstarted(&rustls::version::TLS13);
        pair.client_flush();
        assert_eq!(pair.server_read(&mut [0; 1024]), 0, "the ClientHello");
        pair.client_read();
        assert!(!pair.client.is_handshaking());
        // The client's Finished and its request in one read.
        let request = pattern(300, 3);
        pair.client.writer().write_all(&request).unwrap();
        pair.client_flush();
        let mut buf = vec![0; 4096];
        assert_eq!(pair.server_read(&mut buf), request.len());
        assert_eq!(&buf[..request.len()], &request[..]);
        assert_eq!(
            waiting(&pair.client_socket),
            0,
            "the tickets wait for the answer"
        );
        let response = pattern(1_500, 5);
        let sent = Wire::Tls {
            fd: &pair.server_fd,
            session: &mut pair.server,
        }
        .send(&[IoSlice::new(&response)], true);
        assert_eq!(sent, Ok(response.len()));
        assert_eq!(
            waiting(&pair.client_socket),
            0,
            "the response waits for the close"
        );
        pair.server.close_notify();
        let drained = Wire::Tls {
            fd: &pair.server_fd,
            session: &mut pair.server,
        }
        .drain();
        assert_eq!(drained, Ok(()));
        assert!(pair.server.owed().is_empty());
        assert_eq!(pair.client_read(), response);
        let mut rest = [0u8; 16];
        assert_eq!(
            pair.client.reader().read(&mut rest).unwrap(),
            0,
            "the close_notify came after the response"
        );
    }

    /// Records arriving together can open to more than the reader's
    /// buffer holds; what does not fit waits, and nothing after it may
    /// pass it.
    #[test]
    fn opened_bytes_reach_the_reader_in_order_whatever_fits() {
        for version in [&rustls::version::TLS13, &rustls::version::TLS12] {
            let mut pair = Pair::new(version);
            assert_eq!(
                pair.server.is_handed_over(),
                version == &rustls::version::TLS13,
                "TLS 1.3 sessions leave rustls after the handshake, TLS 1.2 ones do not"
            );
            // 16 KiB + 3,616 B, then 16 KiB, then 1,000 B: the third
            // record does not fit the 32 KiB buffer after the first two,
            // the fourth would.
            let sent = [pattern(20_000, 7), pattern(16_384, 11), pattern(1_000, 13)].concat();
            pair.client.writer().write_all(&sent[..20_000]).unwrap();
            pair.client
                .writer()
                .write_all(&sent[20_000..36_384])
                .unwrap();
            pair.client.writer().write_all(&sent[36_384..]).unwrap();
            pair.client_flush();
            let mut got = Vec::new();
            let mut buf = vec![0; 32 * 1024];
            for _ in 0..8 {
                let n = pair.server_read(&mut buf);
                got.extend_from_slice(&buf[..n]);
            }
            assert_eq!(got.len(), sent.len(), "{version:?}");
            assert!(got == sent, "{version:?}: the bytes were reordered");
        }
    }

    /// A client's key update asking for ours (RFC 8446 §4.6.3): the
    /// server opens what follows under the client's next key, and what it
    /// sends next opens under its own next key, three times over.
    #[test]
    fn a_requested_key_update_moves_both_directions_on() {
        let mut pair = Pair::new(&rustls::version::TLS13);
        for round in 0..3 {
            pair.client.refresh_traffic_keys().unwrap();
            let request = pattern(500, 3 + round);
            pair.client.writer().write_all(&request).unwrap();
            pair.client_flush();
            let mut buf = vec![0; 4096];
            let n = pair.server_read(&mut buf);
            assert_eq!(&buf[..n], &request[..]);
            let response = pattern(40_000, 5 + round);
            let mut at = 0;
            while at < response.len() {
                let slices = [IoSlice::new(&response[at..])];
                at += Wire::Tls {
                    fd: &pair.server_fd,
                    session: &mut pair.server,
                }
                .send(&slices, false)
                .unwrap();
            }
            let got = pair.client_read();
            assert!(got == response, "round {round}: the response differs");
        }
        // rustls moves its receiving key on when it reads the server's
        // update: a server that replied but kept its old key would have
        // failed above ("decrypt error"). That the reply is sent at all is
        // what `tls::key_updates_either_way_keep_a_tls_1_3_connection_serving`
        // sees (openssl -msg).
    }
}
