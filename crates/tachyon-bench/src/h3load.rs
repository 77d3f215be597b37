//! An HTTP/3 load client with h2load's flags and output, because Debian's
//! h2load and curl are built without HTTP/3: `-c` connections, each with
//! up to `-m` requests in flight, for `-n` requests or `-D` seconds,
//! paths from `-i` in turn, headers from `-H`.
//!
//! One thread, one UDP socket, quinn-proto's client driven by a loop of
//! our own (as the server drives its endpoint): datagrams in batches
//! through quinn-udp, requests written with the QPACK static table and
//! literals, responses read with `tachyon_http`'s frame reader. Its output
//! is h2load's, so the runner parses both alike (`clients::parse_h2load`).
//!
//! With `--fresh` every connection carries one request and closes, and a
//! new one (a full handshake: no resumption) takes its place: requests
//! per server CPU-second are then handshakes, as `ab` without `-k` measures
//! them over TLS.
//!
//! Invariant: every request it starts ends counted, as succeeded (a whole
//! response), failed (a reset stream) or errored (its connection lost).

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::IoSliceMut;
use std::net::{SocketAddr, UdpSocket};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use bytes::{Bytes, BytesMut};
use quinn_proto::crypto::rustls::QuicClientConfig;
use quinn_proto::{
    ClientConfig, Connection, ConnectionHandle, DatagramEvent, Dir, Endpoint, EndpointConfig,
    Event, ReadError, StreamEvent, StreamId, TransportConfig, VarInt,
};
use quinn_udp::{RecvMeta, Transmit, UdpSocketState};
use tachyon_http::h2::hpack::{integer, string_parts};
use tachyon_http::h3::frame::{self, kind, Frame, FrameReader};
use tachyon_http::h3::qpack::Decoder;
use tachyon_http::h3::Code;

/// What to load, as h2load's flags say it.
#[derive(Debug, Clone)]
pub struct Options {
    pub url: String,
    pub connections: usize,
    pub streams: usize,
    pub requests: Option<u64>,
    pub duration: Option<Duration>,
    pub headers: Vec<String>,
    pub paths: Vec<String>,
    /// Keeps the connections open and idle this long after the last
    /// response (to measure what an idle connection costs the server).
    pub hold: Option<Duration>,
    /// A new connection for every request.
    pub fresh: bool,
}

/// Datagrams read per `recvmmsg`, and room for each (a GRO batch).
const RECV_BATCH: usize = 32;
const RECV_ROOM: usize = 64 * 1024;

/// Runs the load and prints h2load's summary lines.
pub fn run(opts: &Options) -> anyhow::Result<()> {
    let (remote, authority, path) = parse_url(&opts.url)?;
    let paths = match opts.paths.is_empty() {
        true => vec![path],
        false => opts.paths.clone(),
    };
    let requests: Vec<Bytes> = paths
        .iter()
        .map(|p| request(&authority, p, &opts.headers))
        .collect::<anyhow::Result<_>>()?;
    let mut load = Load::new(remote, opts, requests)?;
    let tally = load.run()?;
    print!("{}", tally.h2load_text());
    if let Some(hold) = opts.hold {
        println!("holding {} connections for {hold:?}", load.clients.len());
        load.hold(hold)?;
    }
    load.close();
    Ok(())
}

/// `https://HOST:PORT/PATH` → (address, authority, path); the host must be
/// an IP address (the benchmark is on loopback).
fn parse_url(url: &str) -> anyhow::Result<(SocketAddr, String, String)> {
    let rest = url
        .strip_prefix("https://")
        .with_context(|| format!("{url}: an https:// URL"))?;
    let (authority, path) = match rest.find('/') {
        Some(at) => (&rest[..at], &rest[at..]),
        None => (rest, "/"),
    };
    let remote = authority
        .parse()
        .with_context(|| format!("{url}: HOST:PORT with an IP address"))?;
    Ok((remote, authority.to_string(), path.to_string()))
}

/// A request's HEADERS frame: `:method GET` and `:scheme https` from the
/// static table (RFC 9204 Appendix A, 17 and 23), `:authority` and
/// `:path` as literals with static names (0 and 1), the rest literal.
fn request(authority: &str, path: &str, headers: &[String]) -> anyhow::Result<Bytes> {
    let mut section = vec![0, 0, 0xc0 | 17, 0xc0 | 23];
    integer(&mut section, 0x50, 4, 0);
    string_parts(&mut section, 0, 7, &[authority.as_bytes()]);
    integer(&mut section, 0x50, 4, 1);
    string_parts(&mut section, 0, 7, &[path.as_bytes()]);
    for header in headers {
        let (name, value) = header
            .split_once(':')
            .with_context(|| format!("-H {header:?}: NAME: VALUE"))?;
        let name = name.trim().to_ascii_lowercase();
        string_parts(&mut section, 0x20, 3, &[name.as_bytes()]);
        string_parts(&mut section, 0, 7, &[value.trim().as_bytes()]);
    }
    let mut out = Vec::with_capacity(section.len() + 8);
    frame::put_header(&mut out, kind::HEADERS, section.len() as u64);
    out.extend_from_slice(&section);
    Ok(Bytes::from(out))
}

/// Counts, as h2load prints them.
#[derive(Debug, Default)]
struct Tally {
    started: u64,
    succeeded: u64,
    failed: u64,
    errored: u64,
    statuses: [u64; 6],
    bytes: u64,
    /// Of which the DATA frames' payloads (the bodies).
    data: u64,
    /// Microseconds per succeeded request.
    latencies: Vec<u32>,
    elapsed: Duration,
}

impl Tally {
    fn h2load_text(&self) -> String {
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        let done = self.succeeded + self.failed + self.errored;
        let mut out = String::new();
        let _ = writeln!(
            out,
            "finished in {:.2}ms, {:.2} req/s, {:.2}MB/s",
            secs * 1000.0,
            self.succeeded as f64 / secs,
            self.bytes as f64 / secs / (1 << 20) as f64
        );
        let _ = writeln!(
            out,
            "requests: {done} total, {} started, {done} done, {} succeeded, {} failed, {} errored, 0 timeout",
            self.started, self.succeeded, self.failed, self.errored
        );
        let s = &self.statuses;
        let _ = writeln!(
            out,
            "status codes: {} 2xx, {} 3xx, {} 4xx, {} 5xx",
            s[2], s[3], s[4], s[5]
        );
        let _ = writeln!(
            out,
            "traffic: {:.2}MB ({}) total, {:.2}MB ({}) data",
            self.bytes as f64 / (1 << 20) as f64,
            self.bytes,
            self.data as f64 / (1 << 20) as f64,
            self.data
        );
        let n = self.latencies.len().max(1) as f64;
        let mean = self.latencies.iter().map(|&l| l as f64).sum::<f64>() / n;
        let min = self.latencies.iter().min().copied().unwrap_or(0);
        let max = self.latencies.iter().max().copied().unwrap_or(0);
        let _ = writeln!(
            out,
            "time for request: {min}us {max}us {}us",
            mean.round() as u64
        );
        out
    }
}

/// One request in flight.
struct InFlight {
    started: Instant,
    /// Request bytes QUIC has not taken yet.
    unsent: Bytes,
    reader: FrameReader,
    status: u16,
}

/// One connection and its requests.
struct Client {
    conn: Connection,
    streams: HashMap<StreamId, InFlight>,
    control: bool,
    next: usize,
    /// Requests started on this connection.
    opened: u64,
    lost: bool,
    /// Closed by us (`--fresh`), kept until drained.
    closing: bool,
}

/// The whole load: one endpoint, its socket, every connection.
struct Load {
    remote: SocketAddr,
    config: ClientConfig,
    fresh: bool,
    socket: UdpSocket,
    state: UdpSocketState,
    endpoint: Endpoint,
    clients: HashMap<ConnectionHandle, Client>,
    requests: Vec<Bytes>,
    streams: usize,
    budget: Option<u64>,
    deadline: Option<Instant>,
    tally: Tally,
    decoder: Decoder,
    recv: Vec<Vec<u8>>,
    send: Vec<u8>,
}

impl Load {
    fn new(remote: SocketAddr, opts: &Options, requests: Vec<Bytes>) -> anyhow::Result<Load> {
        let local: SocketAddr = match remote {
            SocketAddr::V4(_) => "127.0.0.1:0".parse()?,
            SocketAddr::V6(_) => "[::1]:0".parse()?,
        };
        let socket = UdpSocket::bind(local)?;
        socket.set_nonblocking(true)?;
        let state = UdpSocketState::new((&socket).into())?;
        let _ = state.set_recv_buffer_size((&socket).into(), 8 << 20);
        let _ = state.set_send_buffer_size((&socket).into(), 8 << 20);
        let endpoint = Endpoint::new(Arc::new(EndpointConfig::default()), None, true, None);
        let now = Instant::now();
        let mut load = Load {
            remote,
            config: client_config()?,
            fresh: opts.fresh,
            socket,
            state,
            endpoint,
            clients: HashMap::new(),
            requests,
            streams: opts.streams.max(1),
            budget: opts.requests,
            deadline: opts.duration.map(|d| now + d),
            tally: Tally::default(),
            decoder: Decoder::default(),
            recv: (0..RECV_BATCH).map(|_| vec![0u8; RECV_ROOM]).collect(),
            send: Vec::with_capacity(64 * 1024),
        };
        for _ in 0..opts.connections.max(1) {
            load.connect(now)?;
        }
        Ok(load)
    }

    /// Opens one more connection.
    fn connect(&mut self, now: Instant) -> anyhow::Result<()> {
        let (ch, conn) = self
            .endpoint
            .connect(now, self.config.clone(), self.remote, "localhost")
            .context("QUIC connect")?;
        let client = Client {
            conn,
            streams: HashMap::new(),
            control: false,
            next: self.clients.len(),
            opened: 0,
            lost: false,
            closing: false,
        };
        self.clients.insert(ch, client);
        Ok(())
    }

    /// Until every request is started and ended (or every connection lost).
    fn run(&mut self) -> anyhow::Result<Tally> {
        let started = Instant::now();
        if self.budget.is_none() && self.deadline.is_none() {
            bail!("h3load: give -n REQUESTS or -D SECONDS");
        }
        loop {
            self.drive_all();
            if self.finished() {
                break;
            }
            self.wait()?;
            self.receive();
        }
        self.tally.elapsed = started.elapsed();
        Ok(std::mem::take(&mut self.tally))
    }

    /// Gives every connection its turn.
    fn drive_all(&mut self) {
        let now = Instant::now();
        let handles: Vec<ConnectionHandle> = self.clients.keys().copied().collect();
        for ch in handles {
            self.drive(ch, now);
        }
    }

    /// Keeps every connection alive, idle, for `hold`.
    fn hold(&mut self, hold: Duration) -> anyhow::Result<()> {
        let until = Instant::now() + hold;
        while Instant::now() < until {
            self.drive_all();
            self.wait()?;
            self.receive();
        }
        Ok(())
    }

    /// Closes every connection, as h2load does with GOAWAY, and waits up
    /// to a second for them to drain (a server counts them closed then).
    fn close(&mut self) {
        let now = Instant::now();
        for client in self.clients.values_mut() {
            client.conn.close(now, no_error(), Bytes::new());
            client.closing = true;
        }
        let until = now + Duration::from_secs(1);
        while !self.clients.is_empty() && Instant::now() < until {
            self.drive_all();
            if self.wait().is_err() {
                return;
            }
            self.receive();
        }
    }

    /// No more to start (or no connection to start it on), and nothing
    /// in flight.
    fn finished(&self) -> bool {
        let all_lost = self.clients.values().all(|c| c.lost || c.closing);
        (all_lost || !self.may_start(Instant::now()))
            && self
                .clients
                .values()
                .all(|c| c.streams.is_empty() || c.lost)
    }

    /// Within the request budget and the time.
    fn may_start(&self, now: Instant) -> bool {
        let within_budget = self.budget.is_none_or(|n| self.tally.started < n);
        let within_time = self.deadline.is_none_or(|d| now < d);
        within_budget && within_time
    }

    /// One connection's turn: its timer, its events, new requests, its
    /// datagrams out.
    fn drive(&mut self, ch: ConnectionHandle, now: Instant) {
        let Some(mut client) = self.clients.remove(&ch) else {
            return;
        };
        if client.conn.poll_timeout().is_some_and(|at| at <= now) {
            client.conn.handle_timeout(now);
        }
        while let Some(event) = client.conn.poll_endpoint_events() {
            if let Some(event) = self.endpoint.handle_event(ch, event) {
                client.conn.handle_event(event);
            }
        }
        self.events(&mut client);
        if client.control && !client.lost && !client.closing {
            self.start_requests(&mut client, now);
        }
        if self.fresh && !client.closing && client.opened > 0 && client.streams.is_empty() {
            client.conn.close(now, no_error(), Bytes::new());
            client.closing = true;
            if self.may_start(now) && self.connect(now).is_err() {
                self.tally.errored += 1;
            }
        }
        let max = self.state.max_gso_segments();
        let mut buf = std::mem::take(&mut self.send);
        loop {
            buf.clear();
            let Some(transmit) = client.conn.poll_transmit(now, max, &mut buf) else {
                break;
            };
            self.transmit(&transmit, &buf);
        }
        self.send = buf;
        if !client.conn.is_drained() {
            self.clients.insert(ch, client);
        }
    }

    fn events(&mut self, client: &mut Client) {
        while let Some(event) = client.conn.poll() {
            match event {
                Event::Connected => open_control(client),
                Event::Stream(StreamEvent::Opened { dir: Dir::Uni }) => {
                    while let Some(id) = client.conn.streams().accept(Dir::Uni) {
                        discard(&mut client.conn, id);
                    }
                }
                Event::Stream(StreamEvent::Readable { id }) if id.dir() == Dir::Uni => {
                    discard(&mut client.conn, id)
                }
                Event::Stream(StreamEvent::Readable { id }) => self.read(client, id),
                Event::Stream(StreamEvent::Writable { id }) => write_pending(client, id),
                Event::ConnectionLost { .. } => {
                    self.tally.errored += client.streams.len() as u64;
                    client.streams.clear();
                    client.lost = true;
                }
                _ => {}
            }
        }
    }

    /// Opens request streams up to `-m` in flight.
    fn start_requests(&mut self, client: &mut Client, now: Instant) {
        let limit = if self.fresh { 1 } else { u64::MAX };
        while client.streams.len() < self.streams && client.opened < limit && self.may_start(now) {
            let Some(id) = client.conn.streams().open(Dir::Bi) else {
                break;
            };
            let unsent = self.requests[client.next % self.requests.len()].clone();
            client.next += 1;
            client.opened += 1;
            self.tally.started += 1;
            let request = InFlight {
                started: now,
                unsent,
                reader: FrameReader::new(64 * 1024),
                status: 0,
            };
            client.streams.insert(id, request);
            write_pending(client, id);
        }
    }

    /// Reads a response stream; counts the request once it ends.
    fn read(&mut self, client: &mut Client, id: StreamId) {
        let Some(request) = client.streams.get_mut(&id) else {
            return;
        };
        let mut stream = client.conn.recv_stream(id);
        let Ok(mut chunks) = stream.read(true) else {
            return;
        };
        let mut ended = None;
        loop {
            match chunks.next(usize::MAX) {
                Ok(Some(chunk)) => {
                    self.tally.bytes += chunk.bytes.len() as u64;
                    let (decoder, status) = (&mut self.decoder, &mut request.status);
                    let data = &mut self.tally.data;
                    let _ = request.reader.feed(&chunk.bytes, &mut |frame| {
                        match (frame, *status) {
                            (Frame::Headers(section), 0) => {
                                let _ = decoder.each(section, |name, value| {
                                    if name == b":status" {
                                        *status = parse_status(value);
                                    }
                                });
                            }
                            (Frame::Data { len }, _) => *data += len,
                            _ => {}
                        }
                        Ok(())
                    });
                }
                Ok(None) => {
                    ended = Some(true);
                    break;
                }
                Err(ReadError::Blocked) => break,
                Err(ReadError::Reset(_)) => {
                    ended = Some(false);
                    break;
                }
            }
        }
        let _ = chunks.finalize();
        if let Some(whole) = ended {
            let request = client.streams.remove(&id).expect("in flight");
            self.ended(request, whole);
        }
    }

    fn ended(&mut self, request: InFlight, whole: bool) {
        let class = usize::from(request.status / 100);
        if !whole || !(1..=5).contains(&class) {
            self.tally.failed += 1;
            return;
        }
        self.tally.succeeded += 1;
        self.tally.statuses[class] += 1;
        let micros = request.started.elapsed().as_micros();
        self.tally
            .latencies
            .push(micros.min(u32::MAX as u128) as u32);
    }

    /// Sleeps until a datagram arrives or the next timer is due.
    fn wait(&mut self) -> anyhow::Result<()> {
        let now = Instant::now();
        let next = self
            .clients
            .values_mut()
            .filter_map(|c| c.conn.poll_timeout())
            .min()
            .map_or(Duration::from_millis(100), |at| {
                at.saturating_duration_since(now)
            });
        let next = next.min(Duration::from_millis(100));
        let timeout = rustix::event::Timespec {
            tv_sec: next.as_secs() as i64,
            tv_nsec: next.subsec_nanos() as i64,
        };
        let fd = std::os::fd::AsFd::as_fd(&self.socket);
        let mut fds = [rustix::event::PollFd::new(
            &fd,
            rustix::event::PollFlags::IN,
        )];
        match rustix::event::poll(&mut fds, Some(&timeout)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Reads every datagram waiting and hands each to its connection.
    fn receive(&mut self) {
        let mut meta = [RecvMeta::default(); RECV_BATCH];
        let mut recv = std::mem::take(&mut self.recv);
        loop {
            let mut bufs: Vec<IoSliceMut<'_>> =
                recv.iter_mut().map(|b| IoSliceMut::new(b)).collect();
            let Ok(n) = self.state.recv((&self.socket).into(), &mut bufs, &mut meta) else {
                break;
            };
            drop(bufs);
            let now = Instant::now();
            for (buf, meta) in recv.iter().zip(&meta).take(n) {
                for datagram in buf[..meta.len].chunks(meta.stride.max(1)) {
                    self.datagram(now, meta, BytesMut::from(datagram));
                }
            }
        }
        self.recv = recv;
    }

    fn datagram(&mut self, now: Instant, meta: &RecvMeta, data: BytesMut) {
        let mut buf = std::mem::take(&mut self.send);
        buf.clear();
        match self
            .endpoint
            .handle(now, meta.addr, meta.dst_ip, None, data, &mut buf)
        {
            Some(DatagramEvent::ConnectionEvent(ch, event)) => {
                if let Some(client) = self.clients.get_mut(&ch) {
                    client.conn.handle_event(event);
                }
            }
            Some(DatagramEvent::Response(transmit)) => self.transmit(&transmit, &buf),
            _ => {}
        }
        self.send = buf;
    }

    fn transmit(&self, transmit: &quinn_proto::Transmit, buf: &[u8]) {
        let out = Transmit {
            destination: transmit.destination,
            ecn: None,
            contents: &buf[..transmit.size],
            segment_size: transmit.segment_size,
            src_ip: transmit.src_ip,
        };
        let _ = self.state.send((&self.socket).into(), &out);
    }
}

/// H3_NO_ERROR (RFC 9114 §8.1), the code a client closes with when done.
fn no_error() -> VarInt {
    VarInt::from_u32(Code::NoError as u32)
}

fn parse_status(value: &[u8]) -> u16 {
    std::str::from_utf8(value)
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Our control stream and its SETTINGS, once connected (RFC 9114 §6.2.1).
fn open_control(client: &mut Client) {
    if let Some(id) = client.conn.streams().open(Dir::Uni) {
        let preface = tachyon_http::h3::control_stream_preface(64 * 1024);
        let _ = client.conn.send_stream(id).write(&preface);
    }
    client.control = true;
}

/// Reads and drops what a server's unidirectional stream carries (its
/// control stream's SETTINGS, QPACK streams).
fn discard(conn: &mut Connection, id: StreamId) {
    let mut stream = conn.recv_stream(id);
    let Ok(mut chunks) = stream.read(true) else {
        return;
    };
    while let Ok(Some(_)) = chunks.next(usize::MAX) {}
    let _ = chunks.finalize();
}

/// Gives QUIC what it takes of a request; finishes the stream when all
/// of it is taken.
fn write_pending(client: &mut Client, id: StreamId) {
    let Some(request) = client.streams.get_mut(&id) else {
        return;
    };
    let mut send = client.conn.send_stream(id);
    while !request.unsent.is_empty() {
        match send.write(&request.unsent) {
            Ok(n) => request.unsent = request.unsent.slice(n..),
            Err(_) => return,
        }
    }
    let _ = send.finish();
}

/// A client that takes any certificate (the benchmark's are its own),
/// with windows wide enough for a 10 MiB body in flight.
fn client_config() -> anyhow::Result<ClientConfig> {
    let mut tls = tachyon_testkit::tls::client_config(&[&rustls::version::TLS13], &[b"h3"]);
    // Every connection a full handshake, as `ab`'s over TLS.
    Arc::make_mut(&mut tls).resumption = rustls::client::Resumption::disabled();
    let crypto = QuicClientConfig::try_from(tls).context("a QUIC TLS client")?;
    let mut config = ClientConfig::new(Arc::new(crypto));
    let mut transport = TransportConfig::default();
    transport
        .stream_receive_window(VarInt::from_u32(16 << 20))
        .receive_window(VarInt::from_u32(64 << 20))
        .max_concurrent_uni_streams(VarInt::from_u32(16));
    config.transport_config(Arc::new(transport));
    Ok(config)
}
