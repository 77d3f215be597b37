//! The byte pipe under a connection: the socket itself, or a TLS session
//! in front of it.
//!
//! Owns the system calls that move a connection's bytes and, for HTTPS, the
//! session that seals them: rustls through the handshake (and for TLS 1.2
//! throughout), then `record` for TLS 1.3. The plain path is the socket calls
//! alone (one branch on the variant per call); TLS adds a seal of every
//! byte and has no sendfile (userspace TLS must see the bytes). Does not
//! decide what to send (`outbox`) nor when (`conn`).
//!
//! Invariant: what a [`Session`] buffers belongs to its connection alone
//! and leaves only through its own socket; the worker's scratch buffers are
//! never borrowed past a call, and a session holds a buffer only while
//! something in it is unfinished.

use std::cell::RefCell;
use std::os::fd::OwnedFd;
use std::sync::Arc;

use rustix::io::{Errno, IoSlice};
use rustix::net::{RecvFlags, SendFlags};
use rustls::kernel::KernelConnection;
use rustls::server::{ServerConnectionData, UnbufferedServerConnection};
use rustls::unbuffered::{
    ConnectionState, EncodeError, EncryptError, InsufficientSizeError, UnbufferedStatus,
};
use rustls::ServerConfig;

use crate::record::{self, Opened, Records};

/// Most plaintext sealed per send: a disk body's copy is never larger, so
/// it is never read twice.
pub const TLS_COPY_CHUNK: u64 = 64 * 1024;

/// A connection's TLS state: rustls's unbuffered session, then for TLS
/// 1.3 the record layer it hands over to; boxed in the connection (a plain
/// connection pays one pointer). Its buffers hold only
/// what one call could not finish (a partial record, sealed bytes the
/// socket refused, plaintext beyond the caller's buffer) and are freed
/// once emptied; records are opened and sealed in the worker's
/// [`Scratch`]. rustls's buffered session keeps a 4 KiB receive buffer and
/// queues of its own per connection: 7.8 KB of heap per idle session
/// against 3.4 KB for this one (a counting allocator over 200 sessions,
/// each after one request).
pub struct Session {
    tls: Tls,
    /// Received bytes that do not make a whole record yet.
    incoming: Vec<u8>,
    /// Sealed bytes the socket has not taken yet, in order.
    outgoing: Vec<u8>,
    /// Opened bytes that did not fit the caller's buffer (one read of
    /// records can open more than the worker's 32 KiB read buffer holds).
    plain: Vec<u8>,
    /// The first bytes were looked at (see [`Received::PlainHttp`]).
    sniffed: bool,
    close: Close,
}

/// Who protects the records.
enum Tls {
    /// rustls: every handshake, and TLS 1.2 sessions throughout.
    Rustls {
        conn: Box<UnbufferedServerConnection>,
    },
    /// A TLS 1.3 session after its handshake: its records are protected
    /// here (see [`record`]); rustls keeps the key schedule, asked for the
    /// next keys on a key update.
    Records {
        records: Records,
        kernel: Box<KernelConnection<ServerConnectionData>>,
        alpn: Option<&'static [u8]>,
    },
    /// The handover failed; nothing more is read or sent.
    Ended,
}

/// Where the `close_notify` alert is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Close {
    NotAsked,
    Asked,
    Sealed,
}

/// Bytes read per receive call: a few records (each at most 16 KiB and
/// 256 bytes of overhead).
const READ_CHUNK: usize = 64 * 1024;

/// Most received bytes kept waiting for the end of a record or handshake
/// message: rustls joins a handshake message of up to 64 KiB, and a
/// peer that sends more than that without completing one is cut off.
const MAX_INCOMING: usize = 80 * 1024;

/// Largest TLS plaintext record (RFC 8446 §5.1).
const MAX_RECORD: usize = 16 * 1024;

/// The worker's buffers for opening and sealing records.
struct Scratch {
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
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch {
        input: vec![0; MAX_INCOMING + READ_CHUNK],
        output: Sealed {
            buf: vec![0; TLS_COPY_CHUNK as usize + 8 * 1024],
            len: 0,
        },
        gather: Vec::with_capacity(MAX_RECORD),
    });
}

/// Sealed bytes in a buffer allocated once (zeroed once, not per call).
struct Sealed {
    buf: Vec<u8>,
    len: usize,
}

impl Sealed {
    fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    /// Runs `encode` into the spare room, growing it once if rustls says
    /// how much it needs (a certificate chain larger than the room).
    fn encode<E: Into<Need>>(
        &mut self,
        mut encode: impl FnMut(&mut [u8]) -> Result<usize, E>,
    ) -> Result<(), ()> {
        for _ in 0..2 {
            match encode(&mut self.buf[self.len..]) {
                Ok(n) => {
                    self.len += n;
                    return Ok(());
                }
                Err(e) => match e.into() {
                    Need::Bytes(n) => self.buf.resize(self.len + n, 0),
                    Need::Never => return Err(()),
                },
            }
        }
        Err(())
    }
}

/// How much room a refused encode asked for.
enum Need {
    Bytes(usize),
    Never,
}

impl From<EncodeError> for Need {
    fn from(e: EncodeError) -> Need {
        match e {
            EncodeError::InsufficientSize(InsufficientSizeError { required_size }) => {
                Need::Bytes(required_size)
            }
            _ => Need::Never,
        }
    }
}

impl From<record::Refused> for Need {
    fn from(e: record::Refused) -> Need {
        match e {
            record::Refused::Room(n) => Need::Bytes(n),
            // Handled before sealing (`update_tx`).
            record::Refused::KeyDue => Need::Never,
        }
    }
}

impl From<EncryptError> for Need {
    fn from(e: EncryptError) -> Need {
        match e {
            EncryptError::InsufficientSize(InsufficientSizeError { required_size }) => {
                Need::Bytes(required_size)
            }
            _ => Need::Never,
        }
    }
}

/// What one [`Session::step`] is for.
enum Want<'b, 's> {
    /// Application data, copied into this buffer.
    Open(&'b mut [u8]),
    /// Seal these slices (up to [`TLS_COPY_CHUNK`] of them); the bytes
    /// taken are counted in the `usize`.
    Seal(&'b [IoSlice<'s>], &'b mut usize, &'b mut Vec<u8>),
    /// Seal a `close_notify`.
    Close,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stepped {
    /// This many bytes of application data are in the caller's buffer.
    Data(usize),
    /// Nothing more without more bytes from the peer (sealing: done).
    Wait,
    Closed,
    /// The session failed; `framing` when rustls could not read a record
    /// (see [`Session::seal_alert`]).
    Failed {
        framing: bool,
    },
}

impl Session {
    pub fn new(config: Arc<ServerConfig>) -> Result<Box<Session>, rustls::Error> {
        Ok(Box::new(Session {
            tls: Tls::Rustls {
                conn: Box::new(UnbufferedServerConnection::new(config)?),
            },
            incoming: Vec::new(),
            outgoing: Vec::new(),
            plain: Vec::new(),
            sniffed: false,
            close: Close::NotAsked,
        }))
    }

    pub fn is_handshaking(&self) -> bool {
        match &self.tls {
            Tls::Rustls { conn, .. } => conn.is_handshaking(),
            Tls::Records { .. } | Tls::Ended => false,
        }
    }

    /// The negotiated version and ALPN protocol, once the handshake is done.
    pub fn facts(&self) -> Option<crate::access::TlsFacts<'_>> {
        match &self.tls {
            Tls::Rustls { conn, .. } => Some(crate::access::TlsFacts {
                version: u16::from(conn.protocol_version()?),
                alpn: conn.alpn_protocol(),
            }),
            Tls::Records { alpn, .. } => Some(crate::access::TlsFacts {
                version: u16::from(rustls::ProtocolVersion::TLSv1_3),
                alpn: *alpn,
            }),
            Tls::Ended => None,
        }
    }

    /// True when ALPN chose HTTP/2.
    pub fn is_h2(&self) -> bool {
        self.facts().and_then(|facts| facts.alpn) == Some(b"h2")
    }

    /// The connection went quiet: gives back what is rebuilt cheaply when
    /// traffic resumes (a TLS 1.3 session's expanded keys).
    pub fn settle(&mut self) {
        if let Tls::Records { records, .. } = &mut self.tls {
            records.settle();
        }
    }

    /// Once rustls has finished a TLS 1.3 handshake (and sealed what it
    /// had to send, its session tickets included), its records are
    /// protected here instead. The bytes after the last record rustls
    /// read are the start of a record and stay in `incoming`.
    fn hand_over(&mut self) {
        let Tls::Rustls { conn, .. } = &self.tls else {
            return;
        };
        // Checked before rustls is let go: a suite `record` does not know
        // stays with rustls.
        let suite = conn.negotiated_cipher_suite().map(|suite| suite.suite());
        if conn.is_handshaking()
            || conn.protocol_version() != Some(rustls::ProtocolVersion::TLSv1_3)
            || !suite.is_some_and(record::knows)
        {
            return;
        }
        let Tls::Rustls { conn } = std::mem::replace(&mut self.tls, Tls::Ended) else {
            return;
        };
        let alpn = match conn.alpn_protocol() {
            Some(b"h2") => Some(&b"h2"[..]),
            Some(b"http/1.1") => Some(&b"http/1.1"[..]),
            _ => None,
        };
        let Ok((secrets, kernel)) = conn.dangerous_into_kernel_connection() else {
            return;
        };
        let (Some(suite), Some(tx), Some(rx)) = (
            suite,
            keys(secrets.tx.0, &secrets.tx.1),
            keys(secrets.rx.0, &secrets.rx.1),
        ) else {
            return;
        };
        if let Some(records) = Records::new(suite, tx, rx) {
            self.tls = Tls::Records {
                records,
                kernel: Box::new(kernel),
                alpn,
            };
        }
    }

    /// Asks for a `close_notify` alert (RFC 8446 §6.1), sealed and sent by
    /// the next drain.
    pub fn close_notify(&mut self) {
        if self.close == Close::NotAsked {
            self.close = Close::Asked;
        }
    }

    /// Runs rustls over `input[*start..]` until it needs more bytes or has
    /// done `want`. Handshake records and alerts go to `output` in order
    /// (the caller sends them before anything sealed later); application
    /// data to the [`Want::Open`] buffer, and beyond its room to
    /// `self.plain`. `*start` moves past what rustls is done with.
    fn step(
        &mut self,
        input: &mut [u8],
        start: &mut usize,
        output: &mut Sealed,
        mut want: Want<'_, '_>,
    ) -> Stepped {
        let Session {
            tls,
            plain,
            outgoing,
            ..
        } = self;
        let conn = match tls {
            Tls::Rustls { conn } => conn,
            Tls::Records {
                records, kernel, ..
            } => {
                let owed = !outgoing.is_empty();
                let session = (&mut *records, &mut **kernel);
                return step_records(session, plain, owed, input, start, output, want);
            }
            Tls::Ended => return Stepped::Failed { framing: false },
        };
        let mut filled = 0usize;
        loop {
            let UnbufferedStatus { discard, state } =
                conn.process_tls_records(&mut input[*start..]);
            let mut used = discard;
            let done = match state {
                Err(e) => Some(Stepped::Failed {
                    framing: matches!(
                        e,
                        rustls::Error::InvalidMessage(_)
                            | rustls::Error::PeerSentOversizedRecord
                            | rustls::Error::DecryptError
                            | rustls::Error::PeerMisbehaved(_)
                    ),
                }),
                Ok(ConnectionState::ReadTraffic(mut records)) => {
                    let mut failed = false;
                    while let Some(record) = records.next_record() {
                        let Ok(record) = record else {
                            failed = true;
                            break;
                        };
                        used += record.discard;
                        let payload = record.payload;
                        match &mut want {
                            Want::Open(buf) => deliver(payload, buf, &mut filled, plain),
                            _ => plain.extend_from_slice(payload),
                        }
                    }
                    failed.then_some(Stepped::Failed { framing: false })
                }
                Ok(ConnectionState::EncodeTlsData(mut encode)) => output
                    .encode(|out| encode.encode(out))
                    .err()
                    .map(|()| Stepped::Failed { framing: false }),
                // The records are in `output`, sent in order by the caller.
                Ok(ConnectionState::TransmitTlsData(transmit)) => {
                    transmit.done();
                    None
                }
                Ok(ConnectionState::WriteTraffic(mut traffic)) => Some(match &mut want {
                    Want::Open(_) => Stepped::Wait,
                    Want::Seal(slices, taken, gather) => {
                        let encrypt = |plain: &[u8], out: &mut [u8]| {
                            traffic.encrypt(plain, out).map_err(Need::from)
                        };
                        match seal(slices, gather, output, encrypt) {
                            Ok(n) => {
                                **taken = n;
                                Stepped::Wait
                            }
                            Err(()) => Stepped::Failed { framing: false },
                        }
                    }
                    Want::Close => match output.encode(|out| traffic.queue_close_notify(out)) {
                        Ok(()) => Stepped::Wait,
                        Err(()) => Stepped::Failed { framing: false },
                    },
                }),
                Ok(ConnectionState::BlockedHandshake) => Some(Stepped::Wait),
                Ok(ConnectionState::PeerClosed | ConnectionState::Closed) => Some(Stepped::Closed),
                // Early data is never offered (max_early_data_size is 0).
                Ok(_) => Some(Stepped::Failed { framing: false }),
            };
            *start += used;
            match done {
                None => {}
                Some(Stepped::Wait) if filled > 0 => return Stepped::Data(filled),
                Some(done) => return done,
            }
        }
    }

    /// After a failure rustls holds what it queued before it (a
    /// ServerHello, when ALPN fails after it) and the alert that says why:
    /// seal them into `output`, best effort. `input` is what the failed
    /// step was given (rustls keeps offsets into it between calls). Once
    /// the queue is empty rustls reads `input` again; after a framing
    /// error that would fail a second time, so then one call only (the
    /// queue holds just the alert: a step seals everything queued before
    /// it reads another record).
    fn seal_alert(&mut self, input: &mut [u8], framing: bool, output: &mut Sealed) {
        let Tls::Rustls { conn, .. } = &mut self.tls else {
            return;
        };
        for _ in 0..8 {
            let UnbufferedStatus { state, .. } = conn.process_tls_records(input);
            match state {
                Ok(ConnectionState::EncodeTlsData(mut encode)) => {
                    if output.encode(|out| encode.encode(out)).is_err() || framing {
                        return;
                    }
                }
                Ok(ConnectionState::TransmitTlsData(transmit)) => return transmit.done(),
                _ => return,
            }
        }
    }

    /// A [`Session::step`] over the bytes the session kept: rustls keeps
    /// offsets into them between calls (an unfinished handshake message),
    /// so every step is given them, never an empty slice.
    fn step_kept(&mut self, output: &mut Sealed, want: Want<'_, '_>) -> Stepped {
        let mut kept = std::mem::take(&mut self.incoming);
        let mut start = 0;
        let stepped = self.step(&mut kept, &mut start, output, want);
        if start < kept.len() {
            kept.drain(..start);
            self.incoming = kept;
        }
        stepped
    }

    /// Sends `sealed` after what the socket still owes, keeping what it
    /// refuses. `Err(AGAIN)` while anything is left.
    fn send_sealed(&mut self, fd: &OwnedFd, sealed: &[u8]) -> rustix::io::Result<()> {
        if !self.outgoing.is_empty() {
            self.outgoing.extend_from_slice(sealed);
            return self.flush(fd);
        }
        let (sent, result) = send_all(fd, sealed);
        if result.is_err() {
            self.outgoing.extend_from_slice(&sealed[sent..]);
        }
        result
    }

    /// Sends what the socket still owes; frees the buffer once empty.
    fn flush(&mut self, fd: &OwnedFd) -> rustix::io::Result<()> {
        let (sent, result) = send_all(fd, &self.outgoing);
        if sent == self.outgoing.len() {
            self.outgoing = Vec::new();
        } else {
            self.outgoing.drain(..sent);
        }
        result
    }

    /// Seals up to [`TLS_COPY_CHUNK`] of `slices` and sends them; returns
    /// the plaintext bytes taken (what the socket refused stays sealed in
    /// the session, sent by the next drain).
    fn send(&mut self, fd: &OwnedFd, slices: &[IoSlice<'_>]) -> rustix::io::Result<usize> {
        self.flush(fd)?;
        SCRATCH.with(|scratch| {
            let Scratch { output, gather, .. } = &mut *scratch.borrow_mut();
            output.len = 0;
            let mut taken = 0;
            let want = Want::Seal(slices, &mut taken, gather);
            if self.step_kept(output, want) != Stepped::Wait || taken == 0 {
                // Closed, failed, or not yet able to send application data
                // (the handshake is not done: nothing sends before it is).
                return Err(Errno::IO);
            }
            match self.send_sealed(fd, output.bytes()) {
                Ok(()) | Err(Errno::AGAIN) => Ok(taken),
                Err(e) => Err(e),
            }
        })
    }

    /// Sends what is owed, then the `close_notify` if one was asked for.
    fn drain(&mut self, fd: &OwnedFd) -> rustix::io::Result<()> {
        self.flush(fd)?;
        if self.close != Close::Asked {
            return Ok(());
        }
        self.close = Close::Sealed;
        SCRATCH.with(|scratch| {
            let Scratch { output, .. } = &mut *scratch.borrow_mut();
            output.len = 0;
            match self.step_kept(output, Want::Close) {
                Stepped::Failed { .. } => Ok(()),
                _ => self.send_sealed(fd, output.bytes()),
            }
        })
    }

    /// Plaintext left from before, then records already received, then
    /// more from the socket; answers the handshake on the way.
    fn receive(
        &mut self,
        fd: &OwnedFd,
        buf: &mut [u8],
        readable: &mut bool,
        hung_up: bool,
    ) -> Received {
        if !self.plain.is_empty() {
            let n = self.plain.len().min(buf.len());
            buf[..n].copy_from_slice(&self.plain[..n]);
            if n == self.plain.len() {
                self.plain = Vec::new();
            } else {
                self.plain.drain(..n);
            }
            return Received::Data(n);
        }
        SCRATCH.with(|scratch| {
            let Scratch { input, output, .. } = &mut *scratch.borrow_mut();
            output.len = 0;
            let mut end = self.incoming.len();
            input[..end].copy_from_slice(&self.incoming);
            let mut start = 0;
            let received = loop {
                match self.step(&mut input[..end], &mut start, output, Want::Open(buf)) {
                    Stepped::Data(n) => break Received::Data(n),
                    Stepped::Closed => break Received::Closed,
                    Stepped::Failed { framing } => {
                        self.seal_alert(&mut input[start..end], framing, output);
                        break Received::Failed;
                    }
                    Stepped::Wait => {}
                }
                // The handshake's answers leave before more is awaited.
                if output.len > 0 {
                    match self.send_sealed(fd, output.bytes()) {
                        Ok(()) | Err(Errno::AGAIN) => output.len = 0,
                        Err(_) => break Received::Closed,
                    }
                }
                if !*readable {
                    break Received::Drained;
                }
                // Decided on the first byte, once one has arrived (a client
                // may connect and write later): a TLS record starts with a
                // content type (20–24), an HTTP request with an uppercase
                // method.
                if !self.sniffed {
                    if let Some(byte) = first_byte(fd) {
                        self.sniffed = true;
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
            self.hand_over();
            // Records sealed on the way (session tickets after the
            // handshake's last flight, an alert): best effort here, the
            // rest leaves with the next drain.
            if output.len > 0 {
                let _ = self.send_sealed(fd, output.bytes());
            }
            let rest = &input[start..end];
            if rest.is_empty() {
                self.incoming = Vec::new();
            } else {
                self.incoming.clear();
                self.incoming.extend_from_slice(rest);
            }
            received
        })
    }
}

/// The key and IV in what rustls hands over.
fn keys(seq: u64, secrets: &rustls::ConnectionTrafficSecrets) -> Option<record::Keys<'_>> {
    match secrets {
        rustls::ConnectionTrafficSecrets::Aes128Gcm { key, iv }
        | rustls::ConnectionTrafficSecrets::Aes256Gcm { key, iv }
        | rustls::ConnectionTrafficSecrets::Chacha20Poly1305 { key, iv } => Some(record::Keys {
            key: key.as_ref(),
            iv: iv.as_ref(),
            seq,
        }),
        _ => None,
    }
}

/// The session after its handshake: records, and rustls's key schedule.
type Protected<'r> = (
    &'r mut Records,
    &'r mut KernelConnection<ServerConnectionData>,
);

/// Seals a key update into `output` and moves to the next sending key,
/// which rustls derives (§4.6.3).
fn update_tx((records, kernel): &mut Protected<'_>, output: &mut Sealed) -> Result<(), ()> {
    let (seq, secrets) = kernel.update_tx_secret().map_err(|_| ())?;
    let next = keys(seq, &secrets).ok_or(())?;
    output.encode(|out| {
        let next = record::Keys { ..next };
        records
            .seal_key_update(false, next, out)
            .map_err(Need::from)
    })
}

/// Takes the peer's next key after its key update, which rustls derives.
fn update_rx((records, kernel): &mut Protected<'_>) -> Result<(), record::Alert> {
    let (seq, secrets) = kernel
        .update_rx_secret()
        .map_err(|_| record::Alert::InternalError)?;
    let next = keys(seq, &secrets).ok_or(record::Alert::InternalError)?;
    records.rekey_rx(next)
}

/// [`Session::step`] for a TLS 1.3 session after its handshake: opens
/// the whole records in `input[*start..]`, or seals.
fn step_records(
    mut session: Protected<'_>,
    plain: &mut Vec<u8>,
    owed: bool,
    input: &mut [u8],
    start: &mut usize,
    output: &mut Sealed,
    want: Want<'_, '_>,
) -> Stepped {
    let failed = Stepped::Failed { framing: false };
    let buf = match want {
        Want::Seal(slices, taken, gather) => {
            if session.0.tx_due() && update_tx(&mut session, output).is_err() {
                return failed;
            }
            let records = &mut *session.0;
            let sealed = seal(slices, gather, output, |plain, out| {
                records.seal(plain, out).map_err(Need::from)
            });
            return match sealed {
                Ok(n) => {
                    *taken = n;
                    Stepped::Wait
                }
                Err(()) => failed,
            };
        }
        Want::Close => {
            return match output.encode(|out| session.0.seal_alert(None, out)) {
                Ok(()) => Stepped::Wait,
                Err(()) => failed,
            }
        }
        Want::Open(buf) => buf,
    };
    let (mut filled, mut owe_update, mut closed) = (0usize, false, false);
    loop {
        let record = &mut input[*start..];
        let opened = session.0.open(record);
        match opened {
            Ok(Opened::Partial) => break,
            Ok(Opened::Data { len, plain: range }) => {
                deliver(&record[range], buf, &mut filled, plain);
                *start += len;
            }
            Ok(Opened::KeyUpdate { len, reply }) => {
                *start += len;
                if let Err(alert) = update_rx(&mut session) {
                    let _ = output.encode(|out| session.0.seal_alert(Some(alert), out));
                    return failed;
                }
                // §4.6.3: asked to, this side updates too, before anything
                // else it seals. Requests read together get one update, and
                // none while the socket still owes sealed bytes (a client
                // that asks without reading would grow them): rustls, too,
                // keeps at most one reply pending.
                owe_update |= reply && !owed;
            }
            Ok(Opened::Closed) => {
                closed = true;
                break;
            }
            Err(alert) => {
                let _ = output.encode(|out| session.0.seal_alert(Some(alert), out));
                return failed;
            }
        }
    }
    if owe_update && update_tx(&mut session, output).is_err() {
        return failed;
    }
    match (filled, closed) {
        (0, true) => Stepped::Closed,
        (0, false) => Stepped::Wait,
        (n, _) => Stepped::Data(n),
    }
}

/// Hands opened bytes to the caller's buffer while they fit and nothing
/// waits before them; the rest waits in `plain`, in order.
fn deliver(data: &[u8], buf: &mut [u8], filled: &mut usize, plain: &mut Vec<u8>) {
    if plain.is_empty() && buf.len() - *filled >= data.len() {
        buf[*filled..*filled + data.len()].copy_from_slice(data);
        *filled += data.len();
    } else {
        plain.extend_from_slice(data);
    }
}

/// Seals up to [`TLS_COPY_CHUNK`] bytes of `slices` into `output` as full
/// records, whatever the slices' bounds (rustls's `encrypt` takes one
/// slice): whole records are sealed where they lie, and only a record
/// that spans slices is gathered by a copy. A response head and a small
/// body make one record; an HTTP/2 DATA frame's 9-byte header does not
/// make one of its own (sealing each slice apart made 64 KiB over h2 at
/// -m100 15% costlier per server CPU-second than rustls's buffered API,
/// which fills records across slices). Returns the plaintext bytes taken.
fn seal(
    slices: &[IoSlice<'_>],
    gather: &mut Vec<u8>,
    output: &mut Sealed,
    mut encrypt: impl FnMut(&[u8], &mut [u8]) -> Result<usize, Need>,
) -> Result<usize, ()> {
    gather.clear();
    let limit = TLS_COPY_CHUNK as usize;
    let mut taken = 0usize;
    for slice in slices {
        if taken == limit {
            break;
        }
        let mut part = &slice[..slice.len().min(limit - taken)];
        taken += part.len();
        if !gather.is_empty() {
            let fill = part.len().min(MAX_RECORD - gather.len());
            gather.extend_from_slice(&part[..fill]);
            part = &part[fill..];
            if gather.len() < MAX_RECORD {
                continue;
            }
            output.encode(|out| encrypt(gather, out))?;
            gather.clear();
        }
        let whole = part.len() - part.len() % MAX_RECORD;
        if whole > 0 {
            output.encode(|out| encrypt(&part[..whole], out))?;
        }
        gather.extend_from_slice(&part[whole..]);
    }
    if !gather.is_empty() {
        output.encode(|out| encrypt(gather, out))?;
    }
    Ok(taken)
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
            Wire::Tls { fd, session } => session.send(fd, slices),
        }
    }

    /// Sends what the wire itself still holds (TLS records). `Ok` when
    /// nothing is left; `Err(AGAIN)` while the socket is full.
    pub fn drain(&mut self) -> rustix::io::Result<()> {
        match self {
            Wire::Plain(_) => Ok(()),
            Wire::Tls { fd, session } => session.drain(fd),
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
            Wire::Tls { fd, session } => session.receive(fd, buf, readable, hung_up),
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

/// Sends `bytes` until all are taken or the socket refuses; returns how
/// many were taken and how it ended.
fn send_all(fd: &OwnedFd, bytes: &[u8]) -> (usize, rustix::io::Result<()>) {
    let mut sent = 0;
    while sent < bytes.len() {
        match rustix::net::send(fd, &bytes[sent..], SendFlags::NOSIGNAL) {
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

    use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
    use rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName, UnixTime};
    use rustls::{ClientConfig, ClientConnection, DigitallySignedStruct, SignatureScheme};

    use super::*;

    fn server_config() -> Arc<ServerConfig> {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let key = PrivateKeyDer::Pkcs8(made.key_pair.serialize_der().into());
        let certified = crate::tls::from_der(vec![made.cert.der().clone()], key).unwrap();
        let certificates = crate::tls::Certificates::new(Some(Arc::new(certified)));
        crate::tls::Resumption::new()
            .unwrap()
            .config(certificates, false)
            .unwrap()
    }

    /// The test made the certificate: anything is accepted.
    #[derive(Debug)]
    struct Anything;

    impl ServerCertVerifier for Anything {
        fn verify_server_cert(
            &self,
            _: &CertificateDer<'_>,
            _: &[CertificateDer<'_>],
            _: &ServerName<'_>,
            _: &[u8],
            _: UnixTime,
        ) -> Result<ServerCertVerified, rustls::Error> {
            Ok(ServerCertVerified::assertion())
        }
        fn verify_tls12_signature(
            &self,
            _: &[u8],
            _: &CertificateDer<'_>,
            _: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            Ok(HandshakeSignatureValid::assertion())
        }
        fn verify_tls13_signature(
            &self,
            _: &[u8],
            _: &CertificateDer<'_>,
            _: &DigitallySignedStruct,
        ) -> Result<HandshakeSignatureValid, rustls::Error> {
            Ok(HandshakeSignatureValid::assertion())
        }
        fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
            rustls::crypto::ring::default_provider()
                .signature_verification_algorithms
                .supported_schemes()
        }
    }

    struct Pair {
        client: ClientConnection,
        client_socket: UnixStream,
        server: Box<Session>,
        server_fd: OwnedFd,
    }

    impl Pair {
        fn new(version: &'static rustls::SupportedProtocolVersion) -> Pair {
            let config = ClientConfig::builder_with_protocol_versions(&[version])
                .dangerous()
                .with_custom_certificate_verifier(Arc::new(Anything))
                .with_no_client_auth();
            let name = ServerName::try_from("localhost").unwrap();
            let client = ClientConnection::new(Arc::new(config), name).unwrap();
            let (a, b) = UnixStream::pair().unwrap();
            a.set_nonblocking(true).unwrap();
            b.set_nonblocking(true).unwrap();
            let mut pair = Pair {
                client,
                client_socket: a,
                server: Session::new(server_config()).unwrap(),
                server_fd: OwnedFd::from(b),
            };
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
            match self
                .server
                .receive(&self.server_fd, buf, &mut readable, false)
            {
                Received::Data(n) => n,
                Received::Drained => 0,
                other => panic!("the server's session ended: {other:?}"),
            }
        }
    }

    fn pattern(len: usize, seed: u32) -> Vec<u8> {
        (0..len as u32)
            .map(|i| (i.wrapping_mul(seed) >> 3) as u8)
            .collect()
    }

    /// Records arriving together can open to more than the reader's
    /// buffer holds; what does not fit waits, and nothing after it may
    /// pass it.
    #[test]
    fn opened_bytes_reach_the_reader_in_order_whatever_fits() {
        for version in [&rustls::version::TLS13, &rustls::version::TLS12] {
            let mut pair = Pair::new(version);
            assert_eq!(
                matches!(pair.server.tls, Tls::Records { .. }),
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
