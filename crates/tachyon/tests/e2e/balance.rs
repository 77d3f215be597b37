//! Where connections live across workers (the server's `balance` module):
//! idle keep-alive connections gather on one worker while the workers are
//! far from busy, and a connection that moved keeps being served, in the
//! clear, over TLS, and over HTTP/2; packing's trials of spreading them
//! keep it when a client's pace is its own; placed by CPU (the default
//! with one worker per CPU), a connection moves to the worker on the CPU
//! its packets arrive on, unless that would break the count rule, and
//! with the workers pinned a request from another CPU moves at once.

use std::time::Duration;

use crate::observe::{admin_addr, admin_get, metric};
use crate::support::*;

/// How many descriptors each epoll set of process `pid` watches, from
/// `/proc/PID/fdinfo` (one `tfd:` line per watched descriptor).
fn epoll_sizes(pid: u32) -> Vec<usize> {
    let mut sizes = Vec::new();
    for fd in std::fs::read_dir(format!("/proc/{pid}/fd"))
        .unwrap()
        .flatten()
    {
        let Ok(target) = std::fs::read_link(fd.path()) else {
            continue;
        };
        if target.to_string_lossy() != "anon_inode:[eventpoll]" {
            continue;
        }
        let info = std::fs::read_to_string(format!(
            "/proc/{pid}/fdinfo/{}",
            fd.file_name().to_string_lossy()
        ))
        .unwrap_or_default();
        sizes.push(info.lines().filter(|l| l.starts_with("tfd:")).count());
    }
    sizes
}

#[test]
fn idle_keep_alive_connections_gather_on_one_worker_and_keep_working() {
    let site = TestSite::new();
    site.file("1k", vec![b'k'; 1024]);
    let server = Server::start(&site.root, &["--threads", "2", "--no-watch"]);
    let mut clients: Vec<Raw> = (0..24).map(|_| server.connect()).collect();
    for c in &mut clients {
        assert_eq!(c.get("/1k", "").status, 200);
    }
    // Spread at first (the kernel's hash, then the count rule), then one
    // epoll set holds every connection and the other only its listener
    // and event descriptors.
    let gathered = eventually(Duration::from_secs(10), || {
        let sizes = epoll_sizes(server.pid());
        sizes.iter().filter(|&&n| n >= 12).count() == 1 && sizes.iter().any(|&n| n >= 24)
    });
    assert!(
        gathered,
        "epoll sets: {:?}, descriptors: {:?}",
        epoll_sizes(server.pid()),
        std::fs::read_dir(format!("/proc/{}/fd", server.pid()))
            .unwrap()
            .flatten()
            .filter_map(|fd| std::fs::read_link(fd.path()).ok())
            .collect::<Vec<_>>()
    );
    for c in &mut clients {
        let r = c.get("/1k", "");
        assert_eq!(r.status, 200);
        assert_eq!(r.body, vec![b'k'; 1024]);
    }
}

#[test]
fn tls_and_http2_connections_move_between_requests_without_a_failure() {
    let site = TestSite::new();
    site.file("1k", vec![b'k'; 1024]);
    // A server per protocol: one that is packing already places new
    // connections on worker 0 at accept, and they never need to move.
    for protocol in ["h2", "http/1.1"] {
        let server = Server::start(
            &site.root,
            &[
                "--threads",
                "2",
                "--no-watch",
                "--https",
                "127.0.0.1:0",
                "--tls-self-signed",
                "--admin",
                "127.0.0.1:0",
            ],
        );
        let https = crate::tls::https_addr(&server);
        // 24 connections, 10 requests a second each for 3 s: mostly idle,
        // so they gather, each one moving between two of its requests.
        let (ok, out, err) = run(
            "h2load",
            &[
                "-c",
                "24",
                "-D",
                "3",
                "--rps",
                "10",
                "--npn-list",
                protocol,
                &format!("https://{https}/1k"),
            ],
        );
        assert!(ok, "{out}{err}");
        assert!(
            out.contains(" 0 failed, 0 errored, 0 timeout"),
            "{protocol}: {out}"
        );
        assert!(!out.contains("status codes: 0 2xx"), "{protocol}: {out}");
        let (_, text) = admin_get(admin_addr(&server), "/metrics");
        let moved = metric(&text, "tachyon_connections_moved_total");
        assert!(moved > 0.0, "no {protocol} connection moved");
    }
}

#[test]
fn a_client_at_its_own_pace_gains_nothing_from_spreading_so_packing_survives_its_trials() {
    let site = TestSite::new();
    site.file("1k", vec![b'k'; 1024]);
    let server = Server::start(
        &site.root,
        &["--threads", "2", "--no-watch", "--admin", "127.0.0.1:0"],
    );
    // 24 connections at 20 requests a second each: far less than a core,
    // so they pack; paced, so spread on trial they are served no faster.
    let (ok, out, err) = run(
        "h2load",
        &[
            "--h1",
            "-c",
            "24",
            "-D",
            "4",
            "--rps",
            "20",
            &server.url("/1k"),
        ],
    );
    assert!(ok, "{out}{err}");
    assert!(out.contains(" 0 failed, 0 errored, 0 timeout"), "{out}");
    let (_, text) = admin_get(admin_addr(&server), "/metrics");
    let kept = |what: &str| {
        metric(
            &text,
            &format!("tachyon_packing_trials_total{{kept=\"{what}\"}}"),
        )
    };
    assert!(kept("packed") >= 1.0, "no trial ended in 4 s:\n{text}");
    assert_eq!(
        kept("spread"),
        0.0,
        "a paced client's trial kept the spread"
    );
}

/// Which CPUs each worker thread of process `pid` may run on
/// (`/proc/PID/task/*/status`, `Cpus_allowed_list`), sorted; the kernel
/// keeps 15 bytes of a thread's name, enough for `tachyon-worker-`.
fn worker_cpus(pid: u32) -> Vec<String> {
    let mut cpus = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let name = std::fs::read_to_string(task.path().join("comm")).unwrap_or_default();
        if !name.starts_with("tachyon-worker") {
            continue;
        }
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let allowed = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap_or_default();
        cpus.push(allowed.trim().to_string());
    }
    cpus.sort();
    cpus
}

/// Opens `n` connections from a thread that runs on `cpu` alone, each
/// answered once, so that the kernel receives their packets on that CPU.
fn connect_from_cpu(server: &Server, cpu: usize, n: usize) -> Vec<Raw> {
    let everywhere = rustix::thread::sched_getaffinity(None).unwrap();
    run_on(cpu);
    let conns: Vec<Raw> = (0..n)
        .map(|_| {
            let mut c = server.connect();
            assert_eq!(c.get("/1k", "").status, 200);
            c
        })
        .collect();
    rustix::thread::sched_setaffinity(None, &everywhere).unwrap();
    conns
}

/// Whether this process may run on CPUs 0 and 1 and no other, as the
/// placement specs need (placement by CPU is off anywhere else).
fn on_cpus_0_and_1() -> bool {
    let cpus = rustix::thread::sched_getaffinity(None).unwrap();
    cpus.count() == 2 && cpus.is_set(0) && cpus.is_set(1)
}

/// Runs the calling thread on `cpu` alone.
fn run_on(cpu: usize) {
    let mut one = rustix::thread::CpuSet::new();
    one.set(cpu);
    rustix::thread::sched_setaffinity(None, &one).unwrap();
}

/// Each worker thread's CPU time in clock ticks (`/proc/PID/task/*/stat`,
/// user and system), by the CPUs it may run on.
fn worker_ticks(pid: u32) -> Vec<(String, u64)> {
    let mut ticks = Vec::new();
    for task in std::fs::read_dir(format!("/proc/{pid}/task"))
        .unwrap()
        .flatten()
    {
        let stat = std::fs::read_to_string(task.path().join("stat")).unwrap_or_default();
        let Some((name, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        if !name.contains("(tachyon-worker") {
            continue;
        }
        let fields: Vec<&str> = rest.split(' ').collect();
        // utime and stime are stat's 14th and 15th fields; `rest` starts
        // at the 3rd.
        let used: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        let status = std::fs::read_to_string(task.path().join("status")).unwrap_or_default();
        let allowed = status
            .lines()
            .find_map(|l| l.strip_prefix("Cpus_allowed_list:"))
            .unwrap_or_default();
        ticks.push((allowed.trim().to_string(), used));
    }
    ticks.sort();
    ticks
}

/// Asks `conn` for `/1k` again and again for `long`.
fn keep_asking(conn: &mut Raw, long: Duration) {
    keep_asking_in_turn(std::slice::from_mut(conn), long);
}

/// Asks `/1k` on each of `conns` in turn, as a one-thread client does,
/// for `long`, each answered 200.
fn keep_asking_in_turn(conns: &mut [Raw], long: Duration) {
    let until = std::time::Instant::now() + long;
    while std::time::Instant::now() < until {
        for conn in conns.iter_mut() {
            assert_eq!(conn.get("/1k", "").status, 200);
        }
    }
}

/// A server with two workers on a site with `/1k`, once both workers
/// exist; `None` (the spec skipped) unless this process may run on CPUs 0
/// and 1 alone, which placement by CPU's specs move their client between.
fn two_workers_on_cpus_0_and_1() -> Option<(TestSite, Server)> {
    if !on_cpus_0_and_1() {
        eprintln!("skipped: this test runs on CPUs 0 and 1 only");
        return None;
    }
    let site = TestSite::new();
    site.file("1k", vec![b'k'; 1024]);
    let server = Server::start(&site.root, &["--threads", "2", "--no-watch"]);
    // The workers start once the site is loaded, after the listeners.
    eventually(Duration::from_secs(10), || {
        worker_cpus(server.pid()).len() == 2
    });
    Some((site, server))
}

#[test]
fn placed_by_cpu_a_connection_is_served_by_the_worker_on_its_client_s_cpu() {
    let Some((site, server)) = two_workers_on_cpus_0_and_1() else {
        return;
    };
    let everywhere = rustix::thread::sched_getaffinity(None).unwrap();
    let mut conn = server.connect();
    for cpu in [1, 0, 1] {
        run_on(cpu);
        // A few of the workers' 100 ms windows: the connection, idle between
        // two requests at one of them, moves to the worker on `cpu`.
        keep_asking(&mut conn, Duration::from_millis(500));
        // An idle worker's window ends at its next wake-up, within 1.1 s.
        let pinned = eventually(Duration::from_secs(3), || {
            keep_asking(&mut conn, Duration::from_millis(50));
            worker_cpus(server.pid()) == ["0", "1"]
        });
        assert!(pinned, "workers on {:?}", worker_cpus(server.pid()));
        let before = worker_ticks(server.pid());
        keep_asking(&mut conn, Duration::from_secs(1));
        let after = worker_ticks(server.pid());
        rustix::thread::sched_setaffinity(None, &everywhere).unwrap();
        let cpus = |t: &[(String, u64)]| t.iter().map(|(c, _)| c.clone()).collect::<Vec<_>>();
        assert_eq!(cpus(&after), ["0", "1"], "pinned throughout");
        let used = |w: usize| after[w].1.saturating_sub(before[w].1);
        let (mine, other) = (used(cpu), used(1 - cpu));
        assert!(
            mine >= 10 && other * 4 <= mine,
            "from CPU {cpu}: the worker on it used {mine} ticks, the other {other}"
        );
    }

    let free = Server::start(
        &site.root,
        &["--threads", "2", "--no-watch", "--no-cpu-affinity"],
    );
    eventually(Duration::from_secs(10), || {
        worker_ticks(free.pid()).len() == 2
    });
    let mut conn = free.connect();
    run_on(1);
    keep_asking(&mut conn, Duration::from_millis(500));
    rustix::thread::sched_setaffinity(None, &everywhere).unwrap();
    assert_eq!(worker_cpus(free.pid()), ["0-1", "0-1"]);
}

#[test]
fn placed_by_cpu_a_request_from_another_cpu_is_served_there_at_once() {
    let Some((_site, server)) = two_workers_on_cpus_0_and_1() else {
        return;
    };
    let everywhere = rustix::thread::sched_getaffinity(None).unwrap();
    let mut conn = server.connect();
    run_on(1);
    let pinned = eventually(Duration::from_secs(3), || {
        keep_asking(&mut conn, Duration::from_millis(50));
        worker_cpus(server.pid()) == ["0", "1"]
    });
    assert!(pinned, "workers on {:?}", worker_cpus(server.pid()));
    // Pinned maybe just after the last request: a few more from CPU 1
    // bring the connection to its worker first.
    keep_asking(&mut conn, Duration::from_millis(20));
    // The client's thread moves, as a scheduler moves it; its next request
    // moves the connection, not a window end. Under the whole suite on two
    // CPUs the very next one once did not move it (a clean clone's e2e
    // runs, 2026-12-07: one in six, cause not found): up to three
    // requests, 15 ms in all, still well inside one 100 ms window.
    for cpu in [0, 1, 0] {
        let before = epoll_sizes(server.pid());
        run_on(cpu);
        let mut after = before.clone();
        let moved = (0..3).any(|_| {
            // A worker samples a request's CPU at most once a millisecond.
            std::thread::sleep(Duration::from_millis(5));
            assert_eq!(conn.get("/1k", "").status, 200);
            after = epoll_sizes(server.pid());
            before.len() == 2
                && after.len() == 2
                && after[0].abs_diff(before[0]) == 1
                && after[0] + after[1] == before[0] + before[1]
        });
        assert!(
            moved,
            "to CPU {cpu}: epoll sets {before:?} then {after:?}, workers on {:?}",
            worker_cpus(server.pid())
        );
    }
    rustix::thread::sched_setaffinity(None, &everywhere).unwrap();
}

#[test]
fn placed_by_cpu_one_client_cpu_s_connections_still_get_both_workers() {
    let Some((_site, server)) = two_workers_on_cpus_0_and_1() else {
        return;
    };
    // Each worker's epoll set exists, with its listener and wake-ups in it,
    // a moment after its thread does.
    let ready = |sizes: &[usize]| sizes.len() == 2 && sizes.iter().all(|&n| n > 0);
    eventually(Duration::from_secs(10), || {
        ready(&epoll_sizes(server.pid()))
    });
    std::thread::sleep(Duration::from_millis(100));
    let before = epoll_sizes(server.pid());
    assert!(ready(&before), "epoll sets {before:?}");
    let grew = || -> Vec<usize> {
        let after = epoll_sizes(server.pid());
        after.iter().zip(&before).map(|(a, b)| a - b).collect()
    };
    // Six (fewer than packing gathers) from one thread on CPU 1, asking in
    // turn as a one-thread client does (an idle connection's last segment
    // may be a delayed ACK, sent from the CPU that received our answer).
    // The count rule splits them, and following them all to CPU 1 would
    // break it, so none moves and no worker is pinned, past each worker's
    // next window end (an idle one's comes within 1.1 s).
    let everywhere = rustix::thread::sched_getaffinity(None).unwrap();
    let mut conns = connect_from_cpu(&server, 1, 6);
    run_on(1);
    keep_asking_in_turn(&mut conns, Duration::from_millis(1500));
    rustix::thread::sched_setaffinity(None, &everywhere).unwrap();
    // A connection answered at accept joins its worker's set just after
    // its answer leaves; these have been answered many times since.
    assert_eq!(grew(), [3, 3], "epoll sets from {before:?}");
    assert_eq!(worker_cpus(server.pid()), ["0-1", "0-1"]);
}

#[test]
fn placed_by_cpu_packed_connections_of_one_client_thread_are_served_from_another_cpu() {
    let Some((_site, server)) = two_workers_on_cpus_0_and_1() else {
        return;
    };
    // Ten connections from one thread on CPU 1, asking in turn: enough
    // to pack on worker 0, which then keeps off CPU 1, where their
    // packets come from, rather than take turns with the client there.
    let everywhere = rustix::thread::sched_getaffinity(None).unwrap();
    let mut conns = connect_from_cpu(&server, 1, 10);
    run_on(1);
    let apart = eventually(Duration::from_secs(5), || {
        keep_asking_in_turn(&mut conns, Duration::from_millis(50));
        worker_cpus(server.pid()) == ["0", "0-1"]
    });
    rustix::thread::sched_setaffinity(None, &everywhere).unwrap();
    assert!(apart, "workers on {:?}", worker_cpus(server.pid()));
}
