//! The worker's clocks, read once per event-loop turn.
//!
//! Timeouts have a one-second grain and `Date` changes once a second, so the
//! coarse clocks (the kernel's tick value, read from the vDSO without touching
//! the TSC) are precise enough. A loop turn runs about every 1.6 requests on a
//! small keep-alive workload (measured with `perf stat` on the epoll_pwait
//! tracepoint), so two precise clock reads per turn were about 1% of the
//! server's CPU in `perf record`.

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

    /// Seconds since [`Monotonic::start`]; saturates rather than wraps.
    pub fn seconds(&self) -> u32 {
        let now = clock_gettime(ClockId::MonotonicCoarse).tv_sec;
        u32::try_from(now.saturating_sub(self.origin)).unwrap_or(u32::MAX)
    }
}

/// Seconds since the Unix epoch, for the `Date` header; 0 before 1970.
pub fn unix_seconds() -> u64 {
    u64::try_from(clock_gettime(ClockId::RealtimeCoarse).tv_sec).unwrap_or(0)
}
