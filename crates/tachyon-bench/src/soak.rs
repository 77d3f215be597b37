//! The soak suite: millions of requests of a mixed workload while the site
//! changes under the server every few seconds, every response checked.
//!
//! Unlike the cells in `suites`, which time external load generators, a
//! soak is about correctness and stability over time, so it has its own
//! client that verifies what it gets. Every file's content is a pure
//! function of (path, generation, length): the client knows exactly which
//! bytes any response may contain. Checked per response: the status, the
//! framing, the body (whole, a range, or gzip-decoded) against the
//! generation it claims, and that one ETag never stands for two contents
//! of the same path (RFC 9110 §8.8.3 asks no more: tags are per resource,
//! and mtime-size tags like nginx's and h2o's repeat across paths).
//! Sampled every second: the server's RSS and open descriptors.
//!
//! Owns: the soak site, the reloader that rewrites it (half the files
//! atomically by rename, half in place, as `rsync --inplace` does), the
//! verifying client, and soak.json / soak.md / the two charts. Servers run
//! one after the other on the same site and request count.

use std::collections::HashMap;
use std::io::{BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, RwLock};
use std::time::{Duration, Instant};

use anyhow::Context;
use serde::Serialize;

use crate::peers::{self, Peer, Running};
use crate::site::XorShift;
use tachyon_testkit::Response;

/// Small, compressible files (in memory for tachyon, with encodings).
const SMALL_FILES: usize = 200;
/// Large files: frozen in-memory copies for tachyon (spliced to sockets),
/// disk files for the peers; rewritten in place like the rest.
const LARGE_FILES: usize = 4;
const LARGE_BYTES: usize = 6 * 1024 * 1024;

pub struct SoakOptions {
    pub servers: Vec<Peer>,
    pub requests: u64,
    pub clients: usize,
    pub reload_every: Duration,
    pub out: PathBuf,
    pub workers: usize,
    pub peers_dir: PathBuf,
}

/// What one server's soak found.
#[derive(Debug, Default, Serialize)]
pub struct Outcome {
    pub server: String,
    pub requests: u64,
    pub seconds: f64,
    /// Valid requests answered wrongly: bad status, bad bytes, an ETag
    /// reused for other content, a reset or timeout. Must be 0.
    pub errors: u64,
    /// 503 Retry-After for a disk-served file that changed under the
    /// server (tachyon's answer instead of bytes that do not match).
    pub unavailable: u64,
    /// Responses cut short because the file changed while being sent (the
    /// client sees fewer bytes than announced, never wrong ones).
    pub aborted: u64,
    /// Garbage or truncated requests sent, and how many got a 4xx answer
    /// (the rest were closed without one, also correct).
    pub garbage: u64,
    pub garbage_answered: u64,
    pub reloads: u64,
    /// First few errors, for the report.
    pub examples: Vec<String>,
    /// (second, RSS bytes, open descriptors) once a second.
    pub samples: Vec<(f64, u64, u64)>,
    /// max/min RSS after the first fifth of the run (1.0 is flat).
    pub rss_spread: f64,
    pub fds_spread: f64,
}

/// Runs the soak against each server in turn and writes the results.
pub fn soak(opts: &SoakOptions) -> anyhow::Result<()> {
    // The churn clients and the server need a descriptor per connection.
    crate::proc::raise_nofile();
    // Peers that drop privileges write their pid and logs here too.
    crate::peers::scratch_dir(&opts.out)?;
    let root = opts.out.join("site");
    let env = peers::Env::plain(root.clone(), &opts.out, &opts.peers_dir, opts.workers)?;
    let mut outcomes = Vec::new();
    for &peer in &opts.servers {
        let _ = std::fs::remove_dir_all(&root);
        let generation = Arc::new(AtomicU64::new(1));
        write_site(&root, 1, None)?;
        let mut running =
            Running::start(peer, &env).with_context(|| format!("starting {}", peer.name()))?;
        eprintln!(
            "soak: {} on {} ({} requests, {} clients, site rewritten every {:?})",
            peer.name(),
            running.addr(),
            opts.requests,
            opts.clients,
            opts.reload_every
        );
        let outcome = run_one(peer, &running, &root, &generation, opts)?;
        let alive = running.is_alive();
        running.stop();
        eprintln!(
            "soak: {}: {} requests in {:.0} s, {} errors, {} unavailable, {} aborted, RSS spread {:.2}, fds spread {:.2}{}",
            outcome.server,
            outcome.requests,
            outcome.seconds,
            outcome.errors,
            outcome.unavailable,
            outcome.aborted,
            outcome.rss_spread,
            outcome.fds_spread,
            if alive { "" } else { " (the server died)" }
        );
        outcomes.push(outcome);
    }
    write_results(&opts.out, &outcomes)
}

fn run_one(
    peer: Peer,
    running: &Running,
    root: &Path,
    generation: &Arc<AtomicU64>,
    opts: &SoakOptions,
) -> anyhow::Result<Outcome> {
    let addr = running.addr();
    let pid = running.pid();
    let done = Arc::new(AtomicBool::new(false));
    let shared = Arc::new(Shared::default());
    let started = Instant::now();
    let counter = Arc::new(AtomicU64::new(0));
    let reloader = start_reloader(&done, generation, root, opts.reload_every);
    let sampler = start_sampler(&done, pid);
    let per_client = opts.requests / opts.clients as u64;
    let clients: Vec<_> = (0..opts.clients)
        .map(|i| {
            let (shared, generation, counter) = (
                Arc::clone(&shared),
                Arc::clone(generation),
                Arc::clone(&counter),
            );
            std::thread::spawn(move || {
                let mut client = Client::new(addr, i as u64, shared, generation);
                for _ in 0..per_client {
                    client.one();
                    counter.fetch_add(1, Ordering::Relaxed);
                }
                client.tally
            })
        })
        .collect();
    let mut outcome = Outcome {
        server: peer.name().to_string(),
        ..Outcome::default()
    };
    for c in clients {
        let tally = c
            .join()
            .map_err(|_| anyhow::anyhow!("a soak client panicked"))?;
        outcome.requests += tally.requests;
        outcome.errors += tally.errors;
        outcome.unavailable += tally.unavailable;
        outcome.aborted += tally.aborted;
        outcome.garbage += tally.garbage;
        outcome.garbage_answered += tally.garbage_answered;
        for e in tally.examples {
            if outcome.examples.len() < 10 {
                outcome.examples.push(e);
            }
        }
    }
    outcome.seconds = started.elapsed().as_secs_f64();
    done.store(true, Ordering::Relaxed);
    outcome.reloads = reloader
        .join()
        .map_err(|_| anyhow::anyhow!("the reloader panicked"))??;
    outcome.samples = sampler.join().unwrap_or_default();
    let warm = outcome.samples.len() / 5;
    let spread = |f: &dyn Fn(&(f64, u64, u64)) -> u64| {
        let values: Vec<u64> = outcome.samples[warm..].iter().map(f).collect();
        let (min, max) = (
            values.iter().copied().min().unwrap_or(1).max(1),
            values.iter().copied().max().unwrap_or(1),
        );
        max as f64 / min as f64
    };
    outcome.rss_spread = spread(&|s| s.1);
    outcome.fds_spread = spread(&|s| s.2);
    Ok(outcome)
}

/// Rewrites the site every `every` until `done`: how many times.
fn start_reloader(
    done: &Arc<AtomicBool>,
    generation: &Arc<AtomicU64>,
    root: &Path,
    every: Duration,
) -> std::thread::JoinHandle<anyhow::Result<u64>> {
    let (done, generation, root) = (Arc::clone(done), Arc::clone(generation), root.to_path_buf());
    std::thread::spawn(move || -> anyhow::Result<u64> {
        let mut reloads = 0;
        let mut next = Instant::now() + every;
        while !done.load(Ordering::Relaxed) {
            std::thread::sleep(Duration::from_millis(50));
            if Instant::now() < next {
                continue;
            }
            next += every;
            let g = generation.load(Ordering::Relaxed) + 1;
            write_site(&root, g, Some(g - 1))?;
            generation.store(g, Ordering::Relaxed);
            reloads += 1;
        }
        Ok(reloads)
    })
}

/// The server's RSS and open descriptors each second until `done`:
/// (seconds, bytes, descriptors).
fn start_sampler(
    done: &Arc<AtomicBool>,
    pid: u32,
) -> std::thread::JoinHandle<Vec<(f64, u64, u64)>> {
    let done = Arc::clone(done);
    std::thread::spawn(move || {
        let mut samples = Vec::new();
        let t0 = Instant::now();
        while !done.load(Ordering::Relaxed) {
            samples.push((
                t0.elapsed().as_secs_f64(),
                crate::proc::rss_bytes(pid),
                open_fds(pid),
            ));
            std::thread::sleep(Duration::from_secs(1));
        }
        samples
    })
}

fn open_fds(pid: u32) -> u64 {
    crate::proc::tree(pid)
        .into_iter()
        .filter_map(|p| std::fs::read_dir(format!("/proc/{p}/fd")).ok())
        .map(|d| d.count() as u64)
        .sum()
}

// ---- the site ----

fn small_path(i: usize) -> String {
    format!("/s/{i:03}.txt")
}

fn small_len(i: usize) -> usize {
    1024 + (i * 7919) % (15 * 1024)
}

fn large_path(i: usize) -> String {
    format!("/l/{i}.bin")
}

/// The content of `path` at generation `generation`: numbered lines that
/// name both, cut to `len`. Compressible, and any slice tells its source.
fn content(path: &str, generation: u64, len: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(len + 64);
    let mut line = 0u64;
    while out.len() < len {
        let _ = writeln!(out, "{path} generation {generation} line {line:08}");
        line += 1;
    }
    out.truncate(len);
    out
}

/// Writes generation `g` of every file: even-numbered files by write and
/// rename (atomic), odd-numbered ones in place over the previous content.
fn write_site(root: &Path, g: u64, _previous: Option<u64>) -> anyhow::Result<()> {
    std::fs::create_dir_all(root.join("s"))?;
    std::fs::create_dir_all(root.join("l"))?;
    std::fs::write(root.join("1k"), vec![b'k'; 1024])?;
    let files = (0..SMALL_FILES)
        .map(|i| (small_path(i), small_len(i), i))
        .chain((0..LARGE_FILES).map(|i| (large_path(i), LARGE_BYTES, i)));
    for (path, len, i) in files {
        let target = root.join(&path[1..]);
        let body = content(&path, g, len);
        if i % 2 == 0 {
            let temp = target.with_extension("tmp-soak");
            std::fs::write(&temp, &body)?;
            std::fs::rename(&temp, &target)?;
        } else {
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&target)?;
            f.write_all(&body)?;
            f.set_len(len as u64)?;
        }
    }
    Ok(())
}

// ---- the client ----

/// Expected bodies, by (path, generation).
type Bodies = HashMap<(String, u64), Arc<Vec<u8>>>;

#[derive(Default)]
struct Shared {
    /// (path, ETag) → (generation, encoded): per path, one tag, one content.
    etags: Mutex<HashMap<(String, String), (u64, bool)>>,
    /// Expected bodies, by (path, generation).
    bodies: RwLock<Bodies>,
}

impl Shared {
    fn body(&self, path: &str, generation: u64, len: usize) -> Arc<Vec<u8>> {
        let key = (path.to_string(), generation);
        if let Some(b) = self.bodies.read().unwrap().get(&key) {
            return Arc::clone(b);
        }
        let body = Arc::new(content(path, generation, len));
        let mut bodies = self.bodies.write().unwrap();
        // Keep the last few generations only.
        bodies.retain(|(_, g), _| *g + 4 >= generation);
        bodies.insert(key, Arc::clone(&body));
        body
    }
}

#[derive(Default)]
struct Tally {
    requests: u64,
    errors: u64,
    unavailable: u64,
    aborted: u64,
    garbage: u64,
    garbage_answered: u64,
    examples: Vec<String>,
}

struct Client {
    addr: SocketAddr,
    conn: Option<BufReader<TcpStream>>,
    rng: XorShift,
    shared: Arc<Shared>,
    generation: Arc<AtomicU64>,
    /// The last ETag seen per path, for conditional requests.
    last_etag: HashMap<String, String>,
    tally: Tally,
}

impl Client {
    fn new(addr: SocketAddr, seed: u64, shared: Arc<Shared>, generation: Arc<AtomicU64>) -> Client {
        Client {
            addr,
            conn: None,
            rng: XorShift(0x2545_F491_4F6C_DD1D ^ (seed + 1).wrapping_mul(0x9E37_79B9)),
            shared,
            generation,
            last_etag: HashMap::new(),
            tally: Tally::default(),
        }
    }

    fn error(&mut self, what: String) {
        self.tally.errors += 1;
        if self.tally.examples.len() < 5 {
            self.tally.examples.push(what);
        }
        self.conn = None;
    }

    /// One request of the mix.
    fn one(&mut self) {
        let roll = self.rng.next() % 100;
        let small = (self.rng.next() % SMALL_FILES as u64) as usize;
        let large = (self.rng.next() % LARGE_FILES as u64) as usize;
        match roll {
            0..=9 => return self.garbage(),
            10..=14 => {
                // Connection churn: one request, then close.
                self.conn = None;
                self.fetch(
                    &small_path(small),
                    small_len(small),
                    "Connection: close\r\n",
                    false,
                );
                self.conn = None;
            }
            15..=24 => {
                let len = small_len(small);
                let (a, b) = self.span(len);
                self.range(&small_path(small), len, a, b);
            }
            25..=29 => {
                let (a, b) = self.span(LARGE_BYTES);
                self.range(&large_path(large), LARGE_BYTES, a, b);
            }
            30..=34 => {
                self.fetch(&large_path(large), LARGE_BYTES, "", false);
            }
            35..=44 => {
                let path = small_path(small);
                let extra = match self.last_etag.get(&path) {
                    Some(tag) => format!("If-None-Match: {tag}\r\n"),
                    None => String::new(),
                };
                self.fetch(&path, small_len(small), &extra, false);
            }
            45..=54 => {
                self.fetch(
                    &small_path(small),
                    small_len(small),
                    "Accept-Encoding: gzip\r\n",
                    true,
                );
            }
            _ => {
                self.fetch(&small_path(small), small_len(small), "", false);
            }
        }
        self.tally.requests += 1;
    }

    fn span(&mut self, len: usize) -> (usize, usize) {
        let a = (self.rng.next() as usize) % len;
        let b = (a + 1 + (self.rng.next() as usize) % 65536).min(len);
        (a, b)
    }

    fn request(&mut self, text: &str) -> Result<Response, String> {
        if self.conn.is_none() {
            let stream = TcpStream::connect(self.addr).map_err(|e| format!("connect: {e}"))?;
            stream
                .set_read_timeout(Some(Duration::from_secs(10)))
                .map_err(|e| e.to_string())?;
            self.conn = Some(BufReader::with_capacity(64 * 1024, stream));
        }
        let conn = self.conn.as_mut().expect("connected");
        conn.get_mut()
            .write_all(text.as_bytes())
            .map_err(|e| format!("send: {e}"))?;
        tachyon_testkit::read_response(conn, text.starts_with("HEAD"))
    }

    /// GET `path` in full (or 304/503), checked against its generation.
    fn fetch(&mut self, path: &str, len: usize, extra: &str, gzip: bool) {
        let text = format!("GET {path} HTTP/1.1\r\nHost: soak\r\n{extra}\r\n");
        let reply = match self.request(&text) {
            Ok(r) => r,
            Err(e) => return self.error(format!("GET {path}: {e}")),
        };
        if reply.short {
            self.tally.aborted += 1;
            self.conn = None;
            return;
        }
        if reply
            .header("connection")
            .is_some_and(|v| v.eq_ignore_ascii_case("close"))
        {
            self.conn = None;
        }
        match reply.status {
            200 => {}
            304 if extra.starts_with("If-None-Match") => {
                let tag = reply.header("etag").map(str::to_string);
                if tag.as_deref() != self.last_etag.get(path).map(String::as_str) {
                    self.error(format!("304 for {path} with ETag {tag:?}"));
                }
                return;
            }
            503 if reply.header("retry-after").is_some() => {
                self.tally.unavailable += 1;
                return;
            }
            s => return self.error(format!("GET {path}: status {s}")),
        }
        let encoded = reply
            .header("content-encoding")
            .is_some_and(|v| v.eq_ignore_ascii_case("gzip"));
        if encoded && !gzip {
            return self.error(format!("{path}: gzip without Accept-Encoding"));
        }
        let body = if encoded {
            let mut out = Vec::new();
            if let Err(e) = flate2::read::GzDecoder::new(&reply.body[..]).read_to_end(&mut out) {
                return self.error(format!("{path}: bad gzip: {e}"));
            }
            out
        } else {
            reply.body.clone()
        };
        let Some(generation) = generation_of(&body, path) else {
            return self.error(format!("{path}: body names no generation of it"));
        };
        let want = self.shared.body(path, generation, len);
        if body != *want {
            return self.error(format!(
                "{path}: body does not match generation {generation} ({} bytes)",
                body.len()
            ));
        }
        if let Some(tag) = reply.header("etag") {
            let tag = tag.to_string();
            if !encoded {
                self.last_etag.insert(path.to_string(), tag.clone());
            }
            self.check_etag(tag, path, generation, encoded);
        }
    }

    /// A byte range, checked against the generation its ETag stands for
    /// (or, for a tag not seen yet, any recent generation).
    fn range(&mut self, path: &str, len: usize, a: usize, b: usize) {
        let text = format!(
            "GET {path} HTTP/1.1\r\nHost: soak\r\nRange: bytes={a}-{}\r\n\r\n",
            b - 1
        );
        let reply = match self.request(&text) {
            Ok(r) => r,
            Err(e) => return self.error(format!("range {path}: {e}")),
        };
        if reply.short {
            self.tally.aborted += 1;
            self.conn = None;
            return;
        }
        match reply.status {
            206 => {}
            503 if reply.header("retry-after").is_some() => {
                self.tally.unavailable += 1;
                return;
            }
            s => return self.error(format!("range {path}: status {s}")),
        }
        let expected_range = format!("bytes {a}-{}/{len}", b - 1);
        if reply.header("content-range") != Some(expected_range.as_str()) {
            return self.error(format!(
                "range {path}: Content-Range {:?}, wanted {expected_range}",
                reply.header("content-range")
            ));
        }
        let tag = reply.header("etag").map(str::to_string);
        let known = tag.as_ref().and_then(|t| {
            let etags = self.shared.etags.lock().unwrap();
            etags.get(&(path.to_string(), t.clone())).map(|(g, _)| *g)
        });
        let now = self.generation.load(Ordering::Relaxed);
        let candidates: Vec<u64> = match known {
            Some(g) => vec![g],
            None => (now.saturating_sub(3).max(1)..=now + 1).rev().collect(),
        };
        // A slice that does not cover a generation number is the same in
        // several generations: it then says nothing about which one the
        // ETag stands for.
        let matched: Vec<u64> = candidates
            .into_iter()
            .filter(|&g| self.shared.body(path, g, len)[a..b] == reply.body[..])
            .collect();
        match (matched.as_slice(), tag) {
            ([g], Some(tag)) => self.check_etag(tag, path, *g, false),
            ([_, ..], _) => {}
            ([], _) => self.error(format!(
                "range {path} {a}-{b}: bytes of no generation{}",
                if known.is_some() {
                    " its ETag names"
                } else {
                    ""
                }
            )),
        }
    }

    fn check_etag(&mut self, tag: String, path: &str, generation: u64, encoded: bool) {
        let mut etags = self.shared.etags.lock().unwrap();
        let entry = *etags
            .entry((path.to_string(), tag.clone()))
            .or_insert((generation, encoded));
        if entry != (generation, encoded) {
            drop(etags);
            self.error(format!(
                "ETag {tag} of {path} stood for (generation, encoded) {entry:?} and now for ({generation}, {encoded})"
            ));
        }
    }

    /// Garbage or a truncated request on a fresh connection: a 4xx or a
    /// close are both fine; a hang is an error.
    fn garbage(&mut self) {
        self.tally.garbage += 1;
        let Ok(mut stream) = TcpStream::connect(self.addr) else {
            return self.error("connect for garbage".into());
        };
        let _ = stream.set_read_timeout(Some(Duration::from_secs(12)));
        let kind = self.rng.next() % 3;
        let bytes: Vec<u8> = match kind {
            0 => (0..64 + self.rng.next() % 512)
                .map(|_| self.rng.next() as u8)
                .collect(),
            1 => b"GET /s/001.txt HTTP/1.1\r\nHost: soak\r\nContent-Length: x\r\n\r\n".to_vec(),
            _ => b"GET /s/001.txt HTTP/1.1\r\nHo".to_vec(),
        };
        let _ = stream.write_all(&bytes);
        if kind == 2 {
            // Truncated: the client gives up and closes; nothing to read.
            return;
        }
        let mut first = [0u8; 12];
        match stream.read(&mut first) {
            Ok(n) if n >= 10 && first.starts_with(b"HTTP/1.") && first[9] == b'4' => {
                self.tally.garbage_answered += 1
            }
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                self.error("garbage: no answer and no close within 12 s".into())
            }
            Err(_) => {}
        }
    }
}

/// The generation a body names in its first line (`PATH generation G line …`).
fn generation_of(body: &[u8], path: &str) -> Option<u64> {
    let line = body.split(|&b| b == b'\n').next()?;
    let line = std::str::from_utf8(line).ok()?;
    let rest = line.strip_prefix(path)?.strip_prefix(" generation ")?;
    rest.split(' ').next()?.parse().ok()
}

// ---- results ----

fn write_results(out: &Path, outcomes: &[Outcome]) -> anyhow::Result<()> {
    std::fs::write(
        out.join("soak.json"),
        serde_json::to_string_pretty(&outcomes)?,
    )?;
    let mib = |b: u64| b as f64 / 1_048_576.0;
    let mut md = String::from(
        "# Soak\n\n| server | requests | req/s | errors | 503 (file changed) | aborted mid-send | garbage (4xx answered) | reloads | RSS after warm-up (MiB, min–max) | RSS spread | fds (min–max) | fds spread |\n|---|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for o in outcomes {
        let warm = &o.samples[o.samples.len() / 5..];
        let rss: Vec<u64> = warm.iter().map(|s| s.1).collect();
        let fds: Vec<u64> = warm.iter().map(|s| s.2).collect();
        let range = |v: &[u64], f: &dyn Fn(u64) -> String| {
            format!(
                "{}–{}",
                f(v.iter().copied().min().unwrap_or(0)),
                f(v.iter().copied().max().unwrap_or(0))
            )
        };
        md.push_str(&format!(
            "| {} | {} | {:.0} | {} | {} | {} | {} ({}) | {} | {} | {:.2} | {} | {:.2} |\n",
            o.server,
            o.requests,
            o.requests as f64 / o.seconds.max(1e-9),
            o.errors,
            o.unavailable,
            o.aborted,
            o.garbage,
            o.garbage_answered,
            o.reloads,
            range(&rss, &|b| format!("{:.1}", mib(b))),
            o.rss_spread,
            range(&fds, &|n| n.to_string()),
            o.fds_spread,
        ));
    }
    for o in outcomes.iter().filter(|o| !o.examples.is_empty()) {
        md.push_str(&format!("\n{} errors, first ones:\n", o.server));
        for e in &o.examples {
            md.push_str(&format!("- {e}\n"));
        }
    }
    std::fs::write(out.join("soak.md"), &md)?;
    let series = |f: &dyn Fn(&(f64, u64, u64)) -> f64| -> Vec<(String, Vec<(f64, f64)>)> {
        outcomes
            .iter()
            .map(|o| {
                (
                    o.server.clone(),
                    o.samples.iter().map(|s| (s.0, f(s))).collect(),
                )
            })
            .collect()
    };
    let rss = crate::charts::lines(
        "Soak: resident memory over time",
        "seconds",
        "RSS (MiB)",
        &series(&|s| mib(s.1)),
        false,
    )?;
    std::fs::write(out.join("soak-rss.svg"), rss)?;
    let fds = crate::charts::lines(
        "Soak: open descriptors over time",
        "seconds",
        "open fds",
        &series(&|s| s.2 as f64),
        false,
    )?;
    std::fs::write(out.join("soak-fds.svg"), fds)?;
    crate::print_out(&md)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn content_names_its_generation_and_is_deterministic() {
        let a = content("/s/001.txt", 7, 5000);
        assert_eq!(a.len(), 5000);
        assert_eq!(generation_of(&a, "/s/001.txt"), Some(7));
        assert_eq!(a, content("/s/001.txt", 7, 5000));
        assert_ne!(a, content("/s/001.txt", 8, 5000));
        assert_eq!(generation_of(&a, "/s/002.txt"), None);
    }
}
