//! A connection's TLS session, sans-I/O: ciphertext in, sealed bytes to
//! send and opened plaintext out.
//!
//! rustls runs every handshake (and TLS 1.2 sessions throughout); a TLS
//! 1.3 session is then handed to `record`, rustls keeping its key schedule
//! through a `KernelConnection` and asked for the next secret on a key
//! update (RFC 8446 §4.6.3). Owns what a session must keep between calls:
//! an unfinished record, sealed bytes the socket refused or `wire` held
//! back to join the next send, plaintext beyond the caller's buffer.
//! Makes no system call: `wire` moves the bytes.
//!
//! Invariant: sealed bytes leave in the order they were sealed (what a
//! session owes goes before anything sealed later), and a buffer is held
//! only while something in it is unfinished.

use std::sync::Arc;

use rustix::io::IoSlice;
use rustls::kernel::KernelConnection;
use rustls::server::{ServerConnectionData, UnbufferedServerConnection};
use rustls::unbuffered::{
    ConnectionState, EncodeError, EncryptError, InsufficientSizeError, ReadTraffic,
    UnbufferedStatus, WriteTraffic,
};
use rustls::ServerConfig;

use crate::record::{self, Opened, Records};

/// Most plaintext sealed per send: a disk body's copy is never larger, so
/// it is never read twice.
pub const TLS_COPY_CHUNK: u64 = 64 * 1024;

/// Most received bytes kept waiting for the end of a record or handshake
/// message: rustls joins a handshake message of up to 64 KiB, and a
/// peer that sends more than that without completing one is cut off.
pub const MAX_INCOMING: usize = 80 * 1024;

/// Largest TLS plaintext record (RFC 8446 §5.1).
pub const MAX_RECORD: usize = 16 * 1024;

/// Sealed bytes may be held back to leave with the next send (`wire`)
/// while the session owes at most this much: a segment and a wake-up of
/// the peer saved for a copy this small. More than this owed means the
/// socket refused them.
pub const JOIN_UP_TO: usize = 16 * 1024;

/// A connection's TLS state: rustls's unbuffered session, then for TLS
/// 1.3 the record layer it hands over to; boxed in the connection (a plain
/// connection pays one pointer). Records are opened and sealed in the
/// caller's buffers (the worker's), not in the session: rustls's buffered
/// session would keep a 4 KiB receive buffer and queues per idle
/// connection.
pub struct Session {
    tls: Tls,
    /// Received bytes that do not make a whole record yet.
    incoming: Vec<u8>,
    /// Sealed bytes the socket has not taken yet, in order.
    outgoing: Vec<u8>,
    /// Opened bytes that did not fit the caller's buffer (one read of
    /// records can open more than the worker's 32 KiB read buffer holds).
    plain: Vec<u8>,
    /// The first bytes were looked at (see `wire::Received::PlainHttp`).
    sniffed: bool,
    close: Close,
}

/// What the access log says of a session.
#[derive(Debug, Clone, Copy)]
pub struct TlsFacts<'a> {
    /// The protocol version's code point (0x0303 TLS 1.2, 0x0304 TLS 1.3).
    pub version: u16,
    pub alpn: Option<&'a [u8]>,
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

/// Sealed bytes in a buffer allocated once (zeroed once, not per call).
pub struct Sealed {
    buf: Vec<u8>,
    len: usize,
}

impl Sealed {
    /// Room for `capacity` bytes of records, allocated at once.
    pub fn with_capacity(capacity: usize) -> Sealed {
        Sealed {
            buf: vec![0; capacity],
            len: 0,
        }
    }

    pub fn bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }

    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    pub fn clear(&mut self) {
        self.len = 0;
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

/// What one [`Session::open`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Opening {
    /// This many bytes of application data are in the caller's buffer.
    Data(usize),
    /// Nothing more without more bytes from the peer.
    Wait,
    /// The peer closed.
    Closed,
    /// The session failed; the alert is sealed.
    Failed,
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
    pub fn facts(&self) -> Option<TlsFacts<'_>> {
        match &self.tls {
            Tls::Rustls { conn, .. } => Some(TlsFacts {
                version: u16::from(conn.protocol_version()?),
                alpn: conn.alpn_protocol(),
            }),
            Tls::Records { alpn, .. } => Some(TlsFacts {
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

    /// True when ALPN chose `acme-tls/1`: a CA validating a certificate.
    pub fn is_acme_validation(&self) -> bool {
        self.facts().and_then(|facts| facts.alpn) == Some(crate::acme::ACME_TLS_ALPN)
    }

    /// Called once a sweep: a TLS 1.3 session drops the expanded keys it
    /// has not used since the last sweep (see [`Records::drop_unused_keys`]).
    pub fn drop_unused_keys(&mut self) {
        if let Tls::Records { records, .. } = &mut self.tls {
            records.drop_unused_keys();
        }
    }

    /// Once rustls has finished a TLS 1.3 handshake (and sealed what it
    /// had to send, its session tickets included), its records are
    /// protected here instead. The bytes after the last record rustls
    /// read are the start of a record and stay in `incoming`.
    pub fn hand_over(&mut self) {
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
            Some(b"http/1.0") => Some(&b"http/1.0"[..]),
            Some(b"acme-tls/1") => Some(crate::acme::ACME_TLS_ALPN),
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

    /// Whether rustls has handed the records over (TLS 1.3 only).
    #[cfg(test)]
    pub fn is_handed_over(&self) -> bool {
        matches!(self.tls, Tls::Records { .. })
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
                let owed = outgoing.len() > JOIN_UP_TO;
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
                Ok(ConnectionState::ReadTraffic(records)) => {
                    let (taken, failed) = read_traffic(records, &mut want, &mut filled, plain);
                    used += taken;
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
                Ok(ConnectionState::WriteTraffic(traffic)) => {
                    Some(write_traffic(traffic, &mut want, output))
                }
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

    /// Sealed bytes the socket has not taken yet, in order.
    pub fn owed(&self) -> &[u8] {
        &self.outgoing
    }

    /// The socket took the first `n` owed bytes; the buffer is freed once
    /// it is empty.
    pub fn took(&mut self, n: usize) {
        if n == self.outgoing.len() {
            self.outgoing = Vec::new();
        } else {
            self.outgoing.drain(..n);
        }
    }

    /// Keeps sealed bytes to send after what is owed: ones the socket
    /// refused, or ones held back to leave with the next send.
    pub fn owe(&mut self, sealed: &[u8]) {
        self.outgoing.extend_from_slice(sealed);
    }

    /// Seals up to [`TLS_COPY_CHUNK`] of `slices` into `output` (gathering
    /// small slices in `gather`); the plaintext bytes taken, or `None` when
    /// no application data can be sent: closed, failed, or the handshake
    /// not done (nothing is sent before it is).
    pub fn seal_data(
        &mut self,
        slices: &[IoSlice<'_>],
        gather: &mut Vec<u8>,
        output: &mut Sealed,
    ) -> Option<usize> {
        let mut taken = 0;
        let want = Want::Seal(slices, &mut taken, gather);
        (self.step_kept(output, want) == Stepped::Wait && taken > 0).then_some(taken)
    }

    /// Seals the `close_notify` asked for into `output`, once; nothing when
    /// none is due (a session that failed has nothing to seal it with, and
    /// its connection closes without one).
    pub fn seal_close(&mut self, output: &mut Sealed) {
        if self.close == Close::Asked {
            self.close = Close::Sealed;
            self.step_kept(output, Want::Close);
        }
    }

    /// Moves plaintext opened earlier (beyond that call's buffer) into
    /// `buf`; `None` when there is none.
    pub fn take_plain(&mut self, buf: &mut [u8]) -> Option<usize> {
        if self.plain.is_empty() {
            return None;
        }
        let n = self.plain.len().min(buf.len());
        buf[..n].copy_from_slice(&self.plain[..n]);
        if n == self.plain.len() {
            self.plain = Vec::new();
        } else {
            self.plain.drain(..n);
        }
        Some(n)
    }

    /// Received bytes kept from the last call (an unfinished record): the
    /// caller puts them in front of what it reads next.
    pub fn kept(&self) -> &[u8] {
        &self.incoming
    }

    /// Keeps `rest`, the bytes after the last whole record, for the next
    /// call (instead of what was kept before).
    pub fn keep(&mut self, rest: &[u8]) {
        if rest.is_empty() {
            self.incoming = Vec::new();
        } else {
            self.incoming.clear();
            self.incoming.extend_from_slice(rest);
        }
    }

    /// Opens the records in `input[*start..]` into `buf`, answering the
    /// handshake into `output` on the way (sent before anything sealed
    /// later); `*start` moves past what is done with. On failure the alert
    /// that says why is in `output`.
    pub fn open(
        &mut self,
        input: &mut [u8],
        start: &mut usize,
        output: &mut Sealed,
        buf: &mut [u8],
    ) -> Opening {
        match self.step(input, start, output, Want::Open(buf)) {
            Stepped::Data(n) => Opening::Data(n),
            Stepped::Wait => Opening::Wait,
            Stepped::Closed => Opening::Closed,
            Stepped::Failed { framing } => {
                self.seal_alert(&mut input[*start..], framing, output);
                Opening::Failed
            }
        }
    }

    /// Whether the first bytes were looked at (see
    /// `wire::Received::PlainHttp`).
    pub fn sniffed(&self) -> bool {
        self.sniffed
    }

    pub fn mark_sniffed(&mut self) {
        self.sniffed = true;
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

/// Hands the application data of the records rustls opened to `want`'s
/// buffer (beyond its room, and when sealing, to `plain`). Returns the
/// bytes rustls is done with, and whether a record failed to open.
fn read_traffic(
    mut records: ReadTraffic<'_, '_, ServerConnectionData>,
    want: &mut Want<'_, '_>,
    filled: &mut usize,
    plain: &mut Vec<u8>,
) -> (usize, bool) {
    let mut used = 0;
    while let Some(record) = records.next_record() {
        let Ok(record) = record else {
            return (used, true);
        };
        used += record.discard;
        match want {
            Want::Open(buf) => deliver(record.payload, buf, filled, plain),
            _ => plain.extend_from_slice(record.payload),
        }
    }
    (used, false)
}

/// Does `want` once rustls may send application data: seal the slices,
/// or the `close_notify`; reading waits for the next records.
fn write_traffic(
    mut traffic: WriteTraffic<'_, ServerConnectionData>,
    want: &mut Want<'_, '_>,
    output: &mut Sealed,
) -> Stepped {
    match want {
        Want::Open(_) => Stepped::Wait,
        Want::Seal(slices, taken, gather) => {
            let encrypt =
                |plain: &[u8], out: &mut [u8]| traffic.encrypt(plain, out).map_err(Need::from);
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
    }
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
        Want::Seal(slices, taken, _) => {
            if session.0.tx_due() && update_tx(&mut session, output).is_err() {
                return failed;
            }
            let records = &mut *session.0;
            let limit = TLS_COPY_CHUNK as usize;
            let sealed = output.encode(|out| {
                let (plain, written) = records.seal_parts(slices, limit, out)?;
                *taken = plain;
                Ok::<_, Need>(written)
            });
            return match sealed {
                Ok(()) => Stepped::Wait,
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
                // none while the socket still owes bytes it refused (a
                // client that asks without reading would grow them): rustls,
                // too, keeps at most one reply pending.
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

/// For sessions whose records rustls seals (TLS 1.2; a TLS 1.3 session
/// fills each record from the slices itself, `Records::seal_parts`):
/// seals up to [`TLS_COPY_CHUNK`] bytes of `slices` into `output` as full
/// records, whatever the slices' bounds (rustls's `encrypt` takes one
/// slice): whole records are sealed where they lie, and only a record
/// that spans slices is gathered by a copy. A response head and a small
/// body make one record; an HTTP/2 DATA frame's 9-byte header does not
/// make one of its own (bench/results/unbuffered-2026-11-25: sealing each
/// slice apart cost more than rustls's buffered API, which fills records
/// across slices). Returns the plaintext bytes taken.
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

#[cfg(test)]
pub(crate) mod tests {
    //! A session driven in memory against rustls's client: no socket, no
    //! system call (the socket-level cases are `wire`'s).

    use std::io::{Read, Write};

    use rustls::pki_types::{PrivateKeyDer, ServerName};
    use rustls::ClientConnection;

    use super::*;

    pub(crate) fn server_config() -> Arc<ServerConfig> {
        let made = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
        let key = PrivateKeyDer::Pkcs8(made.key_pair.serialize_der().into());
        let certified = crate::tls::from_der(vec![made.cert.der().clone()], key).unwrap();
        let certificates = crate::tls::Certificates::new(Some(Arc::new(certified)));
        crate::tls::Resumption::new()
            .unwrap()
            .config(certificates, false)
            .unwrap()
    }

    /// A client that trusts anything, for one protocol version.
    pub(crate) fn client(version: &'static rustls::SupportedProtocolVersion) -> ClientConnection {
        let config = tachyon_testkit::tls::client_config(&[version], &[]);
        let name = ServerName::try_from("localhost").unwrap();
        ClientConnection::new(config, name).unwrap()
    }

    pub(crate) fn pattern(len: usize, seed: u32) -> Vec<u8> {
        (0..len as u32)
            .map(|i| (i.wrapping_mul(seed) >> 3) as u8)
            .collect()
    }

    /// Ciphertext from the client into the session: what it opened, and
    /// what it sealed in answer (moved to the client).
    fn to_server(client: &mut ClientConnection, server: &mut Session) -> Vec<u8> {
        let mut input = Vec::new();
        while client.wants_write() {
            client.write_tls(&mut input).unwrap();
        }
        let mut output = Sealed::with_capacity(64 * 1024);
        let (mut start, mut opened) = (0, Vec::new());
        let mut buf = vec![0; 64 * 1024];
        loop {
            match server.open(&mut input, &mut start, &mut output, &mut buf) {
                Opening::Data(n) => opened.extend_from_slice(&buf[..n]),
                Opening::Wait => break,
                other => panic!("the session ended: {other:?}"),
            }
        }
        server.hand_over();
        assert_eq!(start, input.len(), "whole records were sent");
        to_client(client, output.bytes());
        opened
    }

    /// Sealed bytes into the client; its plaintext.
    fn to_client(client: &mut ClientConnection, mut sealed: &[u8]) -> Vec<u8> {
        let mut got = Vec::new();
        while !sealed.is_empty() {
            client.read_tls(&mut sealed).unwrap();
            client.process_new_packets().unwrap();
            let _ = client.reader().read_to_end(&mut got);
        }
        got
    }

    /// Bytes in, bytes out: a handshake, a request, a response and a
    /// key update, both versions, with nothing but buffers between them.
    #[test]
    fn a_session_is_driven_by_bytes_alone() {
        for version in [&rustls::version::TLS13, &rustls::version::TLS12] {
            let mut client = client(version);
            let mut server = Session::new(server_config()).unwrap();
            while client.is_handshaking() || server.is_handshaking() {
                assert!(to_server(&mut client, &mut server).is_empty());
            }
            assert_eq!(server.is_handed_over(), version == &rustls::version::TLS13);
            if version == &rustls::version::TLS13 {
                client.refresh_traffic_keys().unwrap();
            }
            client
                .writer()
                .write_all(b"GET / HTTP/1.1\r\n\r\n")
                .unwrap();
            assert_eq!(
                to_server(&mut client, &mut server),
                b"GET / HTTP/1.1\r\n\r\n"
            );
            let response = pattern(40_000, 7);
            let (mut gather, mut output) = (Vec::new(), Sealed::with_capacity(80 * 1024));
            let taken = server
                .seal_data(&[IoSlice::new(&response)], &mut gather, &mut output)
                .unwrap();
            assert_eq!(taken, response.len());
            assert!(
                to_client(&mut client, output.bytes()) == response,
                "{version:?}"
            );
            server.close_notify();
            output.clear();
            server.seal_close(&mut output);
            let sealed_once = output.bytes().len();
            server.seal_close(&mut output);
            assert!(sealed_once > 0, "{version:?}: no close_notify sealed");
            assert_eq!(output.bytes().len(), sealed_once, "one close_notify");
            let mut sealed = output.bytes();
            client.read_tls(&mut sealed).unwrap();
            let state = client.process_new_packets().unwrap();
            assert!(state.peer_has_closed(), "{version:?}: no close_notify");
        }
    }
}
