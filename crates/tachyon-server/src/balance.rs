//! Where connections live: spread across workers when one cannot keep up,
//! gathered on one when one can.
//!
//! Each worker has its own `SO_REUSEPORT` listener, and the kernel picks the
//! listener by a hash of the connection's addresses. With hundreds of
//! connections the hash spreads them evenly; with a handful it often does
//! not, and one worker serves them all on one core while the other idles.
//! A shared listener would balance by whoever is idle but brings the
//! accept lock or thundering herd back for everyone.
//!
//! So the hash stays, and a worker that accepts a connection while it holds
//! clearly more than the least-loaded worker hands the socket over before
//! reading from it. "Clearly" grows with the total (1/16 of all live
//! connections), so with many connections, where the hash is already fair,
//! hand-offs are rare and the accept path costs two relaxed loads.
//!
//! Spreading has a price when the workers are not busy: each one sleeps
//! and wakes for a few requests at a time, and on a machine whose cores
//! are shared (with the client, in every benchmark here) the wake-ups and
//! context switches cost more than the requests, in the clear and over
//! TLS (bench/results/packing-2026-11-25, packing-tls-2026-11-25; lighttpd,
//! whose workers share one listener, gathers its connections this way by
//! accident). So the workers publish how busy they
//! are, and when there are enough connections for one worker's batches to
//! pay (8, up to 512) and all of them together use less than one core, worker 0
//! declares *packing*: new connections go to it, and the others move their
//! idle connections to it. Packing ends when worker 0 alone passes 0.95 of
//! a core (and may not start again for 2 s); the connections then spread
//! again by count, moving while idle.
//! Only a connection with nothing in flight moves (see
//! `Conn::is_movable`): its socket, TLS session and HTTP/2 state change
//! hands whole.
//!
//! Owns: the per-worker live-connection counts and busy shares, the packing
//! decision, the per-worker inboxes of handed-over connections and the
//! eventfds that announce them. Invariant: a connection in an inbox is in no
//! worker's epoll set; whichever worker takes it registers it, and the
//! registration reports any readiness that arrived in between.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};
use std::sync::Mutex;

use rustix::event::{eventfd, EventfdFlags};

use crate::conn::Conn;
use crate::sys::Accepted;

/// Fewer connections than this are never packed: with a handful, two
/// workers answer in parallel and one worker's batches are too small to
/// save anything; from 8 they do (bench/results/packing-2026-11-25).
const PACK_FROM: usize = 8;

/// More connections than this are never packed: with many the batches are
/// large on every worker and packing saves nothing, while moving thousands
/// of idle connections grows the receiving worker's table and leaves the
/// other's allocated (bench/results/packing-2026-11-25).
const PACK_UP_TO: usize = 512;

/// Packing starts when all workers together use less than one core
/// (thousandths of a core: one worker could carry them, and carries them
/// for less)...
const PACK_BELOW: u32 = 1000;

/// ...and ends when worker 0 alone is busier than this...
const UNPACK_ABOVE: u32 = 950;

/// ...after which it does not start again for this many of worker 0's
/// windows, so a load near the line does not move connections to and fro.
const HOLD_WINDOWS: u32 = 20;

/// A connection passed from one worker to another.
pub enum Handed {
    /// Accepted, never read or written.
    Accepted(Accepted),
    /// Moved with its state while idle; `remaining` is what was left of its
    /// timeout, in seconds (each worker's clock has its own origin).
    Moved { conn: Box<Conn>, remaining: u32 },
}

/// A worker's busy share, alone on its cache line like [`Load`].
#[repr(align(128))]
struct Busy(AtomicU32);

/// One worker's live-connection count, alone on its cache line so that one
/// worker's updates do not slow the others' loads.
#[repr(align(128))]
struct Load(AtomicUsize);

/// What a worker needs to know about the others.
pub struct Balance {
    loads: Vec<Load>,
    busy: Vec<Busy>,
    /// Worker 0 gathers the connections (see the module doc).
    packing: AtomicBool,
    /// Windows left before packing may start again (worker 0's).
    hold: AtomicU32,
    inboxes: Vec<Mutex<Vec<Handed>>>,
    /// `wakes[w]` is registered in worker `w`'s epoll.
    wakes: Vec<OwnedFd>,
}

impl Balance {
    pub fn new(workers: usize) -> io::Result<Balance> {
        let wakes = (0..workers)
            .map(|_| eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK))
            .collect::<Result<_, _>>()?;
        Ok(Balance {
            loads: (0..workers).map(|_| Load(AtomicUsize::new(0))).collect(),
            busy: (0..workers).map(|_| Busy(AtomicU32::new(0))).collect(),
            packing: AtomicBool::new(false),
            hold: AtomicU32::new(0),
            inboxes: (0..workers).map(|_| Mutex::new(Vec::new())).collect(),
            wakes,
        })
    }

    pub fn wake_fd(&self, worker: usize) -> &OwnedFd {
        &self.wakes[worker]
    }

    /// Publishes how many connections `worker` holds now.
    pub fn publish(&self, worker: usize, live: usize) {
        self.loads[worker].0.store(live, Ordering::Relaxed);
    }

    /// Publishes how busy `worker` was over its last window, in thousandths
    /// of a core.
    pub fn publish_busy(&self, worker: usize, thousandths: u32) {
        self.busy[worker].0.store(thousandths, Ordering::Relaxed);
    }

    /// Worker 0's call, once per window: starts or ends packing. `cap` is
    /// one worker's connection limit; packing never asks worker 0 to hold
    /// more than half of it.
    pub fn decide(&self, cap: usize) {
        let total: usize = self.loads.iter().map(|l| l.0.load(Ordering::Relaxed)).sum();
        let busy: u32 = self.busy.iter().map(|b| b.0.load(Ordering::Relaxed)).sum();
        let home = self.busy[0].0.load(Ordering::Relaxed);
        let enough = self.loads.len() > 1 && (PACK_FROM..=PACK_UP_TO.min(cap / 2)).contains(&total);
        let hold = self.hold.load(Ordering::Relaxed);
        let was = self.packing.load(Ordering::Relaxed);
        let packing = if was {
            enough && home <= UNPACK_ABOVE
        } else {
            hold == 0 && enough && busy < PACK_BELOW
        };
        let hold = if was && !packing {
            HOLD_WINDOWS
        } else {
            hold.saturating_sub(1)
        };
        self.hold.store(hold, Ordering::Relaxed);
        self.packing.store(packing, Ordering::Relaxed);
    }

    /// Whether connections are being gathered on worker 0.
    pub fn is_packing(&self) -> bool {
        self.packing.load(Ordering::Relaxed)
    }

    /// Where `worker`, holding `live` connections, should move idle ones at
    /// the end of its window, and how many: all of them to worker 0 while
    /// packing, else half the excess over the least-loaded worker when it
    /// is clear (the rule [`Balance::destination`] applies at accept, with
    /// one more of slack so that an odd count does not bounce).
    pub fn moves(&self, worker: usize, live: usize) -> Option<(usize, usize)> {
        if self.loads.len() < 2 || live == 0 {
            return None;
        }
        if self.is_packing() {
            return (worker != 0).then_some((0, live));
        }
        let (least, to, total) = self.least_other(worker, live);
        let slack = total / 16 + 1;
        // Lazily: the count is computed only when the excess is real.
        (live > least + slack).then(|| (to, (live - least) / 2))
    }

    /// The least-loaded worker other than `worker`, its count, and the
    /// total of every worker's (with `live` for `worker`).
    fn least_other(&self, worker: usize, live: usize) -> (usize, usize, usize) {
        let mut total = live;
        let mut least = (usize::MAX, worker);
        for (w, load) in self.loads.iter().enumerate() {
            if w == worker {
                continue;
            }
            let n = load.0.load(Ordering::Relaxed);
            total += n;
            if n < least.0 {
                least = (n, w);
            }
        }
        (least.0, least.1, total)
    }

    /// The worker that should take a connection `worker` just accepted while
    /// holding `live` connections, or `None` to keep it.
    pub fn destination(&self, worker: usize, live: usize) -> Option<usize> {
        if self.loads.len() < 2 {
            return None;
        }
        if self.is_packing() {
            return (worker != 0).then_some(0);
        }
        let (least, to, total) = self.least_other(worker, live);
        let slack = total / 16;
        (live > least + slack).then_some(to)
    }

    /// Gives a connection to worker `to` and wakes it if its inbox was
    /// empty (a non-empty inbox already has a wake-up on the way).
    pub fn hand_over(&self, to: usize, handed: Handed) {
        // Counted at once so that the next accept, before `to` has run,
        // already sees it as busier.
        self.loads[to].0.fetch_add(1, Ordering::Relaxed);
        let was_empty = {
            let mut inbox = lock(&self.inboxes[to]);
            inbox.push(handed);
            inbox.len() == 1
        };
        if was_empty {
            let _ = rustix::io::write(&self.wakes[to], &1u64.to_ne_bytes());
        }
    }

    /// Takes every connection handed to `worker` so far.
    pub fn take(&self, worker: usize, into: &mut Vec<Handed>) {
        let mut counter = [0u8; 8];
        let _ = rustix::io::read(&self.wakes[worker], &mut counter);
        into.append(&mut lock(&self.inboxes[worker]));
    }
}

/// A worker that panicked while holding an inbox leaves a list of sockets
/// that is still a valid list; keep using it.
fn lock(inbox: &Mutex<Vec<Handed>>) -> std::sync::MutexGuard<'_, Vec<Handed>> {
    inbox
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_few_connections_are_evened_out() {
        let balance = Balance::new(2).unwrap();
        // All four land on worker 0, as the hash sometimes does.
        assert_eq!(balance.destination(0, 0), None);
        assert_eq!(balance.destination(0, 1), Some(1));
        balance.publish(1, 1);
        assert_eq!(balance.destination(0, 1), None);
        assert_eq!(balance.destination(0, 2), Some(1));
    }

    #[test]
    fn many_connections_tolerate_the_hash_spread() {
        let balance = Balance::new(2).unwrap();
        balance.publish(1, 480);
        // 520 vs 480: within 1/16 of 1000, kept.
        assert_eq!(balance.destination(0, 520), None);
        assert_eq!(balance.destination(0, 560), Some(1));
    }

    #[test]
    fn one_worker_never_hands_over() {
        let balance = Balance::new(1).unwrap();
        assert_eq!(balance.destination(0, 100), None);
    }

    #[test]
    fn idle_workers_with_enough_connections_pack_onto_worker_0() {
        let balance = Balance::new(2).unwrap();
        balance.publish(0, 10);
        balance.publish(1, 10);
        balance.publish_busy(0, 400);
        balance.publish_busy(1, 400);
        balance.decide(1000);
        assert!(balance.is_packing(), "20 connections, 0.8 of a core");
        assert_eq!(balance.destination(1, 10), Some(0));
        assert_eq!(balance.destination(0, 10), None);
        assert_eq!(balance.moves(1, 10), Some((0, 10)));
        assert_eq!(balance.moves(0, 10), None);
    }

    #[test]
    fn few_connections_or_busy_workers_stay_spread() {
        let balance = Balance::new(2).unwrap();
        balance.publish(0, 3);
        balance.publish(1, 4);
        balance.decide(1000);
        assert!(!balance.is_packing(), "7 connections are too few");
        balance.publish(0, 16);
        balance.publish(1, 16);
        balance.publish_busy(0, 550);
        balance.publish_busy(1, 500);
        balance.decide(1000);
        assert!(!balance.is_packing(), "more than a core together");
        balance.decide(40);
        assert!(!balance.is_packing(), "more than half of one worker's cap");
        balance.publish_busy(0, 100);
        balance.publish_busy(1, 100);
        balance.publish(0, 300);
        balance.publish(1, 300);
        balance.decide(100_000);
        assert!(!balance.is_packing(), "600 connections batch well anyway");
    }

    #[test]
    fn packing_ends_when_worker_0_is_nearly_full_and_connections_spread_again() {
        let balance = Balance::new(2).unwrap();
        balance.publish(0, 32);
        balance.publish(1, 0);
        balance.publish_busy(0, 800);
        balance.publish_busy(1, 0);
        balance.decide(1000);
        assert!(balance.is_packing());
        balance.publish_busy(0, 920);
        balance.decide(1000);
        assert!(
            balance.is_packing(),
            "between the two thresholds: no change"
        );
        balance.publish_busy(0, 960);
        balance.decide(1000);
        assert!(!balance.is_packing());
        balance.publish_busy(0, 300);
        for _ in 0..HOLD_WINDOWS {
            balance.decide(1000);
            assert!(!balance.is_packing(), "held off after it ended");
        }
        balance.decide(1000);
        assert!(balance.is_packing(), "and then allowed again");
        balance.publish_busy(0, 960);
        balance.decide(1000);
        assert_eq!(balance.moves(0, 32), Some((1, 16)));
        assert_eq!(balance.moves(1, 0), None);
        balance.publish(1, 16);
        assert_eq!(balance.moves(0, 16), None, "even");
        assert_eq!(balance.moves(0, 17), None, "one over bounces no connection");
        assert_eq!(balance.moves(0, 3), None, "fewer than the other");
    }

    #[test]
    fn handed_sockets_arrive_in_order() {
        let balance = Balance::new(2).unwrap();
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let accepted = |fd: std::os::unix::net::UnixStream| {
            Handed::Accepted(Accepted {
                fd: fd.into(),
                scheme: crate::sys::Scheme::Http,
                peer: None,
            })
        };
        balance.hand_over(1, accepted(a));
        balance.hand_over(1, accepted(b));
        assert_eq!(balance.loads[1].0.load(Ordering::Relaxed), 2);
        let mut got = Vec::new();
        balance.take(1, &mut got);
        assert_eq!(got.len(), 2);
        balance.take(1, &mut got);
        assert_eq!(got.len(), 2, "a second take finds nothing new");
    }
}
