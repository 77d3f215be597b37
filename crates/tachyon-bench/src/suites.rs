//! The workloads: one function per suite, each citing the seed it
//! reproduces (`../shared/research/bench-methodology.md` has their sources).
//! A suite is a list of cells; a cell is one client command that every
//! server runs, interleaved, for several rounds.

use crate::site;

/// How a cell loads the server.
#[derive(Debug, Clone)]
pub enum Workload {
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
    /// h2load over HTTP/1.1; `streams` is the pipelining depth.
    H2load {
        conns: u32,
        threads: u32,
        streams: u32,
        duration_s: u32,
    },
    /// oha at a fixed rate, a fraction of the peak measured just before,
    /// correcting coordinated omission.
    Oha {
        conns: u32,
        rate_fraction: f64,
        duration_s: u32,
    },
    /// Open `conns` keep-alive connections, one request each, and hold them:
    /// resident memory at rest and per idle connection.
    Footprint { conns: u32 },
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
    pub suite: &'static str,
    pub seed: &'static str,
    /// Unique within the suite, e.g. `1k t2 c16`.
    pub label: String,
    pub path: String,
    pub workload: Workload,
    /// Sent as `Accept-Encoding`; responses may then be smaller than the file.
    pub accept_encoding: Option<&'static str>,
}

impl Cell {
    pub fn file_bytes(&self) -> u64 {
        site::size_of(&self.path)
    }

    pub fn conns(&self) -> u32 {
        match self.workload {
            Workload::Wrk { conns, .. }
            | Workload::Ab { conns, .. }
            | Workload::H2load { conns, .. }
            | Workload::Oha { conns, .. }
            | Workload::Footprint { conns } => conns,
        }
    }

    /// Sets the duration of a timed workload (wrk, h2load, oha).
    pub fn set_duration(&mut self, seconds: u32) {
        match &mut self.workload {
            Workload::Wrk { duration_s, .. }
            | Workload::H2load { duration_s, .. }
            | Workload::Oha { duration_s, .. } => *duration_s = seconds,
            Workload::Ab { .. } | Workload::Footprint { .. } => {}
        }
    }

    /// Expected seconds per run, for the progress bar's ETA.
    pub fn expected_s(&self) -> f64 {
        match self.workload {
            Workload::Wrk { duration_s, .. } | Workload::H2load { duration_s, .. } => {
                f64::from(duration_s)
            }
            Workload::Oha { duration_s, .. } => f64::from(duration_s) + 3.0,
            Workload::Ab {
                requests,
                keepalive,
                ..
            } => f64::from(requests) / if keepalive { 50_000.0 } else { 10_000.0 },
            Workload::Footprint { conns } => f64::from(conns) / 5_000.0 + 1.0,
        }
    }
}

pub const SUITES: [&str; 15] = [
    "sparecores",
    "linuxconfig",
    "boa",
    "fabhttp",
    "binserve",
    "efficiency",
    "pipeline",
    "churn",
    "large",
    "compressed",
    "latency",
    "c10k",
    "footprint",
    "quick",
    "smoke",
];

/// The cells of a suite; `quick` shortens durations and trims matrices.
pub fn cells(suite: &str, quick: bool, cores: u32) -> anyhow::Result<Vec<Cell>> {
    let d = |full: u32| if quick { full.min(2) } else { full };
    let wrk = |threads, conns, duration_s| Workload::Wrk {
        threads,
        conns,
        duration_s,
        latency: true,
        script: None,
        close: false,
    };
    let cell =
        |suite: &'static str, seed: &'static str, label: String, path: &str, workload| Cell {
            suite,
            seed,
            label,
            path: path.into(),
            workload,
            accept_encoding: None,
        };
    let mut out = Vec::new();
    match suite {
        // Seed 000: Spare Cores static_web. wrk -t {1,2,4}×N -c {1..32}×N, 10 s;
        // 256k/512k skip 32×N; c < t skipped.
        "sparecores" => {
            for kib in site::SPARECORES_KIB {
                for tm in [1u32, 2, 4] {
                    for cm in [1u32, 2, 4, 8, 16, 32] {
                        if (kib >= 256 && cm > 16)
                            || cm < tm
                            || (quick && (tm != 1 || ![1, 8].contains(&cm)))
                        {
                            continue;
                        }
                        let (t, c) = (tm * cores, cm * cores);
                        out.push(cell(
                            "sparecores",
                            "000",
                            format!("{kib}k t{t} c{c}"),
                            &format!("/{kib}k"),
                            wrk(t, c, d(10)),
                        ));
                    }
                }
            }
        }
        // Seed 001: LinuxConfig's ab runs (FusionAuth java-http's first benchmark).
        "linuxconfig" => {
            let n = |full: u32| if quick { full / 10 } else { full };
            for keepalive in [false, true] {
                let k = if keepalive { " -k" } else { "" };
                out.push(cell(
                    "linuxconfig",
                    "001",
                    format!("small n100000 c100{k}"),
                    "/index.html",
                    Workload::Ab {
                        requests: n(100_000),
                        conns: 100,
                        keepalive,
                    },
                ));
                out.push(cell(
                    "linuxconfig",
                    "001",
                    format!("10MiB n500 c10{k}"),
                    "/10m.bin",
                    Workload::Ab {
                        requests: n(500),
                        conns: 10,
                        keepalive,
                    },
                ));
            }
            out.push(cell(
                "linuxconfig",
                "001",
                "small n20000 c1000".into(),
                "/index.html",
                Workload::Ab {
                    requests: n(20_000),
                    conns: 1000,
                    keepalive: false,
                },
            ));
        }
        // Seed 002: Boa's benchmark: keep-alive, concurrency 215, 10,000 fetches of 105,165 bytes; plus footprint.
        "boa" => {
            out.push(cell(
                "boa",
                "002",
                "105165B c215 -k".into(),
                "/boa.bin",
                Workload::Ab {
                    requests: 10_000,
                    conns: 215,
                    keepalive: true,
                },
            ));
            out.push(cell(
                "boa",
                "002",
                format!("footprint {} idle", if quick { 1000 } else { 10_000 }),
                "/index.html",
                Workload::Footprint {
                    conns: if quick { 1000 } else { 10_000 },
                },
            ));
        }
        // Seed 003: fabhttp/heliod: random 8 KiB files, 1..10 closed-loop users, p90 <= 10 ms.
        "fabhttp" => {
            let users: Vec<u32> = if quick {
                vec![1, 10]
            } else {
                (1..=10).collect()
            };
            for u in users {
                let w = Workload::Wrk {
                    threads: u,
                    conns: u,
                    duration_s: d(10),
                    latency: true,
                    script: Some(Script::FabRandom),
                    close: false,
                };
                out.push(cell(
                    "fabhttp",
                    "003",
                    format!("8k random u{u}"),
                    "/fabhttp/randomfiles/1",
                    w,
                ));
            }
        }
        // Seed 004: binserve's BENCHMARKS.md: wrk -c 500 -t 12 -d 5s on a ~100-byte page, best of 3.
        "binserve" => out.push(cell(
            "binserve",
            "004",
            "page t12 c500".into(),
            "/index.html",
            wrk(12, 500, d(5)),
        )),
        // The project's headline: requests per server CPU-second, wrk -t1.
        "efficiency" => {
            for kib in [1u64, 64] {
                for c in [1u32, 32, 256, 1000] {
                    out.push(cell(
                        "efficiency",
                        "000",
                        format!("{kib}k t1 c{c}"),
                        &format!("/{kib}k"),
                        wrk(1, c, d(10)),
                    ));
                }
            }
        }
        // TechEmpower-style pipelining (bench-methodology §2.5, §7.D).
        "pipeline" => {
            out.push(cell(
                "pipeline",
                "tfb",
                "h2load --h1 c32 m16".into(),
                "/1k",
                Workload::H2load {
                    conns: 32,
                    threads: 1,
                    streams: 16,
                    duration_s: d(10),
                },
            ));
            let w = Workload::Wrk {
                threads: 1,
                conns: 256,
                duration_s: d(10),
                latency: false,
                script: Some(Script::Pipeline16),
                close: false,
            };
            out.push(cell(
                "pipeline",
                "tfb",
                "wrk pipeline16 c256".into(),
                "/1k",
                w,
            ));
        }
        // One request per connection (bench-methodology §7.E).
        "churn" => {
            let w = Workload::Wrk {
                threads: 1,
                conns: 32,
                duration_s: d(10),
                latency: true,
                script: None,
                close: true,
            };
            out.push(cell(
                "churn",
                "001",
                "wrk Connection: close c32".into(),
                "/1k",
                w,
            ));
            out.push(cell(
                "churn",
                "001",
                "ab n20000 c32".into(),
                "/1k",
                Workload::Ab {
                    requests: if quick { 5000 } else { 20_000 },
                    conns: 32,
                    keepalive: false,
                },
            ));
        }
        // Large files: bytes per server CPU-second.
        "large" => out.push(cell(
            "large",
            "001",
            "10MiB t1 c8".into(),
            "/10m.bin",
            wrk(1, 8, d(10)),
        )),
        // Issue 4: a 100 KB script to clients that accept compression. What a
        // browser sends, then gzip only (both sides serve a prebuilt .gz).
        "compressed" => {
            for (name, accept) in [("browser", "gzip, deflate, br, zstd"), ("gzip", "gzip")] {
                for conns in [32u32, 256] {
                    let mut c = cell(
                        "compressed",
                        "i4",
                        format!("app.js {name} c{conns}"),
                        site::APP_JS,
                        wrk(1, conns, d(10)),
                    );
                    c.accept_encoding = Some(accept);
                    out.push(c);
                }
            }
        }
        // Open-loop latency at 50/80/95% of the peak, coordinated omission corrected.
        "latency" => {
            for f in [0.5, 0.8, 0.95] {
                let w = Workload::Oha {
                    conns: 64,
                    rate_fraction: f,
                    duration_s: d(10),
                };
                out.push(cell(
                    "latency",
                    "000",
                    format!("1k c64 at {:.0}% of peak", f * 100.0),
                    "/1k",
                    w,
                ));
            }
        }
        // Many keep-alive connections: zero errors expected, p99 compared.
        "c10k" => {
            out.push(cell(
                "c10k",
                "001",
                "1k t2 c1000".into(),
                "/1k",
                wrk(2, 1000, d(10)),
            ));
            out.push(cell(
                "c10k",
                "001",
                "1k t2 c10000".into(),
                "/1k",
                wrk(2, 10_000, d(10)),
            ));
        }
        "footprint" => out.push(cell(
            "footprint",
            "002",
            "10000 idle".into(),
            "/index.html",
            Workload::Footprint { conns: 10_000 },
        )),
        // Under three minutes with the default servers and rounds.
        "quick" => {
            for c in [32u32, 256] {
                out.push(cell(
                    "quick",
                    "000",
                    format!("1k t1 c{c}"),
                    "/1k",
                    wrk(1, c, 2),
                ));
            }
            out.push(cell(
                "quick",
                "000",
                "64k t2 c16".into(),
                "/64k",
                wrk(2, 16, 2),
            ));
            out.push(cell(
                "quick",
                "001",
                "10MiB t1 c8".into(),
                "/10m.bin",
                wrk(1, 8, 2),
            ));
            let w = Workload::Wrk {
                threads: 1,
                conns: 32,
                duration_s: 2,
                latency: true,
                script: None,
                close: true,
            };
            out.push(cell("quick", "001", "1k close c32".into(), "/1k", w));
        }
        // CI: proves the harness still runs end to end.
        "smoke" => {
            out.push(cell(
                "smoke",
                "000",
                "1k t1 c32".into(),
                "/1k",
                wrk(1, 32, 1),
            ));
            out.push(cell(
                "smoke",
                "001",
                "ab -k n2000 c8".into(),
                "/index.html",
                Workload::Ab {
                    requests: 2000,
                    conns: 8,
                    keepalive: true,
                },
            ));
            out.push(cell(
                "smoke",
                "002",
                "footprint 200 idle".into(),
                "/index.html",
                Workload::Footprint { conns: 200 },
            ));
        }
        "all" => {
            for s in SUITES
                .iter()
                .filter(|s| !["quick", "smoke", "footprint"].contains(s))
            {
                out.extend(cells(s, quick, cores)?);
            }
        }
        other => anyhow::bail!("unknown suite {other:?}; known: {}, all", SUITES.join(", ")),
    }
    Ok(out)
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
        for suite in SUITES.iter().chain(&["all"]) {
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
