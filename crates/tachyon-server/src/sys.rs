//! Listening sockets: one `SO_REUSEPORT` socket per worker per address.
//!
//! Every call goes through rustix's safe wrappers except one socket option
//! rustix lacks (`tachyon-sys`, the workspace's only `unsafe`). Binding happens on the main thread before any worker
//! starts, so a port in use (by anything, another tachyon's reuseport group
//! included) is reported as one clear error, not a panic.

use std::net::SocketAddr;
use std::os::fd::{AsFd, OwnedFd};

use rustix::net::{self, AddressFamily, SocketFlags, SocketType};

/// What a listener speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scheme {
    Http,
    /// TLS first, then HTTP.
    Https,
}

/// An address to listen on and what it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Endpoint {
    pub addr: SocketAddr,
    pub scheme: Scheme,
}

/// An accepted connection and what its listener speaks.
pub struct Accepted {
    pub fd: OwnedFd,
    pub scheme: Scheme,
    /// The client's address, when something (the access log) needs it.
    pub peer: Option<std::net::SocketAddr>,
}

/// The bound listeners: `per_worker[w]` holds worker `w`'s socket for each
/// endpoint, in the order of `local`.
pub struct Listeners {
    pub per_worker: Vec<Vec<OwnedFd>>,
    /// The endpoints actually bound (port 0 resolved).
    pub local: Vec<Endpoint>,
    /// What was asked of a listener and refused without harm (a congestion
    /// control the kernel lacks or does not allow), one line each, for the
    /// start-up summary.
    pub refused: Vec<String>,
    /// UDP sockets for HTTP/3: `quic[w]` holds worker `w`'s (one for each
    /// address of `quic_local` when bound here; handed-over ones are dealt
    /// round the workers).
    pub quic: Vec<Vec<QuicSocket>>,
    /// The addresses HTTP/3 is served on: the HTTPS ones, when it is on.
    pub quic_local: Vec<SocketAddr>,
    /// Set when the UDP sockets came from a predecessor that may still
    /// serve its QUIC connections on them: their datagrams are its until
    /// it exits, which each of these sockets reports (its peer end
    /// closes). More than one when it was itself a successor still
    /// holding: then its predecessor's too.
    pub quic_holds: Vec<OwnedFd>,
    /// Worker `w` may run on CPU `w` alone, and connections follow the CPU
    /// their packets arrive on (see [`ListenOptions::by_cpu`]).
    pub by_cpu: bool,
}

/// A UDP socket for HTTP/3 and its place in the `SO_REUSEPORT` group of
/// its address: the first byte of the connection IDs its endpoint issues,
/// which the group's steering program reads
/// (`tachyon_sys::steer_quic_by_cid`).
pub struct QuicSocket {
    pub fd: OwnedFd,
    pub index: u8,
}

impl Listeners {
    /// None yet, for `threads` workers.
    fn for_workers(threads: usize) -> Listeners {
        Listeners {
            per_worker: (0..threads).map(|_| Vec::new()).collect(),
            local: Vec::new(),
            refused: Vec::new(),
            quic: (0..threads).map(|_| Vec::new()).collect(),
            quic_local: Vec::new(),
            quic_holds: Vec::new(),
            by_cpu: false,
        }
    }

    /// Binds a UDP socket per worker on the port of every HTTPS address
    /// that has none handed over (HTTP/3 beside HTTPS, as browsers expect
    /// from `Alt-Svc`), their datagrams steered by connection ID.
    fn bind_quic(&mut self) -> Result<(), BindError> {
        let https: Vec<SocketAddr> = self
            .local
            .iter()
            .filter(|e| e.scheme == Scheme::Https && !self.quic_local.contains(&e.addr))
            .map(|e| e.addr)
            .collect();
        let workers = self.quic.len();
        for addr in https {
            let failed = |e: rustix::io::Errno| BindError::Udp {
                addr,
                source: e.into(),
            };
            for (index, sockets) in self.quic.iter_mut().enumerate() {
                let fd = udp_one(addr).map_err(failed)?;
                if index == 0 {
                    // Best effort: without it the kernel's 4-tuple hash
                    // still keeps a client on one worker until it moves.
                    let _ = tachyon_sys::steer_quic_by_cid(fd.as_fd(), workers as u32);
                }
                let index = u8::try_from(index).map_err(|_| BindError::Udp {
                    addr,
                    source: std::io::Error::other("HTTP/3 serves at most 256 workers"),
                })?;
                sockets.push(QuicSocket { fd, index });
            }
            self.quic_local.push(addr);
        }
        Ok(())
    }

    /// Serves HTTP/3 on UDP sockets handed over, as they are: the k-th
    /// one of an address keeps k as its place in the group (a predecessor
    /// lists its sockets in that order; systemd hands one per address)
    /// and goes to worker k mod the workers. Nothing is bound for an
    /// address that has one, so a server that may not bind its port (no
    /// privilege) still serves HTTP/3 there.
    fn adopt_quic(
        &mut self,
        datagrams: Vec<OwnedFd>,
        holds: Vec<OwnedFd>,
    ) -> Result<(), BindError> {
        let inherited = |e: rustix::io::Errno| BindError::Inherited(e.into());
        let workers = self.quic.len();
        let mut counts: Vec<usize> = Vec::new();
        for fd in datagrams {
            let addr = local_addr(&fd).map_err(inherited)?;
            rustix::io::ioctl_fionbio(&fd, true).map_err(inherited)?;
            let k = match self.quic_local.iter().position(|a| *a == addr) {
                Some(at) => {
                    counts[at] += 1;
                    counts[at] - 1
                }
                None => {
                    self.quic_local.push(addr);
                    counts.push(1);
                    0
                }
            };
            let index = u8::try_from(k).map_err(|_| {
                BindError::Inherited(std::io::Error::other(format!(
                    "more than 256 UDP sockets on {addr}"
                )))
            })?;
            self.quic[k % workers].push(QuicSocket { fd, index });
        }
        if !self.quic_local.is_empty() {
            self.quic_holds = holds;
        }
        Ok(())
    }
}

/// One reuseport UDP socket bound to `addr`.
fn udp_one(addr: SocketAddr) -> rustix::io::Result<OwnedFd> {
    let family = if addr.is_ipv4() {
        AddressFamily::INET
    } else {
        AddressFamily::INET6
    };
    let fd = net::socket_with(
        family,
        SocketType::DGRAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )?;
    net::sockopt::set_socket_reuseport(&fd, true)?;
    if addr.is_ipv6() {
        net::sockopt::set_ipv6_v6only(&fd, true)?;
    }
    net::bind(&fd, &addr)?;
    Ok(fd)
}

/// How listening sockets are set up, beyond their addresses.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ListenOptions {
    /// The accept queue's length.
    pub backlog: i32,
    /// The TCP congestion control of listeners bound to a loopback address
    /// (accepted connections inherit it); `None` keeps the system's. See
    /// [`LOOPBACK_CONGESTION`].
    pub loopback_congestion: Option<String>,
    /// Bind UDP beside every HTTPS address, for HTTP/3.
    pub quic: bool,
    /// Place connections by CPU when the workers are one per CPU the
    /// process may run on, numbered from 0 (a whole machine or VM): worker
    /// `w` may run on CPU `w` alone, and an idle connection moves to the
    /// worker of the CPU its packets arrive on, so that a client and the
    /// worker that answers it share a core and its caches and wake each
    /// other without an interrupt to another core (see `balance`;
    /// bench/results/follow-2026-12-05).
    pub by_cpu: bool,
}

/// The congestion control a loopback listener's connections get unless
/// configured otherwise: one that does not pace. Every client of such a
/// listener is on this host (a reverse proxy in front, a health check, a
/// benchmark), where there is no queue for pacing to spare, but a pacing
/// algorithm (BBR, the default on some systems, this one included) still
/// arms a timer in `tcp_write_xmit` at every gap, and the unsent-bytes
/// bound makes us the one transmitting (bench/results/congestion-2026-11-26).
pub const LOOPBACK_CONGESTION: &str = "cubic";

/// Why the listeners could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    #[error("cannot listen on {addr}")]
    Bind {
        addr: SocketAddr,
        source: std::io::Error,
    },
    #[error("a listening socket handed over by systemd cannot be used: {0}")]
    Inherited(std::io::Error),
    #[error("cannot listen for HTTP/3 on UDP {addr} (--no-h3 turns HTTP/3 off; under socket activation, hand tachyon a ListenDatagram= socket on that address)")]
    Udp {
        addr: SocketAddr,
        source: std::io::Error,
    },
}

/// Binds `threads` reuseport sockets for each address. With port 0 the first
/// socket picks the port and the others join it.
pub fn bind_listeners(
    endpoints: &[Endpoint],
    threads: usize,
    options: &ListenOptions,
) -> Result<Listeners, BindError> {
    let mut listeners = Listeners::for_workers(threads);
    listeners.by_cpu = options.by_cpu && threads > 1 && cpus_are_workers(threads);
    for &Endpoint {
        addr: requested,
        scheme,
    } in endpoints
    {
        if requested.port() != 0 {
            probe(requested).map_err(|e| BindError::Bind {
                addr: requested,
                source: e.into(),
            })?;
        }
        let mut addr = requested;
        for sockets in listeners.per_worker.iter_mut() {
            let fd = listen_one(addr, options.backlog).map_err(|e| BindError::Bind {
                addr: requested,
                source: e.into(),
            })?;
            choose_congestion(&fd, requested, options, &mut listeners.refused);
            if addr.port() == 0 {
                addr = local_addr(&fd).map_err(|e| BindError::Bind {
                    addr: requested,
                    source: e.into(),
                })?;
            }
            sockets.push(fd);
        }
        listeners.local.push(Endpoint { addr, scheme });
    }
    if options.quic {
        listeners.bind_quic()?;
    }
    Ok(listeners)
}

/// Whether the process may run on CPUs 0 to `threads - 1` and no other,
/// so that worker `w` can have CPU `w`, whose number `SO_INCOMING_CPU`
/// names.
fn cpus_are_workers(threads: usize) -> bool {
    rustix::thread::sched_getaffinity(None).is_ok_and(|cpus| {
        usize::try_from(cpus.count()) == Ok(threads) && (0..threads).all(|cpu| cpus.is_set(cpu))
    })
}

/// `--check`: fails as binding would when something already listens on
/// one of `endpoints` (or it cannot be bound at all); binds nothing for
/// good. Port 0 (any free port) always passes.
pub fn check_addresses(endpoints: &[Endpoint]) -> Result<(), BindError> {
    for endpoint in endpoints.iter().filter(|e| e.addr.port() != 0) {
        probe(endpoint.addr).map_err(|e| BindError::Bind {
            addr: endpoint.addr,
            source: e.into(),
        })?;
    }
    Ok(())
}

/// Listeners handed over by whoever started us (systemd's socket
/// activation): each is already bound and listening. Every worker watches
/// the same socket (a duplicate descriptor), so they share one accept
/// queue rather than one each: the one layout a socket we did not create
/// allows without closing it, which would drop the connections queued on it.
/// UDP sockets handed over serve HTTP/3 as they are (`Listeners::adopt_quic`);
/// an HTTPS address without one gets sockets bound here.
pub fn adopt_listeners(
    handed: Handed,
    threads: usize,
    options: &ListenOptions,
) -> Result<Listeners, BindError> {
    let Handed {
        listeners: sockets,
        datagrams,
        holds,
    } = handed;
    let mut listeners = Listeners::for_workers(threads);
    // Following the client's CPU needs no socket of our own.
    listeners.by_cpu = options.by_cpu && threads > 1 && cpus_are_workers(threads);
    for (fd, scheme) in sockets {
        let inherited = |e: rustix::io::Errno| BindError::Inherited(e.into());
        let addr = local_addr(&fd).map_err(inherited)?;
        rustix::io::ioctl_fionbio(&fd, true).map_err(inherited)?;
        // Best effort, as for our own listeners (see `listen_one`).
        let _ = tachyon_sys::set_tcp_notsent_lowat(fd.as_fd(), NOTSENT_LOWAT);
        defer_accept(&fd);
        no_delay(&fd);
        choose_congestion(&fd, addr, options, &mut listeners.refused);
        for sockets in listeners.per_worker.iter_mut() {
            sockets.push(fd.try_clone().map_err(BindError::Inherited)?);
        }
        listeners.local.push(Endpoint { addr, scheme });
    }
    if options.quic {
        listeners.adopt_quic(datagrams, holds)?;
        listeners.bind_quic()?;
    } else if !datagrams.is_empty() {
        listeners.refused.push(format!(
            "{} UDP socket(s) handed over, not used: HTTP/3 is off (no certificate, or --no-h3)",
            datagrams.len()
        ));
    }
    Ok(listeners)
}

/// Sockets handed over by systemd or by the process this one replaces.
#[derive(Default)]
pub struct Handed {
    /// Listening TCP sockets and what they speak.
    pub listeners: Vec<(OwnedFd, Scheme)>,
    /// UDP sockets for HTTP/3, in their group's order per address.
    pub datagrams: Vec<OwnedFd>,
    /// Predecessors' holds on `datagrams` (see [`Listeners::quic_holds`]).
    pub holds: Vec<OwnedFd>,
}

/// Gives a listener bound to a loopback address the configured congestion
/// control (see [`LOOPBACK_CONGESTION`]); what the kernel refuses (an
/// algorithm it lacks or does not allow this user) leaves the system's in
/// place and adds a line for the start-up summary to `refused`, once per
/// address (each worker's socket, or each one a predecessor handed over,
/// would say it again).
fn choose_congestion(
    fd: &OwnedFd,
    addr: SocketAddr,
    options: &ListenOptions,
    refused: &mut Vec<String>,
) {
    let Some(name) = options.loopback_congestion.as_deref() else {
        return;
    };
    if !addr.ip().is_loopback() {
        return;
    }
    if let Err(e) = net::sockopt::set_tcp_congestion(fd, name) {
        let line = format!(
            "{addr}: congestion control {name} refused ({}): the system's is kept",
            std::io::Error::from(e)
        );
        if !refused.contains(&line) {
            refused.push(line);
        }
    }
}

/// Fails with EADDRINUSE when something already listens on `addr`, even a
/// reuseport group: binding without SO_REUSEPORT is refused by any listener,
/// where our reuseport sockets would silently join another tachyon's group
/// and take half its traffic.
fn probe(addr: SocketAddr) -> rustix::io::Result<()> {
    let fd = socket(addr)?;
    net::sockopt::set_socket_reuseaddr(&fd, true)?;
    if addr.is_ipv6() {
        net::sockopt::set_ipv6_v6only(&fd, true)?;
    }
    net::bind(&fd, &addr)
}

fn socket(addr: SocketAddr) -> rustix::io::Result<OwnedFd> {
    let family = if addr.is_ipv4() {
        AddressFamily::INET
    } else {
        AddressFamily::INET6
    };
    net::socket_with(
        family,
        SocketType::STREAM,
        SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
        None,
    )
}

/// Most unsent bytes a connection's socket may hold.
pub const NOTSENT_LOWAT: u32 = 128 * 1024;

/// The same bound for an HTTP/1.1 connection sending a large body, while
/// the worker's [`RAISED_BUDGET`] has room for it. Each wake-up of a writer
/// moves about half the bound, and what the socket holds unsent is then
/// transmitted as the client's acknowledgements arrive, in the client's
/// context, instead of in the server's. 4 MiB is the send buffer's largest
/// autotuned size (`tcp_wmem`) here, what nginx's sendfile fills
/// (bench/results/deep-bound-2026-11-26).
pub const BOOSTED_LOWAT: u32 = 4 * 1024 * 1024;

/// The raised bound for an HTTP/2 connection (see `conn::BOOST_H2_CONNS`
/// for when it gets one): 4 MiB was no better than 1 MiB over h2c, and
/// each connection holds it until it closes
/// (bench/results/deep-bound-2026-11-26).
pub const BOOSTED_LOWAT_H2: u32 = 1024 * 1024;

/// The sum of the raised bounds a worker's connections may hold at once,
/// each counted whole: what a flood of slow readers of large files can pin
/// in kernel memory beyond the common bound, 16 HTTP/1.1 connections (or
/// 64 HTTP/2 ones) a worker, 64 MiB, well inside `tcp_mem` (2.2 GiB here),
/// where unbounded send buffers let 1,500 slow readers exhaust it.
pub const RAISED_BUDGET: u64 = 64 * 1024 * 1024;

/// Sets a connection's unsent-bytes bound (best effort: a socket that
/// refuses keeps the bound it has, which is only slower or tighter).
pub fn set_unsent_bound(fd: &OwnedFd, bytes: u32) -> bool {
    tachyon_sys::set_tcp_notsent_lowat(fd.as_fd(), bytes).is_ok()
}

fn listen_one(addr: SocketAddr, backlog: i32) -> rustix::io::Result<OwnedFd> {
    let fd = socket(addr)?;
    net::sockopt::set_socket_reuseaddr(&fd, true)?;
    // Each worker gets its own accept queue; the kernel spreads connections by
    // hash, so no accept lock or thundering herd (the layout of lwan and of
    // xitca-web's fastest configuration).
    net::sockopt::set_socket_reuseport(&fd, true)?;
    if addr.is_ipv6() {
        net::sockopt::set_ipv6_v6only(&fd, true)?;
    }
    // Accepted sockets inherit this: a client that reads slowly or not at
    // all pins at most this much unsent data in kernel memory, instead of a
    // send buffer autotuned to 4 MiB, so slow readers cannot drive the
    // kernel's TCP memory to `tcp_mem` (bench/results/abuse-2026-11-24).
    // Fast clients are unaffected: only unsent bytes count, not those in
    // flight (the kernel patch's own advice: "128 KB or less is OK").
    tachyon_sys::set_tcp_notsent_lowat(fd.as_fd(), NOTSENT_LOWAT)
        .map_err(|e| rustix::io::Errno::from_io_error(&e).unwrap_or(rustix::io::Errno::INVAL))?;
    defer_accept(&fd);
    no_delay(&fd);
    net::bind(&fd, &addr)?;
    net::listen(&fd, backlog)?;
    Ok(fd)
}

/// Accept a connection only once its client has sent something (HTTP and
/// TLS clients speak first), or after a second without: the worker then
/// reads the request at once instead of sleeping until it arrives (one
/// request per connection, wrk -c32 `Connection: close`: 1.16 context
/// switches per request without it). A client that connects and sends
/// nothing is held by the kernel, not by a worker, for that second; the
/// header timeout runs from the accept. nginx's `deferred` and h2o set the
/// same second. Best effort: without it, reads only wait for their event.
fn defer_accept(fd: &OwnedFd) {
    let _ = tachyon_sys::set_tcp_defer_accept(fd.as_fd(), 1);
}

fn local_addr(fd: &OwnedFd) -> rustix::io::Result<SocketAddr> {
    let addr = net::getsockname(fd)?;
    SocketAddr::try_from(addr).map_err(|_| rustix::io::Errno::AFNOSUPPORT)
}

/// Turns Nagle's algorithm off for the connections a listener accepts
/// (Linux copies the option to them, as it does the unsent-bytes bound):
/// responses leave in one write, and Nagle would only delay the tail of a
/// partial write behind a delayed ACK. Set once on the listener rather
/// than by a call per accepted connection. Failure is harmless.
fn no_delay(fd: &OwnedFd) {
    let _ = net::sockopt::set_tcp_nodelay(fd, true);
}

/// The connection cap that fits the open-file limit: every connection is a
/// descriptor, and the process needs others besides (listeners, epoll and
/// event descriptors, disk-served files, which a reload opens a second time
/// while the old generation still holds its own, and the files a load reads
/// in parallel). Asking for more connections than that would make accept
/// fail with EMFILE instead of the cap closing them cleanly.
pub fn connection_cap(requested: usize, fd_limit: u64, threads: usize) -> usize {
    let open_now = std::fs::read_dir("/proc/self/fd").map_or(64, |dir| dir.count()) as u64;
    let reserve = 2 * open_now + 8 * threads as u64 + 64;
    let fits = fd_limit.saturating_sub(reserve).max(1);
    requested.min(usize::try_from(fits).unwrap_or(usize::MAX))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A plain HTTP listener on a loopback port chosen by the kernel.
    fn loopback_listener() -> Listeners {
        let endpoint = Endpoint {
            addr: "127.0.0.1:0".parse().unwrap(),
            scheme: Scheme::Http,
        };
        let options = ListenOptions {
            backlog: 16,
            loopback_congestion: None,
            quic: false,
            by_cpu: false,
        };
        bind_listeners(&[endpoint], 1, &options).unwrap()
    }

    #[test]
    fn accepted_connections_inherit_the_listeners_options() {
        let listeners = loopback_listener();
        let client = std::net::TcpStream::connect(listeners.local[0].addr).unwrap();
        // Deferred accept: the connection is handed over once data arrives.
        std::io::Write::write_all(&mut &client, b"GET / HTTP/1.1\r\n\r\n").unwrap();
        let listener = &listeners.per_worker[0][0];
        rustix::io::ioctl_fionbio(listener, false).unwrap();
        let accepted = net::accept(listener).unwrap();
        assert!(net::sockopt::tcp_nodelay(&accepted).unwrap(), "Nagle is on");
    }

    #[test]
    fn placed_by_cpu_the_kernel_names_the_cpu_a_connection_s_packets_arrive_on() {
        if !cpus_are_workers(2) {
            eprintln!("skipped: this process may not run on exactly CPUs 0 and 1");
            return;
        }
        let listeners = loopback_listener();
        let listener = &listeners.per_worker[0][0];
        rustix::io::ioctl_fionbio(listener, false).unwrap();
        let everywhere = rustix::thread::sched_getaffinity(None).unwrap();
        let (mut client, mut accepted) = (None, None);
        for cpu in [1, 0, 1] {
            // On loopback the CPU that sends a segment receives it too.
            let mut one = rustix::thread::CpuSet::new();
            one.set(cpu);
            rustix::thread::sched_setaffinity(None, &one).unwrap();
            let stream = client.get_or_insert_with(|| {
                std::net::TcpStream::connect(listeners.local[0].addr).unwrap()
            });
            std::io::Write::write_all(&mut &*stream, b"GET / HTTP/1.1\r\n\r\n").unwrap();
            rustix::thread::sched_setaffinity(None, &everywhere).unwrap();
            let server_side = accepted.get_or_insert_with(|| net::accept(listener).unwrap());
            let mut request = [0u8; 64];
            assert!(rustix::io::read(&*server_side, &mut request).unwrap() > 0);
            assert_eq!(
                net::sockopt::socket_incoming_cpu(&*server_side).unwrap(),
                cpu as u32,
                "the request sent from CPU {cpu}"
            );
        }
    }
}
