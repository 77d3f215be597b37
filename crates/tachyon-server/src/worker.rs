//! The event loop: one thread per core, each with its own epoll instance,
//! listeners, connections, buffers and `Date` cache.
//!
//! Owns accepting (and pausing it when descriptors run out), dispatching
//! readiness to connections, resuming connections whose turn budget ran
//! out, the once-a-second timeout sweep and the graceful drain. Knows
//! nothing of HTTP beyond handing bytes to `Conn`. Invariants: nothing here
//! blocks; a connection runs only inside a turn (see `conn::Turn`); the
//! state shared with other threads is the [`Live`] generation (read once per loop
//! turn), the [`Shutdown`] flag and the [`Balance`] counts and inboxes.

use std::cell::RefCell;
use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustix::event::{epoll, eventfd, EventfdFlags, PollFd, PollFlags, Timespec};
use rustix::io::Errno;
use rustix::net::SocketFlags;
use slab::Slab;
use tachyon_http::date::DateCache;

use crate::access::LogSink;
use crate::balance::{Balance, Handed};
use crate::clock;
use crate::conn::{Conn, Ctx, Next};
use crate::guard::{self, Panicked};
use crate::limits::Limits;
use crate::live::{Generation, Live};
use crate::outbox::{Carriers, Outbox};
use crate::quic::{self, Quic};
use crate::reply::Scratch;
use crate::serving::Https;
use crate::stats::{Board, Closed, Observer};
use crate::sys::{Accepted, Listeners, QuicSocket, Scheme};
use crate::wire::Session;

/// Connections accepted per listener wake-up before serving others (fairness).
const ACCEPT_BATCH: usize = 256;
/// Reads land here; an idle connection has no buffer of its own.
const READ_BUF: usize = 32 * 1024;

/// A stop request shared by the signal handler thread and the workers.
pub struct Shutdown {
    stopping: AtomicBool,
    /// The listening sockets now belong to a newer process (a binary
    /// upgrade): this one drains without a word to the admin listener's
    /// health checks, which the new process answers.
    handed_over: AtomicBool,
    /// Edge-triggered in every worker's epoll: one write wakes them all.
    wake: OwnedFd,
}

impl Shutdown {
    pub fn new() -> io::Result<Arc<Shutdown>> {
        let wake = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(Arc::new(Shutdown {
            stopping: AtomicBool::new(false),
            handed_over: AtomicBool::new(false),
            wake,
        }))
    }

    /// Stop accepting, finish what is in flight, exit within the drain timeout.
    pub fn trigger(&self) {
        self.stopping.store(true, Ordering::SeqCst);
        let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
    }

    pub fn is_stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Drains because another process now accepts on the same sockets.
    pub fn hand_over(&self) {
        self.handed_over.store(true, Ordering::SeqCst);
        self.trigger();
    }

    pub fn is_handed_over(&self) -> bool {
        self.handed_over.load(Ordering::SeqCst)
    }
}

/// What the workers report, and where: counters for the admin listener's
/// scrape, lines for the access log. Either may be off.
#[derive(Clone, Default)]
pub struct Observe {
    pub board: Option<Arc<Board>>,
    pub log: Option<LogSink>,
}

/// Runs one worker per listener set until shutdown has drained them all.
pub fn run(
    listeners: Listeners,
    live: Arc<Live>,
    limits: Limits,
    https: Https,
    shutdown: Arc<Shutdown>,
    observe: Observe,
) -> io::Result<()> {
    let schemes: Vec<Scheme> = listeners.local.iter().map(|e| e.scheme).collect();
    let workers = listeners.per_worker.len().max(1);
    let per_worker_conns = (limits.max_connections / workers).max(1);
    let by_cpu = listeners.by_cpu;
    let balance = Arc::new(Balance::new(workers, by_cpu)?);
    let shared = limits
        .h3
        .clone()
        .map(|h3| quic::Shared::new(h3, limits.idle_timeout));
    let mut quic_sockets = listeners.quic.into_iter();
    let holds = listeners.quic_holds;
    let handles: Vec<_> = listeners
        .per_worker
        .into_iter()
        .enumerate()
        .map(|(id, sockets)| {
            let udp = quic_sockets.next().unwrap_or_default();
            let holds = holds
                .iter()
                .map(OwnedFd::try_clone)
                .collect::<io::Result<Vec<_>>>()?;
            let shared = shared.clone();
            let (live, limits, shutdown, balance) = (
                Arc::clone(&live),
                limits.clone(),
                Arc::clone(&shutdown),
                Arc::clone(&balance),
            );
            let (https, schemes) = (https.clone(), schemes.clone());
            let observer = Observer::new(
                observe.board.clone(),
                id,
                observe.log.as_ref().map(LogSink::for_worker),
            );
            std::thread::Builder::new()
                .name(format!("tachyon-worker-{id}"))
                .spawn(move || {
                    let peers = Peers {
                        id,
                        balance: &balance,
                    };
                    let listening = sockets.into_iter().zip(schemes).collect();
                    let incarnation = Incarnation {
                        listening: RefCell::new(listening),
                        udp: RefCell::new(udp),
                        holds,
                        shared,
                        live: &live,
                        limits,
                        max_conns: per_worker_conns,
                        shutdown: &shutdown,
                        peers,
                        https: &https,
                    };
                    incarnation.run_restarting(observer)
                })
        })
        .collect::<io::Result<_>>()?;
    let mut result = Ok(());
    for handle in handles {
        match handle.join() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => result = Err(e),
            Err(_) => result = Err(io::Error::other("a worker thread panicked")),
        }
    }
    result
}

/// Where a worker thread runs, placed by CPU (see [`crate::balance`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Affinity {
    /// On any of the first `workers` CPUs, the process's own set when
    /// placing by CPU.
    Any,
    /// On its own CPU (worker n on CPU n), where the connections that
    /// follow their CPU are moved.
    Own,
    /// On any but this one, where the client thread of every packed
    /// connection runs.
    Apart(usize),
}

impl Affinity {
    /// Keeps the calling worker `me` where `self` says. Refused (a seccomp
    /// or cgroup rule), the worker runs where it was: placement is then a
    /// preference, not a rule.
    fn apply(self, me: usize, workers: usize) {
        let mut set = rustix::thread::CpuSet::new();
        match self {
            Affinity::Own => set.set(me),
            Affinity::Any => (0..workers).for_each(|cpu| set.set(cpu)),
            Affinity::Apart(cpu) => (0..workers).filter(|&c| c != cpu).for_each(|c| set.set(c)),
        }
        let _ = rustix::thread::sched_setaffinity(None, &set);
    }
}

/// What a worker thread needs to start its loop, again if it died.
struct Incarnation<'a> {
    /// This worker's listeners, kept here so that a loop that dies does
    /// not close them (each incarnation works on duplicates): the
    /// connections waiting in their queues stay there for the next one.
    /// A drain empties it (see [`Worker::begin_drain`]).
    listening: RefCell<Vec<(OwnedFd, Scheme)>>,
    /// This worker's UDP sockets for HTTP/3, kept the same way.
    udp: RefCell<Vec<QuicSocket>>,
    /// Predecessors' holds on those sockets (`Listeners::quic_holds`).
    holds: Vec<OwnedFd>,
    /// What every worker's QUIC endpoint shares; `None` without HTTP/3.
    shared: Option<quic::Shared>,
    live: &'a Live,
    limits: Limits,
    max_conns: usize,
    shutdown: &'a Shutdown,
    peers: Peers<'a>,
    https: &'a Https,
}

impl Incarnation<'_> {
    /// Runs the loop; when a panic escapes it (one outside any connection's
    /// turn, which `guard` contains), its connections are lost with it and
    /// the loop starts again on the same listeners. Returns when the loop
    /// does (drained), or with an error it returned.
    fn run_restarting(self, mut observer: Observer) -> io::Result<()> {
        loop {
            let listening = self
                .listening
                .borrow()
                .iter()
                .map(|(fd, scheme)| Ok((fd.try_clone()?, *scheme)))
                .collect::<io::Result<Vec<_>>>()?;
            let quic = match &self.shared {
                Some(shared) => self
                    .udp
                    .borrow()
                    .iter()
                    .map(|udp| Quic::new(udp.fd.try_clone()?, udp.index, shared.clone()))
                    .collect::<io::Result<Vec<_>>>()?,
                None => Vec::new(),
            };
            let holds = self
                .holds
                .iter()
                .map(OwnedFd::try_clone)
                .collect::<io::Result<Vec<_>>>()?;
            let peers = Peers {
                id: self.peers.id,
                balance: self.peers.balance,
            };
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                Worker::new(
                    Sockets {
                        tcp: listening,
                        quic,
                        holds,
                    },
                    &self.listening,
                    self.live,
                    self.limits.clone(),
                    self.max_conns,
                    self.shutdown,
                    peers,
                )?
                .run(self.https, &mut observer)
            }));
            match outcome {
                Ok(result) => return result,
                Err(payload) => {
                    eprintln!(
                        "tachyon: worker {} died ({}); its connections are closed, starting it again",
                        self.peers.id,
                        guard::message(payload.as_ref())
                    );
                    observer.restarted();
                    if self.shutdown.is_stopping() {
                        return Ok(());
                    }
                }
            }
        }
    }
}

/// This worker's place among the others.
struct Peers<'a> {
    id: usize,
    balance: &'a Balance,
}

/// What an epoll event is about, decoded from its 64-bit token.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Token {
    /// A connection, by slab key.
    Conn(usize),
    /// This worker's listener for the address at this index.
    Listener(usize),
    /// The shutdown eventfd: start draining.
    Wake,
    /// Another worker handed this one connections (see [`crate::balance`]).
    Handoff,
    /// This worker's QUIC endpoint at this index.
    Quic(usize),
    /// The predecessor that held our UDP sockets exited.
    Released,
}

/// Tokens at or above this are listeners, the two eventfds and the holds;
/// below are slab keys.
const LISTENER_BASE: u64 = u64::MAX - 1024;
/// QUIC endpoints sit just below the listeners.
const QUIC_BASE: u64 = LISTENER_BASE - 1024;
const WAKE: u64 = u64::MAX;
const HANDOFF: u64 = u64::MAX - 1;
const RELEASED: u64 = u64::MAX - 2;

impl Token {
    fn encode(self) -> epoll::EventData {
        epoll::EventData::new_u64(match self {
            Token::Conn(key) => key as u64,
            Token::Listener(i) => LISTENER_BASE + i as u64,
            Token::Wake => WAKE,
            Token::Handoff => HANDOFF,
            Token::Released => RELEASED,
            Token::Quic(i) => QUIC_BASE + i as u64,
        })
    }

    fn decode(data: epoll::EventData) -> Token {
        match data.u64() {
            WAKE => Token::Wake,
            HANDOFF => Token::Handoff,
            RELEASED => Token::Released,
            t if t >= LISTENER_BASE => Token::Listener((t - LISTENER_BASE) as usize),
            t if t >= QUIC_BASE => Token::Quic((t - QUIC_BASE) as usize),
            t => Token::Conn(t as usize),
        }
    }
}

/// epoll_wait's timeout: the sweep runs once a second, so waking at least
/// that often (plus a margin for the clock's rounding) is enough; during a
/// drain, ten times a second so idle connections close promptly.
const TICK: Timespec = Timespec {
    tv_sec: 1,
    tv_nsec: 100_000_000,
};
const DRAIN_TICK: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 100_000_000,
};
const NO_WAIT: Timespec = Timespec {
    tv_sec: 0,
    tv_nsec: 0,
};

/// Accepting stopped because the process ran out of descriptors (or
/// memory): listeners are level-triggered, so a full queue would otherwise
/// wake the loop at once, forever.
struct AcceptPause {
    /// Resume at this worker-clock second at the latest.
    until: u32,
    /// Or as soon as the worker holds fewer connections than this.
    below: usize,
}

struct Worker<'a> {
    epoll: OwnedFd,
    listeners: Vec<(OwnedFd, Scheme)>,
    /// One QUIC endpoint per UDP socket of this worker, for HTTP/3.
    quic: Vec<Quic>,
    /// While predecessors still hold the endpoints' sockets: they are
    /// not polled until all have exited (see [`Worker::release_quic`]).
    holds: Vec<OwnedFd>,
    /// The thread's own copies of the listeners (`Incarnation`), closed too
    /// when the drain begins, so that the kernel stops queueing clients.
    originals: &'a RefCell<Vec<(OwnedFd, Scheme)>>,
    conns: Slab<Conn>,
    live: &'a Live,
    limits: Limits,
    max_conns: usize,
    shutdown: &'a Shutdown,
    peers: Peers<'a>,
    /// Connections taken from the inbox, kept to reuse the allocation.
    handed: Vec<Handed>,
    /// The balance window under way (see [`Worker::end_window`]).
    window: Window,
    /// Connections whose turn budget ran out with output left.
    resume: Vec<usize>,
    /// A descriptor held in reserve: when accept fails for lack of
    /// descriptors, it is closed to accept and close one waiting client
    /// (which then sees a clean close, not a hang), and taken again.
    reserve: Option<OwnedFd>,
    paused: Option<AcceptPause>,
    /// Bytes this worker's connections hold in blocked output.
    queued_output: usize,
    /// Bytes of `sys::RAISED_BUDGET` held by this worker's connections.
    boosted: u64,
    /// Draining since a shutdown was asked; exit once the clock is past
    /// this second.
    drain_deadline: Option<u32>,
    /// While draining, a connection with nothing in flight is closed only
    /// from this second on: until then its next request is answered (with
    /// `Connection: close`). A busy keep-alive client (wrk, a proxy's pool)
    /// is between two requests at any instant; closing it there races the
    /// request already on the wire, which the client sees as an error.
    quiet_close_from: u32,
    /// The connection count last published to the balancer.
    published: usize,
    /// Where this worker runs: on its own CPU while its connections follow
    /// theirs.
    affinity: Affinity,
    /// Pinned: the next readable connection's request is sampled and may
    /// follow at once (`follow_request`); due at most once a millisecond,
    /// so its syscall is no part of a busy worker's cost.
    sample_due: bool,
    next_sample_ms: u64,
}

/// How often a worker measures how busy it is and acts on the balance
/// (see [`crate::balance`]): long enough that the thread-CPU read is free,
/// short enough that connections gather within a fraction of a second.
const WINDOW_MS: u64 = 100;

/// How many of its connections worker 0 asks, once a window while packed,
/// where their packets arrive.
const APART_SAMPLE: usize = 16;

/// Where the current balance window started: the clock's milliseconds and
/// the thread's CPU time then.
#[derive(Clone, Copy, Default)]
struct Window {
    start_ms: u64,
    cpu_ms: u64,
}

/// An idle connection as placement by CPU sees it: workers named by the
/// CPU they run on (worker n on CPU n; the holder's own when unknown).
/// Two CPUs because neither alone is right. The last segment is fresh but
/// may be the client's ACK of our answer, sent from our CPU (see
/// `Conn::cpu`): the connection then stays, which is harmless, but counted
/// it would make one client thread's connections look spread. A sample is
/// a request's but up to a window old: following it would chase where the
/// client was.
struct IdleConn {
    key: usize,
    /// The worker of the CPU its last segment arrived on: where it follows.
    /// The holder's own until `Worker::read_last` asks the socket.
    last: usize,
    /// The worker of the CPU its last sampled request arrived on: what
    /// decides whether the workers are pinned.
    sampled: usize,
}

/// The worker that runs on `cpu`, or `me` for a CPU no worker runs on.
fn worker_of(cpu: usize, me: usize, workers: usize) -> usize {
    if cpu < workers {
        cpu
    } else {
        me
    }
}

/// Polls each QUIC endpoint's socket (edge-triggered: a read empties it).
fn watch_quic(epoll: &OwnedFd, quic: &[Quic]) -> io::Result<()> {
    for (i, endpoint) in quic.iter().enumerate() {
        epoll::add(
            epoll,
            endpoint.fd(),
            Token::Quic(i).encode(),
            epoll::EventFlags::IN | epoll::EventFlags::ET,
        )?;
    }
    Ok(())
}

/// The events a connection is registered for (edge-triggered).
fn conn_events() -> epoll::EventFlags {
    epoll::EventFlags::IN
        | epoll::EventFlags::OUT
        | epoll::EventFlags::RDHUP
        | epoll::EventFlags::ET
}

/// The buffers every connection borrows during its turn (see `conn::Turn`),
/// allocated once per worker.
struct Buffers {
    read: Vec<u8>,
    out: Outbox,
    scratch: Scratch,
    h2_spares: crate::h2::Spares,
    carriers: Carriers,
    combined: Vec<u8>,
}

impl Buffers {
    fn new() -> Buffers {
        Buffers {
            read: vec![0u8; READ_BUF],
            out: Outbox::default(),
            scratch: Scratch::default(),
            h2_spares: Default::default(),
            carriers: Carriers::default(),
            combined: Vec::new(),
        }
    }
}

/// What one incarnation of a worker listens on: its own copies of the TCP
/// listeners, a QUIC endpoint on each UDP socket, and the predecessor's
/// holds on them, if any.
struct Sockets {
    tcp: Vec<(OwnedFd, Scheme)>,
    quic: Vec<Quic>,
    holds: Vec<OwnedFd>,
}

/// The generation this worker answers from, refreshed between batches of
/// events, never within one.
struct Serving {
    number: u64,
    generation: Arc<Generation>,
}

impl Serving {
    fn refresh(&mut self, live: &Live) {
        let number = live.number();
        if number != self.number {
            self.number = number;
            self.generation = live.current();
        }
    }
}

impl<'a> Worker<'a> {
    fn new(
        Sockets {
            tcp: listeners,
            quic,
            holds,
        }: Sockets,
        originals: &'a RefCell<Vec<(OwnedFd, Scheme)>>,
        live: &'a Live,
        limits: Limits,
        max_conns: usize,
        shutdown: &'a Shutdown,
        peers: Peers<'a>,
    ) -> io::Result<Self> {
        assert!(listeners.len() < (LISTENER_BASE..RELEASED).count());
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        for (i, (listener, _)) in listeners.iter().enumerate() {
            epoll::add(
                &epoll,
                listener,
                Token::Listener(i).encode(),
                epoll::EventFlags::IN,
            )?;
        }
        let holds = if quic.is_empty() { Vec::new() } else { holds };
        for hold in &holds {
            // Level-triggered: a hang-up stays reported until handled.
            epoll::add(
                &epoll,
                hold,
                Token::Released.encode(),
                epoll::EventFlags::RDHUP,
            )?;
        }
        if holds.is_empty() {
            watch_quic(&epoll, &quic)?;
        }
        epoll::add(
            &epoll,
            &shutdown.wake,
            Token::Wake.encode(),
            epoll::EventFlags::IN | epoll::EventFlags::ET,
        )?;
        epoll::add(
            &epoll,
            peers.balance.wake_fd(peers.id),
            Token::Handoff.encode(),
            epoll::EventFlags::IN | epoll::EventFlags::ET,
        )?;
        Ok(Worker {
            epoll,
            listeners,
            quic,
            holds,
            originals,
            conns: Slab::new(),
            live,
            limits,
            max_conns,
            shutdown,
            peers,
            handed: Vec::new(),
            window: Window::default(),
            resume: Vec::new(),
            reserve: take_reserve(),
            paused: None,
            queued_output: 0,
            boosted: 0,
            drain_deadline: None,
            quiet_close_from: u32::MAX,
            published: 0,
            affinity: Affinity::Any,
            sample_due: false,
            next_sample_ms: 0,
        })
    }

    /// The loop: wait, dispatch each event, resume connections whose turn
    /// budget ran out, sweep timeouts once a second, resume accepting,
    /// publish the load, and exit once drained.
    fn run(mut self, https: &Https, observer: &mut Observer) -> io::Result<()> {
        let clock = clock::Monotonic::start();
        let mut events: Vec<epoll::Event> = Vec::with_capacity(1024);
        let mut buffers = Buffers::new();
        let mut date = DateCache::new();
        let mut serving = Serving {
            number: self.live.number(),
            generation: self.live.current(),
        };
        let mut next_sweep = 1u32;
        let mut resuming: Vec<usize> = Vec::new();
        let limits = self.limits.clone();
        if self.shutdown.is_stopping() {
            return Ok(());
        }
        let mut tls_of = u64::MAX;
        loop {
            std::mem::swap(&mut resuming, &mut self.resume);
            self.wait(&mut events, resuming.is_empty())?;
            let (now, millis) = clock.read();
            self.refresh(millis, &mut date, &mut serving, &mut tls_of);
            let mut queued_output = self.queued_output;
            let mut boosted = self.boosted;
            let mut cx = Ctx {
                read_buf: &mut buffers.read,
                out: &mut buffers.out,
                carriers: &mut buffers.carriers,
                scratch: &mut buffers.scratch,
                h2_spares: &mut buffers.h2_spares,
                combined: &mut buffers.combined,
                date: &date,
                generation: &serving.generation,
                limits: &limits,
                now,
                draining: self.drain_deadline.is_some(),
                close_quiet: self.drain_deadline.is_some() && now >= self.quiet_close_from,
                queued_output: &mut queued_output,
                boosted: &mut boosted,
                conns: self.conns.len(),
                https,
                observer,
            };
            for event in &events {
                self.dispatch(event, &mut cx)?;
            }
            self.resume_turns(&mut resuming, &mut cx);
            self.keep_time(now, millis, &mut next_sweep, &mut cx);
            self.queued_output = queued_output;
            self.boosted = boosted;
            guard::worker_panic_asked();
            self.resume_accepting(now)?;
            self.publish_load();
            self.peers
                .balance
                .publish_served(self.peers.id, observer.counters.total_requests());
            observer.end_turn(self.conns.len());
            if self.drained(now) {
                observer.tick();
                return Ok(());
            }
        }
    }

    /// What a turn starts from: whether a request's CPU is due to be
    /// sampled, today's date, the generation being served, and (after a
    /// reload) the certificates new QUIC connections take.
    fn refresh(
        &mut self,
        millis: u64,
        date: &mut DateCache,
        serving: &mut Serving,
        tls_of: &mut u64,
    ) {
        if self.affinity == Affinity::Own && !self.sample_due && millis >= self.next_sample_ms {
            self.sample_due = true;
            self.next_sample_ms = millis + 1;
        }
        date.refresh_unix(clock::unix_seconds());
        serving.refresh(self.live);
        if *tls_of != serving.number {
            *tls_of = serving.number;
            for endpoint in &mut self.quic {
                endpoint.set_tls(serving.generation.tls());
            }
        }
    }

    /// Gives another turn to the connections whose budget ran out last
    /// turn (and are still waiting for it).
    fn resume_turns(&mut self, resuming: &mut Vec<usize>, cx: &mut Ctx<'_>) {
        for key in resuming.drain(..) {
            if self.conns.get(key).is_some_and(|c| c.resuming) {
                self.conns[key].resuming = false;
                self.give_turn(key, false, false, cx);
            }
        }
    }

    /// The work that runs on time rather than on events: QUIC's timers and
    /// drain, the once-a-second sweep of timeouts, the end of a placement
    /// window.
    fn keep_time(&mut self, now: u32, millis: u64, next_sweep: &mut u32, cx: &mut Ctx<'_>) {
        let out_of_time = self.drain_out_of_time(now);
        for endpoint in &mut self.quic {
            endpoint.expire(&mut cx.serving());
            endpoint.drain_tick(&mut cx.serving());
            if out_of_time {
                // A QUIC connection cannot be handed on: it is told.
                endpoint.close_all(&mut cx.serving());
            }
        }
        if now >= *next_sweep || cx.draining {
            *next_sweep = now + 1;
            self.sweep(cx);
            cx.observer.tick();
        }
        if millis >= self.window.start_ms + WINDOW_MS {
            self.end_window(millis, cx);
        }
    }

    /// Waits for events: not at all when connections are waiting to
    /// resume, briefly while draining, else up to the sweep's tick.
    fn wait(&self, events: &mut Vec<epoll::Event>, nothing_to_resume: bool) -> io::Result<()> {
        let tick = match (nothing_to_resume, self.drain_deadline) {
            (false, _) => NO_WAIT,
            (true, Some(_)) => DRAIN_TICK,
            (true, None) => TICK,
        };
        // QUIC's timers (loss detection, acknowledgements) are finer than
        // the sweep's second.
        let timer = self.quic.iter().filter_map(Quic::next_timer).min();
        let timeout = match timer {
            Some(at) => {
                let left = at.saturating_duration_since(std::time::Instant::now());
                let left = Timespec {
                    tv_sec: left.as_secs() as i64,
                    tv_nsec: i64::from(left.subsec_nanos()),
                };
                if (left.tv_sec, left.tv_nsec) < (tick.tv_sec, tick.tv_nsec) {
                    left
                } else {
                    tick
                }
            }
            None => tick,
        };
        let timeout = &timeout;
        events.clear();
        match epoll::wait(
            &self.epoll,
            rustix::buffer::spare_capacity(events),
            Some(timeout),
        ) {
            Ok(_) | Err(Errno::INTR) => Ok(()),
            Err(e) => Err(e.into()),
        }
    }

    /// Acts on one readiness event.
    fn dispatch(&mut self, event: &epoll::Event, cx: &mut Ctx<'_>) -> io::Result<()> {
        match Token::decode(event.data) {
            Token::Wake => {
                if self.shutdown.is_stopping() && self.drain_deadline.is_none() {
                    let grace = self.limits.drain_timeout.as_secs() as u32;
                    self.drain_deadline = Some(cx.now.saturating_add(grace));
                    // `now` counts whole seconds: +2 is at least one second.
                    self.quiet_close_from = cx.now.saturating_add(2);
                    cx.draining = true;
                    self.begin_drain();
                    for endpoint in &mut self.quic {
                        endpoint.drain(&mut cx.serving());
                    }
                }
            }
            Token::Handoff => self.admit_handed(cx)?,
            Token::Released => self.release_quic()?,
            Token::Listener(index) => {
                if index < self.listeners.len() && self.paused.is_none() {
                    self.accept(index, cx)?;
                }
            }
            Token::Quic(index) => {
                if let Some(endpoint) = self.quic.get_mut(index) {
                    endpoint.readable(&mut cx.serving());
                }
            }
            Token::Conn(key) => {
                let flags = event.flags;
                let hung_up = flags.intersects(
                    epoll::EventFlags::RDHUP | epoll::EventFlags::HUP | epoll::EventFlags::ERR,
                );
                let readable = hung_up || flags.contains(epoll::EventFlags::IN);
                self.give_turn(key, readable, hung_up, cx);
            }
        }
        Ok(())
    }

    /// A predecessor that held our UDP sockets exited, its QUIC
    /// connections done; once all have, their datagrams are ours. Until
    /// then they were theirs (a socket two processes read would hand each
    /// one half of every connection's packets); what queued meanwhile is
    /// read at once, as adding a ready socket reports it.
    fn release_quic(&mut self) -> io::Result<()> {
        let mut i = 0;
        while i < self.holds.len() {
            let mut probe = [PollFd::new(&self.holds[i], PollFlags::empty())];
            let _ = rustix::event::poll(&mut probe, Some(&NO_WAIT));
            if probe[0].revents().contains(PollFlags::HUP) {
                epoll::delete(&self.epoll, self.holds.swap_remove(i))?;
            } else {
                i += 1;
            }
        }
        if self.holds.is_empty() {
            watch_quic(&self.epoll, &self.quic)?;
        }
        Ok(())
    }

    /// Once per window: publishes how busy this worker was, lets worker 0
    /// decide whether to pack, and moves idle connections where the
    /// balance says (see [`crate::balance`]).
    fn end_window(&mut self, millis: u64, cx: &mut Ctx<'_>) {
        let cpu = clock::thread_cpu_millis();
        let wall = millis.saturating_sub(self.window.start_ms).max(1);
        let used = cpu.saturating_sub(self.window.cpu_ms);
        let busy = u32::try_from((used * 1000 / wall).min(1000)).unwrap_or(1000);
        let first = self.window.start_ms == 0;
        self.window = Window {
            start_ms: millis,
            cpu_ms: cpu,
        };
        if first {
            return;
        }
        let balance = self.peers.balance;
        balance.publish_busy(self.peers.id, busy);
        if self.peers.id == 0 {
            if let Some(kept) = balance.decide(self.max_conns, wall) {
                cx.observer.packing_trial(kept);
            }
        }
        if cx.draining {
            return;
        }
        let follows = balance.follows(self.peers.id, self.conns.len());
        let mut idle = Vec::new();
        let mut wanting = vec![0u32; balance.workers()];
        if follows {
            idle = self.idle_by_cpu();
            for conn in &idle {
                wanting[conn.sampled] += 1;
            }
        }
        // None when not following, so that no worker reads an old count.
        balance.publish_wants(self.peers.id, &wanting);
        let pin = follows && balance.cpus_fit();
        let affinity = if pin {
            Affinity::Own
        } else {
            self.apart_from_client()
                .map_or(Affinity::Any, Affinity::Apart)
        };
        if affinity != self.affinity {
            self.affinity = affinity;
            affinity.apply(self.peers.id, balance.workers());
        }
        if pin {
            self.read_last(&mut idle);
            self.follow_cpus(&mut idle, cx);
        }
        let Some((to, count)) = balance.moves(self.peers.id, self.conns.len()) else {
            return;
        };
        let keys: Vec<usize> = if follows {
            if !pin {
                self.read_last(&mut idle);
            }
            // Those that want `to`'s CPU first.
            idle.sort_by_key(|conn| conn.last != to);
            idle.iter().take(count).map(|conn| conn.key).collect()
        } else {
            self.conns
                .iter()
                .filter(|(_, conn)| conn.is_movable())
                .map(|(key, _)| key)
                .take(count)
                .collect()
        };
        self.hand_idle(keys, to, cx);
    }

    /// The CPU to keep off while packed: the one nearly every connection's
    /// last packet arrived on (on loopback, the client's one thread), if it
    /// is one the workers run on. Asks at most [`APART_SAMPLE`] sockets.
    fn apart_from_client(&self) -> Option<usize> {
        let balance = self.peers.balance;
        if self.peers.id != 0 || !balance.places_by_cpu() || !balance.is_packing() {
            return None;
        }
        let mut on = vec![0usize; balance.workers()];
        let mut sampled = 0;
        for (_, conn) in self.conns.iter().take(APART_SAMPLE) {
            sampled += 1;
            if let Ok(cpu) = rustix::net::sockopt::socket_incoming_cpu(&conn.fd) {
                if let Some(n) = on.get_mut(cpu as usize) {
                    *n += 1;
                }
            }
        }
        let (cpu, &most) = on.iter().enumerate().max_by_key(|&(_, n)| *n)?;
        balance.keeps_apart(sampled, most).then_some(cpu)
    }

    /// This worker's idle connections with their sampled CPUs; each samples
    /// its next request again. `last` is left to `read_last`, a syscall a
    /// connection that only pinning or a move needs.
    fn idle_by_cpu(&mut self) -> Vec<IdleConn> {
        let (me, workers) = (self.peers.id, self.peers.balance.workers());
        self.conns
            .iter_mut()
            .filter(|(_, conn)| conn.is_movable())
            .map(|(key, conn)| {
                conn.sample_cpu = true;
                let sampled = worker_of(usize::from(conn.cpu), me, workers);
                IdleConn {
                    key,
                    last: me,
                    sampled,
                }
            })
            .collect()
    }

    /// Fills in each of `idle`'s `last` from its socket (`SO_INCOMING_CPU`).
    fn read_last(&self, idle: &mut [IdleConn]) {
        let (me, workers) = (self.peers.id, self.peers.balance.workers());
        for conn in idle {
            let fd = &self.conns[conn.key].fd;
            conn.last = rustix::net::sockopt::socket_incoming_cpu(fd)
                .map_or(me, |cpu| worker_of(cpu as usize, me, workers));
        }
    }

    /// Moves those of `idle` that the balance lets follow their CPU; what
    /// stays is left in `idle`.
    fn follow_cpus(&mut self, idle: &mut Vec<IdleConn>, cx: &mut Ctx<'_>) {
        let (me, balance) = (self.peers.id, self.peers.balance);
        for to in (0..balance.workers()).filter(|&to| to != me) {
            let wanting = idle.iter().filter(|conn| conn.last == to).count();
            if wanting == 0 {
                continue;
            }
            let count = balance.follow_moves(me, to, self.conns.len(), wanting);
            let mut keys = Vec::with_capacity(count);
            idle.retain(|conn| {
                let go = conn.last == to && keys.len() < count;
                if go {
                    keys.push(conn.key);
                }
                !go
            });
            self.hand_idle(keys, to, cx);
        }
    }

    /// Hands the idle connections `keys` to worker `to`.
    fn hand_idle(&mut self, keys: impl IntoIterator<Item = usize>, to: usize, cx: &mut Ctx<'_>) {
        for key in keys {
            let conn = self.conns.remove(key);
            // Out of this epoll set before another worker adds it to its own.
            let _ = epoll::delete(&self.epoll, &conn.fd);
            let remaining = conn.deadline.saturating_sub(cx.now);
            self.peers.balance.hand_over(
                to,
                Handed::Moved {
                    conn: Box::new(conn),
                    remaining,
                },
            );
            cx.observer.moved();
        }
    }

    /// Tells the other workers how many connections this one holds; only
    /// on a change, so an unchanged count costs no cache-line traffic.
    fn publish_load(&mut self) {
        if self.conns.len() != self.published {
            self.published = self.conns.len();
            self.peers.balance.publish(self.peers.id, self.published);
        }
    }

    /// True once a drain is over: every connection closed, or out of time.
    fn drained(&self, now: u32) -> bool {
        let quiet = self.conns.is_empty() && self.quic.iter().all(Quic::is_empty);
        self.drain_deadline.is_some() && (quiet || self.drain_out_of_time(now))
    }

    /// True once the drain's whole timeout has surely gone by: the deadline
    /// is `now` plus whole seconds, set when `now` may have been a moment
    /// from its next second, so only a `now` past it is late enough (the
    /// sweep's rule; a drain of N s lasts N to N + 1).
    fn drain_out_of_time(&self, now: u32) -> bool {
        self.drain_deadline.is_some_and(|deadline| now > deadline)
    }

    /// Gives one connection its turn.
    fn give_turn(&mut self, key: usize, readable: bool, hung_up: bool, cx: &mut Ctx<'_>) {
        let Some(mut conn) = self.conns.get_mut(key) else {
            return;
        };
        if readable && (conn.sample_cpu || self.sample_due) {
            conn.sample_cpu = false;
            let cpu = rustix::net::sockopt::socket_incoming_cpu(&conn.fd);
            conn.cpu = cpu.map_or(u16::MAX, |cpu| u16::try_from(cpu).unwrap_or(u16::MAX));
            if std::mem::take(&mut self.sample_due) && self.follow_request(key, cx) {
                return;
            }
            // Still here: `follow_request` moved it only when it said so.
            conn = &mut self.conns[key];
        }
        let next = guard::contain(|| conn.take_turn(readable, hung_up, &mut cx.turn()));
        self.after_contained(key, next, cx);
    }

    /// Pinned: a request that arrived on another worker's CPU moves there
    /// unread, when the balance lets it, and is served on the CPU its
    /// client sent it from. The window's follow reacts a window late, and a
    /// client thread the scheduler moved meanwhile is served from the other
    /// CPU, two wake-ups a request (bench/results/c1-2026-12-05).
    fn follow_request(&mut self, key: usize, cx: &mut Ctx<'_>) -> bool {
        let (me, balance) = (self.peers.id, self.peers.balance);
        let conn = &self.conns[key];
        let to = worker_of(usize::from(conn.cpu), me, balance.workers());
        if self.affinity != Affinity::Own
            || to == me
            || !conn.is_movable()
            || balance.follow_moves(me, to, self.conns.len(), 1) == 0
        {
            return false;
        }
        self.hand_idle([key], to, cx);
        true
    }

    /// Carries out a turn's decision, or closes the connection whose turn
    /// panicked (its turn's buffers were emptied by the unwind).
    fn after_contained(&mut self, key: usize, next: Result<Next, Panicked>, cx: &mut Ctx<'_>) {
        match next {
            Ok(next) => self.after(key, next, cx),
            Err(panicked) => {
                eprintln!(
                    "tachyon: closed a connection whose turn panicked, serving the others: {panicked}"
                );
                cx.observer.panicked();
                renew_buffers(cx);
                self.after(key, Next::Close(Closed::Panic), cx);
            }
        }
    }

    /// Carries out what a connection's turn decided.
    fn after(&mut self, key: usize, next: Next, cx: &mut Ctx<'_>) {
        match next {
            Next::Keep => {}
            Next::Resume => {
                let conn = &mut self.conns[key];
                if !conn.resuming {
                    conn.resuming = true;
                    self.resume.push(key);
                }
            }
            Next::Close(why) => {
                let conn = self.conns.remove(key);
                cx.release(&conn);
                cx.observer.closed(why);
            }
        }
    }

    /// Lets every connection give back what it has not used since the last
    /// sweep, and times out those whose deadline passed; during a drain,
    /// also closes the ones with nothing in flight.
    fn sweep(&mut self, cx: &mut Ctx<'_>) {
        let mut expired = Vec::new();
        for (key, conn) in self.conns.iter_mut() {
            conn.on_sweep();
            // A deadline is `now` plus whole seconds, and `now` may have been
            // a moment from its next second when it was set: only once `now`
            // is past it has the whole timeout surely gone by (a timeout of
            // N s lasts N to N + 1, never less).
            if conn.deadline < cx.now {
                expired.push(key);
            }
        }
        for key in expired {
            let conn = &mut self.conns[key];
            let next = guard::contain(|| conn.on_timeout(&mut cx.turn()));
            self.after_contained(key, next, cx);
        }
        if cx.close_quiet {
            self.close_quiet(cx);
        }
    }

    /// Closes every connection with nothing in flight (draining).
    fn close_quiet(&mut self, cx: &mut Ctx<'_>) {
        let before = self.conns.len();
        self.conns.retain(|_, conn| {
            if !conn.is_quiet() {
                return true;
            }
            conn.farewell(&mut cx.turn());
            false
        });
        for _ in self.conns.len()..before {
            cx.observer.closed(Closed::Drain);
        }
    }

    /// Stops accepting. The listeners leave epoll explicitly: closing our
    /// descriptor does not remove a socket that another holder keeps open
    /// (systemd, or the process a binary upgrade handed it to), and a
    /// level-triggered listener left behind would wake this loop for every
    /// connection that holder has yet to accept. Closing them takes them out
    /// of the reuseport group when we were the only holder.
    fn begin_drain(&mut self) {
        for (listener, _) in &self.listeners {
            let _ = epoll::delete(&self.epoll, listener);
        }
        self.listeners.clear();
        self.originals.borrow_mut().clear();
    }

    fn accept(&mut self, index: usize, cx: &mut Ctx<'_>) -> io::Result<()> {
        let (now, scheme) = (cx.now, self.listeners[index].1);
        let flags = SocketFlags::NONBLOCK | SocketFlags::CLOEXEC;
        let with_peer = cx.observer.wants_peers();
        for _ in 0..ACCEPT_BATCH {
            let listener = &self.listeners[index].0;
            // The peer's address costs a copy per accept: only for the log.
            let accepted = if with_peer {
                rustix::net::acceptfrom_with(listener, flags).map(|(fd, addr)| {
                    (
                        fd,
                        addr.and_then(|a| std::net::SocketAddr::try_from(a).ok()),
                    )
                })
            } else {
                rustix::net::accept_with(listener, flags).map(|fd| (fd, None))
            };
            let (fd, peer) = match accepted {
                Ok(accepted) => accepted,
                Err(Errno::AGAIN) => return Ok(()),
                Err(Errno::INTR | Errno::CONNABORTED) => continue,
                Err(Errno::MFILE | Errno::NFILE | Errno::NOBUFS | Errno::NOMEM) => {
                    self.out_of_descriptors(index, now)?;
                    return Ok(());
                }
                Err(_) => return Ok(()),
            };
            cx.observer.accepted(scheme);
            let accepted = Accepted { fd, scheme, peer };
            if let Some(to) = self
                .peers
                .balance
                .destination(self.peers.id, self.conns.len())
            {
                self.peers.balance.hand_over(to, Handed::Accepted(accepted));
                continue;
            }
            if self.conns.len() >= self.max_conns {
                // Over the limit: close at once. Existing clients keep being served.
                drop(accepted);
                cx.observer.closed(Closed::Cap);
                continue;
            }
            self.register(accepted, cx)?;
        }
        Ok(())
    }

    /// Out of descriptors: spend the reserve on closing one waiting client
    /// cleanly, then stop watching the listeners until a connection closes
    /// or a second passes (nginx disables accept events the same way).
    fn out_of_descriptors(&mut self, index: usize, now: u32) -> io::Result<()> {
        if self.reserve.take().is_some() {
            if let Ok(fd) = rustix::net::accept_with(&self.listeners[index].0, SocketFlags::CLOEXEC)
            {
                drop(fd);
            }
            self.reserve = take_reserve();
        }
        self.watch_listeners(epoll::EventFlags::empty())?;
        self.paused = Some(AcceptPause {
            until: now.saturating_add(1),
            below: self.conns.len(),
        });
        Ok(())
    }

    fn resume_accepting(&mut self, now: u32) -> io::Result<()> {
        let Some(pause) = &self.paused else {
            return Ok(());
        };
        if now < pause.until && self.conns.len() >= pause.below {
            return Ok(());
        }
        self.paused = None;
        if self.reserve.is_none() {
            self.reserve = take_reserve();
        }
        self.watch_listeners(epoll::EventFlags::IN)
    }

    /// Re-arms every listener with `flags` (empty: paused).
    fn watch_listeners(&self, flags: epoll::EventFlags) -> io::Result<()> {
        for (i, (listener, _)) in self.listeners.iter().enumerate() {
            epoll::modify(&self.epoll, listener, Token::Listener(i).encode(), flags)?;
        }
        Ok(())
    }

    /// Takes the sockets other workers handed over. They were accepted, so
    /// they are served even while draining (their first response says
    /// `Connection: close`): closing them unread would reset a client the
    /// server had already taken.
    fn admit_handed(&mut self, cx: &mut Ctx<'_>) -> io::Result<()> {
        let mut handed = std::mem::take(&mut self.handed);
        self.peers.balance.take(self.peers.id, &mut handed);
        for handed in handed.drain(..) {
            match handed {
                Handed::Accepted(accepted) if self.conns.len() < self.max_conns => {
                    self.register(accepted, cx)?;
                }
                Handed::Accepted(_) => cx.observer.closed(Closed::Cap),
                Handed::Moved { conn, remaining } => self.adopt(*conn, remaining, cx)?,
            }
        }
        self.handed = handed;
        Ok(())
    }

    /// Takes a connection another worker moved here while it was idle; its
    /// timeout keeps the seconds it had left.
    fn adopt(&mut self, mut conn: Conn, remaining: u32, cx: &mut Ctx<'_>) -> io::Result<()> {
        conn.deadline = cx.now.saturating_add(remaining);
        let entry = self.conns.vacant_entry();
        // Readiness that arrived while the connection was in no epoll set
        // is reported by this registration (edge-triggered included).
        match epoll::add(
            &self.epoll,
            &conn.fd,
            Token::Conn(entry.key()).encode(),
            conn_events(),
        ) {
            Ok(()) => {
                entry.insert(conn);
                Ok(())
            }
            Err(Errno::NOMEM | Errno::NOSPC) => {
                cx.observer.closed(Closed::Cap);
                Ok(())
            }
            Err(e) => Err(e.into()),
        }
    }

    /// Adds a connection to this worker; an HTTPS one starts its TLS
    /// session from the generation being served.
    fn register(
        &mut self,
        Accepted { fd, scheme, peer }: Accepted,
        cx: &mut Ctx<'_>,
    ) -> io::Result<()> {
        let session = match scheme {
            Scheme::Http => None,
            Scheme::Https => match cx.generation.tls().map(|tls| Session::new(Arc::clone(tls))) {
                Some(Ok(session)) => Some(session),
                // No certificate (cannot happen once started) or no memory.
                _ => {
                    cx.observer.closed(Closed::Tls);
                    return Ok(());
                }
            },
        };
        let key = self
            .conns
            .insert(Conn::new(fd, cx.now, &self.limits, session, peer));
        // Accepts are deferred until the client has sent something (see
        // `sys::defer_accept`), so its request is most likely here: serve
        // it before watching the socket. A connection it finishes (one
        // request, `Connection: close`) never enters the epoll set; one
        // that goes on is added, and the add reports whatever arrived in
        // between.
        let conn = &mut self.conns[key];
        let next = guard::contain(|| conn.take_turn(true, false, &mut cx.turn()));
        if !matches!(next, Ok(Next::Keep | Next::Resume)) {
            self.after_contained(key, next, cx);
            return Ok(());
        }
        match epoll::add(
            &self.epoll,
            &self.conns[key].fd,
            Token::Conn(key).encode(),
            conn_events(),
        ) {
            Ok(()) => {}
            // Out of memory for the epoll item: drop this client, keep serving.
            Err(Errno::NOMEM | Errno::NOSPC) => {
                self.after(key, Next::Close(Closed::Cap), cx);
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        }
        self.after_contained(key, next, cx);
        Ok(())
    }
}

/// After a turn that panicked: the worker's shared buffers made anew. The
/// unwind may have left any of them mid-use (the read buffer lent out and
/// not given back, a pipe holding part of a body), and none of it may
/// reach the next connection.
fn renew_buffers(cx: &mut Ctx<'_>) {
    *cx.read_buf = vec![0u8; READ_BUF];
    *cx.out = Outbox::default();
    *cx.carriers = Carriers::default();
    *cx.scratch = Scratch::default();
    *cx.h2_spares = Default::default();
    cx.combined.clear();
}

/// A descriptor to hold in reserve (see [`Worker::reserve`]).
fn take_reserve() -> Option<OwnedFd> {
    rustix::fs::open(
        "/dev/null",
        rustix::fs::OFlags::RDONLY | rustix::fs::OFlags::CLOEXEC,
        rustix::fs::Mode::empty(),
    )
    .ok()
}
