//! The abuse suite: a normal client's service while a thousand or more
//! hostile connections hold on to the server, side by side with the peers.
//!
//! For each attack and server: a fresh server, an unloaded wrk run (the
//! reference), then the attack, a ramp-up, and the same wrk run beside it.
//! Reported per cell: the normal client's success rate and p99 against its
//! unloaded run, the server's RSS before and at its peak, and how many
//! sockets the server held (whether it kept the attackers or shed them).
//! Rounds interleave servers, as `runner` does, and tables show medians.
//!
//! The attacks: slowhttptest's slowloris (heads that never end), slow body
//! (a POST body trickled), and slow read (responses read a few bytes at a
//! time through a tiny window); and our own flood of pipeliners that send
//! requests for a 64 KiB file as fast as the server takes them and never
//! read a byte. Owns the attackers and abuse.json / abuse.md; not the
//! servers (`peers`) nor wrk's output format (`clients`).

use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{bail, Context};
use serde::Serialize;

use crate::clients::{self, ClientReport};
use crate::peers::{self, Peer, Running};

/// Goals from the trust issue: the normal client keeps this success rate
/// and at most this multiple of its unloaded p99.
const SUCCESS_GOAL: f64 = 0.999;
const P99_GOAL: f64 = 2.0;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Attack {
    Slowloris,
    SlowBody,
    SlowRead,
    Pipeliners,
}

impl Attack {
    pub const ALL: [Attack; 4] = [
        Attack::Slowloris,
        Attack::SlowBody,
        Attack::SlowRead,
        Attack::Pipeliners,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Attack::Slowloris => "slowloris",
            Attack::SlowBody => "slow-body",
            Attack::SlowRead => "slow-read",
            Attack::Pipeliners => "pipeliners",
        }
    }

    pub fn parse(name: &str) -> anyhow::Result<Attack> {
        Attack::ALL
            .into_iter()
            .find(|a| a.name() == name)
            .with_context(|| {
                format!("unknown attack {name:?} (slowloris, slow-body, slow-read, pipeliners)")
            })
    }

    fn describe(self, connections: usize) -> String {
        match self {
            Attack::Slowloris => format!(
                "slowhttptest -H: {connections} connections, a header line every 10 s"
            ),
            Attack::SlowBody => format!(
                "slowhttptest -B: {connections} POSTs of 8 KiB, body trickled every 10 s"
            ),
            Attack::SlowRead => format!(
                "slowhttptest -X: {connections} connections reading 1 MiB 32 bytes per 5 s through a 512–1024 byte window"
            ),
            Attack::Pipeliners => format!(
                "{connections} connections pipelining GETs of a 64 KiB file, never reading"
            ),
        }
    }
}

pub struct AbuseOptions {
    pub servers: Vec<Peer>,
    pub attacks: Vec<Attack>,
    pub connections: usize,
    pub duration: Duration,
    pub ramp: Duration,
    pub rounds: u32,
    pub out: PathBuf,
    pub workers: usize,
    pub peers_dir: PathBuf,
}

/// One server under one attack in one round.
#[derive(Debug, Serialize)]
pub struct Row {
    pub server: String,
    pub attack: Attack,
    pub round: u32,
    pub unloaded: ClientReport,
    pub loaded: ClientReport,
    /// Answered 2xx/3xx over everything the normal client tried.
    pub success: f64,
    pub p99_ratio: f64,
    pub rss_before: u64,
    pub rss_peak: u64,
    /// Sockets the server held at the attack's peak (listeners included).
    pub sockets_peak: u64,
    pub server_alive: bool,
    /// What the attacker saw, in its own words.
    pub attacker: String,
}

pub fn abuse(opts: &AbuseOptions) -> anyhow::Result<()> {
    if peers::which("wrk").is_none() {
        bail!("wrk is not installed (tachyon-bench setup)");
    }
    let slow = opts.attacks.iter().any(|a| *a != Attack::Pipeliners);
    if slow && peers::which("slowhttptest").is_none() {
        bail!("slowhttptest is not installed (apt-get install slowhttptest)");
    }
    raise_fd_limit(opts.connections)?;
    // Peers that drop privileges write their pid and logs here too.
    crate::peers::scratch_dir(&opts.out)?;
    let root = opts.out.join("www");
    write_site(&root)?;
    let env = peers::Env::plain(root, &opts.out, &opts.peers_dir, opts.workers)?;
    let mut rows = Vec::new();
    for round in 1..=opts.rounds {
        for &attack in &opts.attacks {
            for &peer in &opts.servers {
                eprintln!(
                    "abuse: round {round}/{}: {} under {}",
                    opts.rounds,
                    peer.name(),
                    attack.name()
                );
                let row = cell(peer, attack, round, &env, opts)
                    .with_context(|| format!("{} under {}", peer.name(), attack.name()))?;
                eprintln!(
                    "abuse:   success {:.4}%, p99 {:.2} ms → {:.2} ms ({:.2}×), RSS {} → {} MiB, {} sockets",
                    row.success * 100.0,
                    row.unloaded.latency_p99_ms.unwrap_or(0.0),
                    row.loaded.latency_p99_ms.unwrap_or(0.0),
                    row.p99_ratio,
                    row.rss_before >> 20,
                    row.rss_peak >> 20,
                    row.sockets_peak
                );
                rows.push(row);
                std::fs::write(
                    opts.out.join("abuse.json"),
                    serde_json::to_string_pretty(&rows)?,
                )?;
            }
        }
    }
    let md = table(&rows, opts);
    std::fs::write(opts.out.join("abuse.md"), &md)?;
    println!("{md}");
    Ok(())
}

fn cell(
    peer: Peer,
    attack: Attack,
    round: u32,
    env: &peers::Env,
    opts: &AbuseOptions,
) -> anyhow::Result<Row> {
    let mut running = Running::start(peer, env)?;
    let url = running.url("/1k");
    let unloaded = wrk(&url, opts.duration)?;
    let pid = running.pid();
    let rss_before = crate::proc::rss_bytes(pid);
    let log = opts
        .out
        .join(format!("{}-{}-{round}.log", peer.name(), attack.name()));
    let attacker = Attacker::start(attack, &running, opts, &log)?;
    std::thread::sleep(opts.ramp);
    let sampling = Arc::new(AtomicBool::new(true));
    let sampler = {
        let sampling = Arc::clone(&sampling);
        std::thread::spawn(move || {
            let (mut rss, mut sockets) = (0u64, 0u64);
            while sampling.load(Ordering::Relaxed) {
                rss = rss.max(crate::proc::rss_bytes(pid));
                sockets = sockets.max(crate::proc::sockets(pid));
                std::thread::sleep(Duration::from_millis(250));
            }
            (rss, sockets)
        })
    };
    let loaded = wrk(&url, opts.duration);
    sampling.store(false, Ordering::Relaxed);
    let (rss_peak, sockets_peak) = sampler.join().unwrap_or_default();
    let attacker = attacker.stop();
    let server_alive = running.is_alive();
    running.stop();
    // A server that stops answering fails the cell; it does not end the run.
    let loaded = loaded.unwrap_or_else(|e| {
        eprintln!("abuse:   wrk under attack failed: {e:#}");
        ClientReport::default()
    });
    let tried = loaded.requests + loaded.socket_errors;
    let success = if tried == 0 {
        0.0
    } else {
        loaded.requests.saturating_sub(loaded.non_2xx_3xx) as f64 / tried as f64
    };
    let p99_ratio = match (loaded.latency_p99_ms, unloaded.latency_p99_ms) {
        (Some(l), Some(u)) if u > 0.0 => l / u,
        _ => f64::INFINITY,
    };
    Ok(Row {
        server: peer.name().to_string(),
        attack,
        round,
        unloaded,
        loaded,
        success,
        p99_ratio,
        rss_before,
        rss_peak: rss_peak.max(rss_before),
        sockets_peak,
        server_alive,
        attacker,
    })
}

/// The normal client: one wrk thread, 16 keep-alive connections, a 1 KiB file.
fn wrk(url: &str, duration: Duration) -> anyhow::Result<ClientReport> {
    let output = Command::new("wrk")
        .args([
            "-t1",
            "-c16",
            &format!("-d{}s", duration.as_secs().max(1)),
            "--timeout",
            "2s",
            "--latency",
            url,
        ])
        .output()
        .context("running wrk")?;
    let text = String::from_utf8_lossy(&output.stdout);
    let report = clients::parse_wrk(&text)?;
    if report.requests == 0 {
        bail!(
            "wrk completed no request: {}{}",
            text.trim(),
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    Ok(report)
}

fn write_site(root: &Path) -> anyhow::Result<()> {
    std::fs::create_dir_all(root)?;
    std::fs::write(root.join("1k"), vec![b'k'; 1024])?;
    std::fs::write(root.join("64k"), vec![b's'; 64 * 1024])?;
    std::fs::write(root.join("big"), vec![b'b'; 1024 * 1024])?;
    Ok(())
}

/// slowhttptest and the pipeliners need a descriptor per connection.
fn raise_fd_limit(connections: usize) -> anyhow::Result<()> {
    let limit = crate::proc::raise_nofile();
    if limit < connections as u64 + 256 {
        bail!("the open-file limit ({limit}) is too low for {connections} attack connections");
    }
    Ok(())
}

enum Attacker {
    Slow { child: Child, log: PathBuf },
    Flood(Flood),
}

impl Attacker {
    fn start(
        attack: Attack,
        running: &Running,
        opts: &AbuseOptions,
        log: &Path,
    ) -> anyhow::Result<Attacker> {
        let connections = opts.connections.to_string();
        let length = (opts.ramp + opts.duration + Duration::from_secs(30))
            .as_secs()
            .to_string();
        let common = ["-c", &connections, "-r", "1000", "-p", "3", "-l", &length];
        let specific: Vec<String> = match attack {
            Attack::Slowloris => vec!["-H", "-i", "10", "-x", "24", "-u"]
                .into_iter()
                .map(String::from)
                .chain([running.url("/1k")])
                .collect(),
            Attack::SlowBody => vec!["-B", "-i", "10", "-x", "24", "-s", "8192", "-u"]
                .into_iter()
                .map(String::from)
                .chain([running.url("/1k")])
                .collect(),
            Attack::SlowRead => vec![
                "-X", "-w", "512", "-y", "1024", "-n", "5", "-z", "32", "-k", "3", "-u",
            ]
            .into_iter()
            .map(String::from)
            .chain([running.url("/big")])
            .collect(),
            Attack::Pipeliners => {
                return Ok(Attacker::Flood(Flood::start(
                    running.addr(),
                    opts.connections,
                )))
            }
        };
        let out = std::fs::File::create(log)?;
        let child = Command::new("slowhttptest")
            .args(common)
            .args(&specific)
            .stdin(Stdio::null())
            .stdout(out.try_clone()?)
            .stderr(out)
            .spawn()
            .context("starting slowhttptest")?;
        Ok(Attacker::Slow {
            child,
            log: log.to_path_buf(),
        })
    }

    /// Stops the attack and returns what the attacker saw.
    fn stop(self) -> String {
        match self {
            Attacker::Slow { mut child, log } => {
                let pid = rustix::process::Pid::from_child(&child);
                let _ = rustix::process::kill_process(pid, rustix::process::Signal::INT);
                let deadline = Instant::now() + Duration::from_secs(3);
                while Instant::now() < deadline && matches!(child.try_wait(), Ok(None)) {
                    std::thread::sleep(Duration::from_millis(50));
                }
                let _ = child.kill();
                let _ = child.wait();
                last_status(&log)
            }
            Attacker::Flood(flood) => flood.stop(),
        }
    }
}

/// slowhttptest's last status block, one line: how many connections it had
/// pending, connected, closed, and whether its probe saw the service.
fn last_status(log: &Path) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let text = strip_ansi(&text);
    let keys = [
        "pending connections:",
        "connected:",
        "error:",
        "closed:",
        "service available:",
    ];
    keys.iter()
        .filter_map(|key| {
            let line = text.lines().rev().find(|l| l.contains(key))?;
            let value = line.split(key).nth(1)?.trim();
            Some(format!("{} {value}", key.trim_end_matches(':')))
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        if c == '\u{1b}' {
            for c in chars.by_ref() {
                if c.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// Connections that pipeline requests for a 64 KiB file as fast as the
/// server takes them and never read; a closed one is opened again.
struct Flood {
    stop: Arc<AtomicBool>,
    sent: Arc<AtomicU64>,
    reopened: Arc<AtomicU64>,
    thread: std::thread::JoinHandle<usize>,
}

impl Flood {
    fn start(addr: SocketAddr, connections: usize) -> Flood {
        let stop = Arc::new(AtomicBool::new(false));
        let sent = Arc::new(AtomicU64::new(0));
        let reopened = Arc::new(AtomicU64::new(0));
        let thread = {
            let (stop, sent, reopened) =
                (Arc::clone(&stop), Arc::clone(&sent), Arc::clone(&reopened));
            std::thread::spawn(move || {
                let batch = b"GET /64k HTTP/1.1\r\nHost: abuse\r\n\r\n".repeat(64);
                let open = || {
                    let s = TcpStream::connect_timeout(&addr, Duration::from_secs(2)).ok()?;
                    s.set_nonblocking(true).ok()?;
                    Some(s)
                };
                let mut conns: Vec<Option<TcpStream>> = (0..connections).map(|_| open()).collect();
                let mut peak = 0;
                while !stop.load(Ordering::Relaxed) {
                    for slot in conns.iter_mut() {
                        let failed = match slot {
                            Some(s) => match s.write(&batch) {
                                Ok(n) => {
                                    sent.fetch_add(n as u64, Ordering::Relaxed);
                                    false
                                }
                                Err(e) => e.kind() != std::io::ErrorKind::WouldBlock,
                            },
                            None => true,
                        };
                        if failed {
                            *slot = open();
                            reopened.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                    peak = peak.max(conns.iter().filter(|c| c.is_some()).count());
                    std::thread::sleep(Duration::from_millis(100));
                }
                peak
            })
        };
        Flood {
            stop,
            sent,
            reopened,
            thread,
        }
    }

    fn stop(self) -> String {
        self.stop.store(true, Ordering::Relaxed);
        let peak = self.thread.join().unwrap_or(0);
        format!(
            "open {peak}, request bytes sent {} KiB, reopened after a close {}",
            self.sent.load(Ordering::Relaxed) >> 10,
            self.reopened.load(Ordering::Relaxed)
        )
    }
}

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    match values.len() {
        0 => f64::NAN,
        n if n % 2 == 1 => values[n / 2],
        n => (values[n / 2 - 1] + values[n / 2]) / 2.0,
    }
}

/// One table per attack, medians over rounds; a mark on every figure that
/// misses the goals.
fn table(rows: &[Row], opts: &AbuseOptions) -> String {
    let mut md = format!(
        "# Abuse\n\nNormal client: `wrk -t1 -c16 -d{}s --timeout 2s --latency` on a 1 KiB file, \
         unloaded and then {} s into each attack; {} round(s), medians. \
         Goals: success ≥ {:.1}%, p99 ≤ {P99_GOAL}× unloaded, bounded RSS; ✗ marks a miss.\n",
        opts.duration.as_secs(),
        opts.ramp.as_secs(),
        opts.rounds,
        SUCCESS_GOAL * 100.0
    );
    for &attack in &opts.attacks {
        md.push_str(&format!(
            "\n## {}\n\n{}.\n\n| server | unloaded req/s | loaded req/s | success | p99 unloaded (ms) | p99 loaded (ms) | p99 × | RSS before → peak (MiB) | server sockets | attacker (last round) |\n|---|---|---|---|---|---|---|---|---|---|\n",
            attack.name(),
            attack.describe(opts.connections)
        ));
        for &peer in &opts.servers {
            let cell: Vec<&Row> = rows
                .iter()
                .filter(|r| r.attack == attack && r.server == peer.name())
                .collect();
            if cell.is_empty() {
                continue;
            }
            let m = |f: &dyn Fn(&Row) -> f64| median(cell.iter().map(|r| f(r)).collect());
            let success = m(&|r| r.success);
            let ratio = m(&|r| r.p99_ratio);
            let mark = |bad: bool| if bad { " ✗" } else { "" };
            md.push_str(&format!(
                "| {} | {:.0} | {:.0} | {:.3}%{} | {:.2} | {:.2} | {:.2}{} | {:.0} → {:.0} | {:.0} | {}{} |\n",
                peer.name(),
                m(&|r| r.unloaded.rps),
                m(&|r| r.loaded.rps),
                success * 100.0,
                mark(success < SUCCESS_GOAL),
                m(&|r| r.unloaded.latency_p99_ms.unwrap_or(f64::NAN)),
                m(&|r| r.loaded.latency_p99_ms.unwrap_or(f64::NAN)),
                ratio,
                mark(ratio > P99_GOAL),
                m(&|r| r.rss_before as f64 / 1048576.0),
                m(&|r| r.rss_peak as f64 / 1048576.0),
                m(&|r| r.sockets_peak as f64),
                cell.last().map_or("", |r| r.attacker.as_str()),
                if cell.iter().all(|r| r.server_alive) {
                    ""
                } else {
                    " (server died)"
                },
            ));
        }
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slowhttptest_status_is_read_from_its_last_block() {
        let dir = tachyon_testkit::Scratch::new("abuse-log");
        let log = dir.join("s.log");
        std::fs::write(
            &log,
            "\u{1b}[1mslow HTTP test status on 5th second:\n\ninitializing:        0\npending connections:       10\nconnected:           900\nerror:               0\nclosed:              90\nservice available:   YES\u{1b}[0m\n\
             slow HTTP test status on 10th second:\n\ninitializing:        0\npending connections:       0\nconnected:           1000\nerror:               0\nclosed:              100\nservice available:   YES\n",
        )
        .unwrap();
        assert_eq!(
            last_status(&log),
            "pending connections 0, connected 1000, error 0, closed 100, service available YES"
        );
    }

    #[test]
    fn attacks_parse_by_name() {
        for a in Attack::ALL {
            assert_eq!(Attack::parse(a.name()).unwrap(), a);
        }
        assert!(Attack::parse("ddos").is_err());
    }
}
