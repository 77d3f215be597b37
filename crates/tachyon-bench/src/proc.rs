//! Reading a server's cost from /proc: CPU time and resident memory of its
//! whole process tree (nginx and lighttpd fork workers; Apache forks children).
//!
//! Invariant: every figure is a sum over the tree rooted at the pid we
//! started, read fresh each time, so workers started late are counted.

use std::collections::HashMap;

/// Kernel clock ticks per second for /proc stat fields (`getconf CLK_TCK`,
/// 100 on every Linux we target).
const TICKS_PER_SECOND: f64 = 100.0;

/// CPU seconds of a process tree, split like `time` does.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct CpuTimes {
    pub user_s: f64,
    pub system_s: f64,
}

impl CpuTimes {
    pub fn total(&self) -> f64 {
        self.user_s + self.system_s
    }

    pub fn since(&self, earlier: &CpuTimes) -> CpuTimes {
        CpuTimes {
            user_s: self.user_s - earlier.user_s,
            system_s: self.system_s - earlier.system_s,
        }
    }
}

/// `pid` and all its descendants.
pub fn tree(pid: u32) -> Vec<u32> {
    let mut children: HashMap<u32, Vec<u32>> = HashMap::new();
    if let Ok(dir) = std::fs::read_dir("/proc") {
        for entry in dir.flatten() {
            let Some(p) = entry
                .file_name()
                .to_str()
                .and_then(|s| s.parse::<u32>().ok())
            else {
                continue;
            };
            if let Some(fields) = stat_fields(p) {
                if let Some(ppid) = fields.get(1).and_then(|f| f.parse::<u32>().ok()) {
                    children.entry(ppid).or_default().push(p);
                }
            }
        }
    }
    let mut out = vec![pid];
    let mut i = 0;
    while i < out.len() {
        if let Some(kids) = children.get(&out[i]) {
            out.extend(kids);
        }
        i += 1;
    }
    out
}

/// CPU time of the tree rooted at `pid` (threads included: a process's stat
/// aggregates its threads).
pub fn cpu(pid: u32) -> CpuTimes {
    tree(pid)
        .into_iter()
        .filter_map(stat_fields)
        .fold(CpuTimes::default(), |acc, f| {
            // After the comm field: state(0) ppid(1) … utime(11) stime(12).
            let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
            CpuTimes {
                user_s: acc.user_s + ticks(11) / TICKS_PER_SECOND,
                system_s: acc.system_s + ticks(12) / TICKS_PER_SECOND,
            }
        })
}

/// Resident set size of the tree, bytes.
pub fn rss_bytes(pid: u32) -> u64 {
    tree(pid)
        .into_iter()
        .filter_map(|p| status_bytes(p, "VmRSS:"))
        .sum()
}

/// A `kB` field of /proc/PID/status (`VmRSS:`, `VmHWM:` …), in bytes.
pub fn status_bytes(pid: u32, field: &str) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    let kib = line.split_whitespace().nth(1)?.parse::<u64>().ok()?;
    Some(kib * 1024)
}

/// Distinct sockets open in the tree (listeners included; processes that
/// inherited one socket count it once).
pub fn sockets(pid: u32) -> u64 {
    let mut inodes = std::collections::HashSet::new();
    for p in tree(pid) {
        let Ok(dir) = std::fs::read_dir(format!("/proc/{p}/fd")) else {
            continue;
        };
        for fd in dir.flatten() {
            if let Ok(target) = std::fs::read_link(fd.path()) {
                let target = target.to_string_lossy();
                if target.starts_with("socket:") {
                    inodes.insert(target.into_owned());
                }
            }
        }
    }
    inodes.len() as u64
}

/// Fields of /proc/PID/stat after the `(comm)` field, which may contain spaces.
fn stat_fields(pid: u32) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let after = &text[text.rfind(')')? + 2..];
    Some(after.split_whitespace().map(str::to_string).collect())
}

/// Raises this process's open-file limit to its hard limit and returns the
/// new soft limit: clients and attackers need a descriptor per connection,
/// and the servers started from here inherit it.
pub fn raise_nofile() -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.current != limit.maximum {
        limit.current = limit.maximum;
        let _ = setrlimit(Resource::Nofile, limit);
    }
    getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
}

/// CPU seconds used by reaped children of this process (the load clients).
pub fn children_cpu() -> CpuTimes {
    use nix::sys::resource::{getrusage, UsageWho};
    match getrusage(UsageWho::RUSAGE_CHILDREN) {
        Ok(usage) => {
            let secs = |tv: nix::sys::time::TimeVal| tv.tv_sec() as f64 + tv.tv_usec() as f64 / 1e6;
            CpuTimes {
                user_s: secs(usage.user_time()),
                system_s: secs(usage.system_time()),
            }
        }
        Err(_) => CpuTimes::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_process_has_cpu_and_memory() {
        let me = std::process::id();
        let before = cpu(me);
        let mut x = 0u64;
        for i in 0..30_000_000u64 {
            x = x.wrapping_mul(31).wrapping_add(i);
        }
        assert!(x != 1);
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(cpu(me).total() >= before.total());
        assert!(rss_bytes(me) > 1024 * 1024);
        assert!(tree(me).contains(&me));
    }
}
