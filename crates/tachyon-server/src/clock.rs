//! The worker's clocks, read once per event-loop turn.
//!
//! Timeouts have a one-second grain and `Date` changes once a second, so the
//! coarse clocks (the kernel's tick value, read from the vDSO without touching
//! the TSC) are precise enough; a loop turn runs every one or two requests on
//! a small keep-alive workload, where two precise reads a turn showed in
//! `perf record`.

use rustix::time::{clock_gettime, ClockId};

/// Whole seconds since the worker started, on a clock that never jumps.
pub struct Monotonic {
    origin: i64,
}

impl Monotonic {
    pub fn start() -> Monotonic {
        Monotonic {
            origin: clock_gettime(ClockId::MonotonicCoarse).tv_sec,
        }
    }

    /// Seconds since [`Monotonic::start`] (saturating rather than
    /// wrapping) and milliseconds on the same clock (its tick, a few ms, is
    /// its grain), from one read.
    pub fn read(&self) -> (u32, u64) {
        let now = clock_gettime(ClockId::MonotonicCoarse);
        let seconds = u32::try_from(now.tv_sec.saturating_sub(self.origin)).unwrap_or(u32::MAX);
        let millis = u64::try_from(now.tv_sec).unwrap_or(0) * 1000
            + u64::try_from(now.tv_nsec).unwrap_or(0) / 1_000_000;
        (seconds, millis)
    }
}

/// CPU time the calling thread has used, in milliseconds (one system call:
/// read once per balance window, not per turn).
pub fn thread_cpu_millis() -> u64 {
    let t = clock_gettime(ClockId::ThreadCPUTime);
    u64::try_from(t.tv_sec).unwrap_or(0) * 1000 + u64::try_from(t.tv_nsec).unwrap_or(0) / 1_000_000
}

/// Seconds since the Unix epoch, for the `Date` header; 0 before 1970.
pub fn unix_seconds() -> u64 {
    u64::try_from(clock_gettime(ClockId::RealtimeCoarse).tv_sec).unwrap_or(0)
}
