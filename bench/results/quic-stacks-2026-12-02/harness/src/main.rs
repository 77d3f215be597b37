//! In-process comparison of two sans-I/O QUIC stacks (quinn-proto 0.11 and
//! its fork noq-proto 1.4) on the HTTP/3 suite's shapes, without sockets:
//! bytes per idle server connection (live heap, tagged per side) and
//! server CPU per 1 KiB response with M concurrent streams.
use std::alloc::{GlobalAlloc, Layout, System};
use std::collections::VecDeque;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::sync::atomic::{AtomicI64, AtomicUsize, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

#[cfg(feature = "noq")]
use noq_proto as q;
#[cfg(not(feature = "noq"))]
use quinn_proto as q;

use q::{
    ClientConfig, ConnectionHandle, DatagramEvent, Dir, Endpoint, EndpointConfig, ServerConfig,
    StreamId, TransportConfig, VarInt,
};

// ---- allocator: every block carries the side that allocated it ----
static SIDE: AtomicUsize = AtomicUsize::new(0); // 0 harness, 1 server, 2 client
static LIVE: [AtomicI64; 3] = [AtomicI64::new(0), AtomicI64::new(0), AtomicI64::new(0)];
struct Tagged;
const HDR: usize = 16;
// SAFETY: every block is the system allocator's, `pre` bytes larger and
// aligned to at least 16; the tag sits in the 8 bytes before the pointer
// handed out, and `dealloc` undoes exactly what `alloc` did for the same
// layout.
unsafe impl GlobalAlloc for Tagged {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let pre = HDR.max(l.align());
        let p = System.alloc(Layout::from_size_align_unchecked(
            l.size() + pre,
            l.align().max(HDR),
        ));
        if p.is_null() {
            return p;
        }
        let side = SIDE.load(Relaxed);
        *(p.add(pre - 8) as *mut usize) = side;
        LIVE[side].fetch_add(l.size() as i64, Relaxed);
        p.add(pre)
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        let pre = HDR.max(l.align());
        let side = *(p.sub(8) as *const usize);
        LIVE[side].fetch_sub(l.size() as i64, Relaxed);
        System.dealloc(
            p.sub(pre),
            Layout::from_size_align_unchecked(l.size() + pre, l.align().max(HDR)),
        );
    }
}
#[global_allocator]
static A: Tagged = Tagged;

fn as_side<T>(side: usize, f: impl FnOnce() -> T) -> T {
    let old = SIDE.swap(side, Relaxed);
    let r = f();
    SIDE.store(old, Relaxed);
    r
}

const SERVER: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 4433);
const CLIENT: SocketAddr = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), 5555);
const BODY: usize = 1024 + 40; // a 1 KiB body with its HEADERS and DATA frames
const REQ: usize = 40; // a request's HEADERS frame, QPACK-encoded

struct Side {
    ep: Endpoint,
    conns: Vec<Option<q::Connection>>, // by handle index
    buf: Vec<u8>,
}

struct Net {
    server: Side,
    client: Side,
    to_server: VecDeque<Vec<u8>>,
    to_client: VecDeque<Vec<u8>>,
    now: Instant,
    server_time: Duration,
    served: u64,
}

fn certs() -> (rustls::ServerConfig, rustls::RootCertStore) {
    let c = rcgen::generate_simple_self_signed(vec!["localhost".into()]).unwrap();
    let der = c.cert.der().clone();
    let key = rustls::pki_types::PrivateKeyDer::Pkcs8(c.key_pair.serialize_der().into());
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut s = rustls::ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(vec![der.clone()], key)
        .unwrap();
    s.alpn_protocols = vec![b"h3".to_vec()];
    s.max_early_data_size = 0;
    s.send_half_rtt_data = false;
    let mut roots = rustls::RootCertStore::empty();
    roots.add(der).unwrap();
    (s, roots)
}

fn transport() -> TransportConfig {
    let mut t = TransportConfig::default();
    t.max_concurrent_bidi_streams(VarInt::from_u32(std::env::var("STREAMS").map_or(100, |v| v.parse().unwrap())))
        .max_concurrent_uni_streams(VarInt::from_u32(8))
        .max_idle_timeout(Some(VarInt::from_u32(60_000).into()))
        .stream_receive_window(VarInt::from_u32(64 * 1024))
        .receive_window(VarInt::from_u32(1024 * 1024))
        .send_window(4 * 1024 * 1024);
    t
}

fn endpoints() -> (Endpoint, Endpoint, ClientConfig) {
    let (s, roots) = certs();
    let crypto = q::crypto::rustls::QuicServerConfig::try_from(Arc::new(s)).unwrap();
    let mut sc = ServerConfig::with_crypto(Arc::new(crypto));
    sc.transport_config(Arc::new(transport()));
    // Browsers' cipher order: AES-128-GCM first.
    let mut provider = rustls::crypto::ring::default_provider();
    provider
        .cipher_suites
        .sort_by_key(|s| s.suite() != rustls::CipherSuite::TLS13_AES_128_GCM_SHA256);
    let mut c = rustls::ClientConfig::builder_with_provider(Arc::new(provider))
        .with_protocol_versions(&[&rustls::version::TLS13])
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    c.alpn_protocols = vec![b"h3".to_vec()];
    let mut cc = ClientConfig::new(Arc::new(
        q::crypto::rustls::QuicClientConfig::try_from(Arc::new(c)).unwrap(),
    ));
    cc.transport_config(Arc::new(transport()));
    #[cfg(not(feature = "noq"))]
    let (se, ce) = (
        as_side(1, || {
            Endpoint::new(
                Arc::new(EndpointConfig::default()),
                Some(Arc::new(sc)),
                true,
                None,
            )
        }),
        as_side(2, || {
            Endpoint::new(Arc::new(EndpointConfig::default()), None, true, None)
        }),
    );
    #[cfg(feature = "noq")]
    let (se, ce) = (
        as_side(1, || {
            Endpoint::new(
                Arc::new(EndpointConfig::default()),
                Some(Arc::new(sc)),
                true,
            )
        }),
        as_side(2, || {
            Endpoint::new(Arc::new(EndpointConfig::default()), None, true)
        }),
    );
    (se, ce, cc)
}

fn handle(
    ep: &mut Endpoint,
    now: Instant,
    from: SocketAddr,
    data: bytes::BytesMut,
    buf: &mut Vec<u8>,
) -> Option<DatagramEvent> {
    #[cfg(not(feature = "noq"))]
    return ep.handle(now, from, None, None, data, buf);
    #[cfg(feature = "noq")]
    return ep.handle(now, q::FourTuple::new(from, None), None, data, buf);
}

fn poll_transmit(c: &mut q::Connection, now: Instant, buf: &mut Vec<u8>) -> Option<q::Transmit> {
    #[cfg(not(feature = "noq"))]
    return c.poll_transmit(now, 44, buf);
    #[cfg(feature = "noq")]
    return c.poll_transmit(now, std::num::NonZeroUsize::new(44).unwrap(), buf);
}

impl Side {
    fn put(&mut self, ch: ConnectionHandle, c: q::Connection) {
        if self.conns.len() <= ch.0 {
            self.conns.resize_with(ch.0 + 1, || None);
        }
        self.conns[ch.0] = Some(c);
    }
    /// Everything one connection has to send, as datagrams.
    fn flush(&mut self, i: usize, now: Instant, out: &mut VecDeque<Vec<u8>>) {
        let Some(c) = self.conns[i].as_mut() else {
            return;
        };
        loop {
            self.buf.clear();
            let Some(t) = poll_transmit(c, now, &mut self.buf) else {
                break;
            };
            let seg = t.segment_size.unwrap_or(t.size);
            for d in self.buf[..t.size].chunks(seg) {
                out.push_back(d.to_vec());
            }
        }
        while let Some(e) = c.poll_endpoint_events() {
            if let Some(e) = self.ep.handle_event(ConnectionHandle(i), e) {
                c.handle_event(e);
            }
        }
    }
}

impl Net {
    fn new() -> (Net, ClientConfig) {
        let (se, ce, cc) = endpoints();
        let side = |ep| Side {
            ep,
            conns: Vec::new(),
            buf: Vec::with_capacity(64 * 1024),
        };
        (
            Net {
                server: side(se),
                client: side(ce),
                to_server: VecDeque::new(),
                to_client: VecDeque::new(),
                now: Instant::now(),
                server_time: Duration::ZERO,
                served: 0,
            },
            cc,
        )
    }

    /// One datagram into the server, its answers out.
    fn server_datagram(&mut self, d: Vec<u8>) -> Option<usize> {
        let t0 = Instant::now();
        let r = as_side(1, || {
            let now = self.now;
            let s = &mut self.server;
            let ev = handle(
                &mut s.ep,
                now,
                CLIENT,
                bytes::BytesMut::from(&d[..]),
                &mut s.buf,
            );
            let ch = match ev {
                Some(DatagramEvent::NewConnection(inc)) => {
                    let mut buf = Vec::new();
                    let (ch, c) = s.ep.accept(inc, now, &mut buf, None).ok().unwrap();
                    s.put(ch, c);
                    ch
                }
                Some(DatagramEvent::ConnectionEvent(ch, e)) => {
                    s.conns[ch.0].as_mut().unwrap().handle_event(e);
                    ch
                }
                Some(DatagramEvent::Response(t)) => {
                    self.to_client.push_back(s.buf[..t.size].to_vec());
                    return None;
                }
                None => return None,
            };
            Some(ch.0)
        });
        self.server_time += t0.elapsed();
        r
    }

    /// The server's application: answer every complete request.
    fn serve(&mut self, i: usize) {
        let now = self.now;
        let s = &mut self.server;
        let c = s.conns[i].as_mut().unwrap();
        while c.poll().is_some() {}
        let mut ready: Vec<StreamId> = Vec::new();
        while let Some(id) = c.streams().accept(Dir::Bi) {
            ready.push(id);
        }
        for id in ready {
            let mut got = 0;
            if let Ok(mut chunks) = c.recv_stream(id).read(true) {
                while let Ok(Some(ch)) = chunks.next(usize::MAX) {
                    got += ch.bytes.len();
                }
                let _ = chunks.finalize();
            }
            debug_assert!(got > 0);
            let body = [0x61u8; BODY];
            let mut send = c.send_stream(id);
            let _ = send.write(&body);
            let _ = send.finish();
            self.served += 1;
        }
        s.flush(i, now, &mut self.to_client);
    }

    fn client_datagram(&mut self, d: Vec<u8>) -> Option<usize> {
        as_side(2, || {
            let now = self.now;
            let s = &mut self.client;
            match handle(
                &mut s.ep,
                now,
                SERVER,
                bytes::BytesMut::from(&d[..]),
                &mut s.buf,
            ) {
                Some(DatagramEvent::ConnectionEvent(ch, e)) => {
                    s.conns[ch.0].as_mut().unwrap().handle_event(e);
                    Some(ch.0)
                }
                _ => None,
            }
        })
    }

    /// Delivers everything in flight until both sides are quiet, then runs
    /// timers (ACK delay, pacing) in virtual time, `rounds` times over.
    fn settle(
        &mut self,
        client_app: &mut dyn FnMut(&mut Net, usize) -> bool,
        until: impl Fn(&Net) -> bool,
    ) {
        loop {
            while !self.to_server.is_empty() || !self.to_client.is_empty() {
                let batch: Vec<Vec<u8>> = self.to_server.drain(..).collect();
                let mut touched = Vec::new();
                for d in batch {
                    if let Some(i) = self.server_datagram(d) {
                        if !touched.contains(&i) {
                            touched.push(i);
                        }
                    }
                }
                let t0 = Instant::now();
                for i in touched {
                    as_side(1, || self.serve(i));
                }
                self.server_time += t0.elapsed();
                let batch: Vec<Vec<u8>> = self.to_client.drain(..).collect();
                let mut touched = Vec::new();
                for d in batch {
                    if let Some(i) = self.client_datagram(d) {
                        if !touched.contains(&i) {
                            touched.push(i);
                        }
                    }
                }
                for i in touched {
                    as_side(2, || client_app(self, i));
                    let now = self.now;
                    as_side(2, || self.client.flush(i, now, &mut self.to_server));
                }
            }
            if until(self) {
                return;
            }
            // Quiet: the earliest timer of either side.
            let next = self
                .server
                .conns
                .iter_mut()
                .chain(self.client.conns.iter_mut())
                .flatten()
                .filter_map(|c| c.poll_timeout())
                .min();
            let Some(at) = next else { return };
            // Idle timeouts and the like: the run is over, not the connection.
            if at > self.now + Duration::from_secs(1) {
                return;
            }
            self.now = self.now.max(at);
            let now = self.now;
            let t0 = Instant::now();
            as_side(1, || {
                for i in 0..self.server.conns.len() {
                    if let Some(c) = self.server.conns[i].as_mut() {
                        if c.poll_timeout().is_some_and(|t| t <= now) {
                            c.handle_timeout(now);
                            self.server.flush(i, now, &mut self.to_client);
                        }
                    }
                }
            });
            self.server_time += t0.elapsed();
            as_side(2, || {
                for i in 0..self.client.conns.len() {
                    if let Some(c) = self.client.conns[i].as_mut() {
                        if c.poll_timeout().is_some_and(|t| t <= now) {
                            c.handle_timeout(now);
                            self.client.flush(i, now, &mut self.to_server);
                        }
                    }
                }
            });
            if self.to_server.is_empty() && self.to_client.is_empty() && until(self) {
                return;
            }
        }
    }
}

/// Client: keep `m` requests in flight on connection `i` until `left` hits 0.
struct Load {
    m: usize,
    inflight: Vec<usize>,
    left: u64,
    done: u64,
}

fn client_step(net: &mut Net, i: usize, load: &mut Load) -> bool {
    let c = net.client.conns[i].as_mut().unwrap();
    while let Some(ev) = c.poll() {
        if let q::Event::Stream(q::StreamEvent::Readable { id }) = ev {
            let mut fin = false;
            if let Ok(mut chunks) = c.recv_stream(id).read(true) {
                loop {
                    match chunks.next(usize::MAX) {
                        Ok(Some(_)) => {}
                        Ok(None) => {
                            fin = true;
                            break;
                        }
                        Err(_) => break,
                    }
                }
                let _ = chunks.finalize();
            }
            if fin {
                load.inflight[i] -= 1;
                load.done += 1;
            }
        }
    }
    if !c.is_handshaking() {
        while load.inflight[i] < load.m && load.left > 0 {
            let Some(id) = c.streams().open(Dir::Bi) else {
                break;
            };
            let mut s = c.send_stream(id);
            let _ = s.write(&[0x01u8; REQ]);
            let _ = s.finish();
            load.inflight[i] += 1;
            load.left -= 1;
        }
    }
    true
}

fn connect(net: &mut Net, cc: &ClientConfig) -> usize {
    let now = net.now;
    let (ch, c) = as_side(2, || {
        net.client
            .ep
            .connect(now, cc.clone(), SERVER, "localhost")
            .unwrap()
    });
    as_side(2, || {
        net.client.put(ch, c);
        net.client.flush(ch.0, now, &mut net.to_server)
    });
    ch.0
}

fn idle(n: usize) {
    let (mut net, cc) = Net::new();
    // Warm: one connection made and used first, so one-off state is not counted.
    let mut load = Load {
        m: 1,
        inflight: vec![0; n + 1],
        left: 1,
        done: 0,
    };
    let i = connect(&mut net, &cc);
    net.settle(&mut |net, j| client_step(net, j, &mut load), |_| false);
    let _ = i;
    let before = LIVE[1].load(Relaxed);
    load.left = n as u64;
    for _ in 0..n {
        let i = connect(&mut net, &cc);
        let mut step = |net: &mut Net, j: usize| client_step(net, j, &mut load);
        // drive until this connection's one request is answered and acknowledged
        net.settle(&mut step, |_| false);
        let _ = i;
    }
    let after = LIVE[1].load(Relaxed);
    println!(
        "size_of::<Connection>() = {} bytes",
        std::mem::size_of::<q::Connection>()
    );
    println!(
        "idle: {} connections, {} requests answered, server live heap {:.0} bytes per connection",
        n,
        load.done - 1,
        (after - before) as f64 / n as f64
    );
    // Kept, so that a heap profiler sees the connections as live at exit.
    std::mem::forget(net);
}

fn throughput(conns: usize, m: usize, total: u64) {
    let (mut net, cc) = Net::new();
    let mut load = Load {
        m,
        inflight: vec![0; conns + 1],
        left: 0,
        done: 0,
    };
    let ids: Vec<usize> = (0..conns).map(|_| connect(&mut net, &cc)).collect();
    net.settle(&mut |net, j| client_step(net, j, &mut load), |_| false);
    // Warm-up then measure.
    for (phase, n) in [("warm", total / 10), ("measure", total)] {
        load.left = n;
        load.done = 0;
        net.server_time = Duration::ZERO;
        let start_served = net.served;
        for &i in &ids {
            as_side(2, || {
                client_step(&mut net, i, &mut load);
                let now = net.now;
                net.client.flush(i, now, &mut net.to_server)
            });
        }
        net.settle(&mut |net, j| client_step(net, j, &mut load), |_| false);
        let served = net.served - start_served;
        if phase == "measure" {
            println!(
                "c{} m{}: {} responses, server {:.3} µs per response",
                conns,
                m,
                served,
                net.server_time.as_secs_f64() * 1e6 / served as f64
            );
        }
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    match args.get(1).map(|s| s.as_str()) {
        Some("idle") => idle(args.get(2).map_or(1000, |s| s.parse().unwrap())),
        Some("load") => throughput(
            args[2].parse().unwrap(),
            args[3].parse().unwrap(),
            args[4].parse().unwrap(),
        ),
        _ => eprintln!("usage: stackcmp idle N | load CONNS M TOTAL"),
    }
}
