//! The results file: one JSON document per run, rewritten after every cell so
//! an interrupted run keeps what it measured (hyperfine exports per benchmark
//! for the same reason). Units are in field names.

use serde::{Deserialize, Serialize};

use crate::clients::ClientReport;
use crate::suites::Suite;

pub const SCHEMA_VERSION: u32 = 1;

/// Everything a run measured.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Results {
    pub schema_version: u32,
    pub machine: Machine,
    pub command: String,
    pub started: String,
    pub finished: Option<String>,
    /// When an interrupted run was continued (`run --resume`), once per
    /// continuation; its cells were measured in more than one sitting.
    #[serde(default)]
    pub resumed: Vec<String>,
    pub servers: Vec<ServerInfo>,
    pub rows: Vec<Row>,
}

/// Facts about where the run happened.
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Machine {
    pub cores: usize,
    pub cpu_model: String,
    pub kernel: String,
    pub memory_gib: f64,
    /// The system's TCP congestion control (`net.ipv4.tcp_congestion_control`)
    /// and what servers on loopback get from it: a pacing one (BBR) arms a
    /// timer per pacing gap even where nothing queues, which bills servers
    /// that transmit in their own context. Empty in runs recorded before
    /// it was kept.
    #[serde(default)]
    pub tcp_congestion: String,
    /// True when tachyon and the floor were under it too (runs since
    /// 2026-12-02, `congestion`); before, their loopback connections used
    /// cubic whatever the system's was, and only the peers were under it.
    #[serde(default)]
    pub congestion_every_server: bool,
    pub tools: Vec<(String, String)>,
}

/// A server as it ran.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ServerInfo {
    pub name: String,
    pub version: String,
    pub workers: usize,
    pub rss_at_rest_bytes: u64,
    pub binary_bytes: Option<u64>,
}

/// One client run against one server: a (cell, server, round).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct Row {
    pub suite: Suite,
    pub seed: String,
    pub cell: String,
    pub server: String,
    pub round: u32,
    pub client_command: String,
    pub file_bytes: u64,
    pub conns: u32,
    /// False when anything was wrong: errors, wrong sizes, a crash. Such a row
    /// is shown and flagged, never averaged in.
    pub ok: bool,
    pub problems: Vec<String>,
    /// What the load client reported (its fields sit at the row's top
    /// level in results.json).
    #[serde(flatten)]
    pub client: ClientReport,
    pub server_usr_s: f64,
    pub server_sys_s: f64,
    pub client_cpu_s: f64,
    /// Footprint cells only.
    pub rss_rest_bytes: Option<u64>,
    pub rss_loaded_bytes: Option<u64>,
    pub idle_conns_held: Option<u64>,
    /// The offered rate of an open-loop cell.
    pub target_rps: Option<f64>,
    /// That rate as a fraction of the peak measured just before.
    #[serde(default)]
    pub rate_fraction: Option<f64>,
    /// The client's thread count (wrk, h2load).
    #[serde(default)]
    pub threads: Option<u32>,
    /// Connections the server held open midway through a many-connection
    /// cell (its socket descriptors, less those it had at rest): a server
    /// that caps connections serves, and times, only the ones it accepted.
    #[serde(default)]
    pub conns_held: Option<u64>,
}

impl Row {
    pub fn server_cpu_s(&self) -> f64 {
        self.server_usr_s + self.server_sys_s
    }

    /// The headline: requests per server CPU-second.
    pub fn req_per_server_cpu_s(&self) -> Option<f64> {
        let cpu = self.server_cpu_s();
        (cpu > 0.0 && self.client.requests > 0).then(|| self.client.requests as f64 / cpu)
    }

    /// Requests per CPU-second of the server and the load client together:
    /// on loopback the kernel runs a transmission, and the receiver's side
    /// of it, in the context of whichever process triggers it, so a server
    /// that leaves more unsent bytes in its sockets has the client's
    /// acknowledgements do more of its sending, and looks cheaper per
    /// server CPU-second for work the machine still does
    /// (bench/results/adaptive-bound-2026-12-06). `None` when the client's
    /// CPU was not measured.
    pub fn req_per_pair_cpu_s(&self) -> Option<f64> {
        let cpu = self.server_cpu_s() + self.client_cpu_s;
        (self.client_cpu_s > 0.0 && self.client.requests > 0)
            .then(|| self.client.requests as f64 / cpu)
    }

    pub fn bytes_per_server_cpu_s(&self) -> Option<f64> {
        let cpu = self.server_cpu_s();
        (cpu > 0.0).then(|| self.client.bytes_read as f64 / cpu)
    }

    /// The load client's CPU over the run, as a share of one core: near
    /// 1.0 for a single-threaded client (ab, wrk -t1), the raw rate is the
    /// client's limit, not the server's.
    pub fn client_core_share(&self) -> Option<f64> {
        (self.client.duration_s > 0.0).then(|| self.client_cpu_s / self.client.duration_s)
    }

    /// Spare Cores' extrapolated RPS: rps × (S+C)/S.
    pub fn extrapolated_rps(&self) -> Option<f64> {
        extrapolate(self.client.rps, self.server_cpu_s(), self.client_cpu_s)
    }

    pub fn bytes_per_idle_conn(&self) -> Option<f64> {
        let (rest, loaded, held) = (
            self.rss_rest_bytes?,
            self.rss_loaded_bytes?,
            self.idle_conns_held?,
        );
        (held > 0).then(|| (loaded as f64 - rest as f64) / held as f64)
    }
}

/// rps × (S + C) / S (Spare Cores `inspector.py`): the rate the server would
/// reach with the client's CPU too, if it scaled linearly.
pub fn extrapolate(rps: f64, server_cpu_s: f64, client_cpu_s: f64) -> Option<f64> {
    (server_cpu_s > 0.0).then(|| rps * (server_cpu_s + client_cpu_s) / server_cpu_s)
}

#[cfg(test)]
impl Results {
    /// A run of `servers` (two workers each) that measured `rows`: where
    /// the specs of every table built from results start.
    pub fn of(servers: &[&str], rows: Vec<Row>) -> Results {
        Results {
            schema_version: SCHEMA_VERSION,
            machine: Machine::default(),
            command: String::new(),
            started: String::new(),
            finished: None,
            resumed: Vec::new(),
            servers: servers
                .iter()
                .map(|name| ServerInfo {
                    name: name.to_string(),
                    version: String::new(),
                    workers: 2,
                    rss_at_rest_bytes: 0,
                    binary_bytes: None,
                })
                .collect(),
            rows,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn extrapolation_matches_the_seed_formula() {
        // bench-methodology §1: nginx, 1 KiB: R/S = 76.2k, S = 4.97, C = 4.38.
        let rps = 75_700.0;
        let e = extrapolate(rps, 4.97, 4.38).unwrap();
        assert!((e - rps * 9.35 / 4.97).abs() < 1e-6);
        assert!(
            extrapolate(1.0, 0.0, 1.0).is_none(),
            "no server CPU: undefined, not infinite"
        );
    }

    #[test]
    fn per_cpu_figures() {
        let row = Row {
            client: ClientReport {
                requests: 1000,
                bytes_read: 4000,
                duration_s: 2.0,
                ..ClientReport::default()
            },
            server_usr_s: 0.25,
            server_sys_s: 0.25,
            client_cpu_s: 1.5,
            ..Row::default()
        };
        assert_eq!(row.req_per_server_cpu_s(), Some(2000.0));
        assert_eq!(row.bytes_per_server_cpu_s(), Some(8000.0));
        assert_eq!(row.client_core_share(), Some(0.75));
        // 1,000 requests for 0.5 s of server and 1.5 s of client CPU.
        assert_eq!(row.req_per_pair_cpu_s(), Some(500.0));
        let unmeasured = Row {
            client_cpu_s: 0.0,
            ..row.clone()
        };
        assert_eq!(unmeasured.req_per_pair_cpu_s(), None);
        let unparsed = Row {
            client_cpu_s: 1.5,
            ..Row::default()
        };
        assert_eq!(unparsed.client_core_share(), None);
        let foot = Row {
            rss_rest_bytes: Some(1000),
            rss_loaded_bytes: Some(6000),
            idle_conns_held: Some(10),
            ..Row::default()
        };
        assert_eq!(foot.bytes_per_idle_conn(), Some(500.0));
    }
}
