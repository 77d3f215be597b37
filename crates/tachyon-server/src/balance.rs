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
//! a core in two windows running (and may not start again for 2 s; the
//! single such windows traced were slow moments, half the requests of the
//! window before, not a load beyond one core:
//! bench/results/pack-apart-2026-12-05); the connections then spread again
//! by count, moving while idle.
//!
//! Only a connection with nothing in flight moves (see
//! `Conn::is_movable`): its socket, TLS session and HTTP/2 state change
//! hands whole.
//!
//! Packing saves CPU, but a client that waits for each answer before it
//! asks again, with threads of its own (wrk, a proxy's connection pool),
//! can be served faster by two workers even when neither is busy: packed,
//! its threads queue on one server thread while the machine idles
//! (bench/results/packing-threads-2026-11-28: 25% fewer requests a second
//! at wrk -t2 -c16). Traffic that arrives at its own pace is served at
//! that pace either way. So worker 0 measures: after a short while
//! packed it spreads the connections on trial, and if spread they are
//! served clearly faster than packed in two trials running, packing waits
//! 30 s before it is tried again; if not, they gather again and the next
//! trial comes twice as late (up to 30 s), so a load that packing suits
//! pays for few trials (bench/results/packing-trial-2026-11-28). One
//! trial alone is not enough: a one-thread client (h2load -t1) that is
//! the bottleneck serves at its own varying pace either way, and one lost
//! trial spread its connections for 30 s at up to twice the CPU a request
//! (bench/results/pack-apart-2026-12-05).
//!
//! Placed by CPU (`ListenOptions::by_cpu`: one worker per CPU), idle
//! connections also follow the CPU their packets arrive on
//! (`SO_INCOMING_CPU`; on loopback, the CPU their client's thread ran on)
//! to the worker kept on that CPU: a client's thread and the worker
//! that answers it then take turns on one core, with no wake-up sent to
//! another. Following never breaks the count rule: a connection moves only
//! while the receiving worker would hold at most one more than the sender,
//! or in exchange for one of the receiver's that wants the sender's CPU
//! (two client threads, their connections crossed). And it happens only
//! while the connections' CPUs, as their requests last said, are spread
//! about as evenly as the count rule spreads connections (several client
//! threads, or one connection):
//! one busy client thread's connections all want its CPU, and with the
//! workers pinned the one there would share it with the client while the
//! other idled, so then, while packing, and beyond [`FOLLOW_UP_TO`]
//! connections, the workers run on any CPU and nothing follows
//! (bench/results/follow-2026-12-05). Pinned, a connection follows at
//! once, too: a request that arrives on another worker's CPU moves there
//! before it is read. The scheduler wakes a client thread on the idle CPU
//! whenever the server's is busy as it answers, so following only at a
//! window's end leaves them apart most of the time
//! (bench/results/c1-2026-12-05).
//!
//! Packed, worker 0 keeps off the CPU nearly all its connections' packets
//! arrive on (on loopback, one client thread's): there it would take turns
//! with that thread at about the same cost a request but half the rate,
//! and a trial would then find spreading faster, at up to twice the CPU a
//! request (bench/results/pack-apart-2026-12-05).
//!
//! Owns: the per-worker live-connection counts, busy shares, request
//! counts and wanted CPUs, the packing decision and its trials, the
//! per-worker inboxes of handed-over connections and the eventfds that
//! announce them.
//! Invariant: a connection in an inbox is in no worker's epoll set;
//! whichever worker takes it registers it, and the registration reports
//! any readiness that arrived in between.

use std::io;
use std::os::fd::OwnedFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
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

/// ...and ends when worker 0 alone is busier than this in two windows
/// running...
const UNPACK_ABOVE: u32 = 950;

/// ...after which it does not start again for this many of worker 0's
/// windows, so a load near the line does not move connections to and fro.
const HOLD_WINDOWS: u32 = 20;

/// Windows after connections are told to move before the request rate is
/// measured: moves happen at each worker's next window end.
const SETTLE: u32 = 2;

/// Windows over which the request rate is measured, packed and on trial.
const MEASURE: u32 = 4;

/// The first trial comes this many windows after packing starts; each trial
/// that packing survives doubles it, up to [`LAST_TRIAL`].
const FIRST_TRIAL: u32 = SETTLE + MEASURE;
const LAST_TRIAL: u32 = 300;

/// Spread must serve this many percent more requests a second than packed
/// did to win a trial: below the gains it was measured to bring, 12% and
/// 25% (bench/results/packing-threads-2026-11-28), above a small drift.
const FASTER_BY_PERCENT: u64 = 8;

/// After spread wins two trials running, packing waits this many windows
/// (30 s).
const SPREAD_HOLD: u32 = 300;

/// Connections follow their CPU only while there are at most this many in
/// all: reading each idle one's CPU once a window costs a system call, and
/// with many connections every worker has batches of its own anyway.
const FOLLOW_UP_TO: usize = PACK_UP_TO;

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

/// How many requests one worker has answered since it started, alone on its
/// cache line like [`Load`].
#[repr(align(128))]
struct Served(AtomicU64);

/// Requests answered over some milliseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Rate {
    served: u64,
    millis: u64,
}

impl Rate {
    fn add(self, served: u64, millis: u64) -> Rate {
        Rate {
            served: self.served + served,
            millis: self.millis + millis,
        }
    }

    /// Whether this rate beats `other`'s by [`FASTER_BY_PERCENT`], and by
    /// more than chance would at a low rate: the gain over what `other`
    /// would have served in as long must exceed three standard deviations
    /// of the difference of two counts of about that size (each ~Poisson).
    fn clearly_faster_than(self, other: Rate) -> bool {
        let expected =
            u128::from(other.served) * u128::from(self.millis) / u128::from(other.millis.max(1));
        let Some(gain) = u128::from(self.served).checked_sub(expected) else {
            return false;
        };
        gain * 100 > expected * u128::from(FASTER_BY_PERCENT) && gain * gain > 18 * expected
    }
}

/// What worker 0 sees at the end of one of its windows.
#[derive(Clone, Copy, Debug)]
struct Window {
    /// Enough connections for packing to pay, and few enough to move.
    enough: bool,
    /// Every worker's busy share together, and worker 0's alone.
    busy: u32,
    home: u32,
    /// Requests every worker answered during the window, and its length.
    served: u64,
    millis: u64,
}

/// Worker 0's packing decision, and what it is measuring for the next one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Connections spread by count; packing may start after `hold` windows.
    Spread { hold: u32 },
    /// Gathered on worker 0 for `age` windows; the rate is measured over the
    /// last [`MEASURE`] windows before the trial at `trial_at`. `won`: spread
    /// won the last trial, and this one confirms or overturns it. `hot`:
    /// worker 0 was busier than [`UNPACK_ABOVE`] in the last window.
    Packed {
        age: u32,
        rate: Rate,
        trial_at: u32,
        won: bool,
        hot: bool,
    },
    /// Spread on trial for `age` windows, to compare with `packed`.
    Trial {
        age: u32,
        rate: Rate,
        packed: Rate,
        trial_at: u32,
        won: bool,
    },
}

impl Mode {
    fn packs(self) -> bool {
        matches!(self, Mode::Packed { .. })
    }

    /// The decision after one more window, and what a trial that ended
    /// with it kept.
    fn next(self, w: Window) -> (Mode, Option<Kept>) {
        let mode = match self {
            Mode::Spread { hold } if hold == 0 && w.enough && w.busy < PACK_BELOW => {
                Mode::packed(FIRST_TRIAL, false)
            }
            Mode::Spread { hold } => Mode::Spread {
                hold: hold.saturating_sub(1),
            },
            Mode::Packed { hot, .. } if !w.enough || (hot && w.home > UNPACK_ABOVE) => {
                Mode::Spread { hold: HOLD_WINDOWS }
            }
            Mode::Packed {
                age,
                rate,
                trial_at,
                won,
                ..
            } => {
                let age = age + 1;
                let rate = if age + MEASURE > trial_at {
                    rate.add(w.served, w.millis)
                } else {
                    rate
                };
                if age < trial_at {
                    Mode::Packed {
                        age,
                        rate,
                        trial_at,
                        won,
                        hot: w.home > UNPACK_ABOVE,
                    }
                } else {
                    Mode::Trial {
                        age: 0,
                        rate: Rate::default(),
                        packed: rate,
                        trial_at,
                        won,
                    }
                }
            }
            Mode::Trial { .. } if !w.enough => Mode::Spread { hold: 0 },
            Mode::Trial {
                age,
                rate,
                packed,
                trial_at,
                won,
            } => {
                let age = age + 1;
                let rate = if age > SETTLE {
                    rate.add(w.served, w.millis)
                } else {
                    rate
                };
                if age < SETTLE + MEASURE {
                    Mode::Trial {
                        age,
                        rate,
                        packed,
                        trial_at,
                        won,
                    }
                } else if !rate.clearly_faster_than(packed) {
                    let trial_at = (trial_at * 2).min(LAST_TRIAL);
                    return (Mode::packed(trial_at, false), Some(Kept::Packed));
                } else if won {
                    return (Mode::Spread { hold: SPREAD_HOLD }, Some(Kept::Spread));
                } else {
                    // Once may be the client's own pace changing: packed
                    // again and measured, then on trial again.
                    Mode::packed(FIRST_TRIAL, true)
                }
            }
        };
        (mode, None)
    }

    /// Just gathered, the next trial at `trial_at`.
    fn packed(trial_at: u32, won: bool) -> Mode {
        Mode::Packed {
            age: 0,
            rate: Rate::default(),
            trial_at,
            won,
            hot: false,
        }
    }
}

/// What a finished trial kept: packing, or the spread that served more.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kept {
    Packed,
    Spread,
}

impl Kept {
    pub const ALL: [Kept; 2] = [Kept::Packed, Kept::Spread];

    pub fn label(self) -> &'static str {
        match self {
            Kept::Packed => "packed",
            Kept::Spread => "spread",
        }
    }
}

/// Worker 0's alone: the mode and the request count it last saw.
struct Decider {
    mode: Mode,
    served: u64,
}

/// How many of one worker's idle connections want each worker's CPU (its
/// own included), as of its last window, alone on its cache line.
#[repr(align(128))]
struct Wants(Vec<AtomicU32>);

/// What a worker needs to know about the others.
pub struct Balance {
    loads: Vec<Load>,
    busy: Vec<Busy>,
    served: Vec<Served>,
    /// Worker 0 gathers the connections (see the module doc): `decider`'s
    /// mode, where every worker can read it for nothing.
    packing: AtomicBool,
    /// Locked by worker 0 alone, once a window.
    decider: Mutex<Decider>,
    inboxes: Vec<Mutex<Vec<Handed>>>,
    /// `wakes[w]` is registered in worker `w`'s epoll.
    wakes: Vec<OwnedFd>,
    /// Connections follow their CPU (see the module doc).
    by_cpu: bool,
    /// `wants[w]`: worker `w`'s, published once a window (zeros while not
    /// following).
    wants: Vec<Wants>,
}

impl Balance {
    pub fn new(workers: usize, by_cpu: bool) -> io::Result<Balance> {
        let wakes = (0..workers)
            .map(|_| eventfd(0, EventfdFlags::CLOEXEC | EventfdFlags::NONBLOCK))
            .collect::<Result<_, _>>()?;
        Ok(Balance {
            loads: (0..workers).map(|_| Load(AtomicUsize::new(0))).collect(),
            busy: (0..workers).map(|_| Busy(AtomicU32::new(0))).collect(),
            served: (0..workers).map(|_| Served(AtomicU64::new(0))).collect(),
            packing: AtomicBool::new(false),
            decider: Mutex::new(Decider {
                mode: Mode::Spread { hold: 0 },
                served: 0,
            }),
            inboxes: (0..workers).map(|_| Mutex::new(Vec::new())).collect(),
            wakes,
            by_cpu,
            wants: (0..workers)
                .map(|_| Wants((0..workers).map(|_| AtomicU32::new(0)).collect()))
                .collect(),
        })
    }

    pub fn workers(&self) -> usize {
        self.loads.len()
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

    /// Publishes how many requests `worker` has answered since it started
    /// (once a loop turn: worker 0 reads the sum once a window).
    pub fn publish_served(&self, worker: usize, total: u64) {
        self.served[worker].0.store(total, Ordering::Relaxed);
    }

    /// Worker 0's call, once per window of `millis`: starts, tries or ends
    /// packing, and says what a trial that just ended kept. `cap` is one
    /// worker's connection limit; packing never asks worker 0 to hold more
    /// than half of it.
    pub fn decide(&self, cap: usize, millis: u64) -> Option<Kept> {
        let total: usize = self.loads.iter().map(|l| l.0.load(Ordering::Relaxed)).sum();
        let served: u64 = self
            .served
            .iter()
            .map(|s| s.0.load(Ordering::Relaxed))
            .sum();
        let mut decider = self.decider.lock().unwrap_or_else(|p| p.into_inner());
        let window = Window {
            enough: self.loads.len() > 1 && (PACK_FROM..=PACK_UP_TO.min(cap / 2)).contains(&total),
            busy: self.busy.iter().map(|b| b.0.load(Ordering::Relaxed)).sum(),
            home: self.busy[0].0.load(Ordering::Relaxed),
            served: served.saturating_sub(decider.served),
            millis,
        };
        decider.served = served;
        let (mode, kept) = decider.mode.next(window);
        decider.mode = mode;
        self.packing.store(mode.packs(), Ordering::Relaxed);
        kept
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
        let slack = idle_slack(total);
        // Lazily: the count is computed only when the excess is real.
        (live > least + slack).then(|| (to, (live - least) / 2))
    }

    /// Whether `worker`, holding `live` connections, should read where its
    /// idle ones' packets arrive and follow them (see the module doc): placed
    /// by CPU, not packing, and few enough connections in all.
    pub fn follows(&self, worker: usize, live: usize) -> bool {
        if !self.by_cpu || self.loads.len() < 2 || self.is_packing() {
            return false;
        }
        let (_, _, total) = self.least_other(worker, live);
        total <= FOLLOW_UP_TO
    }

    /// Whether there is one worker per CPU (`ListenOptions::by_cpu`).
    pub fn places_by_cpu(&self) -> bool {
        self.by_cpu
    }

    /// Whether worker 0, packed, should keep off the CPU its connections'
    /// packets arrive on, given how many of the `sampled` arrived on the
    /// most common one: placed by CPU, packing, and at least 7 in 8 from
    /// one CPU (one client thread; see the module doc).
    pub fn keeps_apart(&self, sampled: usize, most: usize) -> bool {
        self.by_cpu && self.is_packing() && sampled > 0 && most * 8 >= sampled * 7
    }

    /// Whether the idle connections' CPUs are spread about as evenly as
    /// the count rule spreads connections (no CPU wanted by more than its
    /// share and the rule's slack): then each can be served on its CPU.
    /// One client thread's connections all want one CPU; pinned, they would
    /// wait for it while the other idles (bench/results/follow-2026-12-05).
    pub fn cpus_fit(&self) -> bool {
        let workers = self.loads.len();
        let mut wanted = vec![0usize; workers];
        for row in &self.wants {
            for (cpu, n) in row.0.iter().enumerate() {
                wanted[cpu] += n.load(Ordering::Relaxed) as usize;
            }
        }
        let total: usize = wanted.iter().sum();
        let most = wanted.iter().copied().max().unwrap_or(0);
        total > 0 && most <= total / workers + idle_slack(total)
    }

    /// Publishes how many of `worker`'s idle connections want each
    /// worker's CPU (its own included).
    pub fn publish_wants(&self, worker: usize, wanting: &[u32]) {
        for (slot, &n) in self.wants[worker].0.iter().zip(wanting) {
            slot.store(n, Ordering::Relaxed);
        }
    }

    /// How many of the `wanting` idle connections of `worker` (holding
    /// `live`) that want worker `to`'s CPU may move there: as many as keep
    /// `to` at most one above `worker`, and one more when one of `to`'s
    /// wants `worker`'s CPU (it comes back at `to`'s window end, by the
    /// first rule). One exchange a window: `to`'s count is up to a window
    /// old, and a client thread that changes CPU between the two workers'
    /// windows would otherwise swing all its connections to and fro.
    pub fn follow_moves(&self, worker: usize, to: usize, live: usize, wanting: usize) -> usize {
        let theirs = self.loads[to].0.load(Ordering::Relaxed);
        let room = (live + 1).saturating_sub(theirs) / 2;
        let crossed = self.wants[to].0[worker].load(Ordering::Relaxed).min(1) as usize;
        wanting.min(room + crossed)
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

/// How far above the least-loaded worker one may be, with `total`
/// connections in all, before its idle connections move: the accept
/// rule's 1/16 of all, and one more so that an odd count does not bounce.
fn idle_slack(total: usize) -> usize {
    total / 16 + 1
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
        let balance = Balance::new(2, false).unwrap();
        // All four land on worker 0, as the hash sometimes does.
        assert_eq!(balance.destination(0, 0), None);
        assert_eq!(balance.destination(0, 1), Some(1));
        balance.publish(1, 1);
        assert_eq!(balance.destination(0, 1), None);
        assert_eq!(balance.destination(0, 2), Some(1));
    }

    #[test]
    fn placed_by_cpu_one_connection_follows_its_client() {
        let balance = Balance::new(2, true).unwrap();
        balance.publish(0, 1);
        assert!(balance.follows(0, 1));
        assert_eq!(balance.follow_moves(0, 1, 1, 1), 1);
    }

    #[test]
    fn placed_by_cpu_one_client_cpu_does_not_gather_every_connection() {
        let balance = Balance::new(2, true).unwrap();
        // Eight connections of one client thread on CPU 1, four per worker.
        balance.publish(0, 4);
        balance.publish(1, 4);
        balance.publish_wants(1, &[0, 0]);
        assert_eq!(balance.follow_moves(0, 1, 4, 4), 0);
        // The hash put five on worker 0: one may go.
        balance.publish(0, 5);
        balance.publish(1, 3);
        assert_eq!(balance.follow_moves(0, 1, 5, 5), 1);
    }

    #[test]
    fn placed_by_cpu_crossed_connections_are_exchanged_one_pair_a_window() {
        let balance = Balance::new(2, true).unwrap();
        // Two client threads, one per CPU, four connections each; two on
        // each worker want the other's CPU.
        balance.publish(0, 4);
        balance.publish(1, 4);
        balance.publish_wants(0, &[2, 2]);
        balance.publish_wants(1, &[2, 2]);
        // Worker 0 sends one in exchange: no room at four and four.
        assert_eq!(balance.follow_moves(0, 1, 4, 2), 1);
        balance.publish(0, 3);
        balance.publish(1, 5);
        balance.publish_wants(0, &[2, 1]);
        // Worker 1 sends one by room and one in exchange.
        assert_eq!(balance.follow_moves(1, 0, 5, 2), 2);
        balance.publish(0, 5);
        balance.publish(1, 3);
        balance.publish_wants(1, &[0, 3]);
        // Worker 0 sends its last by room: four and four, all at home.
        assert_eq!(balance.follow_moves(0, 1, 5, 1), 1);
    }

    #[test]
    fn placed_by_cpu_workers_are_pinned_only_while_the_cpus_fit() {
        let balance = Balance::new(2, true).unwrap();
        assert!(!balance.cpus_fit(), "no connection");
        balance.publish_wants(0, &[0, 1]);
        assert!(balance.cpus_fit(), "one connection");
        // One client thread on CPU 1, eight connections.
        balance.publish_wants(0, &[0, 4]);
        balance.publish_wants(1, &[0, 4]);
        assert!(!balance.cpus_fit(), "eight want CPU 1");
        // Two, one per CPU.
        balance.publish_wants(0, &[3, 1]);
        balance.publish_wants(1, &[2, 2]);
        assert!(balance.cpus_fit(), "five and three");
    }

    #[test]
    fn placed_by_cpu_connections_do_not_follow_while_packed_or_many() {
        let balance = Balance::new(2, true).unwrap();
        balance.publish(0, 10);
        balance.publish(1, 10);
        balance.publish_busy(0, 400);
        balance.publish_busy(1, 400);
        assert!(balance.follows(1, 10));
        balance.decide(1000, 100);
        assert!(balance.is_packing(), "20 connections, 0.8 of a core");
        assert!(!balance.follows(1, 10));
        let balance = Balance::new(2, true).unwrap();
        balance.publish(1, 300);
        assert!(!balance.follows(0, 300), "600 connections");
        assert!(!Balance::new(2, false).unwrap().follows(0, 1));
    }

    #[test]
    fn placed_by_cpu_packed_worker_keeps_apart_from_one_client_cpu() {
        let balance = Balance::new(2, true).unwrap();
        balance.publish(0, 8);
        balance.publish_busy(0, 700);
        assert!(!balance.keeps_apart(8, 8), "not packing yet");
        balance.decide(1000, 100);
        assert!(balance.is_packing(), "8 connections, 0.7 of a core");
        assert!(balance.keeps_apart(8, 8), "one client thread");
        assert!(balance.keeps_apart(16, 14), "7/8 from one CPU");
        assert!(!balance.keeps_apart(16, 13), "two client threads");
        assert!(!balance.keeps_apart(0, 0), "nothing sampled");
        let unplaced = Balance::new(2, false).unwrap();
        unplaced.publish(0, 8);
        unplaced.publish_busy(0, 700);
        unplaced.decide(1000, 100);
        assert!(unplaced.is_packing());
        assert!(!unplaced.keeps_apart(8, 8), "not placed by CPU");
    }

    #[test]
    fn many_connections_tolerate_the_hash_spread() {
        let balance = Balance::new(2, false).unwrap();
        balance.publish(1, 480);
        // 520 vs 480: within 1/16 of 1000, kept.
        assert_eq!(balance.destination(0, 520), None);
        assert_eq!(balance.destination(0, 560), Some(1));
    }

    #[test]
    fn one_worker_never_hands_over() {
        let balance = Balance::new(1, false).unwrap();
        assert_eq!(balance.destination(0, 100), None);
    }

    #[test]
    fn idle_workers_with_enough_connections_pack_onto_worker_0() {
        let balance = Balance::new(2, false).unwrap();
        balance.publish(0, 10);
        balance.publish(1, 10);
        balance.publish_busy(0, 400);
        balance.publish_busy(1, 400);
        balance.decide(1000, 100);
        assert!(balance.is_packing(), "20 connections, 0.8 of a core");
        assert_eq!(balance.destination(1, 10), Some(0));
        assert_eq!(balance.destination(0, 10), None);
        assert_eq!(balance.moves(1, 10), Some((0, 10)));
        assert_eq!(balance.moves(0, 10), None);
    }

    #[test]
    fn few_connections_or_busy_workers_stay_spread() {
        let balance = Balance::new(2, false).unwrap();
        balance.publish(0, 3);
        balance.publish(1, 4);
        balance.decide(1000, 100);
        assert!(!balance.is_packing(), "7 connections are too few");
        balance.publish(0, 16);
        balance.publish(1, 16);
        balance.publish_busy(0, 550);
        balance.publish_busy(1, 500);
        balance.decide(1000, 100);
        assert!(!balance.is_packing(), "more than a core together");
        balance.decide(40, 100);
        assert!(!balance.is_packing(), "more than half of one worker's cap");
        balance.publish_busy(0, 100);
        balance.publish_busy(1, 100);
        balance.publish(0, 300);
        balance.publish(1, 300);
        balance.decide(100_000, 100);
        assert!(!balance.is_packing(), "600 connections batch well anyway");
    }

    #[test]
    fn packing_ends_when_worker_0_is_nearly_full_and_connections_spread_again() {
        let balance = Balance::new(2, false).unwrap();
        balance.publish(0, 32);
        balance.publish(1, 0);
        balance.publish_busy(0, 800);
        balance.publish_busy(1, 0);
        balance.decide(1000, 100);
        assert!(balance.is_packing());
        balance.publish_busy(0, 920);
        balance.decide(1000, 100);
        assert!(
            balance.is_packing(),
            "between the two thresholds: no change"
        );
        balance.publish_busy(0, 960);
        balance.decide(1000, 100);
        assert!(balance.is_packing(), "one window over: a slow moment");
        balance.publish_busy(0, 900);
        balance.decide(1000, 100);
        balance.publish_busy(0, 960);
        balance.decide(1000, 100);
        assert!(balance.is_packing(), "over, under, over: not running");
        balance.decide(1000, 100);
        assert!(!balance.is_packing(), "two windows running");
        balance.publish_busy(0, 300);
        for _ in 0..HOLD_WINDOWS {
            balance.decide(1000, 100);
            assert!(!balance.is_packing(), "held off after it ended");
        }
        balance.decide(1000, 100);
        assert!(balance.is_packing(), "and then allowed again");
        balance.publish_busy(0, 960);
        balance.decide(1000, 100);
        balance.decide(1000, 100);
        assert_eq!(balance.moves(0, 32), Some((1, 16)));
        assert_eq!(balance.moves(1, 0), None);
        balance.publish(1, 16);
        assert_eq!(balance.moves(0, 16), None, "even");
        assert_eq!(balance.moves(0, 17), None, "one over bounces no connection");
        assert_eq!(balance.moves(0, 3), None, "fewer than the other");
    }

    /// Two workers with 8 connections each, a quarter of a core busy each,
    /// answering `per_window` requests in every one of `windows` windows of
    /// 100 ms; the served counts start where `served` says and end there.
    fn windows(balance: &Balance, served: &mut u64, windows: u32, per_window: u64) {
        balance.publish(0, 8);
        balance.publish(1, 8);
        balance.publish_busy(0, 250);
        balance.publish_busy(1, 250);
        for _ in 0..windows {
            *served += per_window;
            // Split between the workers as packing would leave it: all on 0.
            balance.publish_served(0, *served);
            balance.decide(1000, 100);
        }
    }

    #[test]
    fn packing_that_slows_a_waiting_client_is_undone_by_a_trial() {
        let balance = Balance::new(2, false).unwrap();
        let mut served = 0;
        windows(&balance, &mut served, 1, 10_000);
        assert!(balance.is_packing());
        windows(&balance, &mut served, FIRST_TRIAL, 10_000);
        assert!(!balance.is_packing(), "on trial, spread");
        // Spread answers 12% more, as wrk -t8 -c16 did...
        windows(&balance, &mut served, SETTLE + MEASURE, 11_200);
        assert!(balance.is_packing(), "once: packed again, to confirm");
        windows(&balance, &mut served, FIRST_TRIAL, 10_000);
        assert!(!balance.is_packing(), "on trial again");
        // ...and again.
        windows(&balance, &mut served, SETTLE + MEASURE - 1, 11_200);
        served += 11_200;
        balance.publish_served(0, served);
        assert_eq!(balance.decide(1000, 100), Some(Kept::Spread));
        assert!(!balance.is_packing(), "spread won its trial");
        windows(&balance, &mut served, SPREAD_HOLD, 11_200);
        assert!(!balance.is_packing(), "for 30 s");
        windows(&balance, &mut served, 1, 11_200);
        assert!(balance.is_packing(), "and then packing is tried again");
    }

    #[test]
    fn a_trial_won_by_a_client_s_fast_moment_is_overturned_by_the_next() {
        let balance = Balance::new(2, false).unwrap();
        let mut served = 0;
        windows(&balance, &mut served, 1 + FIRST_TRIAL, 10_000);
        assert!(!balance.is_packing(), "on trial");
        // The client sped up while spread...
        windows(&balance, &mut served, SETTLE + MEASURE, 12_000);
        assert!(balance.is_packing(), "packed again, to confirm");
        // ...and it goes on at that pace packed, so spread wins nothing.
        windows(&balance, &mut served, FIRST_TRIAL, 12_000);
        windows(&balance, &mut served, SETTLE + MEASURE - 1, 12_000);
        served += 12_000;
        balance.publish_served(0, served);
        assert_eq!(balance.decide(1000, 100), Some(Kept::Packed));
        assert!(balance.is_packing());
    }

    #[test]
    fn packing_that_serves_as_fast_survives_its_trials_and_they_grow_rarer() {
        let balance = Balance::new(2, false).unwrap();
        let mut served = 0;
        windows(&balance, &mut served, 1, 10_000);
        let mut trial_at = FIRST_TRIAL;
        for _ in 0..8 {
            windows(&balance, &mut served, trial_at - 1, 10_000);
            assert!(balance.is_packing(), "packed until window {trial_at}");
            windows(&balance, &mut served, 1, 10_000);
            assert!(!balance.is_packing(), "on trial after {trial_at} windows");
            // Spread serves 5% more: not enough to give up packing.
            windows(&balance, &mut served, SETTLE + MEASURE - 1, 10_500);
            served += 10_500;
            balance.publish_served(0, served);
            assert_eq!(balance.decide(1000, 100), Some(Kept::Packed));
            assert!(balance.is_packing(), "packing survived");
            trial_at = (trial_at * 2).min(LAST_TRIAL);
        }
        assert_eq!(trial_at, LAST_TRIAL);
    }

    #[test]
    fn a_few_more_requests_at_a_low_rate_are_chance_and_win_no_trial() {
        // 24 connections at 10 requests a second each: 24 a window. 30%
        // more in the trial is within what chance gives counts this small.
        let low = Rate {
            served: 24 * MEASURE as u64,
            millis: 100 * u64::from(MEASURE),
        };
        let more = Rate {
            served: low.served * 13 / 10,
            ..low
        };
        assert!(!more.clearly_faster_than(low));
        let busy = Rate {
            served: 10_000 * u64::from(MEASURE),
            ..low
        };
        let faster = Rate {
            served: busy.served * 110 / 100,
            ..busy
        };
        assert!(faster.clearly_faster_than(busy));
        let slower = Rate {
            served: busy.served * 95 / 100,
            ..busy
        };
        assert!(!slower.clearly_faster_than(busy));
        assert!(!busy.clearly_faster_than(busy), "level");
    }

    #[test]
    fn handed_sockets_arrive_in_order() {
        let balance = Balance::new(2, false).unwrap();
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
