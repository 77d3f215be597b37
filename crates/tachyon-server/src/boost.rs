//! Who gets the raised unsent-bytes bound (`sys::BOOSTED_LOWAT`, paid from
//! the worker's `sys::RAISED_BUDGET`), and when it is given back.
//!
//! A client taking a large body at the common bound wakes its worker for
//! every 128 KiB of socket space; the raised bound saves most of those
//! wake-ups. Only a client that has shown it reads gets it, while the
//! worker's budget has room, so that clients that stop reading still pin
//! no more memory than before. Measurements: `bench/results/raised-bound-2026-11-25`,
//! `deep-bound-2026-11-26`.

use std::os::fd::OwnedFd;

/// Output left to send from which a connection asks for the raised bound:
/// below it, the wake-ups the bound saves are few.
const FROM: u64 = 1024 * 1024;
/// What its client must have taken (of the current response over
/// HTTP/1.1, of the connection's output over HTTP/2) to show it reads,
/// not in one wake-up: ab reads 8 KiB at a time and gains as much.
const PROOF: u64 = 256 * 1024;
/// An HTTP/2 connection gets it only while its worker holds at most this
/// many connections: with more, one wake-up serves many, and the bound
/// only moves work onto a client that is already the limit
/// (`bench/results/raised-bound-2026-11-25`, `tls-bound-2026-11-26`).
const H2_CONNS: usize = 8;

/// One connection's standing: the bound it holds, and what its client
/// took toward the proof.
#[derive(Debug, Default)]
pub struct Boost {
    /// The raised bound held (0: the common bound).
    bound: u32,
    /// Bytes the client has taken of the output queued for it.
    taken: u64,
}

/// The worker's side: the budget spent, and its connections.
pub struct Budget<'w> {
    pub spent: &'w mut u64,
    pub conns: usize,
}

impl Boost {
    /// Counts bytes the client took.
    pub fn took(&mut self, n: u64) {
        self.taken += n;
    }

    /// The bound held, charged to the worker (0: none).
    pub fn held(&self) -> u32 {
        self.bound
    }

    /// Raises the bound when the client has shown it reads, `to_come`
    /// bytes are still on their way and the budget has room; true when
    /// it was raised now.
    pub fn raise(&mut self, fd: &OwnedFd, h2: bool, to_come: u64, budget: Budget<'_>) -> bool {
        let bound = if h2 {
            crate::sys::BOOSTED_LOWAT_H2
        } else {
            crate::sys::BOOSTED_LOWAT
        };
        if self.bound != 0
            || self.taken < PROOF
            || *budget.spent + u64::from(bound) > crate::sys::RAISED_BUDGET
            || (h2 && budget.conns > H2_CONNS)
            || to_come < FROM
        {
            return false;
        }
        if !crate::sys::set_unsent_bound(fd, bound) {
            return false;
        }
        self.bound = bound;
        *budget.spent += u64::from(bound);
        true
    }

    /// Gives the bound back once nothing large is on its way.
    pub fn lower(&mut self, fd: &OwnedFd, spent: &mut u64) {
        if self.bound != 0 {
            crate::sys::set_unsent_bound(fd, crate::sys::NOTSENT_LOWAT);
            *spent -= u64::from(self.bound);
            self.bound = 0;
        }
    }

    /// An HTTP/1.1 body went out: the next one must show its reader anew.
    /// The bound itself stays until the client's next request or the
    /// close, since up to the bound of the body may still wait unsent (a
    /// crowd that stopped reading near the end of bodies held 132 raised
    /// queues on 2 workers allowed 64 each when it was given back here).
    /// HTTP/2 keeps both: its client asks for more as the last DATA lands.
    pub fn body_sent(&mut self, h2: bool) {
        if !h2 {
            self.taken = 0;
        }
    }
}
