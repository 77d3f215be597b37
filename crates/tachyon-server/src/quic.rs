//! QUIC endpoints for HTTP/3: one UDP socket per HTTPS address in each
//! worker, and quinn-proto's sans-I/O `Endpoint` and `Connection`s driven
//! by the worker's own loop: datagrams read in batches (GRO and
//! `recvmmsg` through quinn-udp), handed to the endpoint, answered by the
//! connections they belong to, sent back in batches (GSO).
//!
//! Owns the socket, the connections of this worker and their timers;
//! HTTP/3 itself is `crate::h3`'s. Connection IDs we issue carry the
//! number of the endpoint's socket in its address's group (the worker's,
//! unless the sockets were handed over) in their first byte, and the
//! sockets of one address steer a datagram by it (`tachyon_sys::steer_quic_by_cid`), so a
//! connection's packets reach the worker that holds it even after the
//! client's address changes.
//!
//! Invariant: a connection lives in exactly one worker; every datagram
//! QUIC asks to send leaves through the socket it came in on, or is
//! dropped (QUIC recovers a lost datagram like any other).

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::io::{self, IoSliceMut};
use std::net::UdpSocket;
use std::os::fd::{AsFd, OwnedFd};
use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::{Bytes, BytesMut};
use quinn_proto::crypto::rustls::QuicServerConfig;
use quinn_proto::{
    ConnectionHandle, ConnectionId, ConnectionIdGenerator, DatagramEvent, EcnCodepoint, Endpoint,
    EndpointConfig, IdleTimeout, ServerConfig, TransportConfig, VarInt,
};
use quinn_udp::{RecvMeta, Transmit, UdpSocketState};

use tachyon_http::h3::Code;

use crate::h3::{Failed, H3Limits, IntoVarint, H3};
use crate::serving::Serving;
use crate::stats::Observer;

type Conns = HashMap<ConnectionHandle, Box<Entry>, foldhash::fast::RandomState>;

/// Datagrams read per `recvmmsg`.
const RECV_BATCH: usize = 16;
/// Room per received buffer: one datagram, or a GRO batch of them.
const RECV_ROOM: usize = 64 * 1024;
/// Bytes the kernel may queue on the socket either way: a burst of
/// handshakes or a window of data without drops.
const SOCKET_BUFFER: usize = 4 * 1024 * 1024;
/// Datagrams per GSO send: the kernel takes at most 64 KiB in one send
/// (44 of quinn's 1,452-byte datagrams). At quinn-udp's default of 64 the
/// kernel refused the larger sends (EMSGSIZE, which quinn-udp drops
/// without a word): lost windows held 10 MiB bodies to 33 MB/s
/// (bench/results/h3-2026-11-27/README.md).
const GSO_SEGMENTS: usize = 44;

/// What every worker's endpoint shares: the key Retry and NEW_TOKEN tokens
/// are sealed with (a token one worker issues validates at another).
#[derive(Clone)]
pub struct Shared {
    token_key: Arc<dyn quinn_proto::crypto::HandshakeTokenKey>,
    pub limits: H3Limits,
    /// Seconds a connection may stay idle.
    pub idle: Duration,
}

impl Shared {
    pub fn new(limits: H3Limits, idle: Duration) -> Shared {
        let mut secret = [0u8; 64];
        ring::rand::SecureRandom::fill(&ring::rand::SystemRandom::new(), &mut secret)
            .expect("the system's random source");
        let key = ring::hkdf::Salt::new(ring::hkdf::HKDF_SHA256, &[]).extract(&secret);
        Shared {
            token_key: Arc::new(key),
            limits,
            idle,
        }
    }

    /// quinn's server settings for a generation's TLS settings: the same
    /// certificates, tickets and cipher suites as TCP, ALPN `h3`.
    pub fn server_config(&self, tls: &Arc<rustls::ServerConfig>) -> Option<Arc<ServerConfig>> {
        let mut tls = (**tls).clone();
        tls.alpn_protocols = vec![tachyon_http::h3::ALPN.to_vec()];
        // 0-RTT stays off: replayed requests are not ours to accept blind.
        tls.max_early_data_size = 0;
        tls.send_half_rtt_data = false;
        let crypto = QuicServerConfig::try_from(Arc::new(tls)).ok()?;
        let mut config = ServerConfig::new(Arc::new(crypto), Arc::clone(&self.token_key));
        let mut transport = TransportConfig::default();
        transport
            .max_concurrent_bidi_streams(VarInt::from_u32(self.limits.max_streams))
            // Control, QPACK encoder and decoder, and room for grease.
            .max_concurrent_uni_streams(VarInt::from_u32(8))
            .max_idle_timeout(IdleTimeout::try_from(self.idle).ok())
            // Requests carry no body worth reading: small receive windows.
            .stream_receive_window(VarInt::from_u32(64 * 1024))
            .receive_window(VarInt::from_u32(1024 * 1024))
            .send_window(4 * 1024 * 1024);
        config.transport_config(Arc::new(transport));
        Some(Arc::new(config))
    }
}

/// Connection IDs of 8 bytes whose first byte names the socket (see
/// `Quic::new`).
struct SocketCids {
    socket: u8,
}

impl ConnectionIdGenerator for SocketCids {
    fn generate_cid(&mut self) -> ConnectionId {
        // The thread's CSPRNG (seeded by the kernel), as quinn's own
        // generator: a getrandom call per ID was 1% of a handshake's CPU.
        let mut bytes: [u8; 8] = rand::random();
        bytes[0] = self.socket;
        ConnectionId::new(&bytes)
    }

    fn cid_len(&self) -> usize {
        8
    }

    fn cid_lifetime(&self) -> Option<Duration> {
        None
    }
}

/// One connection and its HTTP/3.
struct Entry {
    conn: quinn_proto::Connection,
    h3: Box<H3>,
    /// The earliest of this connection's entries in the timer heap, the
    /// only one that counts. QUIC moves its timer later at almost every
    /// packet; the heap gets a new entry only when it moves earlier, and a
    /// due entry whose timer moved on is put back at the new time (a push
    /// per drive was 2% of a busy worker: bench/results/h3-lean-2026-11-27).
    queued: Option<Instant>,
    touched: bool,
    /// Counted in `Quic::handshakes` still.
    handshaking: bool,
}

/// One worker's QUIC endpoint on one UDP socket.
pub struct Quic {
    socket: UdpSocket,
    state: UdpSocketState,
    endpoint: Endpoint,
    config: Option<Arc<ServerConfig>>,
    /// Boxed: a quinn `Connection` is kilobytes, moved out and back on
    /// every drive, and a map's empty slots would hold as much again.
    conns: Conns,
    timers: BinaryHeap<Reverse<(Instant, ConnectionHandle)>>,
    touched: Vec<ConnectionHandle>,
    recv: Vec<Vec<u8>>,
    send: Vec<u8>,
    shared: Shared,
    draining: bool,
    /// Connections whose handshake is in progress: above the limit, new
    /// clients are sent a Retry.
    handshakes: usize,
}

impl Quic {
    /// An endpoint on `socket` (bound, non-blocking), the socket at
    /// `index` of its address's group: the connection IDs it issues start
    /// with that byte, so the group's steering brings their datagrams here.
    pub fn new(socket: OwnedFd, index: u8, shared: Shared) -> io::Result<Quic> {
        let socket = UdpSocket::from(socket);
        let state = UdpSocketState::new((&socket).into())?;
        let _ = state.set_recv_buffer_size((&socket).into(), SOCKET_BUFFER);
        let _ = state.set_send_buffer_size((&socket).into(), SOCKET_BUFFER);
        // Its own stateless-reset key (`default()` draws one): a datagram
        // that reaches the wrong worker draws a reset its client ignores
        // (RFC 9000 §10.3.1: the token does not match), not one that ends a
        // connection alive on another worker.
        let mut config = EndpointConfig::default();
        config.cid_generator(move || Box::new(SocketCids { socket: index }));
        Ok(Quic {
            socket,
            state,
            endpoint: Endpoint::new(Arc::new(config), None, true, None),
            config: None,
            conns: Conns::default(),
            timers: BinaryHeap::new(),
            touched: Vec::new(),
            recv: (0..RECV_BATCH).map(|_| vec![0u8; RECV_ROOM]).collect(),
            send: Vec::with_capacity(64 * 1024),
            shared,
            draining: false,
            handshakes: 0,
        })
    }

    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.socket.as_fd()
    }

    pub fn is_empty(&self) -> bool {
        self.conns.is_empty()
    }

    /// New connections start from these TLS settings (a reload's
    /// certificates); `None` refuses them.
    pub fn set_tls(&mut self, tls: Option<&Arc<rustls::ServerConfig>>) {
        self.config = tls.and_then(|tls| self.shared.server_config(tls));
        self.endpoint.set_server_config(self.config.clone());
    }

    /// Reads every datagram waiting, and answers what they call for.
    pub fn readable(&mut self, cx: &mut Serving<'_>) {
        let mut meta = [RecvMeta::default(); RECV_BATCH];
        loop {
            let mut bufs: Vec<IoSliceMut<'_>> =
                self.recv.iter_mut().map(|b| IoSliceMut::new(b)).collect();
            let n = match self.state.recv((&self.socket).into(), &mut bufs, &mut meta) {
                Ok(n) => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(_) => break,
            };
            drop(bufs);
            let now = Instant::now();
            // Taken for the loop: each datagram is copied out before the
            // endpoint (which needs `self`) sees it.
            let recv = std::mem::take(&mut self.recv);
            for (buf, meta) in recv.iter().zip(&meta).take(n) {
                for datagram in buf[..meta.len].chunks(meta.stride.max(1)) {
                    let datagram = BytesMut::from(datagram);
                    self.datagram(now, meta, datagram, &mut *cx.observer);
                }
            }
            self.recv = recv;
        }
        self.drive_touched(cx);
    }

    /// One datagram: to its connection, or a new one, or a reply of the
    /// endpoint's own (version negotiation, stateless reset).
    fn datagram(&mut self, now: Instant, meta: &RecvMeta, data: BytesMut, observer: &mut Observer) {
        let ecn = meta.ecn.and_then(|e| EcnCodepoint::from_bits(e as u8));
        let mut buf = std::mem::take(&mut self.send);
        buf.clear();
        let event = self
            .endpoint
            .handle(now, meta.addr, meta.dst_ip, ecn, data, &mut buf);
        match event {
            Some(DatagramEvent::ConnectionEvent(ch, event)) => {
                if let Some(entry) = self.conns.get_mut(&ch) {
                    entry.conn.handle_event(event);
                    touch(entry, ch, &mut self.touched);
                }
            }
            Some(DatagramEvent::NewConnection(incoming)) => {
                if self.draining || self.config.is_none() {
                    let transmit = self.endpoint.refuse(incoming, &mut buf);
                    self.transmit(&transmit, &buf);
                } else if self.handshakes >= self.shared.limits.retry_above
                    && !incoming.remote_address_validated()
                    && incoming.may_retry()
                {
                    // A flood of handshakes, perhaps from forged addresses:
                    // a client proves its address with the token first
                    // (RFC 9000 §8.1.2), at no state kept here.
                    match self.endpoint.retry(incoming, &mut buf) {
                        Ok(transmit) => {
                            observer.quic_retried();
                            self.transmit(&transmit, &buf);
                        }
                        Err(e) => self.endpoint.ignore(e.into_incoming()),
                    }
                } else {
                    let remote = incoming.remote_address();
                    match self.endpoint.accept(incoming, now, &mut buf, None) {
                        Ok((ch, conn)) => {
                            observer.quic_accepted();
                            let entry = Box::new(Entry {
                                conn,
                                h3: H3::new(self.shared.limits.clone(), remote),
                                queued: None,
                                touched: false,
                                handshaking: true,
                            });
                            self.handshakes += 1;
                            self.conns.insert(ch, entry);
                            if let Some(entry) = self.conns.get_mut(&ch) {
                                touch(entry, ch, &mut self.touched);
                            }
                        }
                        Err(e) => {
                            if let Some(transmit) = e.response {
                                self.transmit(&transmit, &buf);
                            }
                        }
                    }
                }
            }
            Some(DatagramEvent::Response(transmit)) => self.transmit(&transmit, &buf),
            None => {}
        }
        self.send = buf;
    }

    /// Sends one transmit from `buf`; a full socket drops it (QUIC treats
    /// it as lost).
    fn transmit(&self, transmit: &quinn_proto::Transmit, buf: &[u8]) {
        let out = Transmit {
            destination: transmit.destination,
            ecn: transmit
                .ecn
                .and_then(|e| quinn_udp::EcnCodepoint::from_bits(e as u8)),
            contents: &buf[..transmit.size],
            segment_size: transmit.segment_size,
            src_ip: transmit.src_ip,
        };
        let _ = self.state.send((&self.socket).into(), &out);
    }

    /// Runs the connections whose timers are due.
    pub fn expire(&mut self, cx: &mut Serving<'_>) {
        let now = Instant::now();
        while let Some(Reverse((at, ch))) = self.timers.peek().copied() {
            if at > now {
                break;
            }
            self.timers.pop();
            let Some(entry) = self.conns.get_mut(&ch) else {
                continue;
            };
            if entry.queued != Some(at) {
                continue;
            }
            entry.queued = None;
            // Between drives the connection's timer stands still: nothing
            // reaches it but through a drive.
            match entry.conn.poll_timeout() {
                Some(due) if due <= now => {
                    entry.conn.handle_timeout(now);
                    touch(entry, ch, &mut self.touched);
                }
                Some(later) => {
                    entry.queued = Some(later);
                    self.timers.push(Reverse((later, ch)));
                }
                None => {}
            }
        }
        self.drive_touched(cx);
    }

    /// When the earliest timer is due.
    pub fn next_timer(&self) -> Option<Instant> {
        self.timers.peek().map(|Reverse((at, _))| *at)
    }

    fn drive_touched(&mut self, cx: &mut Serving<'_>) {
        let touched = std::mem::take(&mut self.touched);
        for &ch in &touched {
            self.drive(ch, cx);
        }
        self.touched = touched;
        self.touched.clear();
    }

    /// Lets one connection do everything it can now: its endpoint events,
    /// its HTTP/3 work, its datagrams, its next timer.
    fn drive(&mut self, ch: ConnectionHandle, cx: &mut Serving<'_>) {
        let Some(mut entry) = self.conns.remove(&ch) else {
            return;
        };
        entry.touched = false;
        let now = Instant::now();
        self.endpoint_events(ch, &mut entry.conn);
        if self.draining {
            // Before the responses take the credit a window update brought.
            entry.h3.go_away(&mut entry.conn);
        }
        if let Err(Failed(code)) = entry.h3.on_events(&mut entry.conn, cx) {
            entry.conn.close(now, code.into_varint(), Bytes::new());
        }
        if self.draining && entry.h3.is_done(&mut entry.conn, now) && !entry.conn.is_closed() {
            entry
                .conn
                .close(now, Code::NoError.into_varint(), Bytes::new());
        }
        self.flush(&mut entry.conn, now);
        self.endpoint_events(ch, &mut entry.conn);
        if entry.handshaking && (!entry.conn.is_handshaking() || entry.conn.is_drained()) {
            entry.handshaking = false;
            self.handshakes -= 1;
        }
        if entry.conn.is_drained() {
            let stats = entry.conn.stats();
            cx.observer
                .quic_closed(stats.path.sent_packets, stats.path.lost_packets);
            return;
        }
        if let Some(at) = entry.conn.poll_timeout() {
            if entry.queued.is_none_or(|queued| at < queued) {
                entry.queued = Some(at);
                self.timers.push(Reverse((at, ch)));
            }
        }
        if entry.h3.is_idle() {
            entry.h3.settle();
        }
        self.conns.insert(ch, entry);
    }

    /// Passes a connection's events for the endpoint (new connection IDs,
    /// its end) and their answers back.
    fn endpoint_events(&mut self, ch: ConnectionHandle, conn: &mut quinn_proto::Connection) {
        while let Some(event) = conn.poll_endpoint_events() {
            if let Some(event) = self.endpoint.handle_event(ch, event) {
                conn.handle_event(event);
            }
        }
    }

    /// Sends what the connection has to send.
    fn flush(&mut self, conn: &mut quinn_proto::Connection, now: Instant) {
        let max = self.state.max_gso_segments().min(GSO_SEGMENTS);
        let mut buf = std::mem::take(&mut self.send);
        loop {
            buf.clear();
            let Some(transmit) = conn.poll_transmit(now, max, &mut buf) else {
                break;
            };
            self.transmit(&transmit, &buf);
        }
        self.send = buf;
    }

    /// Starts a drain: GOAWAY on every connection, new ones refused, and a
    /// connection closed once its requests are answered.
    pub fn drain(&mut self, cx: &mut Serving<'_>) {
        if self.draining {
            return;
        }
        self.draining = true;
        self.drain_tick(cx);
    }

    /// While draining, gives every connection a turn, so that one whose
    /// responses are all delivered is closed even when nothing arrives
    /// for it (see `H3::is_done`).
    pub fn drain_tick(&mut self, cx: &mut Serving<'_>) {
        if !self.draining {
            return;
        }
        let handles: Vec<ConnectionHandle> = self.conns.keys().copied().collect();
        for ch in handles {
            self.drive(ch, cx);
        }
    }

    /// Closes every connection at once (the drain's deadline passed).
    pub fn close_all(&mut self, cx: &mut Serving<'_>) {
        let now = Instant::now();
        let handles: Vec<ConnectionHandle> = self.conns.keys().copied().collect();
        for ch in handles {
            if let Some(entry) = self.conns.get_mut(&ch) {
                entry
                    .conn
                    .close(now, Code::NoError.into_varint(), Bytes::new());
            }
            self.drive(ch, cx);
        }
    }
}

/// Marks a connection as having work, once per batch.
fn touch(entry: &mut Entry, ch: ConnectionHandle, touched: &mut Vec<ConnectionHandle>) {
    if !entry.touched {
        entry.touched = true;
        touched.push(ch);
    }
}
