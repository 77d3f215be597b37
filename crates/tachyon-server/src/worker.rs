//! The event loop: one thread per core, each with its own epoll instance,
//! listeners, connections, buffers and `Date` cache.
//!
//! Owns accepting, dispatching readiness to connections, the once-a-second
//! timeout sweep and the graceful drain. Knows nothing of HTTP beyond handing
//! bytes to `Conn`. Invariant: nothing here blocks; the only shared state is
//! the [`Site`] (read once per loop turn) and the [`Shutdown`] flag.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use rustix::event::{epoll, eventfd, EventfdFlags, Timespec};
use rustix::io::Errno;
use rustix::net::SocketFlags;
use slab::Slab;
use tachyon_http::date::DateCache;

use crate::balance::Balance;
use crate::clock;
use crate::conn::{Conn, Ctx, Next};
use crate::limits::Limits;
use crate::outbox::Outbox;
use crate::respond::Scratch;
use crate::site::Site;
use crate::sys::{tune_connection, Listeners};

/// epoll tokens at or above this are listeners; below are slab keys.
const LISTENER_BASE: u64 = u64::MAX - 1024;
const WAKE: u64 = u64::MAX;
/// Another worker handed this one connections (see [`crate::balance`]).
const HANDOFF: u64 = u64::MAX - 1;
/// Connections accepted per listener wake-up before serving others (fairness).
const ACCEPT_BATCH: usize = 256;
/// Reads land here; an idle connection has no buffer of its own.
const READ_BUF: usize = 32 * 1024;

/// A stop request shared by the signal handler thread and the workers.
pub struct Shutdown {
    stopping: AtomicBool,
    /// Edge-triggered in every worker's epoll: one write wakes them all.
    wake: OwnedFd,
}

impl Shutdown {
    pub fn new() -> io::Result<Arc<Shutdown>> {
        let wake = eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK)?;
        Ok(Arc::new(Shutdown {
            stopping: AtomicBool::new(false),
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
}

/// Runs one worker per listener set until shutdown has drained them all.
pub fn run(
    listeners: Listeners,
    site: Arc<Site>,
    limits: Limits,
    shutdown: Arc<Shutdown>,
) -> io::Result<()> {
    let workers = listeners.per_worker.len().max(1);
    let per_worker_conns = (limits.max_connections / workers).max(1);
    let balance = Arc::new(Balance::new(workers)?);
    let handles: Vec<_> = listeners
        .per_worker
        .into_iter()
        .enumerate()
        .map(|(id, sockets)| {
            let (site, limits, shutdown, balance) = (
                Arc::clone(&site),
                limits.clone(),
                Arc::clone(&shutdown),
                Arc::clone(&balance),
            );
            std::thread::Builder::new()
                .name(format!("tachyon-worker-{id}"))
                .spawn(move || {
                    let peers = Peers {
                        id,
                        balance: &balance,
                    };
                    Worker::new(sockets, &site, limits, per_worker_conns, &shutdown, peers)?.run()
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

/// This worker's place among the others.
struct Peers<'a> {
    id: usize,
    balance: &'a Balance,
}

struct Worker<'a> {
    epoll: OwnedFd,
    listeners: Vec<OwnedFd>,
    conns: Slab<Conn>,
    site: &'a Site,
    limits: Limits,
    max_conns: usize,
    shutdown: &'a Shutdown,
    peers: Peers<'a>,
    /// Sockets taken from the inbox, kept to reuse the allocation.
    handed: Vec<OwnedFd>,
}

impl<'a> Worker<'a> {
    fn new(
        listeners: Vec<OwnedFd>,
        site: &'a Site,
        limits: Limits,
        max_conns: usize,
        shutdown: &'a Shutdown,
        peers: Peers<'a>,
    ) -> io::Result<Self> {
        assert!(listeners.len() < (LISTENER_BASE..HANDOFF).count());
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        for (i, listener) in listeners.iter().enumerate() {
            epoll::add(
                &epoll,
                listener,
                epoll::EventData::new_u64(LISTENER_BASE + i as u64),
                epoll::EventFlags::IN,
            )?;
        }
        epoll::add(
            &epoll,
            &shutdown.wake,
            epoll::EventData::new_u64(WAKE),
            epoll::EventFlags::IN | epoll::EventFlags::ET,
        )?;
        epoll::add(
            &epoll,
            peers.balance.wake_fd(peers.id),
            epoll::EventData::new_u64(HANDOFF),
            epoll::EventFlags::IN | epoll::EventFlags::ET,
        )?;
        Ok(Worker {
            epoll,
            listeners,
            conns: Slab::new(),
            site,
            limits,
            max_conns,
            shutdown,
            peers,
            handed: Vec::new(),
        })
    }

    fn run(mut self) -> io::Result<()> {
        let clock = clock::Monotonic::start();
        let mut events: Vec<epoll::Event> = Vec::with_capacity(1024);
        let mut read_buf = vec![0u8; READ_BUF];
        let mut out = Outbox::default();
        let mut scratch = Scratch::default();
        let mut date = DateCache::new();
        let mut generation = self.site.generation();
        let mut hosts = self.site.hosts();
        let mut expired: Vec<usize> = Vec::new();
        let mut next_sweep = 1u32;
        let mut drain_deadline: Option<u32> = None;
        let mut published = 0;
        let limits = self.limits.clone();
        if self.shutdown.is_stopping() {
            return Ok(());
        }
        loop {
            let timeout = Timespec {
                tv_sec: if drain_deadline.is_some() { 0 } else { 1 },
                tv_nsec: 100_000_000,
            };
            events.clear();
            match epoll::wait(
                &self.epoll,
                rustix::buffer::spare_capacity(&mut events),
                Some(&timeout),
            ) {
                Ok(_) | Err(Errno::INTR) => {}
                Err(e) => return Err(e.into()),
            }
            let now = clock.seconds();
            date.refresh_unix(clock::unix_seconds());
            // Pick up a reloaded site between batches, never within one.
            let current = self.site.generation();
            if current != generation {
                generation = current;
                hosts = self.site.hosts();
            }
            let mut cx = Ctx {
                read_buf: &mut read_buf,
                out: &mut out,
                scratch: &mut scratch,
                date: &date,
                hosts: &hosts,
                limits: &limits,
                now,
                draining: drain_deadline.is_some(),
            };
            for event in &events {
                let token = event.data.u64();
                if token == WAKE {
                    if self.shutdown.is_stopping() && drain_deadline.is_none() {
                        drain_deadline =
                            Some(now.saturating_add(limits.drain_timeout.as_secs() as u32));
                        cx.draining = true;
                        // Closing the sockets removes them from epoll and from the
                        // reuseport group: new connections go nowhere.
                        self.listeners.clear();
                        self.conns.retain(|_, conn| !conn.is_quiet());
                    }
                } else if token == HANDOFF {
                    self.admit_handed(now, cx.draining)?;
                } else if token >= LISTENER_BASE {
                    let index = (token - LISTENER_BASE) as usize;
                    if index < self.listeners.len() {
                        self.accept(index, now)?;
                    }
                } else {
                    let key = token as usize;
                    let Some(conn) = self.conns.get_mut(key) else {
                        continue;
                    };
                    let flags = event.flags;
                    let readable = flags.intersects(
                        epoll::EventFlags::IN
                            | epoll::EventFlags::RDHUP
                            | epoll::EventFlags::HUP
                            | epoll::EventFlags::ERR,
                    );
                    if conn.drive(readable, &mut cx) == Next::Close {
                        self.conns.remove(key);
                    }
                }
            }
            if now >= next_sweep || drain_deadline.is_some() {
                next_sweep = now + 1;
                expired.clear();
                expired.extend(
                    self.conns
                        .iter()
                        .filter(|(_, c)| c.deadline <= now)
                        .map(|(k, _)| k),
                );
                for &key in &expired {
                    if self.conns[key].on_timeout(&mut cx) == Next::Close {
                        self.conns.remove(key);
                    }
                }
                if cx.draining {
                    self.conns.retain(|_, conn| !conn.is_quiet());
                }
            }
            if self.conns.len() != published {
                published = self.conns.len();
                self.peers.balance.publish(self.peers.id, published);
            }
            if let Some(deadline) = drain_deadline {
                if self.conns.is_empty() || now >= deadline {
                    return Ok(());
                }
            }
        }
    }

    fn accept(&mut self, index: usize, now: u32) -> io::Result<()> {
        for _ in 0..ACCEPT_BATCH {
            let fd = match rustix::net::accept_with(
                &self.listeners[index],
                SocketFlags::NONBLOCK | SocketFlags::CLOEXEC,
            ) {
                Ok(fd) => fd,
                Err(Errno::AGAIN) => return Ok(()),
                Err(Errno::INTR | Errno::CONNABORTED) => continue,
                // Out of fds or memory: leave the rest queued; the sweep and
                // closing connections free resources (nginx does the same).
                Err(_) => return Ok(()),
            };
            if let Some(to) = self
                .peers
                .balance
                .destination(self.peers.id, self.conns.len())
            {
                self.peers.balance.hand_over(to, fd);
                continue;
            }
            if self.conns.len() >= self.max_conns {
                // Over the limit: close at once. Existing clients keep being served.
                drop(fd);
                continue;
            }
            self.register(fd, now)?;
        }
        Ok(())
    }

    /// Takes the sockets other workers handed over; while draining they are
    /// closed unread, like connections still in a listener's queue.
    fn admit_handed(&mut self, now: u32, draining: bool) -> io::Result<()> {
        let mut handed = std::mem::take(&mut self.handed);
        self.peers.balance.take(self.peers.id, &mut handed);
        for fd in handed.drain(..) {
            if !draining && self.conns.len() < self.max_conns {
                self.register(fd, now)?;
            }
        }
        self.handed = handed;
        Ok(())
    }

    fn register(&mut self, fd: OwnedFd, now: u32) -> io::Result<()> {
        tune_connection(&fd);
        let entry = self.conns.vacant_entry();
        let flags = epoll::EventFlags::IN
            | epoll::EventFlags::OUT
            | epoll::EventFlags::RDHUP
            | epoll::EventFlags::ET;
        epoll::add(
            &self.epoll,
            &fd,
            epoll::EventData::new_u64(entry.key() as u64),
            flags,
        )?;
        entry.insert(Conn::new(fd, now, &self.limits));
        Ok(())
    }
}
