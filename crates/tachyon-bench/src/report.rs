//! `tachyon-bench report DIR`: reads only `results.json` and writes
//! `report.md`, `report.html` (self-contained) and `charts/*.svg` (and `.png`).
//!
//! Medians over the ok rounds, with min–max; rows with problems are counted
//! and their problems listed, never averaged in. Ratios are to the best
//! peer, to nginx (tuned) and to the floor server, measured in the same run;
//! a summary table opens the report (`summary`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::Path;

use anyhow::Context;

use crate::charts::{self, human};
use crate::results::{Machine, Results, Row};
use crate::suites::Suite;

/// How every table's figures are made, said once above them (Markdown and
/// HTML alike).
const MEDIANS: &str = "Medians over ok rounds, (min–max) when rounds differ.";
/// What the ratio and client columns mean.
const RATIOS: &str = "× columns compare requests per server CPU-second. Client CPU is the load client's, in % of one core: near 100% for a single-threaded client (ab, wrk -t1), req/s is the client's limit, and the servers' raw rates rank the client, not them. µs server+client CPU counts the load client's CPU too: on loopback a server that leaves more unsent bytes in its sockets has the client's acknowledgements do more of its sending, cheaper for the server, not for the machine. ≈ after a ratio to the best peer: the two servers' rounds overlap, so the cell does not separate them.";

struct Table {
    caption: String,
    headers: Vec<String>,
    rows: Vec<Vec<String>>,
}

struct Section {
    title: String,
    intro: String,
    tables: Vec<Table>,
    charts: Vec<(String, String)>,
}

pub fn report(dir: &Path) -> anyhow::Result<()> {
    let path = dir.join("results.json");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let results: Results =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let sections = sections(&results)?;
    std::fs::create_dir_all(dir.join("charts"))?;
    for section in &sections {
        for (name, svg) in &section.charts {
            std::fs::write(dir.join("charts").join(name), svg)?;
            charts::write_png(svg, &dir.join("charts").join(name).with_extension("png"))?;
        }
    }
    std::fs::write(dir.join("report.md"), markdown(&results, &sections))?;
    std::fs::write(dir.join("report.html"), html(&results, &sections))?;
    crate::print_out(&format!(
        "report: {}\n        {}\n",
        dir.join("report.md").display(),
        dir.join("report.html").display()
    ))
}

/// What [`report`] writes into a results folder beside `results.json`.
const OUTPUTS: [&str; 3] = ["report.md", "report.html", "charts"];

/// Removes a folder's report (its Markdown, HTML and charts), so that a run
/// replacing an earlier one never leaves that one's report beside its own
/// `results.json`, even when it is interrupted. `results.json` and anything
/// else in the folder stay.
pub fn remove(dir: &Path) -> anyhow::Result<()> {
    for name in OUTPUTS {
        let path = dir.join(name);
        let removed = if path.is_dir() {
            std::fs::remove_dir_all(&path)
        } else {
            std::fs::remove_file(&path)
        };
        match removed {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                return Err(e).with_context(|| format!("removing {}", path.display()));
            }
            _ => {}
        }
    }
    Ok(())
}

/// Median, min, max of values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Stat {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

pub fn stat(values: &[f64]) -> Option<Stat> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    let median = if v.len().is_multiple_of(2) {
        (v[mid - 1] + v[mid]) / 2.0
    } else {
        v[mid]
    };
    Some(Stat {
        median,
        min: v[0],
        max: v[v.len() - 1],
    })
}

/// The rows of one (suite, cell), grouped by server in run order.
pub struct CellRows<'a> {
    pub suite: Suite,
    seed: &'a str,
    pub cell: &'a str,
    by_server: Vec<(&'a str, Vec<&'a Row>)>,
}

impl CellRows<'_> {
    /// The median (and range) of `f` over a server's ok rows.
    pub fn metric(&self, server: &str, f: impl Fn(&Row) -> Option<f64>) -> Option<Stat> {
        let rows = &self.by_server.iter().find(|(s, _)| *s == server)?.1;
        stat(
            &rows
                .iter()
                .filter(|r| r.ok)
                .filter_map(|r| f(r))
                .collect::<Vec<_>>(),
        )
    }

    /// The seed whose workload the cell is.
    pub fn seed(&self) -> &str {
        self.seed
    }

    /// Every row of the cell, server by server.
    pub fn rows(&self) -> impl Iterator<Item = &Row> {
        self.by_server
            .iter()
            .flat_map(|(_, rows)| rows.iter().copied())
    }

    /// The servers that ran the cell, in the run's order.
    fn servers(&self) -> impl Iterator<Item = &str> {
        self.by_server.iter().map(|(server, _)| *server)
    }

    /// The cell without the servers any of whose rows `fails`.
    pub fn without_servers(mut self, fails: impl Fn(&Row) -> bool) -> Self {
        self.by_server
            .retain(|(_, rows)| !rows.iter().any(|r| fails(r)));
        self
    }

    fn command(&self) -> String {
        self.rows()
            .map(|r| r.client_command.clone())
            .find(|c| !c.is_empty())
            .unwrap_or_default()
    }
}

/// Every (suite, cell) of a run, in the order its first row ran.
pub fn group(results: &Results) -> Vec<CellRows<'_>> {
    let mut cells: Vec<CellRows<'_>> = Vec::new();
    for row in &results.rows {
        let idx = match cells
            .iter()
            .position(|c| c.suite == row.suite && c.cell == row.cell)
        {
            Some(i) => i,
            None => {
                cells.push(CellRows {
                    suite: row.suite,
                    seed: &row.seed,
                    cell: &row.cell,
                    by_server: Vec::new(),
                });
                cells.len() - 1
            }
        };
        let cell = &mut cells[idx];
        match cell.by_server.iter_mut().find(|(s, _)| *s == row.server) {
            Some((_, rows)) => rows.push(row),
            None => cell.by_server.push((&row.server, vec![row])),
        }
    }
    // Same server order in every table: as listed in the run.
    let order: Vec<&str> = results.servers.iter().map(|s| s.name.as_str()).collect();
    for cell in &mut cells {
        cell.by_server
            .sort_by_key(|(s, _)| order.iter().position(|o| o == s).unwrap_or(usize::MAX));
    }
    cells
}

fn fmt_stat(s: Option<Stat>, f: impl Fn(f64) -> String) -> String {
    match s {
        Some(s) if s.min == s.max => f(s.median),
        Some(s) => format!("{} ({}–{})", f(s.median), f(s.min), f(s.max)),
        None => "–".into(),
    }
}

fn ratio(a: Option<Stat>, b: Option<Stat>) -> String {
    match (a, b) {
        (Some(a), Some(b)) if b.median > 0.0 => format!("{:.2}×", a.median / b.median),
        _ => "–".into(),
    }
}

/// Whether two servers' rounds overlap (one's range reaches into the
/// other's): then the cell ranks the rounds' spread as much as the servers
/// (the four-connection cells in bench/results/c4-placement-2026-11-28).
fn rounds_overlap(a: Stat, b: Stat) -> bool {
    a.min <= b.max && b.min <= a.max
}

fn problems(rows: &[&Row]) -> String {
    let bad: Vec<String> = rows
        .iter()
        .filter(|r| !r.ok)
        .map(|r| format!("r{}: {}", r.round, r.problems.join("; ")))
        .collect();
    if bad.is_empty() {
        String::new()
    } else {
        format!("⚠ {}", bad.join("; "))
    }
}

fn seed_name(seed: &str) -> &'static str {
    match seed {
        "000" => "seed 000 (Spare Cores static_web)",
        "001" => "seed 001 (LinuxConfig / java-http ab runs)",
        "002" => "seed 002 (Boa: 105,165-byte file, footprint)",
        "003" => "seed 003 (fabhttp / heliod)",
        "004" => "seed 004 (binserve BENCHMARKS.md)",
        "tfb" => "TechEmpower plaintext pipelining",
        "i4" => {
            "issue 4 (a 100 KB script, compressed: tachyon's built variants vs nginx gzip_static)"
        }
        "i17" => "issue 17 (the access log's cost: each server with and without it)",
        "i15" => {
            "issue 15 (HTTPS: one ECDSA P-256 certificate, TLS 1.3, every server's own resumption)"
        }
        _ => "",
    }
}

fn sections(results: &Results) -> anyhow::Result<Vec<Section>> {
    let cells = group(results);
    let mut suites: Vec<Suite> = Vec::new();
    for c in &cells {
        if !suites.contains(&c.suite) {
            suites.push(c.suite);
        }
    }
    let mut out = Vec::new();
    for suite in suites {
        let in_suite: Vec<&CellRows<'_>> = cells.iter().filter(|c| c.suite == suite).collect();
        let mut section = Section {
            title: suite.to_string(),
            intro: seed_intro(&in_suite),
            tables: in_suite.iter().map(|cell| cell_table(cell)).collect(),
            charts: Vec::new(),
        };
        match suite {
            Suite::SpareCores => sparecores_extras(results, &in_suite, &mut section)?,
            Suite::H2 | Suite::H2c => {
                // The goals are at -m100: one line per server over
                // the connection counts, per file size.
                let at_m100: Vec<&CellRows<'_>> = in_suite
                    .iter()
                    .copied()
                    .filter(|c| c.cell.ends_with(" m100"))
                    .collect();
                series_by_size(
                    results,
                    &at_m100,
                    &format!("{suite}-m100"),
                    "requests per server CPU-second",
                    |r| r.req_per_server_cpu_s(),
                    &mut section,
                )?;
            }
            Suite::Efficiency => series_by_size(
                results,
                &in_suite,
                "efficiency",
                "requests per server CPU-second",
                |r| r.req_per_server_cpu_s(),
                &mut section,
            )?,
            Suite::Latency => latency_chart(results, &in_suite, &mut section)?,
            _ => {}
        }
        for cell in &in_suite {
            memory_charts(results, cell, suite, &mut section)?;
        }
        out.push(section);
    }
    Ok(out)
}

/// "Reproduces …": the seeds a suite's cells come from.
fn seed_intro(cells: &[&CellRows<'_>]) -> String {
    let seeds: Vec<&str> = cells
        .iter()
        .map(|c| seed_name(c.seed))
        .filter(|s| !s.is_empty())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    if seeds.is_empty() {
        String::new()
    } else {
        format!("Reproduces {}.", seeds.join(", "))
    }
}

/// p99 latency over the offered load, one line per server.
fn latency_chart(
    results: &Results,
    cells: &[&CellRows<'_>],
    section: &mut Section,
) -> anyhow::Result<()> {
    let mut series: Series<'_> = BTreeMap::new();
    for (i, cell) in cells.iter().enumerate() {
        for (server, rows) in &cell.by_server {
            // The offered rate; rows from runs that offered a fraction of
            // each server's peak plot that fraction, and the oldest,
            // without either, the cell's place.
            let first = rows.first();
            let percent = first
                .and_then(|r| r.rate_fraction.map(|f| f * 100.0))
                .or_else(|| first.and_then(|r| r.target_rps))
                .unwrap_or([50.0, 80.0, 95.0][i.min(2)]);
            if let Some(p99) = cell.metric(server, |r| r.client.latency_p99_ms) {
                series
                    .entry(server)
                    .or_default()
                    .push((percent, p99.median));
            }
        }
    }
    let by_fraction = cells
        .iter()
        .flat_map(|c| c.rows())
        .any(|r| r.rate_fraction.is_some());
    let (title, axis) = if by_fraction {
        (
            "p99 latency at a fixed share of each server's peak (oha, c=64)",
            "offered load, % of peak",
        )
    } else {
        (
            "p99 latency at the same offered rates (oha, c=64)",
            "offered load, req/s",
        )
    };
    let series = ordered(series, results);
    section.charts.push((
        "latency-p99.svg".into(),
        charts::lines(title, axis, "p99 ms", &series, false)?,
    ));
    Ok(())
}

/// Memory per idle connection and at rest, for a cell that measured idle
/// connections.
fn memory_charts(
    results: &Results,
    cell: &CellRows<'_>,
    suite: Suite,
    section: &mut Section,
) -> anyhow::Result<()> {
    let idle: Vec<(String, f64)> = cell
        .by_server
        .iter()
        .filter_map(|(s, _)| {
            Some((
                s.to_string(),
                cell.metric(s, |r| r.bytes_per_idle_conn())?.median.max(0.0),
            ))
        })
        .collect();
    if idle.is_empty() {
        return Ok(());
    }
    section.charts.push((
        format!("{suite}-memory-per-connection.svg"),
        charts::bars(
            "Memory per idle keep-alive connection",
            "bytes of server RSS per connection",
            &idle,
        )?,
    ));
    let rest: Vec<(String, f64)> = results
        .servers
        .iter()
        .map(|s| (s.name.clone(), s.rss_at_rest_bytes as f64 / 1_048_576.0))
        .collect();
    section.charts.push((
        format!("{suite}-rss-at-rest.svg"),
        charts::bars("Resident memory at rest (process tree)", "MiB", &rest)?,
    ));
    Ok(())
}

/// Points of one server's line: (x, y).
type Points = Vec<(f64, f64)>;
/// Lines of one chart, keyed by server name.
type Series<'a> = BTreeMap<&'a str, Points>;

/// The chart's lines, each sorted by x, in the run's server order.
fn ordered(series: Series<'_>, results: &Results) -> Vec<(String, Vec<(f64, f64)>)> {
    let mut v: Vec<(String, Vec<(f64, f64)>)> = series
        .into_iter()
        .map(|(k, mut pts)| {
            pts.sort_by(|a, b| a.0.total_cmp(&b.0));
            (k.to_string(), pts)
        })
        .collect();
    let order: Vec<&str> = results.servers.iter().map(|s| s.name.as_str()).collect();
    v.sort_by_key(|(s, _)| order.iter().position(|o| o == s).unwrap_or(usize::MAX));
    v
}

/// `1k`, `64k`: the cell's file size as the suites name it.
fn size_name(cell: &CellRows<'_>) -> String {
    let bytes = cell.rows().next().map_or(0, |r| r.file_bytes);
    format!("{}k", bytes / 1024)
}

/// One line chart per file size: connections on x, `f` on y.
fn series_by_size(
    results: &Results,
    cells: &[&CellRows<'_>],
    name: &str,
    y_label: &str,
    f: impl Fn(&Row) -> Option<f64> + Copy,
    section: &mut Section,
) -> anyhow::Result<()> {
    let mut by_size: BTreeMap<String, Series<'_>> = BTreeMap::new();
    for cell in cells {
        let size = size_name(cell);
        for (server, rows) in &cell.by_server {
            let conns = rows.first().map_or(0, |r| r.conns) as f64;
            if let Some(s) = cell.metric(server, f) {
                by_size
                    .entry(size.clone())
                    .or_default()
                    .entry(server)
                    .or_default()
                    .push((conns, s.median));
            }
        }
    }
    for (size, series) in by_size {
        let v = ordered(series, results);
        let title = format!("{name}: {size}, {y_label} (median)");
        section.charts.push((
            format!("{name}-{size}.svg"),
            charts::lines(&title, "concurrent connections", y_label, &v, true)?,
        ));
    }
    Ok(())
}

/// A server's best thread count in one (size, connections) cell:
/// (rps, extrapolated rps, requests per server CPU-second, `-t` value).
type BestThreads = (f64, f64, f64, String);

/// (size, connections) → server → its best thread count's figures.
fn best_threads(cells: &[&CellRows<'_>]) -> BTreeMap<(u64, u32), BTreeMap<String, BestThreads>> {
    let mut best: BTreeMap<(u64, u32), BTreeMap<String, BestThreads>> = BTreeMap::new();
    for cell in cells {
        let size = cell.rows().next().map_or(0, |r| r.file_bytes / 1024);
        // Rows from before the thread count was recorded: the label's
        // second word is `tN`.
        let threads = match cell.rows().next().and_then(|r| r.threads) {
            Some(t) => format!("t{t}"),
            None => cell
                .cell
                .split_whitespace()
                .nth(1)
                .unwrap_or("")
                .to_string(),
        };
        for (server, rows) in &cell.by_server {
            let conns = rows.first().map_or(0, |r| r.conns);
            let (Some(rps), ext, eff) = (
                cell.metric(server, |r| Some(r.client.rps)),
                cell.metric(server, |r| r.extrapolated_rps()),
                cell.metric(server, |r| r.req_per_server_cpu_s()),
            ) else {
                continue;
            };
            let entry = best
                .entry((size, conns))
                .or_default()
                .entry(server.to_string())
                .or_insert((0.0, 0.0, 0.0, String::new()));
            if rps.median > entry.0 {
                *entry = (
                    rps.median,
                    ext.map_or(0.0, |s| s.median),
                    eff.map_or(0.0, |s| s.median),
                    threads.clone(),
                );
            }
        }
    }
    best
}

/// Spare Cores keeps, per (size, connections), the thread count with the
/// highest rps; the web score uses the 8 connections-per-vCPU cells.
fn sparecores_extras(
    results: &Results,
    cells: &[&CellRows<'_>],
    section: &mut Section,
) -> anyhow::Result<()> {
    let cores = results.machine.cores.max(1) as u32;
    let best = best_threads(cells);
    let mut table = Table {
        caption: format!("Best thread count per cell, 8 connections per vCPU (c={}): the cells of the Spare Cores web score", 8 * cores),
        headers: vec!["size".into(), "server".into(), "best -t".into(), "req/s".into(), "extrapolated req/s".into(), "× best peer (ext.)".into(), "req per server CPU-s".into()],
        rows: Vec::new(),
    };
    for ((size, conns), servers) in &best {
        if *conns != 8 * cores {
            continue;
        }
        let best_peer_ext = servers
            .iter()
            .filter(|(s, _)| is_peer(s))
            .map(|(_, v)| v.1)
            .fold(0.0, f64::max);
        for (server, (rps, ext, eff, t)) in servers {
            let vs = if best_peer_ext > 0.0 {
                format!("{:.2}×", ext / best_peer_ext)
            } else {
                "–".into()
            };
            table.rows.push(vec![
                format!("{size}k"),
                server.clone(),
                t.clone(),
                human(*rps),
                human(*ext),
                vs,
                human(*eff),
            ]);
        }
    }
    section.tables.insert(0, table);
    let mut by_size: BTreeMap<u64, Series<'_>> = BTreeMap::new();
    for ((size, conns), servers) in &best {
        for (server, (rps, ..)) in servers {
            by_size
                .entry(*size)
                .or_default()
                .entry(server.as_str())
                .or_default()
                .push((f64::from(*conns), *rps));
        }
    }
    for (size, series) in by_size {
        let v = ordered(series, results);
        section.charts.push((
            format!("sparecores-{size}k.svg"),
            charts::lines(
                &format!("Spare Cores {size}k: req/s at the best thread count"),
                "connections",
                "requests/s",
                &v,
                true,
            )?,
        ));
    }
    Ok(())
}

/// One column of a cell table: its header and how one server's rows fill
/// it. A table is a list of these, so a header cannot drift from its values.
struct Column<'c> {
    header: &'static str,
    value: Fill<'c>,
}

/// A column's value for one server, from the server's name and its rows.
type Fill<'c> = Box<dyn Fn(&str, &[&Row]) -> String + 'c>;

fn column<'c>(header: &'static str, value: impl Fn(&str, &[&Row]) -> String + 'c) -> Column<'c> {
    Column {
        header,
        value: Box::new(value),
    }
}

fn cell_table(cell: &CellRows<'_>) -> Table {
    let any_row = |f: &dyn Fn(&Row) -> bool| {
        cell.by_server
            .iter()
            .any(|(_, rows)| rows.iter().any(|r| f(r)))
    };
    let columns = if any_row(&|r| r.idle_conns_held.is_some()) {
        footprint_columns(cell)
    } else {
        load_columns(
            cell,
            any_row(&|r| r.file_bytes >= 1 << 20),
            any_row(&|r| r.target_rps.is_some()),
        )
    };
    Table {
        caption: format!("{} — `{}`", cell.cell, cell.command()),
        headers: columns.iter().map(|c| c.header.to_string()).collect(),
        rows: cell
            .by_server
            .iter()
            .map(|(server, rows)| columns.iter().map(|c| (c.value)(server, rows)).collect())
            .collect(),
    }
}

/// Memory at rest and per idle connection.
fn footprint_columns<'c>(cell: &'c CellRows<'_>) -> Vec<Column<'c>> {
    let mib = |v: f64| format!("{:.1} MiB", v / 1_048_576.0);
    let whole = |v: f64| format!("{v:.0}");
    vec![
        column("server", |server, _| server.to_string()),
        column("RSS before", move |server, _| {
            fmt_stat(
                cell.metric(server, |r| r.rss_rest_bytes.map(|v| v as f64)),
                mib,
            )
        }),
        column("RSS with idle conns", move |server, _| {
            fmt_stat(
                cell.metric(server, |r| r.rss_loaded_bytes.map(|v| v as f64)),
                mib,
            )
        }),
        column("conns held", move |_, rows| {
            let held: Vec<f64> = rows
                .iter()
                .filter_map(|r| r.idle_conns_held.map(|v| v as f64))
                .collect();
            fmt_stat(stat(&held), whole)
        }),
        column("bytes per idle conn", move |server, _| {
            fmt_stat(cell.metric(server, |r| r.bytes_per_idle_conn()), whole)
        }),
        column("problems", |_, rows| problems(rows)),
    ]
}

/// A server the run compares tachyon with: neither a tachyon build nor
/// the floor.
fn is_peer(server: &str) -> bool {
    !server.starts_with("tachyon") && server != "floor"
}

/// The cell's peer with the highest median of `f`, and that median (the
/// last of equal ones).
pub fn best_peer<'c>(
    cell: &'c CellRows<'_>,
    f: impl Fn(&str) -> Option<Stat>,
) -> Option<(&'c str, Stat)> {
    cell.servers()
        .filter(|s| is_peer(s))
        .filter_map(|s| Some((s, f(s)?)))
        .max_by(|a, b| a.1.median.total_cmp(&b.1.median))
}

/// A rate per CPU-second as µs of CPU a request (the slowest round's
/// rate gives the dearest request).
fn per_request(rate: Stat) -> Stat {
    Stat {
        median: 1e6 / rate.median,
        min: 1e6 / rate.max,
        max: 1e6 / rate.min,
    }
}

/// Throughput, cost and latency under a load client; some columns only
/// where they mean something (large files, open loop, seed 003's p90 goal,
/// compressed responses).
fn load_columns<'c>(cell: &'c CellRows<'_>, large: bool, open_loop: bool) -> Vec<Column<'c>> {
    let mut columns = vec![
        column("server", |server, _| server.to_string()),
        column("ok runs", |_, rows| {
            let ok = rows.iter().filter(|r| r.ok).count();
            format!("{ok}/{}", rows.len())
        }),
        column("req/s", move |server, _| {
            fmt_stat(cell.metric(server, |r| Some(r.client.rps)), human)
        }),
    ];
    if open_loop {
        columns.push(column("offered req/s", move |server, _| {
            fmt_stat(cell.metric(server, |r| r.target_rps), human)
        }));
    }
    columns.extend(cost_columns(cell, large));
    columns.extend(client_columns(cell));
    columns.extend(latency_columns(cell, open_loop));
    if matches!(
        cell.suite,
        Suite::Compressed | Suite::Real | Suite::RealH2c | Suite::RealTls
    ) {
        columns.push(column("bytes / response", move |server, _| {
            let per = cell.metric(server, |r| {
                (r.client.requests > 0)
                    .then(|| r.client.bytes_read as f64 / r.client.requests as f64)
            });
            fmt_stat(per, |v| format!("{v:.0}"))
        }));
    }
    columns.push(column("problems", |_, rows| problems(rows)));
    columns
}

/// The headline and its ratios: requests per server CPU-second, µs a
/// request, against the best peer, nginx and the floor; bytes too in the
/// large-body suites.
fn cost_columns<'c>(cell: &'c CellRows<'_>, large: bool) -> Vec<Column<'c>> {
    let eff = move |s: &str| cell.metric(s, |r| r.req_per_server_cpu_s());
    let bytes = move |s: &str| cell.metric(s, |r| r.bytes_per_server_cpu_s());
    let mut columns = vec![
        column("req per server CPU-s", move |server, _| {
            fmt_stat(eff(server), human)
        }),
        column("µs server CPU / req", move |server, _| {
            fmt_stat(eff(server).map(per_request), |v| format!("{v:.1}"))
        }),
        column("× best peer", move |server, _| {
            let (mine, best) = (eff(server), best_peer(cell, eff).map(|(_, stat)| stat));
            let mut text = ratio(mine, best);
            if let (Some(m), Some(b)) = (mine, best) {
                if m != b && rounds_overlap(m, b) {
                    text.push_str(" ≈");
                }
            }
            text
        }),
        column("× nginx", move |server, _| {
            ratio(eff(server), eff("nginx"))
        }),
        column("× floor", move |server, _| {
            ratio(eff(server), eff("floor"))
        }),
    ];
    if large {
        columns.extend([
            column("MB per server CPU-s", move |server, _| {
                fmt_stat(bytes(server), |v| format!("{:.0}", v / 1e6))
            }),
            column("× nginx (bytes)", move |server, _| {
                ratio(bytes(server), bytes("nginx"))
            }),
        ]);
    }
    columns
}

/// What the load client spent: the rate it would reach if it cost
/// nothing, its share of a core, and its CPU with the server's a request.
fn client_columns<'c>(cell: &'c CellRows<'_>) -> [Column<'c>; 3] {
    [
        column("extrapolated req/s", move |server, _| {
            fmt_stat(cell.metric(server, |r| r.extrapolated_rps()), human)
        }),
        column("client CPU", move |server, _| {
            fmt_stat(cell.metric(server, |r| r.client_core_share()), |v| {
                format!("{:.0}%", v * 100.0)
            })
        }),
        column("µs server+client CPU / req", move |server, _| {
            let pair = cell.metric(server, Row::req_per_pair_cpu_s);
            fmt_stat(pair.map(per_request), |v| format!("{v:.1}"))
        }),
    ]
}

/// p50 and p99; p99.9 in open-loop cells; fabhttp's (seed 003) p90 and
/// its 10 ms pass mark.
fn latency_columns<'c>(cell: &'c CellRows<'_>, open_loop: bool) -> Vec<Column<'c>> {
    let latency = move |header, f: fn(&Row) -> Option<f64>| {
        column(header, move |server, _| {
            fmt_stat(cell.metric(server, f), |v| format!("{v:.2}"))
        })
    };
    let mut columns = vec![
        latency("p50 ms", |r| r.client.latency_p50_ms),
        latency("p99 ms", |r| r.client.latency_p99_ms),
    ];
    if open_loop {
        columns.push(latency("p99.9 ms", |r| r.client.latency_p999_ms));
    }
    if cell.seed == "003" {
        columns.push(latency("p90 ms", |r| r.client.latency_p90_ms));
        columns.push(column("p90 ≤ 10 ms", move |server, _| {
            let p90 = cell.metric(server, |r| r.client.latency_p90_ms);
            p90.map_or("–".into(), |s| {
                if s.median <= 10.0 { "pass" } else { "FAIL" }.into()
            })
        }));
    }
    columns
}

/// One line per suite: tachyon ÷ the best peer over its cells.
fn summary_table(results: &Results) -> Table {
    let cells = crate::summary::cells(results);
    Table {
        caption: "tachyon ÷ the best peer of each cell (the highest median among the servers that are neither tachyon nor the floor), median over the suite's cells and their range".into(),
        headers: crate::summary::SUITE_HEADERS.iter().map(|h| h.to_string()).collect(),
        rows: crate::summary::suite_table(&cells),
    }
}

/// The machine line's congestion control: every server's since
/// 2026-12-02 (`congestion`); in earlier runs the system's was the peers'
/// alone, tachyon and the floor giving their loopback connections cubic,
/// and where the system paces (BBR) that moved a peer's cost on large
/// bodies by up to 5× (bench/results/congestion-all-cubic-2026-12-02).
fn congestion_note(m: &Machine) -> String {
    match m.tcp_congestion.as_str() {
        "" => String::new(),
        cc if m.congestion_every_server => {
            format!(", TCP congestion control {cc} (every server's)")
        }
        "cubic" => ", TCP congestion control cubic".into(),
        cc => format!(
            ", TCP congestion control {cc} (the peers'; tachyon's and the floor's loopback connections use cubic)"
        ),
    }
}

fn machine_lines(r: &Results) -> Vec<String> {
    let m = &r.machine;
    let mut v = vec![format!(
        "Run {} → {}",
        r.started,
        r.finished.as_deref().unwrap_or("(interrupted)")
    )];
    if !r.resumed.is_empty() {
        v.push(format!(
            "Resumed after an interruption at {} (whole cells are never split across sittings)",
            r.resumed.join(", ")
        ));
    }
    v.extend([
        format!(
            "Machine: {} cores, {}, Linux {}, {:.0} GiB{}",
            m.cores,
            m.cpu_model,
            m.kernel,
            m.memory_gib,
            congestion_note(m)
        ),
        format!("Command: `{}`", r.command),
        format!(
            "Clients: {}",
            m.tools
                .iter()
                .map(|(t, v)| format!("{t} ({v})"))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    ]);
    v.push(format!(
        "Servers: {}",
        r.servers
            .iter()
            .map(|s| format!("{} ({}; {} workers)", s.name, s.version, s.workers))
            .collect::<Vec<_>>()
            .join(", ")
    ));
    v
}

fn markdown(results: &Results, sections: &[Section]) -> String {
    let mut md = String::from("# tachyon-bench report\n\n");
    for line in machine_lines(results) {
        let _ = writeln!(md, "- {line}");
    }
    let _ = writeln!(md, "\n{MEDIANS} Servers interleaved cell by cell. {RATIOS}");
    let summary = summary_table(results);
    if !summary.rows.is_empty() {
        let _ = write!(
            md,
            "\n## Summary\n\n{}\n\n| {} |\n|{}|\n",
            summary.caption,
            summary.headers.join(" | "),
            summary
                .headers
                .iter()
                .map(|_| "---")
                .collect::<Vec<_>>()
                .join("|")
        );
        for row in &summary.rows {
            let _ = writeln!(md, "| {} |", row.join(" | "));
        }
    }
    for s in sections {
        let _ = write!(md, "\n## {}\n\n{}\n", s.title, s.intro);
        for (name, _) in &s.charts {
            let _ = write!(md, "\n![{name}](charts/{name})\n");
        }
        for t in &s.tables {
            let _ = write!(
                md,
                "\n{}\n\n| {} |\n|{}|\n",
                t.caption,
                t.headers.join(" | "),
                t.headers
                    .iter()
                    .map(|_| "---")
                    .collect::<Vec<_>>()
                    .join("|")
            );
            for row in &t.rows {
                let _ = writeln!(md, "| {} |", row.join(" | ").replace('\n', " "));
            }
        }
    }
    md
}

fn html(results: &Results, sections: &[Section]) -> String {
    let esc = |s: &str| {
        s.replace('&', "&amp;")
            .replace('<', "&lt;")
            .replace('>', "&gt;")
    };
    let mut h = String::from(
        "<!doctype html><html><head><meta charset=\"utf-8\"><title>tachyon-bench report</title><style>\
         body{font-family:system-ui,sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222}\
         table{border-collapse:collapse;margin:.5em 0 1.5em;font-size:14px}th,td{border:1px solid #ddd;padding:4px 8px;text-align:right}\
         th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}tr.us td{background:#fff3f3;font-weight:600}\
         caption{text-align:left;font-weight:600;padding:4px 0}code{background:#f4f4f4;padding:1px 4px}.charts svg{max-width:100%;height:auto}\
         </style></head><body><h1>tachyon-bench report</h1><ul>",
    );
    for line in machine_lines(results) {
        let _ = write!(h, "<li>{}</li>", esc(&line).replace('`', ""));
    }
    let _ = write!(h, "</ul><p>{MEDIANS} {RATIOS}</p>");
    let summary = summary_table(results);
    if !summary.rows.is_empty() {
        let _ = write!(
            h,
            "<h2>Summary</h2><table><caption>{}</caption><tr>",
            esc(&summary.caption)
        );
        for head in &summary.headers {
            let _ = write!(h, "<th>{}</th>", esc(head));
        }
        h.push_str("</tr>");
        for row in &summary.rows {
            h.push_str("<tr>");
            for c in row {
                let _ = write!(h, "<td>{}</td>", esc(c));
            }
            h.push_str("</tr>");
        }
        h.push_str("</table>");
    }
    for s in sections {
        let _ = write!(
            h,
            "<h2>{}</h2><p>{}</p><div class=\"charts\">",
            esc(&s.title),
            esc(&s.intro)
        );
        for (_, svg) in &s.charts {
            h.push_str(svg);
        }
        h.push_str("</div>");
        for t in &s.tables {
            let _ = write!(
                h,
                "<table><caption>{}</caption><tr>",
                esc(&t.caption).replace('`', "")
            );
            for head in &t.headers {
                let _ = write!(h, "<th>{}</th>", esc(head));
            }
            h.push_str("</tr>");
            for row in &t.rows {
                let class = if row.first().is_some_and(|c| c == "tachyon") {
                    " class=\"us\""
                } else {
                    ""
                };
                let _ = write!(h, "<tr{class}>");
                for c in row {
                    let _ = write!(h, "<td>{}</td>", esc(c));
                }
                h.push_str("</tr>");
            }
            h.push_str("</table>");
        }
    }
    h.push_str("</body></html>\n");
    h
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::ClientReport;

    /// A replaced run's report goes, its `results.json` and other files
    /// stay, and a folder without a report is no error.
    #[test]
    fn removing_a_report_leaves_the_results_and_other_files() {
        let dir = std::env::temp_dir().join(format!("tachyon-bench-remove-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("charts")).unwrap();
        for file in [
            "results.json",
            "report.md",
            "report.html",
            "charts/a.svg",
            "notes.txt",
        ] {
            std::fs::write(dir.join(file), "x").unwrap();
        }
        remove(&dir).unwrap();
        let mut left: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        assert_eq!(left, ["notes.txt", "results.json"]);
        remove(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_pacing_system_congestion_control_is_said_to_be_the_peers_alone_in_older_runs() {
        let older = |cc: &str| Machine {
            tcp_congestion: cc.into(),
            ..Machine::default()
        };
        assert_eq!(congestion_note(&older("")), "");
        assert_eq!(
            congestion_note(&older("cubic")),
            ", TCP congestion control cubic"
        );
        assert_eq!(
            congestion_note(&older("bbr")),
            ", TCP congestion control bbr (the peers'; tachyon's and the floor's loopback connections use cubic)"
        );
    }

    #[test]
    fn a_run_where_every_server_follows_the_system_says_so() {
        let now = Machine {
            tcp_congestion: "bbr".into(),
            congestion_every_server: true,
            ..Machine::default()
        };
        assert_eq!(
            congestion_note(&now),
            ", TCP congestion control bbr (every server's)"
        );
    }

    fn row(server: &str, round: u32, requests: u64, cpu: f64, ok: bool) -> Row {
        Row {
            suite: Suite::Efficiency,
            seed: "000".into(),
            cell: "1k t1 c32".into(),
            server: server.into(),
            round,
            client_command: "wrk -t1 -c32".into(),
            file_bytes: 1024,
            conns: 32,
            ok,
            problems: if ok {
                vec![]
            } else {
                vec!["3 socket errors".into()]
            },
            client: ClientReport {
                requests,
                rps: requests as f64 / 10.0,
                ..ClientReport::default()
            },
            server_usr_s: cpu / 2.0,
            server_sys_s: cpu / 2.0,
            client_cpu_s: 5.0,
            ..Row::default()
        }
    }

    #[test]
    fn medians_ignore_bad_rounds_and_ratios_use_them() {
        assert_eq!(
            stat(&[3.0, 1.0, 2.0]).unwrap(),
            Stat {
                median: 2.0,
                min: 1.0,
                max: 3.0
            }
        );
        assert_eq!(stat(&[1.0, 4.0]).unwrap().median, 2.5);
        let mut results = Results::of(
            &["tachyon", "nginx", "floor", "lighttpd"],
            vec![
                row("tachyon", 1, 1_000_000, 5.0, true),
                row("tachyon", 2, 1_000_000, 4.0, true),
                row("tachyon", 3, 10, 0.001, false),
                row("nginx", 1, 500_000, 5.0, true),
                row("floor", 1, 1_250_000, 5.0, true),
                row("lighttpd", 1, 550_000, 5.0, true),
                row("lighttpd", 2, 200_000, 5.0, true),
            ],
        );
        results.machine.cores = 2;
        let sections = sections(&results).unwrap();
        let table = &sections[0].tables[0];
        let us = &table.rows[0];
        assert_eq!(us[0], "tachyon");
        assert_eq!(us[1], "2/3");
        // tachyon: 200k and 250k req/CPU-s → median 225k; nginx 100k; floor 250k.
        assert_eq!(us[3], "225.0k (200.0k–250.0k)");
        // × best peer (nginx, the only one), × nginx, × floor.
        assert_eq!(us[5], "2.25×");
        assert_eq!(us[6], "2.25×");
        assert_eq!(us[7], "0.90×");
        assert!(
            us.last().unwrap().contains("socket errors"),
            "bad round is listed"
        );
        // lighttpd's rounds (40k and 110k, median 75k) reach nginx's 100k:
        // marked; tachyon's (200k–250k) do not; nginx, the best peer, is not
        // compared with itself.
        let by_name = |name: &str| table.rows.iter().find(|r| r[0] == name).unwrap();
        assert_eq!(by_name("lighttpd")[5], "0.75× ≈");
        assert_eq!(by_name("nginx")[5], "1.00×");
        let md = markdown(&results, &sections);
        assert!(md.contains("## efficiency") && md.contains("charts/efficiency-1k.svg"));
        // The summary opens the report: one line for the suite.
        assert!(md.contains("## Summary"), "{md}");
        assert!(md.contains("| efficiency | 1 | 2.25× |"), "{md}");
        assert!(html(&results, &sections).contains("<svg"));
    }
}
