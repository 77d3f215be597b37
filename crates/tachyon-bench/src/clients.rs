//! Load generators: how each is invoked, run and read.
//!
//! Each parser keeps a real sample output in `tests/fixtures/` and a test
//! against it. A parser that cannot find the figures it needs returns an
//! error: a cell is never recorded as zero requests because a line moved.

use std::io::Read;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use serde::{Deserialize, Serialize};

use crate::suites::{Cell, Load, Over, Script, Workload};

impl Load {
    /// The program that generates this load.
    pub fn program(&self) -> &'static str {
        match self {
            Load::Wrk { .. } => "wrk",
            Load::Ab { .. } => "ab",
            Load::H2load { over: Over::H3, .. } | Load::H3Fresh { .. } => "tachyon-bench",
            Load::H2load { .. } => "h2load",
            Load::Oha { .. } => "oha",
            Load::STime { .. } => "openssl",
        }
    }

    /// The program and its first arguments: `tachyon-bench h3load` for
    /// HTTP/3 (our own client, with h2load's flags).
    fn command(&self) -> Vec<String> {
        match self {
            Load::H2load { over: Over::H3, .. } | Load::H3Fresh { .. } => {
                let bench = std::env::current_exe().map(|p| p.display().to_string());
                let bench = bench.unwrap_or_else(|_| "tachyon-bench".into());
                vec![bench, "h3load".into()]
            }
            _ => vec![self.program().to_string()],
        }
    }

    /// The command line against `target`. wrk's Lua scripts are in
    /// `scripts`; `rate` is the offered rate of an open-loop (oha) run.
    pub fn argv(
        &self,
        target: Target,
        accept_encoding: Option<&str>,
        scripts: &Path,
        rate: f64,
    ) -> Vec<String> {
        let s = |v: &str| v.to_string();
        let mut a = self.command();
        match self {
            Load::Wrk {
                threads,
                conns,
                duration_s,
                latency,
                script,
                close,
            } => {
                a.extend([
                    format!("-t{threads}"),
                    format!("-c{conns}"),
                    format!("-d{duration_s}s"),
                    s("--timeout"),
                    s("8s"),
                ]);
                if *latency {
                    a.push(s("--latency"));
                }
                if *close {
                    a.extend([s("-H"), s("Connection: close")]);
                }
                if let Some(accept) = accept_encoding {
                    a.extend([s("-H"), format!("Accept-Encoding: {accept}")]);
                }
                if let Some(script) = script {
                    let path = scripts.join(script.file_name());
                    a.extend([s("-s"), path.display().to_string()]);
                }
            }
            Load::Ab {
                requests,
                conns,
                keepalive,
            } => {
                a.extend([s("-q"), s("-r"), s("-n"), requests.to_string()]);
                a.extend([s("-c"), conns.to_string(), s("-s"), s("30")]);
                if *keepalive {
                    a.push(s("-k"));
                }
            }
            Load::H2load {
                conns,
                threads,
                streams,
                duration_s,
                over,
            } => {
                if *over == Over::H1 {
                    a.push(s("--h1"));
                }
                a.extend([
                    format!("-c{conns}"),
                    format!("-t{threads}"),
                    format!("-m{streams}"),
                ]);
                match &target {
                    // Whole passes over the list: every server answers
                    // the same requests.
                    Target::Traffic { requests, .. } => a.push(format!("-n{requests}")),
                    Target::Url(_) => a.push(format!("-D{duration_s}")),
                }
            }
            Load::Oha {
                conns, duration_s, ..
            } => a.extend([
                s("--no-tui"),
                s("--output-format"),
                s("json"),
                s("--latency-correction"),
                s("-z"),
                format!("{duration_s}s"),
                s("-c"),
                conns.to_string(),
                s("-q"),
                format!("{rate:.0}"),
            ]),
            Load::STime { resume, duration_s } => {
                return s_time_argv(&target, *resume, *duration_s)
            }
            Load::H3Fresh { requests, conns } => {
                a.extend([s("--fresh"), format!("-c{conns}"), format!("-n{requests}")]);
            }
        }
        match target {
            Target::Url(url) => a.push(url),
            Target::Traffic { args, .. } => a.extend(args),
        }
        a
    }

    /// Reads what the program printed.
    pub fn parse(&self, text: &str) -> anyhow::Result<ClientReport> {
        match self {
            Load::Wrk { .. } => parse_wrk(text),
            Load::Ab { .. } => parse_ab(text),
            Load::H2load { .. } | Load::H3Fresh { .. } => parse_h2load(text),
            Load::Oha { .. } => parse_oha_json(text),
            Load::STime { resume, .. } => parse_s_time(text, *resume),
        }
    }

    /// Several requests in flight per connection: responses are not
    /// counted one per request in the byte check.
    pub fn pipelined(&self) -> bool {
        matches!(
            self,
            Load::H2load { .. }
                | Load::Wrk {
                    script: Some(Script::Pipeline16),
                    ..
                }
        )
    }
}

/// What a client run requests.
pub enum Target {
    /// One URL, every time.
    Url(String),
    /// A real-site cell's arguments (`traffic`): h2load's `-i` list of
    /// paths and the browser's fields, and how many requests: whole passes
    /// over the list by every connection.
    Traffic { args: Vec<String>, requests: u64 },
}

/// A second of load on `url`, so that no server is measured cold.
pub fn warm_up(url: String) -> anyhow::Result<()> {
    let argv: Vec<String> = ["wrk", "-t1", "-c8", "-d1s"]
        .iter()
        .map(|s| s.to_string())
        .chain([url])
        .collect();
    run(&argv, Duration::from_secs(20), None, &mut || {})?;
    Ok(())
}

/// Every load generator the cells need is on PATH.
pub fn check_installed(cells: &[Cell]) -> anyhow::Result<()> {
    let mut needed: Vec<&str> = vec!["wrk"];
    for cell in cells {
        if let Workload::Client(load) = &cell.workload {
            needed.push(load.program());
        }
    }
    needed.sort_unstable();
    needed.dedup();
    let missing: Vec<&str> = needed
        .into_iter()
        // tachyon-bench is the HTTP/3 client itself (h3load).
        .filter(|t| *t != "tachyon-bench" && crate::peers::which(t).is_none())
        .collect();
    if !missing.is_empty() {
        // oha is not a Debian package: setup builds it only when asked.
        let setup = if missing.contains(&"oha") {
            "tachyon-bench setup --with-oha"
        } else {
            "tachyon-bench setup"
        };
        bail!(
            "missing load generators: {}: run `{setup}`",
            missing.join(", ")
        );
    }
    Ok(())
}

/// Runs a client to completion (reaped, so its CPU lands in RUSAGE_CHILDREN);
/// kills it past `timeout`. `probe` is called once, `probe_at` after the
/// start, if the client is still running then.
pub fn run(
    argv: &[String],
    timeout: Duration,
    probe_at: Option<Duration>,
    probe: &mut dyn FnMut(),
) -> anyhow::Result<String> {
    let mut probe_at = probe_at;
    let mut child = Command::new(&argv[0])
        .args(&argv[1..])
        .env("OPENSSL_CONF", browser_order_conf()?)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", argv[0]))?;
    let mut stdout = child.stdout.take().expect("piped");
    let reader = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break status;
        }
        if probe_at.is_some_and(|at| started.elapsed() >= at) {
            probe_at = None;
            probe();
        }
        if started.elapsed() > timeout {
            let _ = child.kill();
            let _ = child.wait();
            bail!("{} did not finish within {:?}", argv[0], timeout);
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let text = reader.join().unwrap_or_default();
    let mut err = String::new();
    if let Some(mut stderr) = child.stderr.take() {
        let _ = stderr.read_to_string(&mut err);
    }
    // wrk and ab exit non-zero on some errors but still print totals; the
    // parser decides. A client that printed nothing is a failure.
    if text.trim().is_empty() {
        bail!(
            "{} exited with {status} and no output: {}",
            argv[0],
            err.trim()
        );
    }
    Ok(text)
}

/// An OpenSSL configuration that makes libssl's clients (wrk, ab,
/// `openssl s_time`) offer the TLS 1.3 suites in the browsers' order,
/// AES-128-GCM first, as h2load and h3load do. OpenSSL's own order puts
/// AES-256-GCM first, and servers take the client's order by default
/// (nginx, h2o, tachyon), so without it every HTTPS/1.1 cell would
/// measure a suite browsers do not get (`bench/results/cipher-order-2026-11-27`).
/// Debian's `/etc/ssl/openssl.cnf` sets nothing for libssl, so replacing
/// it loses nothing.
const BROWSER_ORDER_CNF: &str = "\
# Written by tachyon-bench for its load generators: TLS 1.3 suites in the browsers' order.
openssl_conf = openssl_init
[openssl_init]
ssl_conf = ssl_sect
[ssl_sect]
system_default = system_default_sect
[system_default_sect]
Ciphersuites = TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:TLS_CHACHA20_POLY1305_SHA256
";

/// The path of [`BROWSER_ORDER_CNF`], written once per process (through a
/// rename, so that two runs at once never read half a file).
fn browser_order_conf() -> anyhow::Result<&'static Path> {
    static PATH: std::sync::OnceLock<std::path::PathBuf> = std::sync::OnceLock::new();
    if let Some(path) = PATH.get() {
        return Ok(path);
    }
    let dir = std::env::temp_dir();
    let path = dir.join("tachyon-bench-browser-order.cnf");
    let part = dir.join(format!(
        "tachyon-bench-browser-order.cnf.{}",
        std::process::id()
    ));
    std::fs::write(&part, BROWSER_ORDER_CNF)
        .with_context(|| format!("writing {}", part.display()))?;
    std::fs::rename(&part, &path).with_context(|| format!("writing {}", path.display()))?;
    Ok(PATH.get_or_init(|| path))
}

/// What one client run reported.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
pub struct ClientReport {
    pub requests: u64,
    pub duration_s: f64,
    pub rps: f64,
    pub bytes_read: u64,
    /// Connect/read/write/timeout errors, and for ab its "Failed requests".
    pub socket_errors: u64,
    /// How the client broke the errors down, when it does.
    pub socket_error_detail: Option<String>,
    pub non_2xx_3xx: u64,
    pub latency_avg_ms: Option<f64>,
    pub latency_p50_ms: Option<f64>,
    pub latency_p90_ms: Option<f64>,
    pub latency_p99_ms: Option<f64>,
    pub latency_p999_ms: Option<f64>,
}

/// Parses wrk 4.x output (with or without `--latency`).
///
/// ```text
///   100657 requests in 1.10s, 127.00MB read
///   Non-2xx or 3xx responses: 85144
///   Socket errors: connect 0, read 5, write 0, timeout 0
/// Requests/sec:  91542.15
/// ```
pub fn parse_wrk(text: &str) -> anyhow::Result<ClientReport> {
    let mut report = ClientReport::default();
    let mut found_total = false;
    for line in text.lines().map(str::trim) {
        if let Some((reqs, rest)) = line.split_once(" requests in ") {
            report.requests = reqs.trim().parse().context("wrk request count")?;
            let (dur, read) = rest
                .split_once(", ")
                .ok_or_else(|| anyhow!("wrk totals line: {line}"))?;
            report.duration_s = duration_s(dur)?;
            report.bytes_read = size_bytes(read.trim_end_matches(" read"))?;
            found_total = true;
        } else if let Some(v) = line.strip_prefix("Requests/sec:") {
            report.rps = v.trim().parse().context("wrk Requests/sec")?;
        } else if let Some(v) = line.strip_prefix("Non-2xx or 3xx responses:") {
            report.non_2xx_3xx = v.trim().parse()?;
        } else if let Some(v) = line.strip_prefix("Socket errors:") {
            report.socket_error_detail = Some(v.trim().to_string());
            report.socket_errors = v
                .split(',')
                .filter_map(|part| part.split_whitespace().last()?.parse::<u64>().ok())
                .sum();
        } else if let Some(v) = line
            .strip_prefix("Latency ")
            .filter(|_| line != "Latency Distribution")
        {
            // "Latency   150.81us  742.50us  12.63ms   97.55%": the average
            // comes first. "Latency Distribution" heads the percentiles.
            if let Some(avg) = v.split_whitespace().next() {
                report.latency_avg_ms = latency_ms(avg).ok();
            }
        } else if let Some((pct, value)) = line.split_once('%') {
            let value = latency_ms(value.trim()).ok();
            match pct.trim() {
                "50" => report.latency_p50_ms = value,
                "90" => report.latency_p90_ms = value,
                "99" => report.latency_p99_ms = value,
                _ => {}
            }
        }
    }
    if !found_total || report.rps == 0.0 && report.requests > 0 {
        bail!("wrk output has no totals:\n{text}");
    }
    Ok(report)
}

/// Parses ApacheBench 2.3 output.
pub fn parse_ab(text: &str) -> anyhow::Result<ClientReport> {
    let mut report = ClientReport::default();
    let mut complete = None;
    let field = |line: &str, key: &str| {
        line.strip_prefix(key)
            .map(|v| v.split_whitespace().next().unwrap_or("").to_string())
    };
    for line in text.lines() {
        if let Some(v) = field(line, "Complete requests:") {
            complete = Some(v.parse::<u64>()?);
        } else if let Some(v) = field(line, "Failed requests:") {
            report.socket_errors = v.parse()?;
        } else if let Some(v) = field(line, "Non-2xx responses:") {
            report.non_2xx_3xx = v.parse()?;
        } else if let Some(v) = field(line, "Time taken for tests:") {
            report.duration_s = v.parse()?;
        } else if let Some(v) = field(line, "Total transferred:") {
            report.bytes_read = v.parse()?;
        } else if let Some(v) = field(line, "Requests per second:") {
            report.rps = v.parse()?;
        } else if line.starts_with("Time per request:") && line.ends_with("(mean)") {
            report.latency_avg_ms = field(line, "Time per request:").and_then(|v| v.parse().ok());
        } else {
            let t = line.trim();
            if let Some((pct, ms)) = t.split_once('%') {
                let ms = ms
                    .split_whitespace()
                    .next()
                    .and_then(|v| v.parse::<f64>().ok());
                match pct.trim() {
                    "50" => report.latency_p50_ms = ms,
                    "90" => report.latency_p90_ms = ms,
                    "99" => report.latency_p99_ms = ms,
                    _ => {}
                }
            }
        }
    }
    report.requests =
        complete.ok_or_else(|| anyhow!("ab output has no 'Complete requests':\n{text}"))?;
    Ok(report)
}

/// Parses h2load output (HTTP/1.1 or HTTP/2).
///
/// ```text
/// finished in 7.77ms, 257334.02 req/s, 324.68MB/s
/// requests: 2000 total, 2000 started, 2000 done, 2000 succeeded, 0 failed, 0 errored, 0 timeout
/// status codes: 2000 2xx, 0 3xx, 0 4xx, 0 5xx
/// traffic: 2.52MB (2646000) total, …
/// ```
pub fn parse_h2load(text: &str) -> anyhow::Result<ClientReport> {
    let mut report = ClientReport::default();
    let mut found = false;
    for line in text.lines().map(str::trim) {
        if let Some(rest) = line.strip_prefix("finished in ") {
            let mut parts = rest.split(", ");
            report.duration_s = duration_s(parts.next().unwrap_or(""))?;
            report.rps = parts
                .next()
                .unwrap_or("")
                .trim_end_matches(" req/s")
                .parse()
                .context("h2load req/s")?;
            found = true;
        } else if let Some(rest) = line.strip_prefix("requests: ") {
            let count = |name: &str| {
                rest.split(", ")
                    .find(|p| p.ends_with(name))
                    .and_then(|p| p.split_whitespace().next()?.parse::<u64>().ok())
                    .unwrap_or(0)
            };
            report.requests = count("succeeded");
            report.socket_errors = count("failed") + count("errored") + count("timeout");
        } else if let Some(rest) = line.strip_prefix("status codes: ") {
            report.non_2xx_3xx = rest
                .split(", ")
                .filter(|p| p.ends_with("4xx") || p.ends_with("5xx"))
                .filter_map(|p| p.split_whitespace().next()?.parse::<u64>().ok())
                .sum();
        } else if let Some(rest) = line.strip_prefix("traffic: ") {
            let open = rest
                .find('(')
                .ok_or_else(|| anyhow!("h2load traffic line"))?;
            let close = rest
                .find(')')
                .ok_or_else(|| anyhow!("h2load traffic line"))?;
            report.bytes_read = rest[open + 1..close].parse()?;
        } else if let Some(rest) = line.strip_prefix("time for request:") {
            let mut cols = rest.split_whitespace();
            let _min = cols.next();
            let _max = cols.next();
            report.latency_avg_ms = cols.next().and_then(|v| latency_ms(v).ok());
        }
    }
    if !found {
        bail!("h2load output has no 'finished in' line:\n{text}");
    }
    Ok(report)
}

/// Parses `openssl s_time` (OpenSSL 3.0). It prints one character per
/// connection (`r` resumed, `*` a full handshake) and then totals; its
/// times are the client's CPU and whole wall seconds, so the duration is
/// left at zero for the caller, who timed the run, to fill in. When
/// `resume` was asked for, every connection not resumed is an error: a
/// server that does not resume would otherwise be measured on full
/// handshakes under the resumed cell's name.
///
/// ```text
/// 4179 connections in 0.66s; 6331.82 connections/user sec, bytes read 5574786
/// 4179 connections in 2 real seconds, 1334 bytes read per connection
/// ```
pub fn parse_s_time(text: &str, resume: bool) -> anyhow::Result<ClientReport> {
    let mut report = ClientReport::default();
    let (mut resumed, mut full) = (0u64, 0u64);
    let mut found = false;
    for line in text.lines().map(str::trim) {
        let marks = !line.is_empty() && line.chars().all(|c| matches!(c, 'r' | '*' | 't' | '3'));
        if marks {
            resumed += line.chars().filter(|&c| c == 'r').count() as u64;
            full += line.chars().filter(|&c| c != 'r').count() as u64;
        } else if let Some((count, rest)) = line.split_once(" connections in ") {
            // The first totals line; the second repeats the count per
            // connection ("… real seconds, 1334 bytes read per connection").
            if let Some((_, bytes)) = rest.split_once("connections/user sec, bytes read ") {
                report.requests = count.trim().parse().context("s_time connection count")?;
                report.bytes_read = bytes.trim().parse().context("s_time bytes read")?;
                found = true;
            }
        }
    }
    if !found {
        bail!("s_time output has no totals:\n{text}");
    }
    if resumed + full != report.requests {
        bail!(
            "s_time marked {} connections but counted {}",
            resumed + full,
            report.requests
        );
    }
    if resume && full > 0 {
        report.socket_errors = full;
        report.socket_error_detail = Some(format!("{full} handshakes not resumed"));
    }
    Ok(report)
}

/// Parses oha's `--output-format json` summary.
pub fn parse_oha_json(text: &str) -> anyhow::Result<ClientReport> {
    let v: serde_json::Value = serde_json::from_str(text).context("oha JSON")?;
    let summary = &v["summary"];
    let pct = |key: &str| v["latencyPercentiles"][key].as_f64().map(|s| s * 1000.0);
    let total = summary["total"]
        .as_f64()
        .ok_or_else(|| anyhow!("oha: no summary.total"))?;
    let rps = summary["requestsPerSec"]
        .as_f64()
        .ok_or_else(|| anyhow!("oha: no requestsPerSec"))?;
    let codes = v["statusCodeDistribution"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let ok: u64 = codes
        .iter()
        .filter(|(k, _)| k.starts_with('2') || k.starts_with('3'))
        .filter_map(|(_, n)| n.as_u64())
        .sum();
    let bad: u64 = codes
        .iter()
        .filter(|(k, _)| !(k.starts_with('2') || k.starts_with('3')))
        .filter_map(|(_, n)| n.as_u64())
        .sum();
    // oha cuts the requests still in flight when its `-z` duration ends and
    // lists them as "aborted due to deadline": the client stopping, not the
    // server failing, so they are not errors.
    let failures: Vec<(&String, u64)> = v["errorDistribution"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(kind, _)| !kind.contains("aborted due to deadline"))
                .filter_map(|(kind, n)| Some((kind, n.as_u64()?)))
                .collect()
        })
        .unwrap_or_default();
    let errors: u64 = failures.iter().map(|(_, n)| n).sum();
    Ok(ClientReport {
        requests: ok,
        duration_s: total,
        rps,
        bytes_read: summary["sizePerRequest"].as_f64().unwrap_or(0.0) as u64 * ok,
        socket_errors: errors,
        socket_error_detail: (!failures.is_empty()).then(|| {
            failures
                .iter()
                .map(|(kind, n)| format!("{kind}: {n}"))
                .collect::<Vec<_>>()
                .join(", ")
        }),
        non_2xx_3xx: bad,
        latency_avg_ms: summary["average"].as_f64().map(|s| s * 1000.0),
        latency_p50_ms: pct("p50"),
        latency_p90_ms: pct("p90"),
        latency_p99_ms: pct("p99"),
        latency_p999_ms: pct("p99.9"),
    })
}

/// `1.10s`, `7.77ms`, `2m` → seconds.
fn duration_s(text: &str) -> anyhow::Result<f64> {
    let t = text.trim();
    let (num, scale) = if let Some(n) = t.strip_suffix("ms") {
        (n, 1e-3)
    } else if let Some(n) = t.strip_suffix("us") {
        (n, 1e-6)
    } else if let Some(n) = t.strip_suffix('s') {
        (n, 1.0)
    } else if let Some(n) = t.strip_suffix('m') {
        (n, 60.0)
    } else {
        bail!("unknown duration {t:?}")
    };
    Ok(num
        .parse::<f64>()
        .with_context(|| format!("duration {t:?}"))?
        * scale)
}

/// `150.81us`, `3.61ms`, `1.2s` → milliseconds.
fn latency_ms(text: &str) -> anyhow::Result<f64> {
    Ok(duration_s(text)? * 1000.0)
}

/// `127.00MB`, `21.60KB`, `2.1GB`, `512B` → bytes (wrk uses powers of 1024).
fn size_bytes(text: &str) -> anyhow::Result<u64> {
    let t = text.trim();
    let (num, scale) = [
        ("GB", 1u64 << 30),
        ("MB", 1 << 20),
        ("KB", 1 << 10),
        ("B", 1),
    ]
    .iter()
    .find_map(|(suffix, scale)| t.strip_suffix(suffix).map(|n| (n, *scale)))
    .ok_or_else(|| anyhow!("unknown size {t:?}"))?;
    Ok((num.parse::<f64>().with_context(|| format!("size {t:?}"))? * scale as f64) as u64)
}

/// openssl s_time's command line: it takes the host and the path apart,
/// not a URL.
fn s_time_argv(target: &Target, resume: bool, duration_s: u32) -> Vec<String> {
    let url = match target {
        Target::Url(url) => url.as_str(),
        Target::Traffic { .. } => "",
    };
    let rest = url.strip_prefix("https://").unwrap_or(url);
    let (host, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let mut a: Vec<String> = ["openssl", "s_time", "-connect", host, "-www"]
        .map(String::from)
        .into();
    a.push(if path.is_empty() { "/" } else { path }.to_string());
    a.push(if resume { "-reuse" } else { "-new" }.to_string());
    a.extend(["-time".to_string(), duration_s.to_string()]);
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> String {
        std::fs::read_to_string(format!(
            "{}/tests/fixtures/{name}",
            env!("CARGO_MANIFEST_DIR")
        ))
        .unwrap()
    }

    /// `openssl s_server -www` on an ephemeral loopback port with a fresh
    /// self-signed certificate; killed on drop.
    struct SServer {
        child: std::process::Child,
        port: u16,
        /// Its certificate's folder, removed after it stops.
        _dir: tachyon_testkit::Scratch,
    }

    impl SServer {
        fn start(name: &str) -> SServer {
            use std::io::BufRead;
            let dir = tachyon_testkit::Scratch::new(name);
            let tls = crate::peers::TlsFiles::make(dir.path()).unwrap();
            let mut child = Command::new("openssl")
                .args(["s_server", "-accept", "127.0.0.1:0", "-www", "-cert"])
                .arg(&tls.cert)
                .arg("-key")
                .arg(&tls.key)
                .stdin(Stdio::null())
                .stdout(Stdio::piped())
                .stderr(Stdio::null())
                .spawn()
                .unwrap();
            let lines = std::io::BufReader::new(child.stdout.take().unwrap()).lines();
            let port = lines
                .map_while(Result::ok)
                .find_map(|l| {
                    l.strip_prefix("ACCEPT 127.0.0.1:")
                        .map(|p| p.parse().unwrap())
                })
                .expect("s_server says where it listens");
            SServer {
                child,
                port,
                _dir: dir,
            }
        }
    }

    impl Drop for SServer {
        fn drop(&mut self) {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }

    /// The suite ab negotiated, from its "SSL/TLS Protocol:" line.
    fn ab_suite(text: &str) -> String {
        let line = text
            .lines()
            .find(|l| l.starts_with("SSL/TLS Protocol:"))
            .unwrap();
        line.split(',').nth(1).unwrap().to_string()
    }

    #[test]
    fn openssl_clients_offer_the_browsers_suite_first() {
        if crate::peers::which("ab").is_none() {
            eprintln!("skipped: no ab (apache2-utils)");
            return;
        }
        let server = SServer::start("order");
        let argv: Vec<String> = ["ab", "-q", "-n1"]
            .map(String::from)
            .into_iter()
            .chain([format!("https://127.0.0.1:{}/", server.port)])
            .collect();
        // OpenSSL's own order, which the server takes: what the clients
        // offered before.
        let plain = Command::new("ab").args(&argv[1..]).output().unwrap();
        let plain = ab_suite(&String::from_utf8_lossy(&plain.stdout));
        assert_eq!(plain, "TLS_AES_256_GCM_SHA384");
        let text = run(&argv, Duration::from_secs(20), None, &mut || {}).unwrap();
        assert_eq!(ab_suite(&text), "TLS_AES_128_GCM_SHA256");
    }

    #[test]
    fn s_time_counts_connections_and_resumptions() {
        let r = parse_s_time(&fixture("s_time-reuse.txt"), true).unwrap();
        assert_eq!(
            (r.requests, r.bytes_read, r.socket_errors),
            (4179, 5_574_786, 0)
        );
        let r = parse_s_time(&fixture("s_time-new.txt"), false).unwrap();
        assert_eq!((r.requests, r.socket_errors), (2428, 0));
        // Full handshakes where resumption was asked for are errors.
        let r = parse_s_time(&fixture("s_time-new.txt"), true).unwrap();
        assert_eq!(r.socket_errors, 2428);
        assert!(parse_s_time("rr\n", true).is_err());
    }

    #[test]
    fn s_time_takes_the_host_and_path_apart() {
        let load = Load::STime {
            resume: true,
            duration_s: 3,
        };
        let argv = load.argv(
            Target::Url("https://127.0.0.1:8443/1k".into()),
            None,
            Path::new("/"),
            0.0,
        );
        assert_eq!(
            argv.join(" "),
            "openssl s_time -connect 127.0.0.1:8443 -www /1k -reuse -time 3"
        );
    }

    #[test]
    fn wrk_with_latency_distribution() {
        let r = parse_wrk(&fixture("wrk-latency.txt")).unwrap();
        assert_eq!(r.requests, 102_991);
        assert!((r.duration_s - 1.00).abs() < 1e-9);
        assert!((r.rps - 102_926.16).abs() < 1e-6);
        assert_eq!(r.bytes_read, (129.94 * 1024.0 * 1024.0) as u64);
        assert_eq!(r.latency_p50_ms, Some(0.151));
        assert_eq!(r.latency_p99_ms, Some(1.37));
        assert!((r.latency_avg_ms.unwrap() - 0.22015).abs() < 1e-9);
        assert_eq!((r.non_2xx_3xx, r.socket_errors), (0, 0));
    }

    #[test]
    fn wrk_counts_non_2xx_and_socket_errors() {
        let r = parse_wrk(&fixture("wrk-non2xx.txt")).unwrap();
        assert_eq!(r.non_2xx_3xx, 108_037);
        let with_errors = "  10 requests in 1.00s, 1.00KB read\n  Socket errors: connect 1, read 2, write 3, timeout 4\nRequests/sec: 10.00\n";
        let r = parse_wrk(with_errors).unwrap();
        assert_eq!(r.socket_errors, 10);
        assert_eq!(
            r.socket_error_detail.as_deref(),
            Some("connect 1, read 2, write 3, timeout 4")
        );
        assert!(
            parse_wrk("garbage").is_err(),
            "no totals is an error, not a zero row"
        );
    }

    #[test]
    fn ab_keep_alive_run() {
        let r = parse_ab(&fixture("ab-keepalive.txt")).unwrap();
        assert_eq!(r.requests, 2000);
        assert_eq!(r.socket_errors, 0);
        assert_eq!(r.bytes_read, 2_694_000);
        assert!((r.rps - 84_947.33).abs() < 1e-6);
        assert!(r.latency_p50_ms.is_some());
        assert!(parse_ab("ab: invalid URL").is_err());
    }

    #[test]
    fn h2load_h1_run() {
        let r = parse_h2load(&fixture("h2load-h1.txt")).unwrap();
        assert_eq!(r.requests, 2000);
        assert_eq!(r.bytes_read, 2_646_000);
        assert!((r.rps - 87_195.36).abs() < 1e-6);
        assert!((r.duration_s - 0.02294).abs() < 1e-9);
        assert_eq!(r.socket_errors, 0);
    }

    #[test]
    fn oha_json_summary() {
        let text = r#"{"summary":{"successRate":1.0,"total":2.0,"requestsPerSec":500.0,"average":0.001,"sizePerRequest":1024},
            "latencyPercentiles":{"p50":0.0005,"p90":0.001,"p99":0.002,"p99.9":0.004},
            "statusCodeDistribution":{"200":1000},"errorDistribution":{}}"#;
        let r = parse_oha_json(text).unwrap();
        assert_eq!(r.requests, 1000);
        assert_eq!(r.latency_p999_ms, Some(4.0));
        assert_eq!(r.bytes_read, 1024 * 1000);
        let cut = text.replace(
            r#""errorDistribution":{}"#,
            r#""errorDistribution":{"aborted due to deadline":21,"connection closed":2}"#,
        );
        let r = parse_oha_json(&cut).unwrap();
        assert_eq!(
            r.socket_errors, 2,
            "requests cut at the deadline are not errors"
        );
        assert_eq!(
            r.socket_error_detail.as_deref(),
            Some("connection closed: 2")
        );
    }
}
