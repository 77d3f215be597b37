//! Reading a server's cost from /proc: CPU time and resident memory of its
//! whole process tree (nginx and lighttpd fork workers; Apache forks children).
//!
//! Invariant: every figure is a sum over the tree rooted at the pid we
//! started, read fresh each time, so workers started late are counted.
//!
//! CPU time has two clocks here. /proc/PID/stat's utime and stime are in
//! clock ticks (10 ms), truncated per process: a 500-request 10 MiB cell is
//! 20 ticks of server CPU, so one tick moved its per-CPU figure 5%. The
//! scheduler's own runtime of each thread (/proc/PID/task/TID/schedstat) is
//! in nanoseconds; it sets the total, and the ticks only split it into user
//! and system time.

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
    for p in ids_in("/proc") {
        if let Some(fields) = stat_fields(p) {
            if let Some(ppid) = fields.get(1).and_then(|f| f.parse::<u32>().ok()) {
                children.entry(ppid).or_default().push(p);
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

/// CPU time of a process tree at one instant, by both clocks.
#[derive(Debug, Clone, Default)]
pub struct CpuSample {
    /// utime and stime, summed over the tree (threads included: a process's
    /// stat aggregates its threads, the exited ones too).
    ticks: CpuTimes,
    /// Nanoseconds each live thread has run, by thread id.
    runtime_ns: HashMap<u32, u64>,
}

impl CpuSample {
    /// The CPU used between `earlier` and this sample. The total is the
    /// threads' runtime in nanoseconds when every thread of `earlier` is
    /// still alive (a thread that ended took its runtime with it, which the
    /// ticks still count: then the ticks alone); split into user and system
    /// time as the ticks split it.
    pub fn since(&self, earlier: &CpuSample) -> CpuTimes {
        let ticks = self.ticks.since(&earlier.ticks);
        let all_alive = earlier
            .runtime_ns
            .keys()
            .all(|tid| self.runtime_ns.contains_key(tid));
        if !all_alive || self.runtime_ns.is_empty() {
            return ticks;
        }
        let ns: u64 = self
            .runtime_ns
            .iter()
            .map(|(tid, &now)| {
                now.saturating_sub(earlier.runtime_ns.get(tid).copied().unwrap_or(0))
            })
            .sum();
        let total = ns as f64 / 1e9;
        // Fewer than one tick of either kind: the split is unknown. A
        // server under load spends most of its time in the kernel, so the
        // whole is counted as system time; only the sum is ever compared.
        let user_share = if ticks.total() > 0.0 {
            (ticks.user_s / ticks.total()).clamp(0.0, 1.0)
        } else {
            0.0
        };
        CpuTimes {
            user_s: total * user_share,
            system_s: total * (1.0 - user_share),
        }
    }
}

/// CPU time of the tree rooted at `pid`, by both clocks.
pub fn cpu(pid: u32) -> CpuSample {
    let mut sample = CpuSample::default();
    for p in tree(pid) {
        let Some(f) = stat_fields(p) else { continue };
        // After the comm field: state(0) ppid(1) … utime(11) stime(12).
        let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
        sample.ticks.user_s += ticks(11) / TICKS_PER_SECOND;
        sample.ticks.system_s += ticks(12) / TICKS_PER_SECOND;
        for tid in ids_in(&format!("/proc/{p}/task")) {
            // schedstat: runtime in ns, wait in ns, timeslices.
            if let Some(ns) = std::fs::read_to_string(format!("/proc/{p}/task/{tid}/schedstat"))
                .ok()
                .and_then(|text| text.split_whitespace().next()?.parse::<u64>().ok())
            {
                sample.runtime_ns.insert(tid, ns);
            }
        }
    }
    sample
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

/// The numeric entries of a /proc folder: process ids in /proc, thread ids
/// in /proc/PID/task.
fn ids_in(dir: &str) -> impl Iterator<Item = u32> {
    std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<u32>().ok())
}

/// A process's start time (stat(5) field 22, clock ticks after boot): with
/// its pid, a name for one process that a reused pid cannot take.
pub fn start_time(pid: u32) -> Option<u64> {
    stat_fields(pid)?.get(19)?.parse().ok()
}

/// The processes of process group `group` (stat(5) field 5), wherever
/// their parents went.
pub fn group_members(group: u32) -> Vec<u32> {
    ids_in("/proc")
        .filter(|&p| {
            stat_fields(p)
                .and_then(|fields| fields.get(2)?.parse::<u32>().ok())
                .is_some_and(|g| g == group)
        })
        .collect()
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
    tachyon_sys::raise_fd_limit()
}

/// CPU seconds used by reaped children of this process (the load clients):
/// /proc/self/stat's cutime and cstime, in ticks (a client runs for
/// seconds, so a tick is well under a percent of it).
pub fn children_cpu() -> CpuTimes {
    let ticks = |fields: &[String], i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<f64>().ok())
            .unwrap_or(0.0)
            / TICKS_PER_SECOND
    };
    match stat_fields(std::process::id()) {
        // Fields 16 and 17 of stat(5), counted from the state (field 3).
        Some(fields) => CpuTimes {
            user_s: ticks(&fields, 13),
            system_s: ticks(&fields, 14),
        },
        None => CpuTimes::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A child's CPU is counted once it is reaped, not before.
    #[test]
    fn a_reaped_childs_cpu_is_counted() {
        let before = children_cpu();
        let status = std::process::Command::new("sh")
            .args(["-c", "i=0; while [ $i -lt 400000 ]; do i=$((i+1)); done"])
            .status()
            .unwrap();
        assert!(status.success());
        let spent = children_cpu().since(&before);
        assert!(spent.user_s >= 0.05, "{spent:?}");
        assert!(spent.system_s < spent.user_s, "{spent:?}");
    }

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
        assert!(cpu(me).since(&before).total() >= 0.0);
        assert!(rss_bytes(me) > 1024 * 1024);
        assert!(tree(me).contains(&me));
    }

    /// A thread's runtime as read from /proc agrees with its own CPU clock
    /// to well under a tick: the reader sees nanoseconds, not ticks. (The
    /// thread is asleep when read: a running thread's runtime is brought up
    /// to date only at the scheduler's next tick.)
    #[test]
    fn a_threads_runtime_is_read_finer_than_a_tick() {
        use std::sync::mpsc;
        let (spun_tx, spun_rx) = mpsc::channel();
        let (done_tx, done_rx) = mpsc::channel::<()>();
        let spinner = std::thread::spawn(move || {
            let clock = || {
                let t = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
                t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
            };
            let mut x = 1u64;
            while clock() < 7_000_000 {
                x = x.wrapping_mul(31).wrapping_add(7);
            }
            let tid = rustix::thread::gettid().as_raw_nonzero().get() as u32;
            spun_tx.send((tid, clock(), x)).unwrap();
            let _ = done_rx.recv();
        });
        let (tid, spun, _) = spun_rx.recv().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(30));
        let read = cpu(std::process::id()).runtime_ns[&tid];
        done_tx.send(()).unwrap();
        spinner.join().unwrap();
        assert!(
            read >= spun && read - spun < 1_000_000,
            "/proc says {read} ns, the thread's clock {spun} ns"
        );
    }

    fn sample(user_ticks: f64, system_ticks: f64, threads: &[(u32, u64)]) -> CpuSample {
        CpuSample {
            ticks: CpuTimes {
                user_s: user_ticks / TICKS_PER_SECOND,
                system_s: system_ticks / TICKS_PER_SECOND,
            },
            runtime_ns: threads.iter().copied().collect(),
        }
    }

    #[test]
    fn the_runtime_sets_the_total_and_the_ticks_split_it() {
        let before = sample(10.0, 30.0, &[(1, 100_000_000), (2, 300_000_000)]);
        // 1 user tick and 1 system tick later; the threads ran 5 + 12.5 ms
        // and a new one 2.5 ms: 20 ms in all, half of it user time.
        let after = sample(
            11.0,
            31.0,
            &[(1, 105_000_000), (2, 312_500_000), (3, 2_500_000)],
        );
        let used = after.since(&before);
        assert!((used.total() - 0.020).abs() < 1e-12, "{used:?}");
        assert!((used.user_s - 0.010).abs() < 1e-12, "{used:?}");
        // Less than a tick of either: all of it counted as system time.
        let quiet = sample(
            11.0,
            31.0,
            &[(1, 105_300_000), (2, 312_500_000), (3, 2_500_000)],
        );
        let used = quiet.since(&after);
        assert!(
            (used.system_s - 0.000_3).abs() < 1e-12 && used.user_s == 0.0,
            "{used:?}"
        );
    }

    #[test]
    fn a_thread_that_ended_leaves_the_ticks_to_count() {
        let before = sample(10.0, 30.0, &[(1, 100_000_000), (2, 300_000_000)]);
        let after = sample(12.0, 35.0, &[(1, 120_000_000)]);
        let used = after.since(&before);
        assert!((used.user_s - 0.02).abs() < 1e-9 && (used.system_s - 0.05).abs() < 1e-9);
    }
}
