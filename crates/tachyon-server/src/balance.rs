//! Spreading connections across workers when the kernel's hash does not.
//!
//! Each worker has its own `SO_REUSEPORT` listener, and the kernel picks the
//! listener by a hash of the connection's addresses. With hundreds of
//! connections the hash spreads them evenly; with a handful it often does
//! not: in the Spare Cores matrix (wrk -c 2..8 on 2 cores) some rounds put
//! every connection on one worker, which then served them all on one core
//! (1.1 s of server CPU out of 4.2 s possible, 65k instead of 84k req/s at
//! 1 KiB, c=4). A shared listener would balance by whoever is idle but
//! brings the accept lock or thundering herd back for everyone.
//!
//! So the hash stays, and a worker that accepts a connection while it holds
//! clearly more than the least-loaded worker hands the socket over before
//! reading from it. "Clearly" grows with the total (1/16 of all live
//! connections), so with many connections, where the hash is already fair,
//! hand-offs are rare and the accept path costs two relaxed loads.
//!
//! Owns: the per-worker live-connection counts, the per-worker inboxes of
//! handed-over sockets and the eventfds that announce them. Invariant: a
//! socket in an inbox has been accepted but never read or written, so
//! whichever worker registers it sees the connection from its first byte.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use rustix::event::{eventfd, EventfdFlags};

use crate::sys::Accepted;

/// One worker's live-connection count, alone on its cache line so that one
/// worker's updates do not slow the others' loads.
#[repr(align(128))]
struct Load(AtomicUsize);

/// What a worker needs to know about the others.
pub struct Balance {
    loads: Vec<Load>,
    inboxes: Vec<Mutex<Vec<Accepted>>>,
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

    /// The worker that should take a connection `worker` just accepted while
    /// holding `live` connections, or `None` to keep it.
    pub fn destination(&self, worker: usize, live: usize) -> Option<usize> {
        if self.loads.len() < 2 {
            return None;
        }
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
        let slack = total / 16;
        (live > least.0 + slack).then_some(least.1)
    }

    /// Gives `fd` to worker `to` and wakes it if its inbox was empty (a
    /// non-empty inbox already has a wake-up on the way).
    pub fn hand_over(&self, to: usize, accepted: Accepted) {
        // Counted at once so that the next accept, before `to` has run,
        // already sees it as busier.
        self.loads[to].0.fetch_add(1, Ordering::Relaxed);
        let was_empty = {
            let mut inbox = lock(&self.inboxes[to]);
            inbox.push(accepted);
            inbox.len() == 1
        };
        if was_empty {
            let _ = rustix::io::write(&self.wakes[to], &1u64.to_ne_bytes());
        }
    }

    /// Takes every socket handed to `worker` so far.
    pub fn take(&self, worker: usize, into: &mut Vec<Accepted>) {
        let mut counter = [0u8; 8];
        let _ = rustix::io::read(&self.wakes[worker], &mut counter);
        into.append(&mut lock(&self.inboxes[worker]));
    }
}

/// A worker that panicked while holding an inbox leaves a list of sockets
/// that is still a valid list; keep using it.
fn lock(inbox: &Mutex<Vec<Accepted>>) -> std::sync::MutexGuard<'_, Vec<Accepted>> {
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
    fn handed_sockets_arrive_in_order() {
        let balance = Balance::new(2).unwrap();
        let (a, b) = std::os::unix::net::UnixStream::pair().unwrap();
        let accepted = |fd: std::os::unix::net::UnixStream| Accepted {
            fd: fd.into(),
            scheme: crate::sys::Scheme::Http,
            peer: None,
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
