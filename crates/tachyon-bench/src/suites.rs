//! The workloads: one function per suite, each citing the seed it
//! reproduces (`bench/README.md` names the seeds and their sources).
//! A suite is a list of cells; a cell is one client command that every
//! server runs, interleaved, for several rounds.

use serde::{Deserialize, Serialize};

use crate::realsite::RealSite;
use crate::site;
use crate::traffic::Traffic;

/// What a cell measures: a load client's run, or the server's memory with
/// idle connections held (no client).
#[derive(Debug, Clone)]
pub enum Workload {
    Client(Load),
    /// Open `conns` keep-alive connections, one request each, and hold them:
    /// resident memory at rest and per idle connection.
    Footprint {
        conns: u32,
    },
}

impl From<Load> for Workload {
    fn from(load: Load) -> Workload {
        Workload::Client(load)
    }
}

/// A load client's run (see `clients` for the command lines).
#[derive(Debug, Clone)]
pub enum Load {
    /// wrk: closed loop, keep-alive unless `close`.
    Wrk {
        threads: u32,
        conns: u32,
        duration_s: u32,
        latency: bool,
        script: Option<Script>,
        close: bool,
    },
    /// ApacheBench: HTTP/1.0, `-k` for keep-alive.
    Ab {
        requests: u32,
        conns: u32,
        keepalive: bool,
    },
    /// h2load, or over HTTP/3 our `h3load` with its flags; over HTTP/1.1
    /// `streams` is the pipelining depth, over HTTP/2 and HTTP/3 the
    /// concurrent streams per connection.
    H2load {
        conns: u32,
        threads: u32,
        streams: u32,
        duration_s: u32,
        over: Over,
    },
    /// oha at a fixed rate, the same for every server, correcting
    /// coordinated omission.
    Oha {
        conns: u32,
        rate: u32,
        duration_s: u32,
    },
    /// `openssl s_time`: one connection at a time, each a TLS handshake and
    /// one HTTP/1.0 GET. With `resume`, every handshake after the first
    /// resumes the first one's session (a TLS 1.3 ticket), the only stock
    /// client here that does: ab, wrk and h2load all start afresh.
    STime { resume: bool, duration_s: u32 },
    /// `tachyon-bench h3load --fresh`: `requests` QUIC connections, `conns`
    /// at a time, each a full handshake and one GET.
    H3Fresh { requests: u32, conns: u32 },
}

/// The protocol an h2load-style client speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Over {
    H1,
    H2,
    H3,
}

/// wrk Lua scripts, written to the run directory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Script {
    /// Seed 003: a random one of 1000 files per request, from a prebuilt list.
    FabRandom,
    /// TechEmpower's pipeline.lua: 16 requests per write.
    Pipeline16,
}

impl Script {
    pub fn file_name(self) -> &'static str {
        match self {
            Script::FabRandom => "fab8k.lua",
            Script::Pipeline16 => "pipeline16.lua",
        }
    }

    pub fn source(self) -> String {
        match self {
            Script::FabRandom => format!(
                "-- seed 003 (fabhttp): GET a random one of {n} 8 KiB files; requests prebuilt in init.\n\
                 local reqs = {{}}\n\
                 init = function(args)\n  for i = 1, {n} do reqs[i] = wrk.format(nil, \"/fabhttp/randomfiles/\" .. i) end\nend\n\
                 request = function() return reqs[math.random(1, {n})] end\n",
                n = site::FAB_FILES
            ),
            Script::Pipeline16 => "-- TechEmpower pipeline.lua: 16 pipelined requests per write.\n\
                 local batch\n\
                 init = function(args)\n  local r = {}\n  for i = 1, 16 do r[i] = wrk.format() end\n  batch = table.concat(r)\nend\n\
                 request = function() return batch end\n"
                .to_string(),
        }
    }
}

/// One measured configuration.
#[derive(Debug, Clone)]
pub struct Cell {
    pub suite: Suite,
    pub seed: &'static str,
    /// Unique within the suite, e.g. `1k t2 c16`.
    pub label: String,
    pub path: String,
    pub workload: Workload,
    /// Sent as `Accept-Encoding`; responses may then be smaller than the file.
    pub accept_encoding: Option<&'static str>,
    /// A real-site cell: a browser's requests to a real site's paths.
    pub traffic: Option<Traffic>,
}

impl Cell {
    pub fn file_bytes(&self) -> u64 {
        site::size_of(&self.path)
    }

    pub fn conns(&self) -> u32 {
        match &self.workload {
            Workload::Client(
                Load::Wrk { conns, .. }
                | Load::Ab { conns, .. }
                | Load::H2load { conns, .. }
                | Load::Oha { conns, .. }
                | Load::H3Fresh { conns, .. },
            )
            | Workload::Footprint { conns } => *conns,
            Workload::Client(Load::STime { .. }) => 1,
        }
    }

    /// Sets the duration of a timed workload (wrk, h2load, oha).
    pub fn set_duration(&mut self, seconds: u32) {
        match &mut self.workload {
            Workload::Client(
                Load::Wrk { duration_s, .. }
                | Load::H2load { duration_s, .. }
                | Load::Oha { duration_s, .. }
                | Load::STime { duration_s, .. },
            ) => *duration_s = seconds,
            Workload::Client(Load::Ab { .. } | Load::H3Fresh { .. })
            | Workload::Footprint { .. } => {}
        }
    }

    /// Expected seconds per run, for the progress bar's ETA.
    pub fn expected_s(&self) -> f64 {
        match &self.workload {
            Workload::Client(
                Load::Wrk { duration_s, .. }
                | Load::H2load { duration_s, .. }
                | Load::STime { duration_s, .. },
            ) => f64::from(*duration_s),
            Workload::Client(Load::Oha { duration_s, .. }) => f64::from(*duration_s) + 3.0,
            Workload::Client(Load::Ab {
                requests,
                keepalive,
                ..
            }) => f64::from(*requests) / if *keepalive { 50_000.0 } else { 10_000.0 },
            Workload::Client(Load::H3Fresh { requests, .. }) => f64::from(*requests) / 2_000.0,
            Workload::Footprint { conns } => f64::from(*conns) / 5_000.0 + 1.0,
        }
    }
}

/// A named set of cells: what `--suite` takes and what each row records.
#[derive(
    Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize,
)]
#[serde(rename_all = "lowercase")]
pub enum Suite {
    /// The default only so rows can be built field by field in tests.
    #[default]
    SpareCores,
    LinuxConfig,
    Boa,
    Fabhttp,
    Binserve,
    Efficiency,
    Pipeline,
    Churn,
    Large,
    Compressed,
    Latency,
    C10k,
    Footprint,
    /// HTTPS: every server serves TLS only (issue 15).
    Tls,
    /// HTTP/2 over TLS (ALPN h2), h2load (issue 16); runs alone like `tls`.
    H2,
    /// The same h2load cells over cleartext with prior knowledge (h2c);
    /// runs alone: nginx's h2c listener speaks only HTTP/2.
    H2c,
    /// The access log's cost: 1 KiB at c=32 and c=256 (issue 17), run
    /// with `tachyon,tachyon-logged,nginx,nginx-logged`.
    Logging,
    /// Real sites fetched as a browser fetches them, HTTP/1.1 (issue 43).
    Real,
    /// The same over h2c; runs alone like `h2c`.
    #[serde(rename = "real-h2c")]
    RealH2c,
    /// The same over TLS, HTTP/1.1 and HTTP/2; runs alone like `tls`.
    #[serde(rename = "real-tls")]
    RealTls,
    /// HTTP/3 (h3load) beside HTTP/2 over TLS (h2load) on the same
    /// servers (issue 42); runs alone like `tls`.
    H3,
    Quick,
    Smoke,
}

impl Suite {
    pub const ALL: [Suite; 23] = [
        Suite::SpareCores,
        Suite::LinuxConfig,
        Suite::Boa,
        Suite::Fabhttp,
        Suite::Binserve,
        Suite::Efficiency,
        Suite::Pipeline,
        Suite::Churn,
        Suite::Large,
        Suite::Compressed,
        Suite::Latency,
        Suite::C10k,
        Suite::Footprint,
        Suite::Tls,
        Suite::H2,
        Suite::H2c,
        Suite::Logging,
        Suite::Real,
        Suite::RealH2c,
        Suite::RealTls,
        Suite::H3,
        Suite::Quick,
        Suite::Smoke,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Suite::SpareCores => "sparecores",
            Suite::LinuxConfig => "linuxconfig",
            Suite::Boa => "boa",
            Suite::Fabhttp => "fabhttp",
            Suite::Binserve => "binserve",
            Suite::Efficiency => "efficiency",
            Suite::Pipeline => "pipeline",
            Suite::Churn => "churn",
            Suite::Large => "large",
            Suite::Compressed => "compressed",
            Suite::Latency => "latency",
            Suite::C10k => "c10k",
            Suite::Footprint => "footprint",
            Suite::Tls => "tls",
            Suite::H2 => "h2",
            Suite::H2c => "h2c",
            Suite::Logging => "logging",
            Suite::Real => "real",
            Suite::RealH2c => "real-h2c",
            Suite::RealTls => "real-tls",
            Suite::H3 => "h3",
            Suite::Quick => "quick",
            Suite::Smoke => "smoke",
        }
    }

    pub fn parse(name: &str) -> Option<Suite> {
        Suite::ALL.into_iter().find(|s| s.name() == name)
    }

    /// Part of `all`: everything but the shortened and CI suites (and
    /// footprint, which `boa` already measures).
    fn in_all(self) -> bool {
        // `tls` runs alone: its servers speak only HTTPS.
        !matches!(
            self,
            Suite::Quick
                | Suite::Smoke
                | Suite::Footprint
                | Suite::Tls
                | Suite::H2
                | Suite::H2c
                | Suite::Logging
                | Suite::Real
                | Suite::RealH2c
                | Suite::RealTls
                | Suite::H3
        )
    }

    /// Serves HTTPS only: runs alone, with servers that speak TLS.
    pub fn is_tls(self) -> bool {
        matches!(self, Suite::Tls | Suite::H2 | Suite::RealTls | Suite::H3)
    }

    /// Serves h2c with prior knowledge: runs alone.
    pub fn is_h2c(self) -> bool {
        matches!(self, Suite::H2c | Suite::RealH2c)
    }

    /// Real sites fetched as a browser fetches them (issue 43), not a
    /// seed's synthetic workload.
    pub fn is_real(self) -> bool {
        matches!(self, Suite::Real | Suite::RealH2c | Suite::RealTls)
    }

    /// This suite's cells.
    pub fn cells(self, plan: &Plan) -> Vec<Cell> {
        let build = match self {
            Suite::SpareCores => sparecores,
            Suite::LinuxConfig => linuxconfig,
            Suite::Boa => boa,
            Suite::Fabhttp => fabhttp,
            Suite::Binserve => binserve,
            Suite::Efficiency => efficiency,
            Suite::Pipeline => pipeline,
            Suite::Churn => churn,
            Suite::Large => large,
            Suite::Compressed => compressed,
            Suite::Latency => latency,
            Suite::C10k => c10k,
            Suite::Footprint => footprint,
            Suite::Tls => tls,
            Suite::H2 => h2,
            Suite::H2c => h2c,
            Suite::Logging => logging,
            Suite::Real | Suite::RealH2c | Suite::RealTls => return real(self, plan),
            Suite::H3 => h3,
            Suite::Quick => quick,
            Suite::Smoke => smoke,
        };
        build(plan)
    }
}

impl std::fmt::Display for Suite {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// How the cells of a run are sized.
pub struct Plan {
    /// Shorter durations and trimmed matrices.
    pub quick: bool,
    /// The machine's cores: seed 000 scales its matrix by them.
    pub cores: u32,
}

impl Plan {
    /// A duration: the seed's, or at most 2 s when quick.
    fn secs(&self, full: u32) -> u32 {
        if self.quick {
            full.min(2)
        } else {
            full
        }
    }

    /// A count of requests: the seed's, or a tenth when quick.
    fn requests(&self, full: u32) -> u32 {
        if self.quick {
            full / 10
        } else {
            full
        }
    }
}

/// wrk with latency percentiles, keep-alive, no script.
fn wrk(threads: u32, conns: u32, duration_s: u32) -> Load {
    Load::Wrk {
        threads,
        conns,
        duration_s,
        latency: true,
        script: None,
        close: false,
    }
}

/// wrk with `Connection: close` on every request.
fn wrk_close(conns: u32, duration_s: u32) -> Load {
    Load::Wrk {
        threads: 1,
        conns,
        duration_s,
        latency: true,
        script: None,
        close: true,
    }
}

fn cell(
    suite: Suite,
    seed: &'static str,
    label: String,
    path: &str,
    workload: impl Into<Workload>,
) -> Cell {
    Cell {
        suite,
        seed,
        label,
        path: path.into(),
        workload: workload.into(),
        accept_encoding: None,
        traffic: None,
    }
}

/// The cells of a suite by name, or of every suite for `all`.
pub fn cells(suite: &str, quick: bool, cores: u32) -> anyhow::Result<Vec<Cell>> {
    let plan = Plan { quick, cores };
    if suite == "all" {
        return Ok(Suite::ALL
            .into_iter()
            .filter(|s| s.in_all())
            .flat_map(|s| s.cells(&plan))
            .collect());
    }
    match Suite::parse(suite) {
        Some(suite) => Ok(suite.cells(&plan)),
        None => {
            let known: Vec<_> = Suite::ALL.iter().map(|s| s.name()).collect();
            anyhow::bail!("unknown suite {suite:?}; known: {}, all", known.join(", "))
        }
    }
}

/// Seed 000: Spare Cores static_web. wrk -t {1,2,4}×N -c {1..32}×N, 10 s;
/// 256k/512k skip 32×N; c < t skipped.
fn sparecores(plan: &Plan) -> Vec<Cell> {
    let mut out = Vec::new();
    for kib in site::SPARECORES_KIB {
        for tm in [1u32, 2, 4] {
            for cm in [1u32, 2, 4, 8, 16, 32] {
                if (kib >= 256 && cm > 16)
                    || cm < tm
                    || (plan.quick && (tm != 1 || ![1, 8].contains(&cm)))
                {
                    continue;
                }
                let (t, c) = (tm * plan.cores, cm * plan.cores);
                out.push(cell(
                    Suite::SpareCores,
                    "000",
                    format!("{kib}k t{t} c{c}"),
                    &format!("/{kib}k"),
                    wrk(t, c, plan.secs(10)),
                ));
            }
        }
    }
    out
}

/// Seed 001: LinuxConfig's ab runs (FusionAuth java-http's first benchmark).
fn linuxconfig(plan: &Plan) -> Vec<Cell> {
    let ab = |requests, conns, keepalive| Load::Ab {
        requests: plan.requests(requests),
        conns,
        keepalive,
    };
    let mut out = Vec::new();
    for keepalive in [false, true] {
        let k = if keepalive { " -k" } else { "" };
        out.push(cell(
            Suite::LinuxConfig,
            "001",
            format!("small n100000 c100{k}"),
            "/index.html",
            ab(100_000, 100, keepalive),
        ));
        out.push(cell(
            Suite::LinuxConfig,
            "001",
            format!("10MiB n500 c10{k}"),
            "/10m.bin",
            ab(500, 10, keepalive),
        ));
    }
    out.push(cell(
        Suite::LinuxConfig,
        "001",
        "small n20000 c1000".into(),
        "/index.html",
        ab(20_000, 1000, false),
    ));
    out
}

/// Seed 002: Boa's benchmark: keep-alive, concurrency 215, 10,000 fetches
/// of 105,165 bytes; plus its footprint claim.
fn boa(plan: &Plan) -> Vec<Cell> {
    let idle = if plan.quick { 1000 } else { 10_000 };
    vec![
        cell(
            Suite::Boa,
            "002",
            "105165B c215 -k".into(),
            "/boa.bin",
            Load::Ab {
                requests: 10_000,
                conns: 215,
                keepalive: true,
            },
        ),
        cell(
            Suite::Boa,
            "002",
            format!("footprint {idle} idle"),
            "/index.html",
            Workload::Footprint { conns: idle },
        ),
    ]
}

/// Seed 003: fabhttp/heliod: random 8 KiB files, 1..10 closed-loop users,
/// p90 <= 10 ms.
fn fabhttp(plan: &Plan) -> Vec<Cell> {
    let users: Vec<u32> = if plan.quick {
        vec![1, 10]
    } else {
        (1..=10).collect()
    };
    users
        .into_iter()
        .map(|u| {
            let w = Load::Wrk {
                threads: u,
                conns: u,
                duration_s: plan.secs(10),
                latency: true,
                script: Some(Script::FabRandom),
                close: false,
            };
            cell(
                Suite::Fabhttp,
                "003",
                format!("8k random u{u}"),
                "/fabhttp/randomfiles/1",
                w,
            )
        })
        .collect()
}

/// Seed 004: binserve's BENCHMARKS.md: wrk -c 500 -t 12 -d 5s on a
/// ~100-byte page, best of 3.
fn binserve(plan: &Plan) -> Vec<Cell> {
    vec![cell(
        Suite::Binserve,
        "004",
        "page t12 c500".into(),
        "/index.html",
        wrk(12, 500, plan.secs(5)),
    )]
}

/// The project's headline: requests per server CPU-second, wrk -t1.
fn efficiency(plan: &Plan) -> Vec<Cell> {
    let mut out = Vec::new();
    for kib in [1u64, 64] {
        for c in [1u32, 32, 256, 1000] {
            out.push(cell(
                Suite::Efficiency,
                "000",
                format!("{kib}k t1 c{c}"),
                &format!("/{kib}k"),
                wrk(1, c, plan.secs(10)),
            ));
        }
    }
    out
}

/// Issue 17: the efficiency cells the access log is judged on.
fn logging(plan: &Plan) -> Vec<Cell> {
    [32u32, 256]
        .into_iter()
        .map(|c| {
            cell(
                Suite::Logging,
                "i17",
                format!("1k t1 c{c}"),
                "/1k",
                wrk(1, c, plan.secs(10)),
            )
        })
        .collect()
}

/// TechEmpower-style pipelining (bench-methodology §2.5, §7.D).
fn pipeline(plan: &Plan) -> Vec<Cell> {
    let wrk16 = Load::Wrk {
        threads: 1,
        conns: 256,
        duration_s: plan.secs(10),
        latency: false,
        script: Some(Script::Pipeline16),
        close: false,
    };
    let h2load = Load::H2load {
        conns: 32,
        threads: 1,
        streams: 16,
        duration_s: plan.secs(10),
        over: Over::H1,
    };
    vec![
        cell(
            Suite::Pipeline,
            "tfb",
            "h2load --h1 c32 m16".into(),
            "/1k",
            h2load,
        ),
        cell(
            Suite::Pipeline,
            "tfb",
            "wrk pipeline16 c256".into(),
            "/1k",
            wrk16,
        ),
    ]
}

/// One request per connection (bench-methodology §7.E).
fn churn(plan: &Plan) -> Vec<Cell> {
    vec![
        cell(
            Suite::Churn,
            "001",
            "wrk Connection: close c32".into(),
            "/1k",
            wrk_close(32, plan.secs(10)),
        ),
        cell(
            Suite::Churn,
            "001",
            "ab n20000 c32".into(),
            "/1k",
            Load::Ab {
                requests: if plan.quick { 5000 } else { 20_000 },
                conns: 32,
                keepalive: false,
            },
        ),
    ]
}

/// Large files: bytes per server CPU-second.
fn large(plan: &Plan) -> Vec<Cell> {
    vec![cell(
        Suite::Large,
        "001",
        "10MiB t1 c8".into(),
        "/10m.bin",
        wrk(1, 8, plan.secs(10)),
    )]
}

/// Issue 15: HTTPS with one ECDSA P-256 certificate for every server. A new
/// TLS connection per request (ab without -k: a full handshake each, so
/// requests per server CPU-second are handshakes), resumed handshakes one
/// at a time (s_time), keep-alive small and medium files, and a 10 MiB
/// file in bytes per server CPU-second.
fn tls(plan: &Plan) -> Vec<Cell> {
    let seed = "i15";
    vec![
        cell(
            Suite::Tls,
            seed,
            "handshake 1k c32".into(),
            "/1k",
            Load::Ab {
                requests: plan.requests(20_000),
                conns: 32,
                keepalive: false,
            },
        ),
        cell(
            Suite::Tls,
            seed,
            "resumed 1k c1".into(),
            "/1k",
            Load::STime {
                resume: true,
                duration_s: plan.secs(10),
            },
        ),
        cell(
            Suite::Tls,
            seed,
            "1k t1 c32".into(),
            "/1k",
            wrk(1, 32, plan.secs(10)),
        ),
        cell(
            Suite::Tls,
            seed,
            "1k t1 c256".into(),
            "/1k",
            wrk(1, 256, plan.secs(10)),
        ),
        cell(
            Suite::Tls,
            seed,
            "64k t1 c32".into(),
            "/64k",
            wrk(1, 32, plan.secs(10)),
        ),
        cell(
            Suite::Tls,
            seed,
            "10MiB t1 c8".into(),
            "/10m.bin",
            wrk(1, 8, plan.secs(10)),
        ),
        cell(
            Suite::Tls,
            seed,
            "2000 idle".into(),
            "/index.html",
            Workload::Footprint { conns: 2000 },
        ),
    ]
}

/// Issue 16: HTTP/2 over TLS with h2load, 1 KiB and 64 KiB, 1/32/256
/// connections of 1/10/100 concurrent streams each (-c1 -m1 is left out:
/// one request at a time measures the round trip, not the server), and the
/// memory of idle HTTP/2 connections.
fn h2(plan: &Plan) -> Vec<Cell> {
    let mut out = h2load_cells(Suite::H2, plan);
    out.push(h2_idle(Suite::H2));
    out
}

/// Issue 16 over cleartext: the same h2load matrix, prior knowledge,
/// and the idle footprint without TLS.
fn h2c(plan: &Plan) -> Vec<Cell> {
    let mut out = h2load_cells(Suite::H2c, plan);
    out.push(h2_idle(Suite::H2c));
    out
}

/// Issue 42: HTTP/3 (h3load) and, on the same servers in the same run,
/// HTTP/2 over TLS (h2load) as the reference: 1 KiB and 64 KiB at 1 and
/// 32 connections of 10 and 100 streams, and one 10 MiB body at a time.
fn h3(plan: &Plan) -> Vec<Cell> {
    let mut out = Vec::new();
    for (over, name) in [(Over::H3, "h3"), (Over::H2, "h2")] {
        let load = |conns, streams| Load::H2load {
            conns,
            threads: 1,
            streams,
            duration_s: plan.secs(10),
            over,
        };
        for (file, path) in [("1k", "/1k"), ("64k", "/64k")] {
            for (conns, streams) in [(1, 10), (1, 100), (32, 10), (32, 100)] {
                let label = format!("{name} {file} c{conns} m{streams}");
                out.push(cell(Suite::H3, "i42", label, path, load(conns, streams)));
            }
        }
        let label = format!("{name} 10MiB c1 m1");
        out.push(cell(Suite::H3, "i42", label, "/10m.bin", load(1, 1)));
    }
    // The goal for 10 MiB is set against HTTPS/1.1 (records sealed in user
    // space, `tachyon-server/src/record.rs`: this kernel has no `tls` ULP).
    let https1 = Load::H2load {
        conns: 1,
        threads: 1,
        streams: 1,
        duration_s: plan.secs(10),
        over: Over::H1,
    };
    let label = "https1 10MiB c1 m1".to_string();
    out.push(cell(Suite::H3, "i42", label, "/10m.bin", https1));
    let fresh = Load::H3Fresh {
        requests: plan.requests(10_000),
        conns: 32,
    };
    let label = "h3 handshake 1k c32".to_string();
    out.push(cell(Suite::H3, "i42", label, "/1k", fresh));
    let tls = Load::Ab {
        requests: plan.requests(10_000),
        conns: 32,
        keepalive: false,
    };
    let label = "https1 handshake 1k c32".to_string();
    out.push(cell(Suite::H3, "i42", label, "/1k", tls));
    out.push(cell(
        Suite::H3,
        "i42",
        "h3 2000 idle".into(),
        "/index.html",
        Workload::Footprint { conns: 2000 },
    ));
    out
}

/// Memory per idle HTTP/2 connection: 2,000 held, one request each.
fn h2_idle(suite: Suite) -> Cell {
    cell(
        suite,
        "i16",
        "2000 idle".into(),
        "/index.html",
        Workload::Footprint { conns: 2000 },
    )
}

/// h2load on 1 KiB and 64 KiB, c = 1/32/256 by m = 1/10/100 streams per
/// connection (c=1 m=1 is the latency of one request, not a load).
fn h2load_cells(suite: Suite, plan: &Plan) -> Vec<Cell> {
    let mut out = Vec::new();
    for (file, path) in [("1k", "/1k"), ("64k", "/64k")] {
        for conns in [1u32, 32, 256] {
            for streams in [1u32, 10, 100] {
                if conns == 1 && streams == 1 {
                    continue;
                }
                out.push(cell(
                    suite,
                    "i16",
                    format!("{file} c{conns} m{streams}"),
                    path,
                    Load::H2load {
                        conns,
                        threads: 1,
                        streams,
                        duration_s: plan.secs(10),
                        over: Over::H2,
                    },
                ));
            }
        }
    }
    out
}

/// Issue 43: real sites as a browser fetches them. For each site (the
/// Python docs, the web app) and protocol: every file of the site in turn
/// with `identity`, with the browser's codings (the peers compressing as
/// deployed), and with them on the twin with precompressed siblings (the
/// best the peers can do); and one page with its resources, repeated on
/// each connection, with the browser's codings. HTTP/1.1 is one request
/// at a time per connection (h2load `--h1 -m1`); HTTP/2 10 streams for the
/// file lists, 32 for the page (all of its resources at once).
fn real(suite: Suite, plan: &Plan) -> Vec<Cell> {
    let protocols: &[bool] = match suite {
        Suite::Real => &[false],
        Suite::RealH2c => &[true],
        _ => &[false, true],
    };
    let mut out = Vec::new();
    for site in RealSite::ALL {
        for &h2 in protocols {
            for (precompressed, page, identity) in [
                (false, false, true),
                (false, false, false),
                (true, false, false),
                (false, true, false),
            ] {
                let traffic = Traffic {
                    site,
                    precompressed,
                    page,
                    identity,
                };
                let (conns, streams) = match (h2, page) {
                    (false, false) => (32, 1),
                    (false, true) => (8, 1),
                    (true, false) => (32, 10),
                    (true, true) => (8, 32),
                };
                let proto = if h2 {
                    format!("h2 c{conns} m{streams}")
                } else {
                    format!("h1 c{conns}")
                };
                let mut c = cell(
                    suite,
                    "i43",
                    format!("{} {proto}", traffic.describe()),
                    &format!("/{}/index.html", site.dir(precompressed)),
                    Load::H2load {
                        conns,
                        threads: 1,
                        streams,
                        duration_s: plan.secs(5),
                        over: if h2 { Over::H2 } else { Over::H1 },
                    },
                );
                c.traffic = Some(traffic);
                out.push(c);
            }
        }
    }
    out
}

/// Issue 4: a 100 KB script to clients that accept compression. What a
/// browser sends, then gzip only (both sides serve a prebuilt .gz).
fn compressed(plan: &Plan) -> Vec<Cell> {
    let mut out = Vec::new();
    for (name, accept) in [("browser", "gzip, deflate, br, zstd"), ("gzip", "gzip")] {
        for conns in [32u32, 256] {
            let mut c = cell(
                Suite::Compressed,
                "i4",
                format!("app.js {name} c{conns}"),
                site::APP_JS,
                wrk(1, conns, plan.secs(10)),
            );
            c.accept_encoding = Some(accept);
            out.push(c);
        }
    }
    out
}

/// Open-loop latency at 50/80/95% of the peak, coordinated omission corrected.
/// Latency at the same offered rates for every server (a fraction of each
/// server's own peak would offer them different loads, and drove the
/// client to saturation at the top fractions): the achieved rate is
/// checked against the offered one, and the client's CPU is recorded.
fn latency(plan: &Plan) -> Vec<Cell> {
    LATENCY_RATES
        .into_iter()
        .map(|rate| {
            let w = Load::Oha {
                conns: 64,
                rate,
                duration_s: plan.secs(10),
            };
            cell(
                Suite::Latency,
                "000",
                format!("1k c64 at {}k req/s", rate / 1000),
                "/1k",
                w,
            )
        })
        .collect()
}

/// The offered rates of the latency suite, requests per second: within
/// what one oha process sustains on 2 cores beside the server.
pub const LATENCY_RATES: [u32; 3] = [5_000, 20_000, 40_000];

/// Many keep-alive connections: zero errors expected, p99 compared.
fn c10k(plan: &Plan) -> Vec<Cell> {
    [1000u32, 10_000]
        .into_iter()
        .map(|c| {
            cell(
                Suite::C10k,
                "001",
                format!("1k t2 c{c}"),
                "/1k",
                wrk(2, c, plan.secs(10)),
            )
        })
        .collect()
}

fn footprint(_: &Plan) -> Vec<Cell> {
    vec![cell(
        Suite::Footprint,
        "002",
        "10000 idle".into(),
        "/index.html",
        Workload::Footprint { conns: 10_000 },
    )]
}

/// Under three minutes with the default servers and rounds.
fn quick(_: &Plan) -> Vec<Cell> {
    let mut out: Vec<Cell> = [32u32, 256]
        .into_iter()
        .map(|c| {
            cell(
                Suite::Quick,
                "000",
                format!("1k t1 c{c}"),
                "/1k",
                wrk(1, c, 2),
            )
        })
        .collect();
    out.push(cell(
        Suite::Quick,
        "000",
        "64k t2 c16".into(),
        "/64k",
        wrk(2, 16, 2),
    ));
    out.push(cell(
        Suite::Quick,
        "001",
        "10MiB t1 c8".into(),
        "/10m.bin",
        wrk(1, 8, 2),
    ));
    out.push(cell(
        Suite::Quick,
        "001",
        "1k close c32".into(),
        "/1k",
        wrk_close(32, 2),
    ));
    out
}

/// CI: proves the harness still runs end to end.
fn smoke(_: &Plan) -> Vec<Cell> {
    vec![
        cell(
            Suite::Smoke,
            "000",
            "1k t1 c32".into(),
            "/1k",
            wrk(1, 32, 1),
        ),
        cell(
            Suite::Smoke,
            "001",
            "ab -k n2000 c8".into(),
            "/index.html",
            Load::Ab {
                requests: 2000,
                conns: 8,
                keepalive: true,
            },
        ),
        cell(
            Suite::Smoke,
            "002",
            "footprint 200 idle".into(),
            "/index.html",
            Workload::Footprint { conns: 200 },
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparecores_matrix_matches_the_seed() {
        // 15 cells per small size, 12 per large one: 69 runs (bench-methodology §1).
        let cells = cells("sparecores", false, 2).unwrap();
        assert_eq!(cells.len(), 69);
        assert!(cells.iter().any(|c| c.label == "1k t2 c64"));
        assert!(
            !cells.iter().any(|c| c.label == "256k t2 c64"),
            "no 32×N for big files"
        );
        assert!(
            !cells.iter().any(|c| c.label == "1k t8 c4"),
            "c < t skipped"
        );
    }

    #[test]
    fn every_suite_builds_and_labels_are_unique() {
        let names = Suite::ALL.iter().map(|s| s.name());
        for suite in names.chain(["all"]) {
            for quick in [false, true] {
                let cells = cells(suite, quick, 2).unwrap();
                assert!(!cells.is_empty(), "{suite}");
                let mut labels: Vec<_> = cells.iter().map(|c| (c.suite, c.label.clone())).collect();
                labels.sort();
                labels.dedup();
                assert_eq!(labels.len(), cells.len(), "{suite}: duplicate labels");
            }
        }
        assert!(cells("nope", false, 2).is_err());
    }
}
