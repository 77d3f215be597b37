//! tachyon against itself: the server CPU a request costs over a newer
//! protocol ÷ what the same traffic costs over an older one, from
//! finished runs (`tachyon-bench cells` prints it under the cell table).
//! Issue 43 asks HTTP/2 to cost at most 1.3× tachyon's own HTTP/1.1 on
//! the real sites; issue 42 asks HTTP/3 for ≥ 0.8× HTTP/2's requests
//! per server CPU-second on 1 KiB -m100 and ≥ 0.5× HTTPS/1.1's bytes on
//! 10 MiB.
//!
//! Owns: which cells are the same traffic over two protocols (their
//! labels differ only in the protocol word, and in HTTP/2's or HTTP/3's
//! streams per connection where the older protocol has none), and the
//! goal each pair is held to. Does not own: the medians (`report::group`)
//! or which runs are loaded (`summary`). Invariant: only tachyon's own
//! rows are compared, and a pair is only formed within one transport
//! (cleartext, TLS, QUIC beside TLS), so a ratio never mixes the cost of
//! encryption with the cost of framing.

use std::fmt::Write as _;

use crate::report;
use crate::results::Results;
use crate::suites::Suite;

/// The protocol words of cell labels, oldest first.
const PROTOCOLS: [&str; 4] = ["h1", "https1", "h2", "h3"];

/// One cell over a newer protocol beside the same traffic over an older
/// one, both tachyon's, in µs of server CPU per request (medians of
/// rounds).
#[derive(Debug, Clone, PartialEq)]
pub struct ProtocolCost {
    pub suite: Suite,
    pub cell: String,
    pub than_suite: Suite,
    pub than_cell: String,
    pub us: f64,
    pub than_us: f64,
}

impl ProtocolCost {
    /// The newer protocol's cost ÷ the older's.
    pub fn ratio(&self) -> f64 {
        self.us / self.than_us
    }

    /// The most the ratio may be, where an issue names a goal for it.
    pub fn goal(&self) -> Option<f64> {
        let (new, old) = (protocol(&self.cell)?, protocol(&self.than_cell)?);
        let words = |w: &str| self.cell.split_whitespace().any(|x| x == w);
        match (new, old) {
            // Issue 43, on the real sites.
            ("h2", "h1" | "https1") if self.suite.is_real() => Some(1.3),
            // Issue 42: 0.8× the requests per CPU-second, 0.5× the bytes.
            ("h3", "h2") if words("1k") && words("m100") => Some(1.0 / 0.8),
            ("h3", "https1") if words("10MiB") => Some(1.0 / 0.5),
            _ => None,
        }
    }
}

/// Which suites carry the same transport, so that their cells may pair:
/// the real sites' HTTP/1.1 run and their h2c run are both cleartext.
fn transport(suite: Suite) -> Option<&'static str> {
    match suite {
        Suite::Real | Suite::RealH2c => Some("cleartext"),
        Suite::RealTls => Some("tls"),
        Suite::H3 => Some("quic"),
        _ => None,
    }
}

/// The protocol word of a cell label, if it has one.
fn protocol(cell: &str) -> Option<&'static str> {
    cell.split_whitespace()
        .find_map(|w| PROTOCOLS.iter().find(|p| **p == w).copied())
}

fn rank(protocol: &str) -> usize {
    PROTOCOLS.iter().position(|p| *p == protocol).unwrap_or(0)
}

fn is_streams(word: &str) -> bool {
    word.strip_prefix('m')
        .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
}

/// Whether two labels name the same traffic: equal without their
/// protocol words, or also without the streams word when the older
/// protocol's label has none (HTTP/1.1 has one request in flight).
fn same_traffic(newer: &str, older: &str) -> bool {
    let words = |cell: &str, drop_streams: bool| -> Vec<String> {
        cell.split_whitespace()
            .filter(|w| !(PROTOCOLS.contains(w) || drop_streams && is_streams(w)))
            .map(str::to_string)
            .collect()
    };
    let older_has_streams = older.split_whitespace().any(is_streams);
    words(newer, !older_has_streams) == words(older, false)
}

/// tachyon's median µs of server CPU per request in each of its cells,
/// in run order.
fn tachyon_costs(results: &Results) -> Vec<(Suite, String, f64)> {
    report::group(results)
        .iter()
        .filter_map(|cell| {
            let us = cell.metric("tachyon", |r| {
                r.req_per_server_cpu_s().map(|rate| 1e6 / rate)
            })?;
            Some((cell.suite, cell.cell.to_string(), us.median))
        })
        .collect()
}

/// Every pair of tachyon cells in `runs` that are the same traffic over
/// a newer and an older protocol, in the order the newer cells ran.
pub fn pairs(runs: &[Results]) -> Vec<ProtocolCost> {
    let costs: Vec<(Suite, String, f64)> = runs.iter().flat_map(tachyon_costs).collect();
    let mut out = Vec::new();
    for (suite, cell, us) in &costs {
        let (Some(t), Some(p)) = (transport(*suite), protocol(cell)) else {
            continue;
        };
        for (than_suite, than_cell, than_us) in &costs {
            let older = protocol(than_cell).is_some_and(|q| rank(q) < rank(p));
            if older && transport(*than_suite) == Some(t) && same_traffic(cell, than_cell) {
                out.push(ProtocolCost {
                    suite: *suite,
                    cell: cell.clone(),
                    than_suite: *than_suite,
                    than_cell: than_cell.clone(),
                    us: *us,
                    than_us: *than_us,
                });
            }
        }
    }
    out
}

/// One row per pair: both cells, tachyon's µs per request in each, and
/// the ratio, in italics where it is above the goal an issue names.
pub fn table(runs: &[Results]) -> String {
    let mut out = String::from(
        "| suite | cell | ÷ cell | µs of server CPU per request | cost × | goal |\n\
         |---|---|---|---|---|---|\n",
    );
    for p in pairs(runs) {
        let suite = if p.suite == p.than_suite {
            p.suite.name().to_string()
        } else {
            format!("{} ÷ {}", p.suite.name(), p.than_suite.name())
        };
        let ratio = format!("{:.2}×", p.ratio());
        let (ratio, goal) = match p.goal() {
            Some(g) if p.ratio() > g => (format!("*{ratio}*"), format!("≤ {g:.2}×")),
            Some(g) => (ratio, format!("≤ {g:.2}×")),
            None => (ratio, "–".to_string()),
        };
        let _ = writeln!(
            out,
            "| {suite} | {} | {} | {:.2} ÷ {:.2} | {ratio} | {goal} |",
            p.cell, p.than_cell, p.us, p.than_us
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clients::ClientReport;
    use crate::results::Row;

    /// A tachyon row of `cell` whose requests cost `us` µs of CPU each.
    fn row(suite: Suite, cell: &str, us: f64) -> Row {
        Row {
            suite,
            cell: cell.into(),
            server: "tachyon".into(),
            ok: true,
            client: ClientReport {
                requests: 1_000_000,
                ..ClientReport::default()
            },
            server_usr_s: us,
            ..Row::default()
        }
    }

    fn run(rows: Vec<Row>) -> Results {
        Results::of(&[], rows)
    }

    #[test]
    fn the_real_sites_h2_cells_pair_with_the_h1_cells_of_the_same_transport() {
        let real = run(vec![
            row(Suite::Real, "docs paths identity h1 c32", 12.0),
            row(Suite::Real, "docs page browser h1 c8", 10.0),
        ]);
        let h2c = run(vec![
            row(Suite::RealH2c, "docs paths identity h2 c32 m10", 3.0),
            row(Suite::RealH2c, "docs page browser h2 c8 m32", 14.0),
        ]);
        let tls = run(vec![
            row(Suite::RealTls, "docs paths identity h1 c32", 20.0),
            row(Suite::RealTls, "docs paths identity h2 c32 m10", 10.0),
        ]);
        let head = "| suite | cell | ÷ cell | µs of server CPU per request | cost × | goal |\n\
                    |---|---|---|---|---|---|\n";
        assert_eq!(
            table(&[real, h2c, tls]),
            format!(
                "{head}\
                 | real-h2c ÷ real | docs paths identity h2 c32 m10 | docs paths identity h1 c32 | 3.00 ÷ 12.00 | 0.25× | ≤ 1.30× |\n\
                 | real-h2c ÷ real | docs page browser h2 c8 m32 | docs page browser h1 c8 | 14.00 ÷ 10.00 | *1.40×* | ≤ 1.30× |\n\
                 | real-tls | docs paths identity h2 c32 m10 | docs paths identity h1 c32 | 10.00 ÷ 20.00 | 0.50× | ≤ 1.30× |\n"
            )
        );
    }

    #[test]
    fn the_http3_cells_pair_with_http2_by_streams_and_with_https1_on_10_mib() {
        let h3 = run(vec![
            row(Suite::H3, "h3 1k c1 m10", 2.0),
            row(Suite::H3, "h3 1k c1 m100", 2.0),
            row(Suite::H3, "h3 10MiB c1 m1", 5000.0),
            row(Suite::H3, "h2 1k c1 m10", 1.0),
            row(Suite::H3, "h2 1k c1 m100", 1.0),
            row(Suite::H3, "h2 10MiB c1 m1", 2000.0),
            row(Suite::H3, "https1 10MiB c1 m1", 2000.0),
        ]);
        let found: Vec<(String, String, Option<f64>)> = pairs(&[h3])
            .into_iter()
            .map(|p| (p.cell.clone(), p.than_cell.clone(), p.goal()))
            .collect();
        let pair = |a: &str, b: &str, g: Option<f64>| (a.to_string(), b.to_string(), g);
        assert_eq!(
            found,
            [
                pair("h3 1k c1 m10", "h2 1k c1 m10", None),
                pair("h3 1k c1 m100", "h2 1k c1 m100", Some(1.25)),
                pair("h3 10MiB c1 m1", "h2 10MiB c1 m1", None),
                pair("h3 10MiB c1 m1", "https1 10MiB c1 m1", Some(2.0)),
                pair("h2 10MiB c1 m1", "https1 10MiB c1 m1", None),
            ]
        );
    }

    #[test]
    fn cells_of_other_transports_other_traffic_or_other_servers_do_not_pair() {
        let mut nginx = row(Suite::RealH2c, "app page browser h2 c8 m32", 1.0);
        nginx.server = "nginx".into();
        let mut failed = row(Suite::RealTls, "app page browser h2 c8 m32", 1.0);
        failed.ok = false;
        let runs = [
            run(vec![row(Suite::Real, "app page browser h1 c8", 10.0)]),
            run(vec![
                nginx,
                row(Suite::RealTls, "app page browser h1 c8", 10.0),
                failed,
                row(Suite::RealH2c, "app paths browser h2 c32 m10", 1.0),
            ]),
        ];
        assert!(pairs(&runs).is_empty(), "{:?}", pairs(&runs));
    }

    #[test]
    fn the_median_of_tachyons_rounds_is_the_cost() {
        let r = run(vec![
            row(Suite::Real, "app paths identity h1 c32", 10.0),
            row(Suite::Real, "app paths identity h1 c32", 30.0),
            row(Suite::Real, "app paths identity h1 c32", 12.0),
            row(Suite::RealH2c, "app paths identity h2 c32 m10", 6.0),
        ]);
        let p = &pairs(&[r])[0];
        assert!((p.than_us - 12.0).abs() < 1e-9, "{p:?}");
        assert!((p.ratio() - 0.5).abs() < 1e-9, "{p:?}");
    }
}
