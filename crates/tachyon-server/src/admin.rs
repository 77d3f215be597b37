//! The admin listener: `/metrics` (Prometheus text format 0.0.4),
//! `/healthz`, `/readyz` and `/status`, on its own address, never on the
//! public port.
//!
//! One thread, off the event loop, so a slow scraper can never delay a
//! site request; it serves up to `MAX_CLIENTS` connections at once by
//! polling them, one request each, and a connection has `REQUEST_TIME`
//! for its whole exchange, not per read: a client sending a byte a second
//! cannot hold a health check back (an orchestrator would restart a
//! healthy server for it).
//! Reads what the workers published on the [`Board`], the generation being
//! served and the reload history; writes nothing any worker reads.

use std::fmt::Write as _;
use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use rustix::event::{poll, PollFd, PollFlags};
use tachyon_http::request::{self, HeadLimits, Parsed};
use tachyon_http::Method;

use crate::acme::CertificateBoard;
use crate::balance::Kept;
use crate::live::Live;
use crate::stats::{
    Board, Closed, Counters, Timeout, CLASSES, DURATION_BOUNDS, ENCODINGS, METHODS, SCHEMES,
};
use crate::worker::Shutdown;

/// What the reloader did, for `/metrics` and `/status`.
#[derive(Debug, Default)]
pub struct Reloads {
    inner: Mutex<ReloadHistory>,
}

#[derive(Debug, Default, Clone)]
struct ReloadHistory {
    succeeded: u64,
    failed: u64,
    /// Unix seconds of the last attempt, and its error if it failed.
    last: Option<(f64, Option<String>)>,
}

impl Reloads {
    pub fn succeeded(&self) {
        let mut h = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        h.succeeded += 1;
        h.last = Some((unix_now(), None));
    }

    pub fn failed(&self, error: &str) {
        let mut h = self.inner.lock().unwrap_or_else(|e| e.into_inner());
        h.failed += 1;
        h.last = Some((unix_now(), Some(error.to_string())));
    }

    fn history(&self) -> ReloadHistory {
        self.inner.lock().unwrap_or_else(|e| e.into_inner()).clone()
    }
}

/// Everything the admin endpoints read.
pub struct Admin {
    /// What `tachyon --version` says after its name: the package version
    /// and the commit its sources were built from (the binary's build
    /// stamp), for `/status` and `tachyon_build_info`.
    pub version: &'static str,
    pub board: Arc<Board>,
    pub live: Arc<Live>,
    pub shutdown: Arc<Shutdown>,
    pub reloads: Arc<Reloads>,
    /// Certificates managed by ACME, when `--acme` is on.
    pub certificates: Option<Arc<CertificateBoard>>,
}

/// Connections served at once; more wait in the listen queue.
const MAX_CLIENTS: usize = 64;
/// The time a connection has to send its request and take the answer.
const REQUEST_TIME: Duration = Duration::from_secs(5);
/// The longest request head read.
const MAX_REQUEST: usize = 8 * 1024;

/// Serves the admin endpoints on `listener` from a thread of its own,
/// until the process exits or hands its sockets to a newer one.
pub fn serve(listener: TcpListener, admin: Admin) -> std::io::Result<()> {
    // Waits in poll with a timeout rather than in a blocking accept, so it
    // can stop: after a binary upgrade both processes hold this socket, and
    // a health check must reach the new process, not the draining old one.
    listener.set_nonblocking(true)?;
    let started = (Instant::now(), unix_now());
    std::thread::Builder::new()
        .name("tachyon-admin".into())
        .spawn(move || {
            let mut clients: Vec<Client> = Vec::new();
            while !admin.shutdown.is_handed_over() {
                wait(&listener, &mut clients);
                if clients.len() < MAX_CLIENTS {
                    // Another holder of the socket may have taken the client.
                    while let Ok((stream, _)) = listener.accept() {
                        clients.extend(Client::new(stream));
                        if clients.len() == MAX_CLIENTS {
                            break;
                        }
                    }
                }
                let now = Instant::now();
                clients.retain_mut(|c| c.step(&admin, started) && now < c.deadline);
            }
        })?;
    Ok(())
}

const POLL_TICK: rustix::time::Timespec = rustix::time::Timespec {
    tv_sec: 0,
    tv_nsec: 200_000_000,
};

/// Waits until the listener or a client is ready, or the tick passes.
fn wait(listener: &TcpListener, clients: &mut [Client]) {
    let mut fds: Vec<PollFd<'_>> = Vec::with_capacity(clients.len() + 1);
    if clients.len() < MAX_CLIENTS {
        fds.push(PollFd::new(listener, PollFlags::IN));
    }
    for c in clients.iter() {
        let wanted = match c.output.is_empty() {
            true => PollFlags::IN,
            false => PollFlags::OUT,
        };
        fds.push(PollFd::new(&c.stream, wanted));
    }
    let _ = poll(&mut fds, Some(&POLL_TICK));
}

/// One admin connection: its request as it arrives, then its answer as
/// the socket takes it.
struct Client {
    stream: TcpStream,
    input: Vec<u8>,
    output: Vec<u8>,
    written: usize,
    deadline: Instant,
}

impl Client {
    fn new(stream: TcpStream) -> Option<Client> {
        stream.set_nonblocking(true).ok()?;
        Some(Client {
            stream,
            input: Vec::new(),
            output: Vec::new(),
            written: 0,
            deadline: Instant::now() + REQUEST_TIME,
        })
    }

    /// Reads what arrived and answers a whole request, or writes what the
    /// socket takes of the answer; false once the connection is done.
    fn step(&mut self, admin: &Admin, started: (Instant, f64)) -> bool {
        if self.output.is_empty() {
            let mut chunk = [0u8; 1024];
            loop {
                match self.stream.read(&mut chunk) {
                    Ok(0) => return false,
                    Ok(n) => self.input.extend_from_slice(&chunk[..n]),
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(_) => return false,
                }
                if self.input.len() > MAX_REQUEST {
                    break;
                }
            }
            match answer(&self.input, admin, started) {
                Some(answer) => self.output = answer,
                None => return true,
            }
        }
        while self.written < self.output.len() {
            match self.stream.write(&self.output[self.written..]) {
                Ok(n) => self.written += n,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
                Err(_) => return false,
            }
        }
        false
    }
}

/// The whole answer to `input`, or None while its head is incomplete.
fn answer(input: &[u8], admin: &Admin, started: (Instant, f64)) -> Option<Vec<u8>> {
    let mut combined = Vec::new();
    let limits = HeadLimits {
        max_head_bytes: MAX_REQUEST,
        ..HeadLimits::default()
    };
    let (status, content_type, body) = match request::parse(input, &mut combined, &limits) {
        Ok(Parsed::Partial) => return None,
        Ok(Parsed::Complete(head)) => {
            if !matches!(head.method, Method::Get | Method::Head) {
                ("405 Method Not Allowed", TEXT, "GET or HEAD only\n".into())
            } else {
                let path = head.raw_target.split(|&b| b == b'?').next().unwrap_or(b"");
                route(path, admin, started)
            }
        }
        Err(e) => (e.status().code_text(), TEXT, "bad request\n".into()),
    };
    let mut out = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    if !input.starts_with(b"HEAD") {
        out.extend_from_slice(body.as_bytes());
    }
    Some(out)
}

const TEXT: &str = "text/plain; charset=utf-8";

fn route(
    path: &[u8],
    admin: &Admin,
    started: (Instant, f64),
) -> (&'static str, &'static str, String) {
    match path {
        b"/metrics" => (
            "200 OK",
            "text/plain; version=0.0.4; charset=utf-8",
            metrics(admin, started.1),
        ),
        b"/healthz" => ("200 OK", TEXT, "ok\n".into()),
        b"/readyz" if admin.shutdown.is_stopping() => {
            ("503 Service Unavailable", TEXT, "draining\n".into())
        }
        b"/readyz" => ("200 OK", TEXT, "ready\n".into()),
        b"/status" => ("200 OK", "application/json", status(admin, started.0)),
        _ => (
            "404 Not Found",
            TEXT,
            "/metrics, /healthz, /readyz, /status\n".into(),
        ),
    }
}

/// The site's size in the generation being served, summed over its roots.
#[derive(Default)]
struct SiteSize {
    /// Per [`ENCODINGS`]: representations held in memory and their bytes.
    files: [u64; 6],
    bytes: [u64; 6],
    disk_files: u64,
    disk_bytes: u64,
    /// Files offered as compression dictionaries.
    dictionaries: u64,
    /// Earlier versions kept as dictionaries, and their bytes.
    versions: u64,
    versions_bytes: u64,
    /// The served versions' copies, kept for the next deploy.
    current_versions_bytes: u64,
}

fn site_size(live: &Live) -> SiteSize {
    let generation = live.current();
    let mut size = SiteSize::default();
    let roots =
        std::iter::once(generation.default_snapshot()).chain(generation.virtual_snapshots());
    for snapshot in roots {
        let s = snapshot.stats();
        size.files[0] += (s.files - s.files_on_disk) as u64;
        size.bytes[0] += s.bytes_in_memory;
        size.disk_files += s.files_on_disk as u64;
        size.disk_bytes += s.bytes_on_disk;
        // `Coding::EVERY` is ENCODINGS[1..] in order.
        for i in 0..s.encoded_files.len() {
            size.files[i + 1] += s.encoded_files[i] as u64;
            size.bytes[i + 1] += s.encoded_bytes[i];
        }
        size.dictionaries += s.dictionaries_offered as u64;
        size.versions += s.versions_kept.versions as u64;
        size.versions_bytes += s.versions_kept.bytes;
        size.current_versions_bytes += s.versions_kept.current_bytes;
    }
    size
}

/// The Prometheus text exposition (format 0.0.4): every family with its
/// HELP and TYPE, counters ending in `_total`, units in the name.
fn metrics(admin: &Admin, start_time: f64) -> String {
    let c = admin.board.total();
    let mut out = String::with_capacity(8192);
    requests(&mut out, &c);
    connections(&mut out, &c);
    quic(&mut out, &c);
    site(&mut out, admin);
    reloads(&mut out, admin);
    if let Some(board) = &admin.certificates {
        certificates(&mut out, board);
    }
    let _ = writeln!(
        out,
        "# HELP tachyon_start_time_seconds When the server started, in Unix seconds.\n# TYPE tachyon_start_time_seconds gauge\ntachyon_start_time_seconds {start_time:.3}"
    );
    let _ = writeln!(
        out,
        "# HELP tachyon_build_info The running version.\n# TYPE tachyon_build_info gauge\ntachyon_build_info{{version=\"{}\"}} 1",
        label_value(admin.version)
    );
    out
}

fn head(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// A family of one series: its help, its type and its value.
fn single(out: &mut String, name: &str, kind: &str, help: &str, value: impl std::fmt::Display) {
    head(out, name, kind, help);
    let _ = writeln!(out, "{name} {value}");
}

/// A family whose series differ in one label: its help, its type, and
/// `name{label="value"} n` for each `(value, n)`.
fn labelled<'a, N: std::fmt::Display>(
    out: &mut String,
    name: &str,
    kind: &str,
    help: &str,
    label: &str,
    series: impl IntoIterator<Item = (&'a str, N)>,
) {
    head(out, name, kind, help);
    by_label(out, name, label, series);
}

/// A family's series that differ in one label, `name{label="value"} n`
/// for each `(value, n)`.
fn by_label<'a, N: std::fmt::Display>(
    out: &mut String,
    name: &str,
    label: &str,
    series: impl IntoIterator<Item = (&'a str, N)>,
) {
    for (value, n) in series {
        let _ = writeln!(out, "{name}{{{label}=\"{value}\"}} {n}");
    }
}

fn requests(out: &mut String, c: &Counters) {
    head(
        out,
        "tachyon_http_requests_total",
        "counter",
        "Requests answered, by method and status class.",
    );
    for (m, method) in METHODS.iter().enumerate() {
        for (k, class) in CLASSES.iter().enumerate() {
            let _ = writeln!(
                out,
                "tachyon_http_requests_total{{method=\"{method}\",code=\"{class}\"}} {}",
                c.requests[m][k]
            );
        }
    }
    head(
        out,
        "tachyon_http_requests_by_transport_total",
        "counter",
        "Requests answered over plain TCP and over TLS.",
    );
    let total = c.total_requests();
    let _ = writeln!(
        out,
        "tachyon_http_requests_by_transport_total{{transport=\"tcp\"}} {}\ntachyon_http_requests_by_transport_total{{transport=\"tls\"}} {}",
        total - c.requests_tls,
        c.requests_tls
    );
    labelled(
        out,
        "tachyon_http_responses_by_encoding_total",
        "counter",
        "Responses by the content coding of the representation sent.",
        "encoding",
        ENCODINGS.into_iter().zip(c.encodings),
    );
    single(
        out,
        "tachyon_sent_bytes_total",
        "counter",
        "Bytes written to client sockets (before TLS), heads included.",
        c.bytes_sent,
    );
    head(
        out,
        "tachyon_dictionary_saved_bytes_total",
        "counter",
        "Body bytes dictionary deltas (dcb, dcz) saved against the smallest ordinary representation of their file.",
    );
    let _ = writeln!(
        out,
        "tachyon_dictionary_saved_bytes_total {}",
        c.dictionary_saved_bytes
    );
    head(
        out,
        "tachyon_http_request_duration_seconds",
        "histogram",
        "From a request's bytes arriving to its response being queued for the socket.",
    );
    let mut cumulative = 0;
    for (i, bound) in DURATION_BOUNDS.iter().enumerate() {
        cumulative += c.duration_buckets[i];
        let _ = writeln!(
            out,
            "tachyon_http_request_duration_seconds_bucket{{le=\"{bound}\"}} {cumulative}"
        );
    }
    cumulative += c.duration_buckets[DURATION_BOUNDS.len()];
    let _ = writeln!(
        out,
        "tachyon_http_request_duration_seconds_bucket{{le=\"+Inf\"}} {cumulative}\ntachyon_http_request_duration_seconds_sum {:.9}\ntachyon_http_request_duration_seconds_count {cumulative}",
        c.duration_sum_ns as f64 / 1e9
    );
}

fn connections(out: &mut String, c: &Counters) {
    single(
        out,
        "tachyon_connections_open",
        "gauge",
        "Connections open.",
        c.open,
    );
    single(out, "tachyon_pipes_open", "gauge", "Pipes open for splicing frozen bodies to sockets (empty ones kept by workers, and loaded ones held by connections).", crate::pipes::pipes_open());
    let (frozen, arena_bytes) = tachyon_snapshot::frozen_footprint();
    single(
        out,
        "tachyon_frozen_bodies",
        "gauge",
        "Bodies held as frozen in-memory copies (16 KiB and more), every generation's.",
        frozen,
    );
    single(out, "tachyon_frozen_arena_bytes", "gauge", "Bytes of the huge-page arenas that hold frozen copies, in whole huge pages up to the last a copy reaches (packing's unused room included).", arena_bytes);
    labelled(
        out,
        "tachyon_connections_accepted_total",
        "counter",
        "Connections accepted, by listener scheme.",
        "scheme",
        SCHEMES.into_iter().zip(c.accepted),
    );
    labelled(
        out,
        "tachyon_connections_closed_total",
        "counter",
        "Connections closed, by reason.",
        "reason",
        Closed::ALL.map(|why| (why.label(), c.closed[why as usize])),
    );
    single(
        out,
        "tachyon_connections_moved_total",
        "counter",
        "Idle connections moved between workers (gathered on one, or spread).",
        c.moved,
    );
    labelled(
        out,
        "tachyon_packing_trials_total",
        "counter",
        "Trials of spreading connections that were packed on one worker, by what each kept.",
        "kept",
        Kept::ALL.map(|kept| (kept.label(), c.packing_trials[kept as usize])),
    );
    single(
        out,
        "tachyon_connection_panics_total",
        "counter",
        "Connections closed because serving them panicked (the others went on).",
        c.panics,
    );
    single(
        out,
        "tachyon_worker_restarts_total",
        "counter",
        "Worker threads started again after one died.",
        c.restarts,
    );
    single(
        out,
        "tachyon_send_bound_raised_total",
        "counter",
        "Connections that read fast given the raised bound on bytes queued unsent toward them.",
        c.raised,
    );
    labelled(
        out,
        "tachyon_timeouts_total",
        "counter",
        "Timeouts that closed a connection, by kind.",
        "kind",
        Timeout::ALL.map(|kind| (kind.label(), c.timeouts[kind as usize])),
    );
}

/// QUIC connections and packets, and the HTTP/3 requests they carried.
fn quic(out: &mut String, c: &Counters) {
    labelled(
        out,
        "tachyon_quic_connections_total",
        "counter",
        "QUIC connections (HTTP/3), by event: accepted, closed.",
        "event",
        [
            ("accepted", c.quic_accepted),
            ("closed", c.quic_closed),
            ("retried", c.quic_retried),
        ],
    );
    labelled(
        out,
        "tachyon_quic_packets_total",
        "counter",
        "QUIC packets of closed connections, by what happened: sent, lost.",
        "outcome",
        [("sent", c.quic_sent_packets), ("lost", c.quic_lost_packets)],
    );
    head(
        out,
        "tachyon_http3_requests_total",
        "counter",
        "Requests answered over HTTP/3.",
    );
    let _ = writeln!(out, "tachyon_http3_requests_total {}", c.requests_h3);
}

fn site(out: &mut String, admin: &Admin) {
    single(
        out,
        "tachyon_snapshot_generation",
        "gauge",
        "The generation being served (1 at start, one more per reload).",
        admin.live.number(),
    );
    let size = site_size(&admin.live);
    labelled(
        out,
        "tachyon_snapshot_files",
        "gauge",
        "Representations held in memory, by content coding.",
        "encoding",
        ENCODINGS.into_iter().zip(size.files),
    );
    labelled(
        out,
        "tachyon_snapshot_memory_bytes",
        "gauge",
        "Bytes of representations held in memory, by content coding.",
        "encoding",
        ENCODINGS.into_iter().zip(size.bytes),
    );
    single(
        out,
        "tachyon_snapshot_disk_files",
        "gauge",
        "Files served from disk (too large to hold).",
        size.disk_files,
    );
    single(
        out,
        "tachyon_snapshot_disk_bytes",
        "gauge",
        "Bytes of the files served from disk.",
        size.disk_bytes,
    );
    single(
        out,
        "tachyon_snapshot_dictionaries",
        "gauge",
        "Files offered to browsers as compression dictionaries (Use-As-Dictionary).",
        size.dictionaries,
    );
    single(
        out,
        "tachyon_dictionary_versions",
        "gauge",
        "Earlier versions of files kept as dictionaries for deltas.",
        size.versions,
    );
    head(
        out,
        "tachyon_dictionary_versions_bytes",
        "gauge",
        "Bytes of the earlier versions kept as dictionaries (in memory, and in the cache folder when there is one).",
    );
    let _ = writeln!(
        out,
        "tachyon_dictionary_versions_bytes {}",
        size.versions_bytes
    );
    head(
        out,
        "tachyon_dictionary_current_versions_bytes",
        "gauge",
        "Bytes of the served versions of offered files, kept so the next deploy can send deltas from them.",
    );
    let _ = writeln!(
        out,
        "tachyon_dictionary_current_versions_bytes {}",
        size.current_versions_bytes
    );
}

fn reloads(out: &mut String, admin: &Admin) {
    let h = admin.reloads.history();
    head(
        out,
        "tachyon_reloads_total",
        "counter",
        "Reloads attempted, by result.",
    );
    let _ = writeln!(
        out,
        "tachyon_reloads_total{{result=\"success\"}} {}\ntachyon_reloads_total{{result=\"failure\"}} {}",
        h.succeeded, h.failed
    );
    head(
        out,
        "tachyon_last_reload_timestamp_seconds",
        "gauge",
        "When the last reload was attempted, in Unix seconds (0: none yet).",
    );
    let (at, error) = h.last.clone().unwrap_or((0.0, None));
    let _ = writeln!(out, "tachyon_last_reload_timestamp_seconds {at:.3}");
    head(
        out,
        "tachyon_last_reload_success",
        "gauge",
        "1 if the last reload succeeded or none was attempted, else 0.",
    );
    let _ = writeln!(
        out,
        "tachyon_last_reload_success {}",
        u8::from(error.is_none())
    );
    // Why it failed names files and folders, which stay out of the
    // scrape (any Prometheus user may read it): /status and the log say it.
}

fn certificates(out: &mut String, board: &CertificateBoard) {
    head(
        out,
        "tachyon_tls_certificate_expiry_timestamp_seconds",
        "gauge",
        "When each name's ACME certificate expires, in Unix seconds.",
    );
    for facts in board.certificates() {
        let Some(not_after) = facts.not_after else {
            continue;
        };
        for name in &facts.names {
            let _ = writeln!(
                out,
                "tachyon_tls_certificate_expiry_timestamp_seconds{{name=\"{}\"}} {not_after}",
                label_value(name)
            );
        }
    }
    let (succeeded, failed) = board.orders();
    head(
        out,
        "tachyon_acme_orders_total",
        "counter",
        "ACME orders, by result.",
    );
    let _ = writeln!(
        out,
        "tachyon_acme_orders_total{{result=\"success\"}} {succeeded}\ntachyon_acme_orders_total{{result=\"failure\"}} {failed}"
    );
}

/// A Prometheus label value: backslash, quote and newline escaped.
fn label_value(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('"', "\\\"")
        .replace('\n', "\\n")
}

fn status(admin: &Admin, started: Instant) -> String {
    let c = admin.board.total();
    let size = site_size(&admin.live);
    let h = admin.reloads.history();
    let mut text = serde_json::json!({
        "version": admin.version,
        "generation": admin.live.number(),
        "draining": admin.shutdown.is_stopping(),
        "uptime_seconds": started.elapsed().as_secs_f64(),
        "connections": c.open,
        "requests": c.total_requests(),
        "files_in_memory": size.files[0],
        "bytes_in_memory": size.bytes.iter().sum::<u64>(),
        "files_on_disk": size.disk_files,
        "dictionaries": {
            "files_offered": size.dictionaries,
            "deltas": size.files[4] + size.files[5],
            "delta_bytes": size.bytes[4] + size.bytes[5],
            "earlier_versions": size.versions,
            "earlier_versions_bytes": size.versions_bytes,
            "current_versions_bytes": size.current_versions_bytes,
        },
        "reloads": {
            "succeeded": h.succeeded,
            "failed": h.failed,
            "last_error": h.last.and_then(|(_, e)| e),
        },
        "certificates": admin.certificates.as_ref().map(|board| {
            board.certificates().into_iter().map(|c| serde_json::json!({
                "names": c.names,
                "issuer": c.issuer,
                "not_after": c.not_after,
                "next_order": c.next_order,
                "last_error": c.last_error,
            })).collect::<Vec<_>>()
        }),
    })
    .to_string();
    text.push('\n');
    text
}

fn unix_now() -> f64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64()
}
