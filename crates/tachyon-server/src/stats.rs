//! What the server counts, and how the counts reach a scrape.
//!
//! Each worker counts into its own [`Counters`], plain integers on its own
//! stack: the hot path touches no shared cache line. Once per loop turn, if
//! anything changed, the worker copies its counters into its slot of the
//! [`Board`] (one uncontended lock per turn, not per request); a scrape sums
//! the slots. So a scrape sees every request a worker finished before its
//! last wait, and nothing is ever counted twice or lost.
//!
//! Does not format anything: `admin` turns a [`Counters`] sum into the
//! Prometheus text format.

use std::sync::{Arc, Mutex};
use std::time::Instant;

use tachyon_http::{Method, RequestHead};

use crate::access::{AccessLog, Client};
use crate::balance::Kept;
use crate::reply::Summary;

/// Methods counted apart; every other method is `other`.
pub const METHODS: [&str; 4] = ["GET", "HEAD", "OPTIONS", "other"];
/// Status classes, `1xx` to `5xx`.
pub const CLASSES: [&str; 5] = ["1xx", "2xx", "3xx", "4xx", "5xx"];
/// Content codings of responses, identity first,
/// then [`Coding::EVERY`](tachyon_http::encoding::Coding::EVERY) in order (the dictionary deltas last).
pub const ENCODINGS: [&str; 6] = ["identity", "br", "zstd", "gzip", "dcb", "dcz"];
/// Upper bounds of the request-duration histogram, in seconds. A request
/// served from memory takes microseconds, so the low buckets are fine.
pub const DURATION_BOUNDS: [f64; 12] = [
    0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.05, 0.25, 1.0,
];
/// Listener schemes, in [`crate::Scheme`] order.
pub const SCHEMES: [&str; 2] = ["http", "https"];

/// Why a connection was closed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Closed {
    /// The client closed or reset it, or a send to it failed.
    Client,
    /// The server was done: the response said `Connection: close`, or a
    /// lingering close ended.
    Done,
    /// A timeout fired (the kind is counted in `timeouts`).
    Timeout,
    /// The TLS session failed (a bad handshake, a protocol error) or
    /// plain HTTP arrived on the TLS port.
    Tls,
    /// The worker's queued-output budget was spent by clients not reading.
    Backlog,
    /// Closed with nothing in flight during a graceful drain.
    Drain,
    /// Accepted over the connection limit and closed at once.
    Cap,
    /// Serving it panicked (`crate::guard`); the others went on.
    Panic,
}

impl Closed {
    pub const ALL: [Closed; 8] = [
        Closed::Client,
        Closed::Done,
        Closed::Timeout,
        Closed::Tls,
        Closed::Backlog,
        Closed::Drain,
        Closed::Cap,
        Closed::Panic,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Closed::Client => "client",
            Closed::Done => "done",
            Closed::Timeout => "timeout",
            Closed::Tls => "tls",
            Closed::Backlog => "backlog",
            Closed::Drain => "drain",
            Closed::Cap => "cap",
            Closed::Panic => "panic",
        }
    }
}

/// Which timeout fired.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Timeout {
    Idle,
    Header,
    Send,
    Handshake,
}

impl Timeout {
    pub const ALL: [Timeout; 4] = [
        Timeout::Idle,
        Timeout::Header,
        Timeout::Send,
        Timeout::Handshake,
    ];

    pub fn label(self) -> &'static str {
        match self {
            Timeout::Idle => "idle",
            Timeout::Header => "header",
            Timeout::Send => "send",
            Timeout::Handshake => "handshake",
        }
    }
}

/// One worker's counts (or, summed, the server's).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Counters {
    /// Requests by [`METHODS`] and [`CLASSES`].
    pub requests: [[u64; 5]; 4],
    /// Requests answered over TLS (the rest over plain TCP).
    pub requests_tls: u64,
    /// Responses by [`ENCODINGS`].
    pub encodings: [u64; 6],
    /// Body bytes dictionary deltas saved against the smallest ordinary
    /// representation of their file.
    pub dictionary_saved_bytes: u64,
    /// Bytes written to sockets (plaintext bytes for TLS), heads included.
    pub bytes_sent: u64,
    /// Request-duration histogram: counts per [`DURATION_BOUNDS`] bucket
    /// (not cumulative), the last one above every bound.
    pub duration_buckets: [u64; 13],
    pub duration_sum_ns: u64,
    /// Connections accepted, by [`SCHEMES`].
    pub accepted: [u64; 2],
    /// Connections closed, by [`Closed::ALL`].
    pub closed: [u64; 8],
    /// Idle connections moved to another worker (see `crate::balance`).
    pub moved: u64,
    /// Packing's trials, by what they kept (in `balance::Kept::ALL` order).
    pub packing_trials: [u64; 2],
    /// Connections given the raised unsent-bytes bound (`sys::BOOSTED_LOWAT`).
    pub raised: u64,
    /// Timeouts, by [`Timeout::ALL`].
    pub timeouts: [u64; 4],
    /// Connections closed because their turn panicked (`crate::guard`).
    pub panics: u64,
    /// Worker threads started again after one died.
    pub restarts: u64,
    /// Connections open at the last publish.
    pub open: u64,
    /// QUIC connections accepted, and closed; new clients sent a Retry.
    pub quic_accepted: u64,
    pub quic_closed: u64,
    pub quic_retried: u64,
    /// QUIC packets sent, and declared lost (of connections that ended).
    pub quic_sent_packets: u64,
    pub quic_lost_packets: u64,
    /// Requests answered over HTTP/3.
    pub requests_h3: u64,
}

impl Counters {
    /// Adds `other` into `self`.
    pub fn add(&mut self, other: &Counters) {
        fn sum<const N: usize>(a: &mut [u64; N], b: &[u64; N]) {
            a.iter_mut().zip(b).for_each(|(x, y)| *x += y);
        }
        for (a, b) in self.requests.iter_mut().zip(&other.requests) {
            sum(a, b);
        }
        self.requests_tls += other.requests_tls;
        sum(&mut self.encodings, &other.encodings);
        self.dictionary_saved_bytes += other.dictionary_saved_bytes;
        self.bytes_sent += other.bytes_sent;
        sum(&mut self.duration_buckets, &other.duration_buckets);
        self.duration_sum_ns += other.duration_sum_ns;
        sum(&mut self.accepted, &other.accepted);
        sum(&mut self.closed, &other.closed);
        self.moved += other.moved;
        sum(&mut self.packing_trials, &other.packing_trials);
        self.raised += other.raised;
        sum(&mut self.timeouts, &other.timeouts);
        self.panics += other.panics;
        self.restarts += other.restarts;
        self.open += other.open;
        self.quic_accepted += other.quic_accepted;
        self.quic_closed += other.quic_closed;
        self.quic_retried += other.quic_retried;
        self.quic_sent_packets += other.quic_sent_packets;
        self.quic_lost_packets += other.quic_lost_packets;
        self.requests_h3 += other.requests_h3;
    }

    /// Every request counted.
    pub fn total_requests(&self) -> u64 {
        self.requests.iter().flatten().sum()
    }
}

/// Where workers publish their counters for a scrape.
pub struct Board {
    slots: Box<[Mutex<Counters>]>,
}

impl Board {
    pub fn new(workers: usize) -> Arc<Board> {
        Arc::new(Board {
            slots: (0..workers.max(1))
                .map(|_| Mutex::new(Counters::default()))
                .collect(),
        })
    }

    fn publish(&self, worker: usize, counters: &Counters) {
        if let Some(slot) = self.slots.get(worker) {
            // A poisoned slot only means a scraper panicked mid-copy; the
            // counters themselves are plain integers, always whole.
            *slot.lock().unwrap_or_else(|e| e.into_inner()) = *counters;
        }
    }

    /// The sum over every worker.
    pub fn total(&self) -> Counters {
        let mut total = Counters::default();
        for slot in self.slots.iter() {
            total.add(&slot.lock().unwrap_or_else(|e| e.into_inner()));
        }
        total
    }
}

/// What a worker observes: its counters, its access-log buffer, and
/// whether requests are timed (only when someone reads the figures).
pub struct Observer {
    pub counters: Counters,
    pub log: Option<AccessLog>,
    board: Option<(Arc<Board>, usize)>,
    timed: bool,
    dirty: bool,
}

impl Observer {
    pub fn new(board: Option<Arc<Board>>, worker: usize, log: Option<AccessLog>) -> Observer {
        Observer {
            counters: Counters::default(),
            // Two clock reads per request, only when something shows them.
            timed: board.is_some() || log.as_ref().is_some_and(AccessLog::needs_duration),
            board: board.map(|b| (b, worker)),
            log,
            dirty: false,
        }
    }

    /// Whether peer addresses are needed (for the access log).
    pub fn wants_peers(&self) -> bool {
        self.log.is_some()
    }

    /// The instant a batch of requests started, when requests are timed.
    pub fn start(&self) -> Option<Instant> {
        self.timed.then(Instant::now)
    }

    /// Counts (and logs) one answered request.
    pub fn request(
        &mut self,
        head: &RequestHead<'_>,
        summary: &Summary,
        client: &Client<'_>,
        started: Option<Instant>,
    ) {
        let method = match head.method {
            Method::Get => 0,
            Method::Head => 1,
            Method::Options => 2,
            Method::Other => 3,
        };
        let elapsed = started.map(|t| t.elapsed());
        self.count(method, summary, client.tls.is_some(), elapsed);
        if let Some(log) = &mut self.log {
            log.request(head, summary, client, elapsed);
        }
    }

    /// Counts (and logs) an error answered before a request head was
    /// understood; `line` is the start of what the client sent.
    pub fn rejected(&mut self, line: &[u8], summary: &Summary, client: &Client<'_>) {
        self.count(3, summary, client.tls.is_some(), None);
        if let Some(log) = &mut self.log {
            log.rejected(line, summary, client);
        }
    }

    fn count(
        &mut self,
        method: usize,
        summary: &Summary,
        tls: bool,
        elapsed: Option<std::time::Duration>,
    ) {
        let c = &mut self.counters;
        let class = (summary.status.code() / 100).clamp(1, 5) as usize - 1;
        c.requests[method][class] += 1;
        c.requests_tls += u64::from(tls);
        c.encodings[summary.coding.map_or(0, |coding| coding as usize + 1)] += 1;
        c.dictionary_saved_bytes += summary.saved;
        if let Some(elapsed) = elapsed {
            let secs = elapsed.as_secs_f64();
            let bucket = DURATION_BOUNDS
                .iter()
                .position(|&bound| secs <= bound)
                .unwrap_or(DURATION_BOUNDS.len());
            c.duration_buckets[bucket] += 1;
            c.duration_sum_ns += elapsed.as_nanos() as u64;
        }
        self.dirty = true;
    }

    /// A QUIC connection accepted.
    pub fn quic_accepted(&mut self) {
        self.counters.quic_accepted += 1;
        self.dirty = true;
    }

    /// A new QUIC client asked to prove its address (a Retry).
    pub fn quic_retried(&mut self) {
        self.counters.quic_retried += 1;
        self.dirty = true;
    }

    /// A QUIC connection ended, with its packets sent and lost.
    pub fn quic_closed(&mut self, sent: u64, lost: u64) {
        let c = &mut self.counters;
        c.quic_closed += 1;
        c.quic_sent_packets += sent;
        c.quic_lost_packets += lost;
        self.dirty = true;
    }

    /// A request answered over HTTP/3 (counted with the rest too).
    pub fn h3_request(&mut self) {
        self.counters.requests_h3 += 1;
    }

    pub fn sent(&mut self, bytes: u64) {
        self.counters.bytes_sent += bytes;
        self.dirty = true;
    }

    pub fn accepted(&mut self, scheme: crate::Scheme) {
        self.counters.accepted[scheme as usize] += 1;
        self.dirty = true;
    }

    pub fn closed(&mut self, why: Closed) {
        self.counters.closed[why as usize] += 1;
        self.dirty = true;
    }

    pub fn moved(&mut self) {
        self.counters.moved += 1;
        self.dirty = true;
    }

    pub fn packing_trial(&mut self, kept: Kept) {
        self.counters.packing_trials[kept as usize] += 1;
        self.dirty = true;
    }

    pub fn raised(&mut self) {
        self.counters.raised += 1;
        self.dirty = true;
    }

    /// A connection's turn panicked; it was closed.
    pub fn panicked(&mut self) {
        self.counters.panics += 1;
        self.dirty = true;
    }

    /// This worker's thread was started again after a panic.
    pub fn restarted(&mut self) {
        self.counters.restarts += 1;
        self.dirty = true;
    }

    pub fn timed_out(&mut self, kind: Timeout) {
        self.counters.timeouts[kind as usize] += 1;
        self.dirty = true;
    }

    /// Once per loop turn: publishes the counters if they changed, and
    /// hands a full log buffer to the writer.
    pub fn end_turn(&mut self, open: usize) {
        if let Some(log) = &mut self.log {
            log.flush_if_full();
        }
        if self.dirty || self.counters.open != open as u64 {
            self.counters.open = open as u64;
            if let Some((board, worker)) = &self.board {
                board.publish(*worker, &self.counters);
            }
            self.dirty = false;
        }
    }

    /// Once a second and at exit: the log's lines leave, however few.
    pub fn tick(&mut self) {
        if let Some(log) = &mut self.log {
            log.flush();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sums_are_per_field() {
        let mut a = Counters::default();
        a.requests[0][1] = 2;
        a.closed[Closed::Drain as usize] = 1;
        let mut b = a;
        b.bytes_sent = 7;
        b.add(&a);
        assert_eq!(b.requests[0][1], 4);
        assert_eq!(b.closed[Closed::Drain as usize], 2);
        assert_eq!((b.bytes_sent, b.total_requests()), (7, 4));
    }

    #[test]
    fn labels_follow_the_enum_order() {
        for (i, c) in Closed::ALL.iter().enumerate() {
            assert_eq!(*c as usize, i);
        }
        for (i, t) in Timeout::ALL.iter().enumerate() {
            assert_eq!(*t as usize, i);
        }
        assert_eq!(crate::Scheme::Https as usize, 1);
    }
}
