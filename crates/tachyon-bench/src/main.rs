//! `tachyon-bench`: runs the seeds' static-server benchmarks against tachyon
//! and the servers people use, side by side on one machine, and reports
//! tables, JSON and charts.
//!
//! # Layout
//! - `suites`: one function per seed workload, as cells (client commands).
//! - `peers`: how each server is configured, started and stopped.
//! - `clients`: load-generator command lines, running them, their output.
//! - `proc`: server CPU and memory from /proc, client CPU from getrusage.
//! - `runner`: interleaved scheduling, verification, the results file.
//! - `footprint`: memory at rest and per idle connection (no client).
//! - `machine`: the facts about the machine a run records.
//! - `report`, `charts`: Markdown, HTML and SVG from the results file only.
//! - `summary`, `protocol_cost`: tachyon ÷ the best peer per cell, and
//!   tachyon's newer protocols ÷ its older ones, from finished runs.
//! - `floor`: the reference minimal server.
//! - `setup`: installs the tools and peers.
//! - `build`: tachyon's snapshot build time and memory on a large site.
//! - `soak`: millions of verified requests while the site changes.
//! - `abuse`: a normal client's service beside slowloris, slow body, slow
//!   read and non-reading pipeliners.

mod abuse;
mod browser;
mod build;
mod charts;
mod clients;
mod congestion;
mod floor;
mod footprint;
mod h3load;
mod leftovers;
mod machine;
mod peers;
mod proc;
mod protocol_cost;
mod realsite;
mod report;
mod results;
mod runner;
mod setup;
mod site;
mod soak;
mod sources;
mod suites;
mod summary;
mod traffic;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    version,
    about = "Benchmarks tachyon against nginx, lighttpd, h2o, Caddy and Apache, side by side"
)]
struct Cli {
    #[command(subcommand)]
    command: Cmd,
}

#[derive(Subcommand)]
enum Cmd {
    /// Install load generators and peer servers (Debian packages; needs root)
    Setup {
        /// Also build static-web-server from crates.io
        #[arg(long)]
        with_sws: bool,
        /// Also build oha from crates.io (the latency suite's open-loop
        /// client; not packaged by Debian)
        #[arg(long)]
        with_oha: bool,
    },
    /// Run suites against servers and write results.json and a report
    Run(RunArgs),
    /// Write report.md, report.html and charts from a results folder
    Report { dir: PathBuf },
    /// Time tachyon's snapshot build on a generated site, and its memory
    Build {
        /// Files in the site
        #[arg(long, default_value_t = 10_000)]
        files: usize,
        /// Total size of the site, MiB
        #[arg(long, default_value_t = 200)]
        mib: u64,
        /// Starts per setting (with and without compression)
        #[arg(long, default_value_t = 3)]
        rounds: u32,
        /// Output folder (the site and build.json)
        #[arg(long, default_value = "bench-results/build")]
        out: PathBuf,
    },
    /// Millions of mixed requests, every response verified, while the site
    /// is rewritten every few seconds; RSS and descriptors over time
    Soak(SoakArgs),
    /// A normal wrk client's success rate, p99 and the server's RSS while
    /// 1,000+ hostile connections attack, against its unloaded run
    Abuse(AbuseArgs),
    /// Print the README's figures table from finished runs (one row per
    /// seed and protocol), or write it into the README between its markers
    Figures {
        /// Results folders (each with results.json)
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Rewrite the table in this README
        #[arg(long)]
        readme: Option<PathBuf>,
    },
    /// Print one row per cell of finished runs: tachyon ÷ the best peer,
    /// raw and per server CPU-second, below issue 43's goals in italics,
    /// beside the same cells of earlier runs; then tachyon's cost per
    /// request over HTTP/2 (HTTP/3) ÷ its own over the older protocol on
    /// the same traffic, where the runs have both
    Cells {
        /// Results folders (each with results.json)
        #[arg(required = true)]
        dirs: Vec<PathBuf>,
        /// Earlier runs whose same cells (suite and label) go beside
        #[arg(long, num_args = 1..)]
        before: Vec<PathBuf>,
    },
    /// Capture the request headers of headless Chromium (the real-site
    /// suites send them) into bench/browser/chromium.json
    BrowserHeaders {
        /// The browser to run headless
        #[arg(long, default_value = "chromium-headless-shell")]
        browser: PathBuf,
        /// Where to write the captured set
        #[arg(long, default_value = "bench/browser/chromium.json")]
        out: PathBuf,
    },
    /// An HTTP/3 load client with h2load's flags and output (Debian's
    /// h2load has no HTTP/3): `h3load -c32 -m100 -D10 https://127.0.0.1:8443/1k`
    H3load {
        /// Connections
        #[arg(short = 'c', default_value_t = 1)]
        clients: usize,
        /// Requests in flight per connection
        #[arg(short = 'm', default_value_t = 1)]
        streams: usize,
        /// Requests in all
        #[arg(short = 'n')]
        requests: Option<u64>,
        /// Seconds to run
        #[arg(short = 'D')]
        duration: Option<f64>,
        /// Threads (one only; taken for h2load's command lines)
        #[arg(short = 't', default_value_t = 1)]
        threads: usize,
        /// A request header, `NAME: VALUE`, repeatable
        #[arg(short = 'H')]
        headers: Vec<String>,
        /// A file of paths (or URLs) requested in turn
        #[arg(short = 'i')]
        input: Option<PathBuf>,
        /// Seconds to keep the connections open, idle, after the last
        /// response (for the server's memory per idle connection)
        #[arg(long)]
        hold: Option<f64>,
        /// A new connection (a full handshake) for every request
        #[arg(long)]
        fresh: bool,
        /// https://IP:PORT/PATH
        url: String,
    },
    /// Run the floor server (started by `run`; not a web server)
    #[command(hide = true)]
    Floor {
        #[arg(long)]
        port: u16,
        #[arg(long)]
        threads: usize,
        #[arg(long)]
        root: PathBuf,
    },
}

#[derive(clap::Args)]
struct RunArgs {
    /// Suites, comma-separated: sparecores, linuxconfig, boa, fabhttp, binserve, efficiency,
    /// pipeline, churn, large, compressed, latency, c10k, footprint, tls (HTTPS; servers
    /// without TLS are skipped, not in all), h2 and h2c (HTTP/2 over TLS and cleartext, h2load;
    /// each alone), logging (issue 17, not in all), real (the Python docs and a web app with a
    /// browser's headers, HTTP/1.1), real-h2c and real-tls (the same over h2c, and over TLS with
    /// HTTP/1.1 and HTTP/2; each alone), h3 (HTTP/3 with h3load beside HTTP/2 over TLS; alone;
    /// nginx-mainline, h2o-master and caddy speak it), quick, smoke, all
    #[arg(long, value_delimiter = ',', default_value = "quick")]
    suite: Vec<String>,
    /// Servers, comma-separated: tachyon, tachyon-bare, tachyon-sendfile, tachyon-baseline
    /// (the binary in TACHYON_BASELINE), tachyon-logged (access log on), floor, nginx,
    /// nginx-default, nginx-logged (access log on, buffer=64k), nginx-mainline (1.31, built
    /// by setup), lighttpd, h2o, h2o-master (built by setup), caddy, apache2, sws
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "tachyon,floor,nginx,nginx-default,nginx-mainline,lighttpd,h2o,h2o-master,caddy,apache2"
    )]
    servers: Vec<String>,
    /// Rounds per cell; servers are interleaved within each round
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Shorter runs and trimmed matrices
    #[arg(long)]
    quick: bool,
    /// Output folder [default: bench-results/UNIX-TIME]
    #[arg(long)]
    out: Option<PathBuf>,
    /// Worker processes/threads per server [default: cores]
    #[arg(long)]
    workers: Option<usize>,
    /// Folder of peer config templates
    #[arg(long)]
    peers: Option<PathBuf>,
    /// Seconds per timed run, overriding each suite's own
    #[arg(long)]
    duration: Option<u32>,
    /// Continue an interrupted run in --out with the same suites, servers
    /// and rounds: complete cells are kept, the rest are run
    #[arg(long, requires = "out")]
    resume: bool,
    /// Print the cells and how long they would take; run nothing
    #[arg(long, conflicts_with = "resume")]
    plan: bool,
    /// Only these cells, comma-separated: a whole label names that cell
    /// alone, a part of one every cell containing it (e.g. `--cells
    /// "64k c1 m10,close"`): a targeted re-measure of a few cells
    #[arg(long, value_delimiter = ',')]
    cells: Vec<String>,
    /// The system's TCP congestion control for the run (e.g. `cubic`,
    /// Debian's default; needs root), put back when it ends. Every server,
    /// tachyon and the floor included, is under the system's either way
    #[arg(long)]
    congestion: Option<String>,
}

#[derive(clap::Args)]
struct SoakArgs {
    /// Servers, comma-separated, run one after the other
    #[arg(long, value_delimiter = ',', default_value = "tachyon")]
    servers: Vec<String>,
    /// Requests per server (10% of them garbage or truncated)
    #[arg(long, default_value_t = 10_000_000)]
    requests: u64,
    /// Concurrent client connections
    #[arg(long, default_value_t = 16)]
    clients: usize,
    /// Seconds between rewrites of the site
    #[arg(long, default_value_t = 10)]
    reload_every: u64,
    /// Output folder (the site, soak.json, soak.md, charts)
    #[arg(long, default_value = "bench-results/soak")]
    out: PathBuf,
    /// Worker processes/threads per server [default: cores]
    #[arg(long)]
    workers: Option<usize>,
}

#[derive(clap::Args)]
struct AbuseArgs {
    /// Servers, comma-separated; interleaved within each round
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "tachyon,nginx,lighttpd,h2o"
    )]
    servers: Vec<String>,
    /// Attacks, comma-separated: slowloris, slow-body, slow-read, pipeliners
    #[arg(
        long,
        value_delimiter = ',',
        default_value = "slowloris,slow-body,slow-read,pipeliners"
    )]
    attacks: Vec<String>,
    /// Attack connections
    #[arg(long, default_value_t = 1500)]
    connections: usize,
    /// Seconds of each wrk run (unloaded, then under attack)
    #[arg(long, default_value_t = 10)]
    duration: u64,
    /// Seconds between the attack's start and the loaded wrk run
    #[arg(long, default_value_t = 5)]
    ramp: u64,
    /// Rounds; tables show medians
    #[arg(long, default_value_t = 3)]
    rounds: u32,
    /// Output folder (abuse.json, abuse.md, attacker logs)
    #[arg(long, default_value = "bench-results/abuse")]
    out: PathBuf,
    /// Worker processes/threads per server [default: cores]
    #[arg(long)]
    workers: Option<usize>,
}

fn main() -> ExitCode {
    let result = match Cli::parse().command {
        Cmd::Setup { with_sws, with_oha } => setup::setup(with_sws, with_oha),
        Cmd::Run(args) => run_command(args),
        Cmd::Report { dir } => report::report(&dir),
        Cmd::Build {
            files,
            mib,
            rounds,
            out,
        } => build::build(&build::BuildOptions {
            files,
            bytes: mib * 1024 * 1024,
            rounds,
            out,
        }),
        Cmd::Soak(args) => soak_command(args),
        Cmd::Figures { dirs, readme } => summary::figures(&dirs, readme.as_deref()),
        Cmd::Cells { dirs, before } => summary::cells_command(&dirs, &before),
        Cmd::BrowserHeaders { browser, out } => {
            let browser = peers::which(&browser.to_string_lossy()).unwrap_or(browser);
            browser::capture(&browser, &out)
        }
        Cmd::Abuse(args) => abuse_command(args),
        Cmd::H3load {
            clients,
            streams,
            requests,
            duration,
            threads: _,
            headers,
            input,
            hold,
            fresh,
            url,
        } => h3load_paths(input.as_deref()).and_then(|paths| {
            h3load::run(&h3load::Options {
                url,
                connections: clients,
                streams,
                requests,
                duration: duration.map(std::time::Duration::from_secs_f64),
                headers,
                paths,
                hold: hold.map(std::time::Duration::from_secs_f64),
                fresh,
            })
        }),
        Cmd::Floor {
            port,
            threads,
            root,
        } => floor::serve(port, threads, &root),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.is::<StdoutClosed>() => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("tachyon-bench: {e:#}");
            ExitCode::FAILURE
        }
    }
}

/// Standard output's reader went away (`tachyon-bench cells DIR | head`):
/// the command stops writing and ends quietly, as a shell user expects.
#[derive(Debug)]
struct StdoutClosed;

impl std::fmt::Display for StdoutClosed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("standard output closed")
    }
}

impl std::error::Error for StdoutClosed {}

/// Writes `text` to standard output. `print!` would panic on a closed pipe
/// (Rust ignores SIGPIPE); this returns `StdoutClosed` for `main` instead.
fn print_out(text: &str) -> anyhow::Result<()> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Err(StdoutClosed.into()),
        other => other.map_err(Into::into),
    }
}

/// `--servers a,b,c`, each name checked.
fn parse_servers(names: &[String]) -> anyhow::Result<Vec<peers::Peer>> {
    names.iter().map(|s| peers::Peer::parse(s.trim())).collect()
}

/// This process's command line as a shell would take it back: a report's
/// "Command:" line must run as printed (`--cells "1k "`).
fn invocation() -> String {
    runner::shell_words(std::env::args())
}

/// `--workers`, defaulting to one per core.
fn workers_or_cores(workers: Option<usize>) -> usize {
    workers.unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

fn run_command(args: RunArgs) -> anyhow::Result<()> {
    let RunArgs {
        suite,
        servers,
        rounds,
        quick,
        out,
        workers,
        peers,
        duration,
        resume,
        plan,
        cells,
        congestion,
    } = args;
    anyhow::ensure!(rounds > 0, "--rounds must be at least 1");
    // Absolute: peers resolve relative paths in their configs (nginx's
    // certificate, for one) against their own prefix, not our directory.
    let out = std::path::absolute(out.unwrap_or_else(runner::default_out))?;
    let options = runner::RunOptions {
        suites: suite,
        servers: parse_servers(&servers)?,
        rounds,
        quick,
        out: out.clone(),
        workers: workers_or_cores(workers),
        peers_dir: peers.unwrap_or_else(peers::default_peers_dir),
        command_line: invocation(),
        duration_s: duration,
        resume,
        plan,
        only: cells,
        congestion,
    };
    if !plan {
        stop_left_servers();
    }
    runner::run(&options)?;
    if plan {
        return Ok(());
    }
    report::report(&out)
}

/// Before a command starts servers: those a killed run left are stopped.
fn stop_left_servers() {
    for line in leftovers::stop_left() {
        eprintln!("tachyon-bench: {line}");
    }
}

fn soak_command(args: SoakArgs) -> anyhow::Result<()> {
    stop_left_servers();
    let SoakArgs {
        servers,
        requests,
        clients,
        reload_every,
        out,
        workers,
    } = args;
    anyhow::ensure!(clients > 0, "--clients must be at least 1");
    soak::soak(&soak::SoakOptions {
        servers: parse_servers(&servers)?,
        requests,
        clients,
        reload_every: std::time::Duration::from_secs(reload_every.max(1)),
        out,
        workers: workers_or_cores(workers),
        peers_dir: peers::default_peers_dir(),
    })
}

fn abuse_command(args: AbuseArgs) -> anyhow::Result<()> {
    stop_left_servers();
    let AbuseArgs {
        servers,
        attacks,
        connections,
        duration,
        ramp,
        rounds,
        out,
        workers,
    } = args;
    let attacks = attacks
        .iter()
        .map(|a| abuse::Attack::parse(a.trim()))
        .collect::<anyhow::Result<Vec<_>>>()?;
    anyhow::ensure!(rounds > 0, "--rounds must be at least 1");
    abuse::abuse(&abuse::AbuseOptions {
        servers: parse_servers(&servers)?,
        attacks,
        connections,
        duration: std::time::Duration::from_secs(duration.max(1)),
        ramp: std::time::Duration::from_secs(ramp),
        rounds,
        out,
        workers: workers_or_cores(workers),
        peers_dir: peers::default_peers_dir(),
    })
}

/// `-i`'s paths: a line each, a URL's path taken from it.
fn h3load_paths(input: Option<&std::path::Path>) -> anyhow::Result<Vec<String>> {
    let Some(input) = input else {
        return Ok(Vec::new());
    };
    let text = std::fs::read_to_string(input)?;
    Ok(text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(|l| {
            match l
                .strip_prefix("https://")
                .and_then(|r| r.find('/').map(|at| &r[at..]))
            {
                Some(path) => path.to_string(),
                None => l.to_string(),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    use super::*;

    /// `run --help` lists every suite and server the harness knows.
    #[test]
    fn the_run_help_names_every_suite_and_server() {
        let mut command = Cli::command();
        let run = command.find_subcommand_mut("run").unwrap();
        let help = run.render_long_help().to_string();
        let words: Vec<&str> = help
            .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
            .collect();
        for suite in suites::Suite::ALL {
            assert!(words.contains(&suite.name()), "suite {suite} missing");
        }
        for peer in peers::Peer::ALL {
            assert!(
                words.contains(&peer.name()),
                "server {} missing",
                peer.name()
            );
        }
    }
}
