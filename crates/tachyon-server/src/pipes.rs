//! The pipes that carry frozen bodies to sockets without a copy
//! (`tachyon_sys::Pipe`: `vmsplice` from the copy, `splice` to the
//! socket), a pool of empty ones per worker, and the process-wide count of
//! pipes that keeps their descriptors within a budget.
//!
//! Owns the pipes' lifetimes, not what they carry: the outbox decides what
//! goes in and out. Invariant: a pipe in a pool is empty. A pipe holding
//! bytes belongs to one connection's outbox, as the first bytes it has to
//! send, and is closed, bytes and all, if that connection ends; so no byte
//! meant for one client can reach another, whatever a connection's end.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes a pipe is asked to hold (64 slots of 4 KiB): fewer calls than the
/// default 64 KiB, as cheap as 1 MiB (bench/results/splice-2026-11-26),
/// and a user's pipes share a soft limit (`pipe-user-pages-soft`, 64 MiB
/// here) that 256 KiB leaves room in for [`DEFAULT_CAP`] of them.
const CAPACITY: usize = 256 * 1024;

/// Empty pipes a worker keeps for the next body rather than closing.
const IDLE_MAX: usize = 16;

/// Pipes open in this process, and the most there may be: each is two
/// descriptors, and descriptors are for connections first. Past the cap a
/// body is copied from memory into the socket, like a heap body.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static CAP: AtomicUsize = AtomicUsize::new(DEFAULT_CAP);
const DEFAULT_CAP: usize = 256;

/// Sets how many pipes the process may hold open (the binary derives it
/// from the open-file limit).
pub fn limit_pipes(pipes: usize) {
    CAP.store(pipes, Ordering::Relaxed);
}

/// Pipes open now, across workers.
pub fn pipes_open() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// A counted pipe: closing it gives its place under the cap back.
pub struct Pipe(tachyon_sys::Pipe);

impl Deref for Pipe {
    type Target = tachyon_sys::Pipe;
    fn deref(&self) -> &tachyon_sys::Pipe {
        &self.0
    }
}

impl DerefMut for Pipe {
    fn deref_mut(&mut self) -> &mut tachyon_sys::Pipe {
        &mut self.0
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
    }
}

/// One worker's empty pipes.
#[derive(Default)]
pub struct Pipes {
    idle: Vec<Pipe>,
}

impl Pipes {
    /// An empty pipe: a kept one, or a new one while the cap has room.
    pub fn take(&mut self) -> Option<Pipe> {
        if let Some(pipe) = self.idle.pop() {
            return Some(pipe);
        }
        LIVE.fetch_update(Ordering::Relaxed, Ordering::Relaxed, |live| {
            (live < CAP.load(Ordering::Relaxed)).then_some(live + 1)
        })
        .ok()?;
        match tachyon_sys::Pipe::new(CAPACITY) {
            Ok(pipe) => Some(Pipe(pipe)),
            Err(_) => {
                // Out of descriptors or pipe pages: sendfile serves instead.
                LIVE.fetch_sub(1, Ordering::Relaxed);
                None
            }
        }
    }

    /// Takes back a pipe. Only an empty one is kept; one that still holds
    /// bytes is closed with them (it cannot happen by design, and a pipe
    /// that kept someone's bytes must never serve the next connection).
    pub fn give(&mut self, pipe: Pipe) {
        debug_assert_eq!(pipe.held(), 0, "a pipe comes back empty");
        if pipe.held() == 0 && self.idle.len() < IDLE_MAX {
            self.idle.push(pipe);
        }
    }
}
