//! The pipes that carry frozen bodies to sockets without a copy
//! (`tachyon_sys::Pipe`: `vmsplice` from the copy, `splice` to the
//! socket), a pool of empty ones per worker, and the process-wide counts
//! that keep their descriptors and their pages within budgets.
//!
//! Owns the pipes' lifetimes, not what they carry: the outbox decides what
//! goes in and out. Invariant: a pipe in a pool is empty. A pipe holding
//! bytes belongs to one connection's outbox, as the first bytes it has to
//! send, and is closed, bytes and all, if that connection ends; so no byte
//! meant for one client can reach another, whatever a connection's end.

use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicUsize, Ordering};

/// Bytes a new pipe is asked to hold (64 slots of 4 KiB): fewer calls than
/// the default 64 KiB (bench/results/splice-2026-11-26).
const CAPACITY: usize = 256 * 1024;

/// Bytes a pipe is grown to for a longer body (Linux's default
/// `pipe-max-size`): a 512 KiB body is then one fill and one splice, not
/// two of each (bench/results/huge-512k-2026-12-03).
const GROWN: usize = 1024 * 1024;

/// Bytes of empty pipes a worker keeps for the next body rather than
/// closing (16 new pipes, or 4 grown ones).
const IDLE_BYTES: usize = 16 * CAPACITY;

/// Pipes open in this process and the most there may be: each is two
/// descriptors, and descriptors are for connections first. Past the cap a
/// body is copied from memory into the socket, like a heap body.
static LIVE: AtomicUsize = AtomicUsize::new(0);
static CAP: AtomicUsize = AtomicUsize::new(DEFAULT_CAP);
const DEFAULT_CAP: usize = 256;

/// Bytes the open pipes were asked to hold, and the most: a user's pipes
/// share a soft limit (`pipe-user-pages-soft`, 64 MiB by default) past
/// which the kernel gives new pipes two pages. Grown pipes take at most
/// half of it, so that the other half always has room for new ones.
static BYTES: AtomicUsize = AtomicUsize::new(0);
const MAX_BYTES: usize = 64 << 20;

/// Sets how many pipes the process may hold open (the binary derives it
/// from the open-file limit).
pub fn limit_pipes(pipes: usize) {
    CAP.store(pipes, Ordering::Relaxed);
}

/// Pipes open now, across workers.
pub fn pipes_open() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// Adds `n` to `counter` if the sum stays within `max`.
fn count_in(counter: &AtomicUsize, n: usize, max: usize) -> bool {
    counter
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |now| {
            (now + n <= max).then_some(now + n)
        })
        .is_ok()
}

/// A counted pipe: closing it gives its place and its bytes under the cap
/// back.
pub struct Pipe {
    pipe: tachyon_sys::Pipe,
    /// Bytes counted for it in [`BYTES`]: what it was asked to hold.
    counted: usize,
}

impl Pipe {
    /// A new pipe, while the cap has room.
    fn open() -> Option<Pipe> {
        let cap = CAP.load(Ordering::Relaxed);
        if !count_in(&LIVE, 1, cap) {
            return None;
        }
        if !count_in(&BYTES, CAPACITY, MAX_BYTES) {
            LIVE.fetch_sub(1, Ordering::Relaxed);
            return None;
        }
        match tachyon_sys::Pipe::new(CAPACITY) {
            Ok(pipe) => Some(Pipe {
                pipe,
                counted: CAPACITY,
            }),
            // Out of descriptors or pipe pages: copied instead.
            Err(_) => {
                LIVE.fetch_sub(1, Ordering::Relaxed);
                BYTES.fetch_sub(CAPACITY, Ordering::Relaxed);
                None
            }
        }
    }

    /// Grows it to [`GROWN`], once, while the bytes stay within half of
    /// [`MAX_BYTES`]. A pipe the kernel would not grow (a user past the
    /// soft limit) keeps what it has and its count, so that it is not asked
    /// again.
    fn grow(&mut self) {
        let more = GROWN - self.counted;
        if count_in(&BYTES, more, MAX_BYTES / 2) {
            self.counted = GROWN;
            self.pipe.grow(GROWN);
        }
    }
}

impl Deref for Pipe {
    type Target = tachyon_sys::Pipe;
    fn deref(&self) -> &tachyon_sys::Pipe {
        &self.pipe
    }
}

impl DerefMut for Pipe {
    fn deref_mut(&mut self) -> &mut tachyon_sys::Pipe {
        &mut self.pipe
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        LIVE.fetch_sub(1, Ordering::Relaxed);
        BYTES.fetch_sub(self.counted, Ordering::Relaxed);
    }
}

/// One worker's empty pipes.
#[derive(Default)]
pub struct Pipes {
    idle: Vec<Pipe>,
}

impl Pipes {
    /// An empty pipe for a body with `len` bytes left: a kept one, or a new
    /// one while the cap has room; grown if the body is longer than it
    /// holds.
    pub fn take(&mut self, len: usize) -> Option<Pipe> {
        let mut pipe = match self.idle.pop() {
            Some(pipe) => pipe,
            None => Pipe::open()?,
        };
        if len > pipe.capacity() && pipe.counted < GROWN {
            pipe.grow();
        }
        Some(pipe)
    }

    /// Takes back a pipe. Only an empty one is kept; one that still holds
    /// bytes is closed with them (it cannot happen by design, and a pipe
    /// that kept someone's bytes must never serve the next connection).
    pub fn give(&mut self, pipe: Pipe) {
        debug_assert_eq!(pipe.held(), 0, "a pipe comes back empty");
        if pipe.held() == 0 && self.idle_bytes() + pipe.counted <= IDLE_BYTES {
            self.idle.push(pipe);
        }
    }

    /// How many empty pipes are kept.
    #[cfg(test)]
    pub fn idle(&self) -> usize {
        self.idle.len()
    }

    /// Bytes counted for the kept pipes (at most 16 of them).
    fn idle_bytes(&self) -> usize {
        self.idle.iter().map(|pipe| pipe.counted).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pipe_is_grown_for_a_long_body_once_and_kept_within_the_idle_bytes() {
        let mut pipes = Pipes::default();
        let short = pipes.take(100_000).expect("a new pipe");
        assert_eq!((short.capacity(), short.counted), (CAPACITY, CAPACITY));
        let long = pipes.take(600_000).expect("a second pipe");
        assert_eq!((long.capacity(), long.counted), (GROWN, GROWN));
        pipes.give(long);
        // A kept grown pipe serves a short body as it is.
        let again = pipes.take(100);
        assert_eq!(again.map(|p| p.counted), Some(GROWN));
        // Four grown pipes fill what a worker keeps; the fifth is closed.
        let grown: Vec<Pipe> = (0..5).filter_map(|_| pipes.take(GROWN)).collect();
        assert_eq!(grown.len(), 5);
        grown.into_iter().for_each(|p| pipes.give(p));
        assert_eq!((pipes.idle.len(), pipes.idle_bytes()), (4, IDLE_BYTES));
        pipes.give(short);
        assert_eq!(pipes.idle.len(), 4, "no room for it either");
    }
}
