//! Running suites: start every server once, then for each cell and round run
//! the client against each server in turn (A B C, then B C A, …), measuring
//! the server's CPU from /proc and the client's from getrusage.
//!
//! Owns scheduling, verification of what was served and the results file; it
//! does not format reports. Invariant: every row records the exact client
//! command, and a row with any problem has `ok = false`.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use anyhow::{bail, Context};
use indicatif::{ProgressBar, ProgressStyle};

use crate::clients;
use crate::machine::{cpu, machine_facts};
use crate::peers::{Env, Peer, Running, TlsFiles};
use crate::proc;
use crate::results::{Results, Row, ServerInfo, SCHEMA_VERSION};
use crate::suites::{self, Cell, Load, Over, Suite, Workload};

/// What `tachyon-bench run` was asked to do.
pub struct RunOptions {
    pub suites: Vec<String>,
    pub servers: Vec<Peer>,
    pub rounds: u32,
    pub quick: bool,
    pub out: PathBuf,
    pub workers: usize,
    pub peers_dir: PathBuf,
    pub command_line: String,
    /// Overrides every timed cell's duration (wrk, h2load, oha).
    pub duration_s: Option<u32>,
    /// Continue the run whose results.json is in `out`: its complete cells
    /// are kept, the others (re)run.
    pub resume: bool,
    /// Print the cells and the expected duration, run nothing.
    pub plan: bool,
    /// When not empty, only the cells these ask for (see `asked_for`).
    pub only: Vec<String>,
    /// The system's TCP congestion control for the run (`congestion`).
    pub congestion: Option<String>,
}

pub fn run(opts: &RunOptions) -> anyhow::Result<()> {
    let interrupted = Arc::new(AtomicBool::new(false));
    for signal in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(signal, Arc::clone(&interrupted))?;
    }
    crate::proc::raise_nofile();
    let cells = cells_of(opts)?;
    if opts.plan {
        return crate::print_out(&plan(&cells, opts.rounds, &opts.servers));
    }
    clients::check_installed(&cells)?;
    if opts.congestion.is_none() {
        if let Some(warning) = crate::congestion::left_changed() {
            eprintln!("warning: {warning}");
        }
    }
    // Held to the end of the run: dropping it puts the previous one back.
    let _congestion = opts
        .congestion
        .as_deref()
        .map(crate::congestion::ForTheRun::set)
        .transpose()?;
    let results_path = opts.out.join("results.json");
    let replacing = !opts.resume && results_path.exists();
    let previous = if opts.resume {
        Some(read_previous(&results_path, &opts.servers)?)
    } else {
        if replacing {
            eprintln!(
                "note: {} holds an earlier run; this run replaces it (--resume would continue it)",
                results_path.display()
            );
        }
        None
    };
    let env = prepare(opts, &cells, &interrupted)?;
    // Preparing (a real site's variants) can take a minute; a stop asked
    // meanwhile ends the run here, before any server starts.
    if interrupted.load(Ordering::Relaxed) {
        bail!("interrupted while preparing the run: nothing was measured");
    }
    let mut servers = start_servers(&opts.servers, &env)?;
    if replacing {
        // Its servers are up: from here the folder is this run's, and the
        // earlier run's report would describe a results.json no longer there.
        crate::report::remove(&opts.out)?;
    }
    let mut results = match previous {
        None => fresh_results(opts, &servers),
        Some(previous) => continued(previous, &cells, opts)?,
    };
    let schedule = Schedule {
        cells: &cells,
        rounds: opts.rounds,
        env: &env,
        results_path: &results_path,
        interrupted: &interrupted,
    };
    schedule.interleave(&mut servers, &mut results)?;
    for server in &mut servers {
        server.stop();
    }
    let interrupted = interrupted.load(Ordering::Relaxed);
    if !interrupted {
        results.finished = Some(now());
    }
    std::fs::write(&results_path, serde_json::to_vec_pretty(&results)?)?;
    summarize(opts, &results, &results_path, interrupted);
    Ok(())
}

/// Starts each server and warms it up, in the order asked.
fn start_servers(peers: &[Peer], env: &Env) -> anyhow::Result<Vec<Running>> {
    let mut servers = Vec::new();
    for &peer in peers {
        let server = Running::start(peer, env)?;
        clients::warm_up(server.url("/1k"))
            .with_context(|| format!("warming up {}", server.peer.name()))?;
        servers.push(server);
    }
    Ok(servers)
}

/// An interrupted run's results, to go on with: its rows of the cells
/// asked for (`complete_cells`), and this start noted as a resumption.
fn continued(previous: Results, cells: &[Cell], opts: &RunOptions) -> anyhow::Result<Results> {
    let rows = complete_cells(previous.rows, cells, opts.rounds, &opts.servers)?;
    let mut resumed = previous.resumed;
    resumed.push(now());
    Ok(Results {
        rows,
        resumed,
        finished: None,
        ..previous
    })
}

/// Every cell of the requested suites, with `--duration` applied.
fn cells_of(opts: &RunOptions) -> anyhow::Result<Vec<Cell>> {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get()) as u32;
    let mut cells = Vec::new();
    for suite in &opts.suites {
        cells.extend(suites::cells(suite, opts.quick, cores)?);
    }
    if !opts.only.is_empty() {
        let labels: Vec<String> = cells.iter().map(|c| c.label.clone()).collect();
        cells.retain(|cell| asked_for(&cell.label, &opts.only, &labels));
        anyhow::ensure!(
            !cells.is_empty(),
            "--cells {:?} matches no cell of these suites (--plan lists them)",
            opts.only.join(",")
        );
    }
    if let Some(d) = opts.duration_s {
        for cell in &mut cells {
            cell.set_duration(d);
        }
    }
    Ok(cells)
}

/// Whether `--cells` asks for the cell labelled `label`: a whole label
/// names that cell alone (`64k c1 m10`, not `64k c1 m100` too), a part
/// of one every cell that contains it (`64k c1`).
fn asked_for(label: &str, wanted: &[String], labels: &[String]) -> bool {
    wanted.iter().any(|want| {
        if labels.contains(want) {
            label == want
        } else {
            label.contains(want.as_str())
        }
    })
}

/// The results file of the run being resumed, checked to be of the same setup.
fn read_previous(path: &Path, servers: &[Peer]) -> anyhow::Result<Results> {
    let bytes =
        std::fs::read(path).with_context(|| format!("--resume: reading {}", path.display()))?;
    let previous: Results = serde_json::from_slice(&bytes)
        .with_context(|| format!("--resume: parsing {}", path.display()))?;
    same_setup(&previous, servers)?;
    Ok(previous)
}

/// The sites, scripts and binaries every server needs, checked before
/// anything starts.
fn prepare(opts: &RunOptions, cells: &[Cell], interrupted: &AtomicBool) -> anyhow::Result<Env> {
    let www = opts.out.join("www");
    let run_dir = opts.out.join("run");
    crate::peers::scratch_dir(&run_dir)?;
    if opts.servers.iter().any(|p| p.is_external()) {
        readable_by_workers(&opts.out)?;
    }
    let tls = tls_run(cells, &opts.servers)?
        .then(|| TlsFiles::make(&run_dir))
        .transpose()?;
    let h2c = h2c_run(cells, &opts.servers)?;
    crate::site::generate(&www)?;
    let real = cells.iter().any(|c| c.traffic.is_some());
    if real {
        crate::realsite::generate(&www, interrupted)?;
    }
    crate::site::generate_small(&opts.out.join("www-small"))?;
    for script in [suites::Script::FabRandom, suites::Script::Pipeline16] {
        std::fs::write(run_dir.join(script.file_name()), script.source())?;
    }
    let bench_bin = std::env::current_exe()?;
    let tachyon_bin = crate::peers::tachyon_bin()?;
    let wants_tachyon = opts.servers.iter().any(|p| {
        matches!(
            p,
            Peer::Tachyon | Peer::TachyonBare | Peer::TachyonSendfile | Peer::TachyonLogged
        )
    });
    if wants_tachyon && !tachyon_bin.is_file() {
        bail!(
            "{} not found: build it with `cargo build --release -p tachyon`",
            tachyon_bin.display()
        );
    }
    if opts.servers.contains(&Peer::TachyonBaseline) {
        let baseline = crate::peers::baseline_bin()?;
        // A build against itself measures nothing, and looks like a
        // result: most often a copied tachyon-bench whose neighbour is the
        // baseline (tachyon is the binary beside tachyon-bench).
        if wants_tachyon && crate::peers::same_build(&tachyon_bin, &baseline) {
            bail!(
                "tachyon ({}) and tachyon-baseline (TACHYON_BASELINE={}) are the same build: \
                 run the tachyon-bench beside the build to measure",
                tachyon_bin.display(),
                baseline.display()
            );
        }
    }
    for peer in &opts.servers {
        if peer.is_external() && peer.executable().is_none() {
            let why = match (peer.program(), peer.source()) {
                (Some(program), _) => format!("{program} not on PATH"),
                (None, Some(source)) => format!("not built from {}", source.archive()),
                (None, None) => "unknown".into(),
            };
            bail!(
                "{} is not installed ({why}): run `tachyon-bench setup`",
                peer.name()
            );
        }
    }
    Ok(Env {
        root: www.canonicalize()?,
        run_dir: run_dir.canonicalize()?,
        peers_dir: opts.peers_dir.clone(),
        tachyon_bin,
        bench_bin,
        workers: opts.workers,
        tls,
        h2c,
        h3: cells.iter().any(|c| c.suite == Suite::H3),
        variants_wait: real,
    })
}

/// Whether this run serves HTTPS: when its cells are the `tls` suite's,
/// which cannot share a run with plain cells, nor run servers without TLS.
fn tls_run(cells: &[Cell], servers: &[Peer]) -> anyhow::Result<bool> {
    let tls = cells.iter().filter(|c| c.suite.is_tls()).count();
    if tls == 0 {
        return Ok(false);
    }
    if tls != cells.len() {
        bail!("the tls and h2 suites run alone: their servers speak only HTTPS");
    }
    refuse_unable(
        servers,
        Peer::speaks_tls,
        "the tls suite needs servers with TLS",
    )?;
    Ok(true)
}

/// Whether this run serves h2c: when its cells are the `h2c` suite's,
/// which run alone (nginx's h2c listener speaks only HTTP/2).
fn h2c_run(cells: &[Cell], servers: &[Peer]) -> anyhow::Result<bool> {
    let h2c = cells.iter().filter(|c| c.suite.is_h2c()).count();
    if h2c == 0 {
        return Ok(false);
    }
    if h2c != cells.len() {
        bail!("the h2c suite runs alone: nginx's h2c listener speaks only HTTP/2");
    }
    refuse_unable(
        servers,
        Peer::speaks_h2c,
        "the h2c suites need servers that speak HTTP/2 on a plain port",
    )?;
    Ok(true)
}

/// Refuses a run with servers `can` rules out, naming them after `needs`
/// (what the suite needs of a server), before any server starts.
fn refuse_unable(servers: &[Peer], can: fn(Peer) -> bool, needs: &str) -> anyhow::Result<()> {
    let unable: Vec<&str> = servers
        .iter()
        .filter(|&&p| !can(p))
        .map(|p| p.name())
        .collect();
    if !unable.is_empty() {
        bail!("{needs}; not: {}", unable.join(", "));
    }
    Ok(())
}

fn fresh_results(opts: &RunOptions, servers: &[Running]) -> Results {
    Results {
        schema_version: SCHEMA_VERSION,
        machine: machine_facts(),
        command: opts.command_line.clone(),
        started: now(),
        finished: None,
        resumed: Vec::new(),
        servers: servers
            .iter()
            .map(|s| ServerInfo {
                name: s.peer.name().into(),
                version: crate::setup::version_of(s.peer),
                workers: opts.workers,
                rss_at_rest_bytes: s.rss_at_rest,
                binary_bytes: s.binary_bytes,
            })
            .collect(),
        rows: Vec::new(),
    }
}

/// The order of measurements: cell by cell, round by round, every server
/// in turn.
struct Schedule<'a> {
    cells: &'a [Cell],
    rounds: u32,
    env: &'a Env,
    results_path: &'a Path,
    interrupted: &'a AtomicBool,
}

impl Schedule<'_> {
    /// Measures every cell not done yet, saving the results after each;
    /// stops early (results kept) when interrupted.
    fn interleave(&self, servers: &mut [Running], results: &mut Results) -> anyhow::Result<()> {
        // Only complete cells survive `complete_cells`, so any row means done.
        let done = |cell: &Cell, rows: &[Row]| rows.iter().any(|r| is_of(r, cell));
        let peers: Vec<Peer> = servers.iter().map(|s| s.peer).collect();
        let total_s: u64 = self
            .cells
            .iter()
            .filter(|c| !done(c, &results.rows))
            .map(|c| run_seconds(c) * runs_of(c, self.rounds, &peers) as u64)
            .sum();
        let bar = ProgressBar::new(total_s);
        bar.set_style(
            ProgressStyle::with_template(
                "{elapsed_precise} [{wide_bar}] {percent}% ETA {eta} {msg}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        for cell in self.cells {
            if done(cell, &results.rows) {
                continue;
            }
            for round in 0..self.rounds {
                let n = servers.len();
                for i in 0..n {
                    if self.interrupted.load(Ordering::Relaxed) {
                        bar.abandon_with_message("interrupted: results so far are saved");
                        return Ok(());
                    }
                    // Rotate the order each round so no server always runs first.
                    let server = &mut servers[(i + round as usize) % n];
                    if !applies(server.peer, &cell.workload) {
                        continue;
                    }
                    bar.set_message(format!(
                        "{} {} · {} · round {}",
                        cell.suite,
                        cell.label,
                        server.peer.name(),
                        round + 1
                    ));
                    results
                        .rows
                        .push(measure(cell, server, round + 1, self.env));
                    bar.inc(run_seconds(cell));
                }
            }
            std::fs::write(self.results_path, serde_json::to_vec_pretty(results)?)?;
        }
        bar.finish_and_clear();
        Ok(())
    }
}

/// Where the results are, how to resume, and how many runs had problems.
fn summarize(opts: &RunOptions, results: &Results, path: &Path, interrupted: bool) {
    println!("results: {}", path.display());
    if interrupted {
        println!(
            "interrupted: the same command with --resume --out {} measures the cells left",
            opts.out.display()
        );
    }
    let bad = results.rows.iter().filter(|r| !r.ok).count();
    if bad > 0 {
        println!(
            "{bad} of {} runs had problems (flagged in the report)",
            results.rows.len()
        );
    }
}

/// Expected wall time of one client run, for the ETA: the cell's own time
/// plus about a second of starting the client and reading /proc (measured:
/// a sparecores row of `-d2` takes 3 s).
fn run_seconds(cell: &Cell) -> u64 {
    (cell.expected_s() + 1.0).ceil() as u64
}

/// How many client runs `cell` takes: every round of every server it
/// applies to.
fn runs_of(cell: &Cell, rounds: u32, servers: &[Peer]) -> usize {
    let servers = servers
        .iter()
        .filter(|&&p| applies(p, &cell.workload))
        .count();
    servers * rounds as usize
}

/// Whether `row` was measured in `cell`.
fn is_of(row: &Row, cell: &Cell) -> bool {
    row.suite == cell.suite && row.cell == cell.label
}

/// What a run would do: cells and expected time per suite, and the total.
fn plan(cells: &[Cell], rounds: u32, servers: &[Peer]) -> String {
    let mut out = String::new();
    let mut suites: Vec<(Suite, usize, u64)> = Vec::new();
    for cell in cells {
        let seconds = run_seconds(cell) * runs_of(cell, rounds, servers) as u64;
        match suites.iter_mut().find(|(s, ..)| *s == cell.suite) {
            Some(entry) => {
                entry.1 += 1;
                entry.2 += seconds;
            }
            None => suites.push((cell.suite, 1, seconds)),
        }
    }
    let hms = |s: u64| format!("{}h{:02}m{:02}s", s / 3600, s / 60 % 60, s % 60);
    for (suite, n, seconds) in &suites {
        out += &format!("{suite:<12} {n:>3} cells  {}\n", hms(*seconds));
    }
    let total: u64 = suites.iter().map(|s| s.2).sum();
    out += &format!(
        "{:<12} {:>3} cells  {} ({} servers, {rounds} rounds)\n",
        "total",
        cells.len(),
        hms(total),
        servers.len()
    );
    out
}

/// A run continues only where it started and with the servers it measured:
/// the same cores and CPU model, and the same version of every server (for
/// tachyon and the floor, the same source commit), or its cells would compare
/// two machines or two builds.
fn same_setup(previous: &Results, servers: &[Peer]) -> anyhow::Result<()> {
    // The report lists the servers the run started with: a resumed run
    // with another list would measure servers it does not describe, or
    // leave cells without a server it does.
    let mut before: Vec<&str> = previous.servers.iter().map(|s| s.name.as_str()).collect();
    let mut asked: Vec<&str> = servers.iter().map(|p| p.name()).collect();
    before.sort_unstable();
    asked.sort_unstable();
    if before != asked {
        bail!(
            "--resume: the earlier run measured --servers {}, this one asks for {}; resume with the earlier list, or start another --out",
            previous
                .servers
                .iter()
                .map(|s| s.name.as_str())
                .collect::<Vec<_>>()
                .join(","),
            asked.join(",")
        );
    }
    let (cores, model) = cpu();
    let there = &previous.machine;
    if (cores, &model) != (there.cores, &there.cpu_model) {
        bail!(
            "--resume: the earlier run was on {} cores of {}, this machine has {cores} of {model}",
            there.cores,
            there.cpu_model,
        );
    }
    let congestion = crate::machine::machine_congestion();
    if !there.tcp_congestion.is_empty() && there.tcp_congestion != congestion {
        bail!(
            "--resume: the earlier run was under TCP congestion control {}, the system's is now {congestion}; resume with --congestion {}",
            there.tcp_congestion,
            there.tcp_congestion
        );
    }
    for &peer in servers {
        let now = crate::setup::version_of(peer);
        if let Some(then) = previous.servers.iter().find(|s| s.name == peer.name()) {
            if then.version != now {
                bail!(
                    "--resume: the earlier run measured {} {:?}, this one would measure {:?}",
                    peer.name(),
                    then.version,
                    now
                );
            }
        }
    }
    Ok(())
}

/// The rows of an interrupted run worth keeping: those of cells that have
/// every round of every server that applies. A cell cut short is dropped and
/// run again whole, so its servers stay interleaved within one sitting.
/// Rows from another plan (other servers, suites or rounds) are an error:
/// mixing them would compare runs that were not side by side.
fn complete_cells(
    rows: Vec<Row>,
    cells: &[Cell],
    rounds: u32,
    servers: &[Peer],
) -> anyhow::Result<Vec<Row>> {
    for row in &rows {
        if !servers.iter().any(|p| p.name() == row.server) {
            bail!(
                "--resume: the earlier run measured {}, which is not in --servers",
                row.server
            );
        }
        if !cells.iter().any(|c| is_of(row, c)) {
            bail!(
                "--resume: the earlier run has cell {} {}, which is not in these suites",
                row.suite,
                row.cell
            );
        }
        if row.round > rounds {
            bail!("--resume: the earlier run had more than {rounds} rounds");
        }
    }
    let complete: Vec<&Cell> = cells
        .iter()
        .filter(|c| rows.iter().filter(|r| is_of(r, c)).count() == runs_of(c, rounds, servers))
        .collect();
    Ok(rows
        .into_iter()
        .filter(|r| complete.iter().any(|c| is_of(r, c)))
        .collect())
}

/// Creates a folder servers write pid files and logs to. Apache and h2o
/// drop to www-data when started as root, so it must be theirs to write too.
/// Run as root, nginx, h2o, lighttpd and Apache serve from workers that
/// drop to an unprivileged user, which must be able to reach the site: a
/// folder on the way to `--out` that others cannot enter would surface
/// much later as "nginx did not answer GET /1k with 200".
fn readable_by_workers(out: &Path) -> anyhow::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    if !rustix::process::geteuid().is_root() {
        return Ok(());
    }
    let out = out.canonicalize()?;
    for dir in out.ancestors() {
        let mode = std::fs::metadata(dir)?.permissions().mode();
        if mode & 0o001 == 0 {
            bail!(
                "--out {}: {} is closed to other users (mode {:o}), and the peers' workers run as an unprivileged user: choose an --out under /tmp, or `chmod o+x {}`",
                out.display(),
                dir.display(),
                mode & 0o7777,
                dir.display()
            );
        }
    }
    Ok(())
}

/// The floor answers HTTP/1.1 keep-alive only (no HTTP/1.0, no
/// `Connection: close`), so it sits out the cells it could not answer honestly.
fn applies(peer: Peer, workload: &Workload) -> bool {
    peer != Peer::Floor
        || matches!(
            workload,
            Workload::Client(
                Load::Wrk { close: false, .. } | Load::H2load { .. } | Load::Oha { .. }
            ) | Workload::Footprint { .. }
        )
}

/// One client run against one server.
fn measure(cell: &Cell, server: &mut Running, round: u32, env: &Env) -> Row {
    let mut row = Row {
        suite: cell.suite,
        seed: cell.seed.into(),
        cell: cell.label.clone(),
        server: server.peer.name().into(),
        round,
        file_bytes: cell.file_bytes(),
        conns: cell.conns(),
        ok: true,
        ..Row::default()
    };
    if !server.is_alive() {
        row.ok = false;
        row.problems
            .push("server is not running (crashed earlier)".into());
        return row;
    }
    let load = match &cell.workload {
        Workload::Footprint { conns } => {
            let over = match cell.suite {
                Suite::H2 | Suite::H2c | Suite::RealH2c => Over::H2,
                Suite::H3 => Over::H3,
                _ => Over::H1,
            };
            crate::footprint::measure(server, env, *conns, over, &mut row);
            return row;
        }
        Workload::Client(load) => load,
    };
    let rate = match load {
        Load::Oha { rate, .. } => f64::from(*rate),
        _ => 0.0,
    };
    if let Load::Oha { .. } = load {
        row.target_rps = Some(rate);
    }
    if let Load::Wrk { threads, .. } | Load::H2load { threads, .. } = load {
        row.threads = Some(*threads);
    }
    let Some(target) = target(cell, server, load, round, env, &mut row) else {
        return row;
    };
    let (argv, run) = run_to_length(cell, load, target, server.pid(), env, rate);
    record(cell, load, &argv, run, &mut row);
    if !server.is_alive() {
        row.ok = false;
        row.problems.push("server exited during the run".into());
    }
    row
}

/// Runs the cell's client once. A real-site cell runs whole passes over
/// its list, as long as the server takes; a run much shorter than the
/// cell's duration is measured again with more passes, so that the CPU
/// clock's ticks and the first connections' setup weigh little (the first
/// run warms up). Returns the command that was measured, and its run.
fn run_to_length(
    cell: &Cell,
    load: &Load,
    target: clients::Target,
    pid: u32,
    env: &Env,
    rate: f64,
) -> (Vec<String>, ClientRun) {
    let traffic = match &target {
        clients::Target::Traffic { args, requests } => Some((args.clone(), *requests)),
        clients::Target::Url(_) => None,
    };
    let argv = load.argv(target, cell.accept_encoding, &env.run_dir, rate);
    let run = run_client(cell, load, &argv, pid);
    let (Some((args, requests)), Load::H2load { duration_s, .. }, Ok(_)) =
        (traffic, load, &run.output)
    else {
        return (argv, run);
    };
    let Some(times) = lengthen(run.wall_s, f64::from(*duration_s)) else {
        return (argv, run);
    };
    let longer = clients::Target::Traffic {
        args,
        requests: requests * times,
    };
    let argv = load.argv(longer, cell.accept_encoding, &env.run_dir, rate);
    let run = run_client(cell, load, &argv, pid);
    (argv, run)
}

/// Puts a client run's command, CPU and parsed report into `row`, and
/// checks the report against what the cell expects.
fn record(cell: &Cell, load: &Load, argv: &[String], run: ClientRun, row: &mut Row) {
    row.client_command = shell_words(argv);
    row.conns_held = run.conns_held;
    row.server_usr_s = run.server_cpu.user_s;
    row.server_sys_s = run.server_cpu.system_s;
    row.client_cpu_s = run.client_cpu.total();
    let wall_s = run.wall_s;
    let parsed = run.output.and_then(|text| {
        load.parse(&text)
            .with_context(|| format!("parsing the output of {}", argv[0]))
    });
    match parsed {
        Ok(mut report) => {
            // s_time reports whole seconds only; the run's own clock is finer.
            if report.duration_s == 0.0 {
                report.duration_s = wall_s;
                report.rps = report.requests as f64 / wall_s.max(1e-9);
            }
            row.client = report;
            verify(cell, row);
        }
        Err(e) => {
            row.ok = false;
            row.problems.push(format!("{e:#}"));
        }
    }
}

/// How many times a real-site run's requests to send again when its
/// first run took `wall_s` of a cell's `wanted` seconds: none when it
/// lasted 40% of them, else enough to last them (at most 100 times).
fn lengthen(wall_s: f64, wanted: f64) -> Option<u64> {
    (wall_s < wanted * 0.4).then(|| (wanted / wall_s.max(0.01)).ceil().min(100.0) as u64)
}

/// One client run and what it cost both sides.
struct ClientRun {
    output: anyhow::Result<String>,
    wall_s: f64,
    server_cpu: proc::CpuTimes,
    client_cpu: proc::CpuTimes,
    conns_held: Option<u64>,
}

/// Runs the client once against the server `pid`, measuring the CPU
/// both spend.
fn run_client(cell: &Cell, load: &Load, argv: &[String], pid: u32) -> ClientRun {
    // A real-site cell runs a fixed count, as long as the server takes.
    let timeout = match cell.traffic {
        Some(_) => Duration::from_secs(900),
        None => Duration::from_secs_f64(cell.expected_s() * 3.0 + 60.0),
    };
    // Many-connection cells also check the server really held them all.
    let probe_at = match load {
        Load::Wrk {
            conns, duration_s, ..
        } if *conns >= 1000 => Some(Duration::from_secs_f64(f64::from(*duration_s) / 2.0)),
        _ => None,
    };
    let sockets_at_rest = probe_at.map(|_| proc::sockets(pid));
    let mut sockets_midway = None;
    let server_before = proc::cpu(pid);
    let client_before = proc::children_cpu();
    let started = std::time::Instant::now();
    let output = clients::run(argv, timeout, probe_at, &mut || {
        sockets_midway = Some(proc::sockets(pid));
    });
    let wall_s = started.elapsed().as_secs_f64();
    ClientRun {
        output,
        wall_s,
        server_cpu: proc::cpu(pid).since(&server_before),
        client_cpu: proc::children_cpu().since(&client_before),
        conns_held: sockets_at_rest
            .zip(sockets_midway)
            .map(|(rest, midway)| midway.saturating_sub(rest)),
    }
}

/// What the client is pointed at: the cell's URL, or a real-site
/// traffic list (whose every path is checked in the first round); `None`
/// with the row's problem said when the list cannot be made.
fn target(
    cell: &Cell,
    server: &Running,
    load: &Load,
    round: u32,
    env: &Env,
    row: &mut Row,
) -> Option<clients::Target> {
    let target = match cell.traffic {
        None => clients::Target::Url(server.url(&cell.path)),
        Some(traffic) => match traffic
            .h2load_args(&server.url(""), &env.root, &env.run_dir)
            .and_then(|args| Ok((args, traffic.requests(cell.conns(), &env.root)?)))
        {
            Ok((args, requests)) => clients::Target::Traffic { args, requests },
            Err(e) => {
                row.ok = false;
                row.problems.push(format!("{e:#}"));
                return None;
            }
        },
    };
    if let (Some(traffic), Load::H2load { over, .. }, 1) = (cell.traffic, load, round) {
        // Every path answered, and answered right, before it is measured.
        let h2 = *over == Over::H2;
        match traffic.check(&server.url(""), h2, &env.root, &env.run_dir) {
            Ok(problems) => row.problems.extend(problems),
            Err(e) => row.problems.push(format!("{e:#}")),
        }
    }
    Some(target)
}

/// Checks what was served: errors, statuses and bytes per response.
fn verify(cell: &Cell, row: &mut Row) {
    if row.client.requests == 0 {
        row.problems.push("no request completed".into());
    }
    if row.client.socket_errors > 0 {
        row.problems.push(match &row.client.socket_error_detail {
            Some(detail) => format!("{} socket errors ({detail})", row.client.socket_errors),
            None => format!(
                "{} socket errors / failed requests",
                row.client.socket_errors
            ),
        });
    }
    if let Some(held) = row.conns_held {
        // wrk times only requests that complete: connections left waiting
        // in a capped server's backlog are missing from its percentiles.
        if held * 100 < u64::from(row.conns) * 95 {
            row.problems.push(format!(
                "held only {held} of {} connections midway",
                row.conns
            ));
        }
    }
    if row.client.non_2xx_3xx > 0 {
        row.problems.push(format!(
            "{} responses were not 2xx/3xx",
            row.client.non_2xx_3xx
        ));
    }
    // An open-loop client that fell behind measured a lower rate than the
    // cell claims: its percentiles are not at the offered load.
    if let Some(target) = row.target_rps {
        if row.client.rps < target * 0.95 {
            row.problems.push(format!(
                "achieved {:.0} req/s of the {target:.0} offered",
                row.client.rps
            ));
        }
    }
    let pipelined = matches!(&cell.workload, Workload::Client(load) if load.pipelined());
    // wrk rounds its byte count to 2 decimals of a unit (10.27GB: ±5 MB,
    // ±5 KB a response over a thousand 10 MiB responses); allow 2% either way.
    if row.client.requests > 0 && row.file_bytes > 0 && !pipelined {
        let per = row.client.bytes_read as f64 / row.client.requests as f64;
        // An encoded response is smaller than the file, never larger.
        let floor = match cell.accept_encoding {
            Some(_) => 1.0,
            None => row.file_bytes as f64 * 0.98,
        };
        if per < floor || per > row.file_bytes as f64 * 1.02 + 2048.0 {
            row.problems.push(format!(
                "{per:.0} bytes per response for a {}-byte file",
                row.file_bytes
            ));
        }
    }
    row.ok = row.problems.is_empty();
}

fn now() -> String {
    httpdate::fmt_http_date(SystemTime::now())
}

/// Joins `args` with spaces, single-quoting those a shell would split or
/// expand: a report's commands (its own and each client's) run as printed.
pub fn shell_words<A: AsRef<str>>(args: impl IntoIterator<Item = A>) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "-_./=,:@%+".contains(c);
    args.into_iter()
        .map(|a| {
            let a = a.as_ref();
            if !a.is_empty() && a.chars().all(plain) {
                a.to_string()
            } else {
                format!("'{}'", a.replace('\'', r"'\''"))
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The default output folder: `bench-results/<unix time>`.
pub fn default_out() -> PathBuf {
    let secs = SystemTime::now()
        .duration_since(SystemTime::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    Path::new("bench-results").join(secs.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::results::Machine;

    fn row(cell: &Cell, server: Peer, round: u32) -> Row {
        Row {
            suite: cell.suite,
            cell: cell.label.clone(),
            server: server.name().into(),
            round,
            ..Row::default()
        }
    }

    #[test]
    fn a_whole_label_asks_for_its_cell_alone_and_a_part_for_every_cell_with_it() {
        let labels: Vec<String> = ["64k c1 m10", "64k c1 m100", "64k c32 m10", "1k c1 m10"]
            .map(String::from)
            .to_vec();
        let picked = |wanted: &[&str]| -> Vec<&str> {
            let wanted: Vec<String> = wanted.iter().map(|w| w.to_string()).collect();
            let picked = labels.iter().filter(|l| asked_for(l, &wanted, &labels));
            picked.map(String::as_str).collect()
        };
        assert_eq!(picked(&["64k c1 m10"]), ["64k c1 m10"]);
        assert_eq!(picked(&["64k c1"]), ["64k c1 m10", "64k c1 m100"]);
        assert_eq!(
            picked(&["c1 m10"]),
            ["64k c1 m10", "64k c1 m100", "1k c1 m10"]
        );
        assert_eq!(picked(&["1k c1 m10", "m100"]), ["64k c1 m100", "1k c1 m10"]);
        assert!(picked(&["2k"]).is_empty());
    }

    #[test]
    fn a_command_line_prints_as_a_shell_would_take_it_back() {
        let words = |a: &[&str]| shell_words(a);
        assert_eq!(
            words(&[
                "tachyon-bench",
                "run",
                "--servers",
                "tachyon,nginx",
                "--out",
                "/tmp/a-b.c"
            ]),
            "tachyon-bench run --servers tachyon,nginx --out /tmp/a-b.c"
        );
        assert_eq!(
            words(&["--cells", "1k ", "64k c1 m100,$HOME", "", "it's"]),
            r"--cells '1k ' '64k c1 m100,$HOME' '' 'it'\''s'"
        );
    }

    #[test]
    fn a_real_site_run_under_two_fifths_of_the_cell_is_lengthened_to_fill_it() {
        // A slow server's 20 s run stands; tachyon's 0.3 s one is sent
        // 17 times over (5.1 s); a 2.1 s run is long enough.
        assert_eq!(lengthen(20.0, 5.0), None);
        assert_eq!(lengthen(2.1, 5.0), None);
        assert_eq!(lengthen(0.3, 5.0), Some(17));
        assert_eq!(lengthen(1.99, 5.0), Some(3));
        // A run that took no time at all is lengthened, boundedly.
        assert_eq!(lengthen(0.0, 5.0), Some(100));
    }

    #[test]
    fn resuming_keeps_whole_cells_and_reruns_the_one_cut_short() {
        let cells = suites::cells("churn", true, 2).unwrap();
        assert!(cells.len() >= 2, "needs two cells");
        let servers = [Peer::Tachyon, Peer::Nginx];
        let mut rows = Vec::new();
        for round in 1..=2 {
            for peer in servers {
                rows.push(row(&cells[0], peer, round));
            }
        }
        // Interrupted in the second cell's second round.
        for peer in servers {
            rows.push(row(&cells[1], peer, 1));
        }
        rows.push(row(&cells[1], Peer::Tachyon, 2));
        let kept = complete_cells(rows, &cells, 2, &servers).unwrap();
        assert_eq!(kept.len(), 4);
        assert!(kept.iter().all(|r| r.cell == cells[0].label));
    }

    #[test]
    fn the_floor_does_not_count_where_it_does_not_apply() {
        // churn closes every connection: the floor only does keep-alive.
        let cells = suites::cells("churn", true, 2).unwrap();
        let servers = [Peer::Tachyon, Peer::Floor];
        let rows = vec![row(&cells[0], Peer::Tachyon, 1)];
        let kept = complete_cells(rows, &cells, 1, &servers).unwrap();
        assert_eq!(kept.len(), 1);
    }

    /// An h2c run names the servers that cannot speak h2c before any
    /// starts: Apache without its twin waited 20 s for a probe over HTTP/2
    /// and ended the run.
    #[test]
    fn an_h2c_run_names_the_servers_without_h2c() {
        let cells = suites::cells("real-h2c", true, 2).unwrap();
        let peers = [
            Peer::Tachyon,
            Peer::Nginx,
            Peer::NginxMainline,
            Peer::Lighttpd,
            Peer::H2o,
            Peer::H2oMaster,
            Peer::Caddy,
            Peer::Apache2,
        ];
        assert!(h2c_run(&cells, &peers).unwrap());
        let err = h2c_run(&cells, &[Peer::Tachyon, Peer::Floor, Peer::NginxDefault]).unwrap_err();
        assert!(
            err.to_string().ends_with("not: floor, nginx-default"),
            "{err}"
        );
        let plain = suites::cells("churn", true, 2).unwrap();
        assert!(!h2c_run(&plain, &[Peer::Floor]).unwrap());
    }

    #[test]
    fn the_plan_counts_runs_per_suite() {
        let cells = suites::cells("churn", true, 2).unwrap();
        let text = plan(&cells, 3, &[Peer::Tachyon, Peer::Floor, Peer::Nginx]);
        assert!(text.starts_with("churn"), "{text}");
        assert!(text.contains(&format!("{} cells", cells.len())), "{text}");
        assert!(text.contains("(3 servers, 3 rounds)"), "{text}");
    }

    #[test]
    fn resuming_on_another_machine_or_build_is_refused() {
        let servers = [Peer::Tachyon];
        let earlier = |machine: Machine, version: String| Results {
            schema_version: SCHEMA_VERSION,
            machine,
            command: String::new(),
            started: String::new(),
            finished: None,
            resumed: Vec::new(),
            servers: vec![ServerInfo {
                name: "tachyon".into(),
                version,
                workers: 2,
                rss_at_rest_bytes: 0,
                binary_bytes: None,
            }],
            rows: Vec::new(),
        };
        let (cores, cpu_model) = cpu();
        let here = Machine {
            cores,
            cpu_model,
            ..Machine::default()
        };
        let version = crate::setup::version_of(Peer::Tachyon);
        same_setup(&earlier(here.clone(), version.clone()), &servers).unwrap();

        let elsewhere = Machine {
            cores: here.cores + 1,
            ..here.clone()
        };
        let err = same_setup(&earlier(elsewhere, version.clone()), &servers).unwrap_err();
        assert!(err.to_string().contains("cores"), "{err}");

        let other_congestion = Machine {
            tcp_congestion: "not-this-systems".into(),
            ..here.clone()
        };
        let err = same_setup(&earlier(other_congestion, version.clone()), &servers).unwrap_err();
        assert!(
            err.to_string().contains("--congestion not-this-systems"),
            "{err}"
        );

        let older = "0.1.0 (sources at 0000000)".to_string();
        let err = same_setup(&earlier(here.clone(), older), &servers).unwrap_err();
        assert!(err.to_string().contains("0000000"), "{err}");

        // Another server list: refused, naming the earlier one.
        let more = [Peer::Tachyon, Peer::Nginx];
        let err = same_setup(&earlier(here, version), &more).unwrap_err();
        assert!(
            err.to_string()
                .contains("measured --servers tachyon, this one asks for nginx,tachyon"),
            "{err}"
        );
    }

    #[test]
    fn resuming_a_different_plan_is_refused() {
        let cells = suites::cells("churn", true, 2).unwrap();
        let rows = vec![row(&cells[0], Peer::Caddy, 1)];
        let err = complete_cells(rows, &cells, 1, &[Peer::Tachyon]).unwrap_err();
        assert!(err.to_string().contains("caddy"), "{err}");
        let other = suites::cells("large", true, 2).unwrap();
        let rows = vec![row(&other[0], Peer::Tachyon, 1)];
        let err = complete_cells(rows, &cells, 1, &[Peer::Tachyon]).unwrap_err();
        assert!(err.to_string().contains("not in these suites"), "{err}");
        let rows = vec![row(&cells[0], Peer::Tachyon, 3)];
        assert!(complete_cells(rows, &cells, 2, &[Peer::Tachyon]).is_err());
    }
}
