//! tachyon against the best peer, cell by cell and suite by suite: the
//! report's opening table, and the README's figures table
//! (`tachyon-bench figures DIR… --readme README.md`), so that no figure
//! there is written by hand.
//!
//! Owns: which server is the best peer of a cell (the highest median
//! among the servers that are neither a tachyon build nor the floor; by
//! raw rate and by requests per server CPU-second separately) and the
//! ratios. Does not own: the medians (`report::stat`).

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context};

use crate::protocol_cost;
use crate::report::{self, stat, CellRows};
use crate::results::{Machine, Results, Row};
use crate::suites::Suite;

/// tachyon against the best peer in one cell.
#[derive(Debug, Clone)]
pub struct CellSummary {
    pub suite: Suite,
    pub seed: String,
    pub cell: String,
    /// tachyon's raw rate ÷ the best peer's raw rate (none in an
    /// open-loop cell, whose rate is the offered one).
    pub raw: Option<f64>,
    /// The peer with the best raw rate.
    pub raw_peer: Option<String>,
    /// tachyon's requests per server CPU-second ÷ the best peer's.
    pub per_cpu: Option<f64>,
    /// The peer with the best requests per server CPU-second.
    pub best_peer: Option<String>,
    /// tachyon's requests per server CPU-second ÷ the floor's.
    pub floor: Option<f64>,
    /// tachyon's requests per CPU-second of server and load client
    /// together ÷ the best peer's by that measure (`Row::req_per_pair_cpu_s`):
    /// what is left of `per_cpu` when work a server moves onto the client
    /// is counted. No goal; shown beside it.
    pub per_pair_cpu: Option<f64>,
    /// The peer with the best requests per server+client CPU-second.
    pub pair_peer: Option<String>,
    /// A seed's cell with one client connection (efficiency's c1,
    /// fabhttp's one user): its cost is mostly the kernel's wake-ups, so
    /// issue 43 asks ≥ 0.95× the floor per CPU there rather than 1.2× the
    /// best peer. HTTP/2, HTTP/3 and TLS cells with one connection keep
    /// the 1.2× goal: the exception is the seeds'.
    pub single_connection: bool,
}

impl CellSummary {
    /// How the cell's requests travel.
    pub fn protocol(&self) -> &'static str {
        let h2 = self.cell.split_whitespace().any(|w| w == "h2");
        let first = self.cell.split_whitespace().next().unwrap_or("");
        match self.suite {
            // The HTTP/3 run's cells name their protocol first: `h3`, and
            // the references `h2` and `https1` (`suites::h3`).
            Suite::H3 if first == "h3" => "HTTP/3",
            Suite::H3 if first == "h2" => "HTTP/2 (TLS)",
            Suite::H3 => "HTTPS/1.1",
            Suite::Tls => "HTTPS/1.1",
            Suite::H2 => "HTTP/2 (TLS)",
            Suite::H2c | Suite::RealH2c => "h2c",
            Suite::RealTls if h2 => "HTTP/2 (TLS)",
            Suite::RealTls => "HTTPS/1.1",
            _ => "HTTP/1.1",
        }
    }

    /// The same cell of another run: its suite and label (which also
    /// name its protocol).
    pub fn is_same_cell(&self, other: &CellSummary) -> bool {
        self.suite == other.suite && self.cell == other.cell
    }

    /// Real sites fetched as a browser fetches them, or a seed's synthetic
    /// workload.
    pub fn is_real(&self) -> bool {
        self.suite.is_real()
    }
}

/// The traffic check (`traffic::check`) runs in a cell's first round
/// only, but what it finds (paths unanswered, nothing compressed) holds
/// for every round: such a server serves other traffic than the cell's.
fn failed_traffic_check(row: &Row) -> bool {
    row.problems.iter().any(|p| p.starts_with("check: "))
}

/// The cells in which a tachyon build failed the traffic check: the
/// summary has no figure for them (`cells`), and `figures` refuses a
/// run that has any rather than leave the cell out quietly.
fn tachyon_failed_checks(results: &Results) -> Vec<String> {
    let mut cells: Vec<String> = Vec::new();
    for row in &results.rows {
        if row.server.starts_with("tachyon")
            && failed_traffic_check(row)
            && !cells.contains(&row.cell)
        {
            cells.push(row.cell.clone());
        }
    }
    cells
}

/// Every load cell of a run in which tachyon ran, in run order
/// (footprint cells have no rate and are left out).
pub fn cells(results: &Results) -> Vec<CellSummary> {
    report::group(results)
        .into_iter()
        // A server that failed the cell's traffic check in any round has
        // no figure in it.
        .map(|cell| cell.without_servers(failed_traffic_check))
        .filter_map(|cell| summarize(&cell))
        .collect()
}

/// tachyon against the cell's best peer (by raw rate and by CPU) and the
/// floor; `None` when tachyon has no ok round or the cell holds no load.
fn summarize(cell: &CellRows<'_>) -> Option<CellSummary> {
    if cell.rows().any(|r| r.idle_conns_held.is_some()) {
        return None;
    }
    // No summary where tachyon has no ok round.
    cell.metric("tachyon", |r| Some(r.client.rps))?;
    // An open-loop cell offers every server the same rate: whoever keeps up
    // serves it, so raw rates do not rank them.
    let open_loop = cell.rows().any(|r| r.target_rps.is_some());
    let (raw, raw_peer) = if open_loop {
        (None, None)
    } else {
        against_best(cell, |r| Some(r.client.rps))
    };
    let (per_cpu, best_peer) = against_best(cell, Row::req_per_server_cpu_s);
    let (per_pair_cpu, pair_peer) = against_best(cell, Row::req_per_pair_cpu_s);
    let eff = |s: &str| cell.metric(s, Row::req_per_server_cpu_s).map(|m| m.median);
    Some(CellSummary {
        suite: cell.suite,
        seed: cell.seed().to_string(),
        cell: cell.cell.to_string(),
        raw,
        raw_peer,
        per_cpu,
        best_peer,
        floor: eff("tachyon").zip(eff("floor")).map(|(t, f)| t / f),
        per_pair_cpu,
        pair_peer,
        // The seeds (000–004) are numbered; the other workloads are named
        // after their issue (`i16`) or source (`tfb`).
        single_connection: cell.seed().bytes().all(|b| b.is_ascii_digit())
            && cell.rows().all(|r| r.conns == 1),
    })
}

/// tachyon's median by `measure` ÷ the best peer's (none when tachyon
/// has none), and that peer (none when no peer has one).
fn against_best(
    cell: &CellRows<'_>,
    measure: fn(&Row) -> Option<f64>,
) -> (Option<f64>, Option<String>) {
    let of = |s: &str| cell.metric(s, measure);
    let best = report::best_peer(cell, of).map(|(s, m)| (s.to_string(), m.median));
    let ratio = of("tachyon")
        .zip(best.as_ref())
        .map(|(t, (_, v))| t.median / v);
    (ratio, best.map(|(s, _)| s))
}

/// `1.21× (0.98–1.40×)` over several cells; the range only when they
/// differ.
fn spread(values: &[f64]) -> String {
    match stat(values) {
        None => "–".into(),
        Some(s) if values.len() == 1 || (s.max - s.min) < 0.005 => format!("{:.2}×", s.median),
        Some(s) => format!("{:.2}× ({:.2}–{:.2}×)", s.median, s.min, s.max),
    }
}

/// The cell with the lowest requests per server CPU-second against its
/// best peer, as `label (0.91× nginx)`.
fn worst(cells: &[&CellSummary]) -> String {
    cells
        .iter()
        .filter_map(|c| Some((c, c.per_cpu?)))
        .min_by(|a, b| a.1.total_cmp(&b.1))
        .map_or("–".into(), |(c, v)| {
            format!(
                "{} ({v:.2}× {})",
                c.cell,
                c.best_peer.as_deref().unwrap_or("?")
            )
        })
}

/// The report's opening table: one line per suite, tachyon ÷ the best
/// peer over the suite's cells (median, and the range).
pub fn suite_table(cells: &[CellSummary]) -> Vec<Vec<String>> {
    let mut suites: Vec<Suite> = Vec::new();
    for c in cells {
        if !suites.contains(&c.suite) {
            suites.push(c.suite);
        }
    }
    suites
        .into_iter()
        .map(|suite| {
            let of: Vec<&CellSummary> = cells.iter().filter(|c| c.suite == suite).collect();
            let collect = |f: fn(&CellSummary) -> Option<f64>| -> Vec<f64> {
                of.iter().filter_map(|c| f(c)).collect()
            };
            vec![
                suite.to_string(),
                of.len().to_string(),
                spread(&collect(|c| c.per_cpu)),
                spread(&collect(|c| c.raw)),
                spread(&collect(|c| c.floor)),
                worst(&of),
            ]
        })
        .collect()
}

pub const SUITE_HEADERS: [&str; 6] = [
    "suite",
    "cells",
    "tachyon ÷ best peer, req per server CPU-s",
    "tachyon ÷ best peer, raw req/s",
    "tachyon ÷ floor, per CPU-s",
    "lowest cell per CPU-s",
];

/// The README's table over several runs: one row per seed, suite and
/// protocol of each run (a run of several suites of one seed, such as
/// linuxconfig and large, gives each its row). A cell measured again in
/// a run listed later is taken from that run only, so re-running one
/// suite of a run of several replaces its row and leaves the others.
pub fn figures_table(runs: &[(String, Results)]) -> String {
    // The HTTP/3 run's HTTP/2 and HTTPS/1.1 cells are references for its
    // own goals; those protocols' suites have rows of their own.
    let per_run: Vec<Vec<CellSummary>> = runs
        .iter()
        .map(|(_, results)| {
            cells(results)
                .into_iter()
                .filter(|c| c.suite != Suite::H3 || c.protocol() == "HTTP/3")
                .collect()
        })
        .collect();
    let mut rows: Vec<(String, &'static str, bool, String, Vec<CellSummary>)> = Vec::new();
    for (i, ((dir, _), cells)) in runs.iter().zip(&per_run).enumerate() {
        let measured_later =
            |c: &CellSummary| per_run[i + 1..].iter().flatten().any(|l| l.is_same_cell(c));
        for cell in cells.iter().filter(|c| !measured_later(c)).cloned() {
            let key = (cell.seed.clone(), cell.protocol(), cell.is_real());
            match rows.iter_mut().find(|r| {
                (r.0.clone(), r.1, r.2) == key && r.3 == *dir && r.4[0].suite == cell.suite
            }) {
                Some(row) => row.4.push(cell),
                None => rows.push((key.0, key.1, key.2, dir.clone(), vec![cell])),
            }
        }
    }
    let mut out = String::from(
        "| workload | traffic | protocol | cells | tachyon ÷ best peer, per server CPU-s | raw req/s | per server+client CPU-s | ÷ floor, per CPU-s | lowest cell | host | run |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    let host_of = |dir: &String| {
        runs.iter()
            .find(|(d, _)| d == dir)
            .map_or_else(String::new, |(_, r)| host(&r.machine))
    };
    for (seed, protocol, real, dir, cells) in &rows {
        let refs: Vec<&CellSummary> = cells.iter().collect();
        let collect = |f: fn(&CellSummary) -> Option<f64>| -> Vec<f64> {
            cells.iter().filter_map(f).collect()
        };
        let _ = writeln!(
            out,
            "| {} | {} | {protocol} | {} | {} | {} | {} | {} | {} | {} | [{}]({dir}/report.md) |",
            workload(seed, &cells[0]),
            if *real { "real" } else { "synthetic" },
            cells.len(),
            spread(&collect(|c| c.per_cpu)),
            spread(&collect(|c| c.raw)),
            spread(&collect(|c| c.per_pair_cpu)),
            spread(&collect(|c| c.floor)),
            worst(&refs),
            host_of(dir),
            dir.rsplit('/').next().unwrap_or(dir),
        );
    }
    out
}

/// The host column: the cores, the processor without its trademarks and
/// the kernel, so that rows measured on different machines are told apart
/// (two VMs of one processor name ran different kernels here); ratios
/// between servers carry over between hosts, their spread does not.
fn host(machine: &Machine) -> String {
    let model: Vec<&str> = machine
        .cpu_model
        .split_whitespace()
        .map(|w| w.trim_end_matches("(R)").trim_end_matches("(TM)"))
        .filter(|w| !matches!(*w, "" | "Processor" | "CPU"))
        .collect();
    let mut host = match machine.cores {
        0 => model.join(" "),
        cores => format!("{cores}× {}", model.join(" ")),
    };
    if !machine.kernel.is_empty() {
        let _ = write!(host, ", {}", machine.kernel);
    }
    host
}

/// The workload column: the seed, and the suite when it is not the seed's
/// namesake (churn, large and c10k are all seed 001's, for instance).
fn workload(seed: &str, cell: &CellSummary) -> String {
    let of_seed = |label: &str, namesake: Suite| {
        if cell.suite == namesake {
            label.to_string()
        } else {
            format!("{label}: {}", cell.suite.name())
        }
    };
    match seed {
        "000" => of_seed("seed 000 Spare Cores", Suite::SpareCores),
        "001" => of_seed("seed 001 LinuxConfig", Suite::LinuxConfig),
        "002" => of_seed("seed 002 Boa", Suite::Boa),
        "003" => of_seed("seed 003 fabhttp", Suite::Fabhttp),
        "004" => of_seed("seed 004 binserve", Suite::Binserve),
        "tfb" => "TechEmpower pipelining".into(),
        "i4" => "a 100 KB script, compressed".into(),
        "i15" => "TLS handshakes and transfers".into(),
        "i16" => "h2load 1 KiB / 64 KiB".into(),
        "i43" => "Python docs and a web app, browser headers".into(),
        "i42" => "h3load 1 KiB / 64 KiB / 10 MiB, handshakes".into(),
        _ => format!("{} ({seed})", cell.suite),
    }
}

/// `1.07× lighttpd`, in italics below `goal`; three decimals where two
/// would hide which side of the goal it is (1.199× is not 1.20×).
fn against_goal(value: f64, goal: f64, peer: Option<&str>) -> String {
    let two = (value * 100.0).round() / 100.0;
    let digits = if (two >= goal) != (value >= goal) {
        3
    } else {
        2
    };
    let text = match peer {
        Some(peer) => format!("{value:.digits$}× {peer}"),
        None => format!("{value:.digits$}×"),
    };
    if value < goal {
        format!("*{text}*")
    } else {
        text
    }
}

/// One row per cell of `runs`: tachyon ÷ the best peer by raw rate and
/// per server CPU-second, ÷ the floor, and the same cell (suite and
/// label) in the runs of `before`, when given. Below issue 43's goals in
/// italics: raw 1.0×; per CPU 1.2× the best peer, or in a single
/// connection's cell 0.95× the floor (the per-CPU ratio to the best peer
/// is then shown plain). Then tachyon ÷ the best peer per CPU-second of
/// server and load client together, plain (no goal): where it falls far
/// below the per-CPU ratio, the server's saving is work the client does.
pub fn cell_table(runs: &[Results], before: &[Results]) -> String {
    let earlier: Vec<CellSummary> = before.iter().flat_map(cells).collect();
    let mut out = String::from(
        "| suite | cell | raw × best peer | per CPU × best peer | per CPU × floor | per server+client CPU × best peer |",
    );
    out.push_str(if before.is_empty() {
        "\n|---|---|---|---|---|---|\n"
    } else {
        " before: raw, per CPU |\n|---|---|---|---|---|---|---|\n"
    });
    let ratio = |v: Option<f64>, goal, peer: Option<&String>| {
        v.map_or("–".into(), |v| {
            against_goal(v, goal, peer.map(|p| p.as_str()))
        })
    };
    for c in runs.iter().flat_map(cells) {
        // Which per-CPU goal the cell has: the floor's, or the best peer's.
        let (peer_goal, floor_goal) = if c.single_connection {
            (0.0, 0.95)
        } else {
            (1.2, 0.0)
        };
        let floor = ratio(c.floor, floor_goal, None);
        let _ = write!(
            out,
            "| {} | {} | {} | {} | {floor} | {} |",
            c.suite.name(),
            c.cell,
            ratio(c.raw, 1.0, c.raw_peer.as_ref()),
            ratio(c.per_cpu, peer_goal, c.best_peer.as_ref()),
            ratio(c.per_pair_cpu, 0.0, c.pair_peer.as_ref()),
        );
        if !before.is_empty() {
            let then = earlier.iter().find(|e| e.is_same_cell(&c));
            let _ = write!(
                out,
                " {} |",
                then.map_or("–".into(), |e| format!(
                    "{}, {}",
                    ratio(e.raw, 1.0, None),
                    ratio(e.per_cpu, peer_goal, None)
                ))
            );
        }
        out.push('\n');
    }
    out
}

/// A finished run's results, refused when tachyon failed a traffic check
/// in it (its figures there would be for other traffic).
fn load(dir: &Path) -> anyhow::Result<Results> {
    let path = dir.join("results.json");
    let text =
        std::fs::read_to_string(&path).with_context(|| format!("reading {}", path.display()))?;
    let results: Results =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))?;
    let failed = tachyon_failed_checks(&results);
    if !failed.is_empty() {
        bail!(
            "{}: tachyon failed the traffic check in {}: its figures there would be for other traffic",
            dir.display(),
            failed.join(", ")
        );
    }
    Ok(results)
}

/// `tachyon-bench cells DIR… [--before DIR…]`: prints `cell_table`, then
/// `protocol_cost::table` where the runs pair protocols.
pub fn cells_command(dirs: &[PathBuf], before: &[PathBuf]) -> anyhow::Result<()> {
    let load_all = |dirs: &[PathBuf]| {
        dirs.iter()
            .map(|d| load(d))
            .collect::<anyhow::Result<Vec<_>>>()
    };
    let runs = load_all(dirs)?;
    let mut text = cell_table(&runs, &load_all(before)?);
    if !protocol_cost::pairs(&runs).is_empty() {
        text.push_str("\ntachyon's own protocols on the same traffic (newer ÷ older):\n\n");
        text.push_str(&protocol_cost::table(&runs));
    }
    crate::print_out(&text)
}

/// Where the generated table sits in the README.
const BEGIN: &str = "<!-- figures: made by `tachyon-bench figures`; do not edit by hand -->";
const END: &str = "<!-- /figures -->";

/// `tachyon-bench figures DIR… [--readme FILE]`: prints the table, or
/// writes it between the README's markers.
pub fn figures(dirs: &[PathBuf], readme: Option<&Path>) -> anyhow::Result<()> {
    let mut runs = Vec::new();
    for dir in dirs {
        runs.push((dir.display().to_string(), load(dir)?));
    }
    let table = figures_table(&runs);
    let Some(readme) = readme else {
        return crate::print_out(&table);
    };
    let text =
        std::fs::read_to_string(readme).with_context(|| format!("reading {}", readme.display()))?;
    let (Some(begin), Some(end)) = (text.find(BEGIN), text.find(END)) else {
        bail!("{} has no {BEGIN} … {END} markers", readme.display());
    };
    let base = readme.parent().unwrap_or(Path::new("."));
    let table = runs.iter().fold(table, |t, (dir, _)| {
        let rel = Path::new(dir)
            .strip_prefix(base)
            .map_or(dir.clone(), |p| p.display().to_string());
        t.replace(&format!("]({dir}/"), &format!("]({rel}/"))
    });
    let new = format!("{}{BEGIN}\n{table}{}", &text[..begin], &text[end..]);
    std::fs::write(readme, new)?;
    crate::print_out(&format!(
        "{}: figures table from {} runs\n",
        readme.display(),
        runs.len()
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::ClientReport;

    fn row(server: &str, rps: f64, cpu_s: f64) -> Row {
        Row {
            suite: Suite::Efficiency,
            seed: "000".into(),
            cell: "1k t1 c32".into(),
            server: server.into(),
            round: 1,
            ok: true,
            client: ClientReport {
                rps,
                requests: (rps * 10.0) as u64,
                duration_s: 10.0,
                ..ClientReport::default()
            },
            server_usr_s: cpu_s,
            ..Row::default()
        }
    }

    fn results(rows: Vec<Row>) -> Results {
        Results::of(&["tachyon", "floor", "nginx", "h2o"], rows)
    }

    #[test]
    fn the_cell_table_marks_what_misses_the_goals_and_sets_earlier_runs_beside() {
        // Per CPU: tachyon 11,990 ÷ nginx 10,000 = 1.199× (three decimals:
        // two would read 1.20×); raw 119,900 ÷ h2o 120,000 = 0.999×. The
        // client spends 80 s under tachyon and 20 s under the peers: per
        // server+client CPU-second 1,199,000 ÷ 180 s against nginx's
        // 1,000,000 ÷ 120 s, 0.80×, plain (no goal).
        let client = |row: Row, client_cpu_s| Row {
            client_cpu_s,
            ..row
        };
        let now = results(vec![
            client(row("tachyon", 119_900.0, 100.0), 80.0),
            client(row("floor", 100_000.0, 10.0), 20.0),
            client(row("nginx", 100_000.0, 100.0), 20.0),
            client(row("h2o", 120_000.0, 200.0), 20.0),
        ]);
        let then = results(vec![
            row("tachyon", 150_000.0, 100.0),
            row("nginx", 100_000.0, 100.0),
        ]);
        let head = "| suite | cell | raw × best peer | per CPU × best peer | per CPU × floor \
                    | per server+client CPU × best peer |";
        assert_eq!(
            cell_table(std::slice::from_ref(&now), &[]),
            format!(
                "{head}\n|---|---|---|---|---|---|\n\
                 | efficiency | 1k t1 c32 | *0.999× h2o* | *1.199× nginx* | 0.12× | 0.80× nginx |\n"
            )
        );
        assert_eq!(
            cell_table(&[now], &[then]),
            format!(
                "{head} before: raw, per CPU |\n|---|---|---|---|---|---|---|\n\
                 | efficiency | 1k t1 c32 | *0.999× h2o* | *1.199× nginx* | 0.12× | 0.80× nginx \
                 | 1.50×, 1.50× |\n"
            )
        );
    }

    #[test]
    fn a_single_connection_cell_is_judged_against_the_floor() {
        // Per CPU: tachyon 10,000 ÷ nginx 11,000 (below 1.2×, not marked),
        // ÷ the floor's 10,600 = 0.943× (marked: under 0.95×); fabhttp's
        // one user is one connection too.
        for (suite, seed, cell) in [
            (Suite::Efficiency, "000", "1k t1 c1"),
            (Suite::Fabhttp, "003", "8k random u1"),
        ] {
            let one = |server, rps, cpu_s| Row {
                suite,
                seed: seed.into(),
                cell: cell.into(),
                conns: 1,
                ..row(server, rps, cpu_s)
            };
            let run = results(vec![
                one("tachyon", 10_000.0, 10.0),
                one("floor", 10_600.0, 10.0),
                one("nginx", 11_000.0, 10.0),
            ]);
            let table = cell_table(&[run], &[]);
            let name = suite.name();
            assert!(
                table.ends_with(&format!(
                    "| {name} | {cell} | *0.91× nginx* | 0.91× nginx | *0.94×* | – |\n"
                )),
                "{table}"
            );
        }
    }

    #[test]
    fn one_http2_connection_keeps_the_best_peers_goal() {
        // The same figures in h2load's one-connection cell: not a seed's,
        // so 0.91× nginx is marked and the floor's 0.94× is not.
        let one = |server, rps, cpu_s| Row {
            suite: Suite::H2c,
            seed: "i16".into(),
            cell: "1k c1 m100".into(),
            conns: 1,
            ..row(server, rps, cpu_s)
        };
        let run = results(vec![
            one("tachyon", 10_000.0, 10.0),
            one("floor", 10_600.0, 10.0),
            one("nginx", 11_000.0, 10.0),
        ]);
        let table = cell_table(&[run], &[]);
        assert!(
            table.ends_with("| h2c | 1k c1 m100 | *0.91× nginx* | *0.91× nginx* | 0.94× | – |\n"),
            "{table}"
        );
    }

    #[test]
    fn the_best_peer_is_chosen_per_measure_and_never_the_floor() {
        // nginx is faster raw, h2o cheaper per request; the floor beats both.
        let r = results(vec![
            row("tachyon", 150_000.0, 10.0),
            row("floor", 200_000.0, 10.0),
            row("nginx", 100_000.0, 10.0),
            row("h2o", 90_000.0, 6.0),
        ]);
        let cells = cells(&r);
        assert_eq!(cells.len(), 1);
        let c = &cells[0];
        assert!((c.raw.unwrap() - 1.5).abs() < 1e-9, "{c:?}");
        // tachyon 150k req/CPU-s against h2o's 150k.
        assert!((c.per_cpu.unwrap() - 1.0).abs() < 1e-9, "{c:?}");
        assert_eq!(c.best_peer.as_deref(), Some("h2o"));
        assert!((c.floor.unwrap() - 0.75).abs() < 1e-9);
    }

    #[test]
    fn a_server_that_failed_the_traffic_check_in_round_one_is_no_reference_in_later_rounds() {
        // The floor serves identity: flagged in round 1 of a compressed
        // cell, its clean later rounds must not make it the reference.
        let mut flagged = row("floor", 400_000.0, 10.0);
        flagged.ok = false;
        flagged.problems =
            vec!["check: nothing was compressed (10 body bytes for 10 bytes of files)".into()];
        let mut later = row("floor", 400_000.0, 10.0);
        later.round = 2;
        let r = results(vec![
            row("tachyon", 150_000.0, 10.0),
            flagged,
            later,
            row("nginx", 100_000.0, 10.0),
        ]);
        let c = &cells(&r)[0];
        assert!(c.floor.is_none(), "{c:?}");
        assert!((c.per_cpu.unwrap() - 1.5).abs() < 1e-9, "{c:?}");
    }

    #[test]
    fn a_tachyon_that_failed_the_traffic_check_is_named_not_left_out_quietly() {
        let mut wrong = row("tachyon", 150_000.0, 10.0);
        wrong.problems = vec!["check: 10 of 12 paths answered 2xx/3xx (2 4xx/5xx)".into()];
        let mut floor = row("floor", 400_000.0, 10.0);
        floor.problems =
            vec!["check: nothing was compressed (1 body bytes for 1 bytes of files)".into()];
        let r = results(vec![wrong, floor, row("nginx", 100_000.0, 10.0)]);
        assert!(cells(&r).is_empty());
        assert_eq!(tachyon_failed_checks(&r), vec!["1k t1 c32".to_string()]);
        let clean = results(vec![row("tachyon", 1.0, 1.0), row("nginx", 1.0, 1.0)]);
        assert!(tachyon_failed_checks(&clean).is_empty());
    }

    #[test]
    fn the_figures_table_has_a_row_per_seed_and_protocol() {
        // Per server+client CPU-second: 1,500,000 ÷ (10 + 20) s against
        // 1,000,000 ÷ (10 + 10) s, 1.00×; no floor ran.
        let r = results(vec![
            Row {
                client_cpu_s: 20.0,
                ..row("tachyon", 150_000.0, 10.0)
            },
            Row {
                client_cpu_s: 10.0,
                ..row("nginx", 100_000.0, 10.0)
            },
        ]);
        let table = figures_table(&[("bench/results/x".into(), r)]);
        let lines: Vec<&str> = table.lines().collect();
        assert_eq!(lines.len(), 3, "{table}");
        assert!(
            lines[2].starts_with(
                "| seed 000 Spare Cores: efficiency | synthetic | HTTP/1.1 | 1 | 1.50× | 1.50× | 1.00× | – |"
            ),
            "{table}"
        );
    }

    #[test]
    fn each_row_names_the_host_it_was_measured_on() {
        let on = |cpu_model: &str| {
            let mut r = results(vec![
                row("tachyon", 150_000.0, 10.0),
                row("nginx", 100_000.0, 10.0),
            ]);
            r.machine = Machine {
                cores: 2,
                cpu_model: cpu_model.into(),
                kernel: "6.18.44".into(),
                ..Machine::default()
            };
            r
        };
        let mut intel = on("Intel(R) Xeon(R) Processor");
        intel
            .rows
            .iter_mut()
            .for_each(|r| r.cell = "1k t1 c1".into());
        let table = figures_table(&[
            ("bench/results/a".into(), on("AMD EPYC")),
            ("bench/results/b".into(), intel),
        ]);
        let hosts: Vec<&str> = table
            .lines()
            .skip(2)
            .map(|line| line.split(" | ").nth(9).unwrap_or_default())
            .collect();
        assert_eq!(
            hosts,
            ["2× AMD EPYC, 6.18.44", "2× Intel Xeon, 6.18.44"],
            "{table}"
        );
    }

    #[test]
    fn an_open_loop_cell_has_no_raw_ratio() {
        let at = |server: &str, cpu_s: f64| Row {
            suite: Suite::Latency,
            target_rps: Some(5_000.0),
            ..row(server, 5_000.0, cpu_s)
        };
        let cells = cells(&results(vec![at("tachyon", 1.0), at("nginx", 2.0)]));
        assert_eq!(cells[0].raw, None);
        assert!((cells[0].per_cpu.unwrap() - 2.0).abs() < 1e-9);
    }

    #[test]
    fn a_seed_row_names_its_suite_unless_it_is_the_seeds_namesake() {
        let of = |suite: Suite, seed: &str| {
            let r = results(vec![
                Row {
                    suite,
                    seed: seed.into(),
                    ..row("tachyon", 150_000.0, 10.0)
                },
                Row {
                    suite,
                    seed: seed.into(),
                    ..row("nginx", 100_000.0, 10.0)
                },
            ]);
            let table = figures_table(&[("bench/results/x".into(), r)]);
            let line = table.lines().nth(2).unwrap_or_default().to_string();
            line.split(" | ").next().unwrap_or_default().to_string()
        };
        assert_eq!(of(Suite::LinuxConfig, "001"), "| seed 001 LinuxConfig");
        assert_eq!(of(Suite::Churn, "001"), "| seed 001 LinuxConfig: churn");
        assert_eq!(of(Suite::SpareCores, "000"), "| seed 000 Spare Cores");
        assert_eq!(of(Suite::Fabhttp, "003"), "| seed 003 fabhttp");
    }

    /// A row of seed 001's `suite`.
    fn seed_001(suite: Suite, server: &str, rps: f64) -> Row {
        Row {
            suite,
            seed: "001".into(),
            ..row(server, rps, 10.0)
        }
    }

    /// One run of two of seed 001's suites: tachyon 1.50× nginx in
    /// linuxconfig, 0.80× in large.
    fn linuxconfig_and_large() -> Results {
        results(vec![
            seed_001(Suite::LinuxConfig, "tachyon", 150_000.0),
            seed_001(Suite::LinuxConfig, "nginx", 100_000.0),
            seed_001(Suite::Large, "tachyon", 80_000.0),
            seed_001(Suite::Large, "nginx", 100_000.0),
        ])
    }

    #[test]
    fn a_run_of_two_suites_of_one_seed_gives_each_its_row() {
        let table = figures_table(&[("bench/results/x".into(), linuxconfig_and_large())]);
        let rows: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(rows.len(), 2, "{table}");
        assert!(
            rows[0].starts_with("| seed 001 LinuxConfig | synthetic | HTTP/1.1 | 1 | 1.50× |"),
            "{table}"
        );
        assert!(
            rows[1]
                .starts_with("| seed 001 LinuxConfig: large | synthetic | HTTP/1.1 | 1 | 0.80× |"),
            "{table}"
        );
    }

    #[test]
    fn a_cell_run_again_later_replaces_its_row_and_leaves_the_others() {
        let both = linuxconfig_and_large();
        let again = results(vec![
            seed_001(Suite::Large, "tachyon", 90_000.0),
            seed_001(Suite::Large, "nginx", 100_000.0),
        ]);
        let table = figures_table(&[
            ("bench/results/both".into(), both.clone()),
            ("bench/results/again".into(), again.clone()),
        ]);
        let rows: Vec<&str> = table.lines().skip(2).collect();
        assert_eq!(rows.len(), 2, "{table}");
        assert!(rows[0].starts_with("| seed 001 LinuxConfig | synthetic | HTTP/1.1 | 1 | 1.50× |"));
        assert!(
            rows[1]
                .starts_with("| seed 001 LinuxConfig: large | synthetic | HTTP/1.1 | 1 | 0.90× |")
                && rows[1].ends_with("[again](bench/results/again/report.md) |"),
            "{table}"
        );
        // Listed the other way round, the older run's cell is the later one.
        let table = figures_table(&[
            ("bench/results/again".into(), again),
            ("bench/results/both".into(), both),
        ]);
        assert!(
            table.contains("| 1 | 0.80× |") && !table.contains("0.90×"),
            "{table}"
        );
    }

    #[test]
    fn the_http3_run_gives_one_row_and_its_references_none() {
        let of = |cell: &str, server: &str, rps: f64| Row {
            suite: Suite::H3,
            seed: "i42".into(),
            cell: cell.into(),
            ..row(server, rps, 10.0)
        };
        let r = results(vec![
            of("h3 1k c1 m10", "tachyon", 120_000.0),
            of("h3 1k c1 m10", "h2o", 100_000.0),
            of("h2 1k c1 m10", "tachyon", 200_000.0),
            of("h2 1k c1 m10", "h2o", 100_000.0),
            of("https1 10MiB c1 m1", "tachyon", 300.0),
            of("https1 10MiB c1 m1", "h2o", 100.0),
        ]);
        let table = figures_table(&[("bench/results/h3".into(), r.clone())]);
        let rows: Vec<&str> = table.lines().skip(2).collect();
        let run = "| h3load 1 KiB / 64 KiB / 10 MiB, handshakes | synthetic";
        assert_eq!(rows.len(), 1, "{table}");
        assert!(
            rows[0].starts_with(&format!("{run} | HTTP/3 | 1 | 1.20× |")),
            "{table}"
        );
        let labels: Vec<&str> = cells(&r).iter().map(CellSummary::protocol).collect();
        assert_eq!(labels, ["HTTP/3", "HTTP/2 (TLS)", "HTTPS/1.1"]);
    }
}
