//! Facts about the machine a run measured on, recorded with its results:
//! cores, CPU model, kernel, memory, TCP congestion control.

use crate::results::Machine;

pub fn machine_facts() -> Machine {
    let (cores, cpu_model) = cpu();
    let kernel = proc_value("/proc/sys/kernel/osrelease");
    let meminfo = std::fs::read_to_string("/proc/meminfo").unwrap_or_default();
    let memory_kib: f64 = meminfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("MemTotal:")?
                .split_whitespace()
                .next()?
                .parse()
                .ok()
        })
        .unwrap_or(0.0);
    Machine {
        cores,
        cpu_model,
        kernel,
        memory_gib: memory_kib / 1_048_576.0,
        tcp_congestion: machine_congestion(),
        congestion_every_server: true,
        tools: crate::setup::tool_versions(),
    }
}

/// The system's TCP congestion control now (empty where it cannot be read).
pub fn machine_congestion() -> String {
    proc_value(crate::congestion::SYSCTL)
}

/// A one-value file under /proc, trimmed; empty where it cannot be read.
fn proc_value(path: &str) -> String {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .trim()
        .to_string()
}

/// Cores and CPU model: what makes two runs comparable, and cheap to read
/// (unlike the tool versions, which start every client).
pub fn cpu() -> (usize, String) {
    let cpuinfo = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let model = cpuinfo
        .lines()
        .find_map(|l| {
            l.strip_prefix("model name")
                .map(|v| v.trim_start_matches([' ', '\t', ':']).to_string())
        })
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    (cores, model)
}
