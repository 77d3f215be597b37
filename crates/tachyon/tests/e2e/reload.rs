//! Atomic generations: the watcher, SIGHUP, a repointed root symlink, a
//! failed build, and a reload under load that loses no request.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{upgraded_pid, Raw, Server, Successor, TestSite};

/// Polls `path` until its body is `want`, for at most 10 s.
fn eventually(server: &Server, path: &str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    let mut last = String::new();
    while Instant::now() < deadline {
        let r = server.connect().get(path, "");
        last = format!("{} {}", r.status, r.text());
        if r.status == 200 && r.text() == want {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("{path} never served {want:?}; last: {last}");
}

#[test]
fn the_watcher_picks_up_edits_additions_and_removals() {
    let site = TestSite::new();
    site.file("a.txt", "one").file("gone.txt", "bye");
    let server = Server::start(&site.root, &[]);
    assert_eq!(server.connect().get("/a.txt", "").text(), "one");
    site.file("a.txt", "two").file("new/b.txt", "new");
    std::fs::remove_file(site.path("gone.txt")).unwrap();
    eventually(&server, "/a.txt", "two");
    eventually(&server, "/new/b.txt", "new");
    assert_eq!(server.connect().get("/gone.txt", "").status, 404);
}

#[test]
fn sighup_reloads_when_watching_is_off() {
    let site = TestSite::new();
    site.file("a.txt", "one");
    let server = Server::start(&site.root, &["--no-watch"]);
    site.file("a.txt", "two");
    std::thread::sleep(Duration::from_millis(1500));
    assert_eq!(
        server.connect().get("/a.txt", "").text(),
        "one",
        "no watcher"
    );
    server.signal(rustix::process::Signal::HUP);
    eventually(&server, "/a.txt", "two");
}

#[test]
fn a_failed_build_keeps_serving_the_previous_generation() {
    let site = TestSite::new();
    site.file("index.html", "app").file("a.txt", "one");
    let server = Server::start(&site.root, &["--fallback", "/index.html"]);
    // Without index.html the fallback setting cannot be satisfied.
    std::fs::remove_file(site.path("index.html")).unwrap();
    site.file("a.txt", "two");
    let failed = server.wait_for_line("failed", Duration::from_secs(10));
    assert!(failed.is_some(), "no reload failure was reported");
    let mut c = server.connect();
    assert_eq!(c.get("/index.html", "").text(), "app");
    assert_eq!(c.get("/a.txt", "").text(), "one", "all or nothing");
    site.file("index.html", "app v2");
    eventually(&server, "/a.txt", "two");
}

/// A failed reload is counted in /metrics, which any scraper reads, but
/// why it failed (it names files) is said only in the log and /status.
#[test]
fn a_failed_reload_is_counted_in_metrics_and_named_only_in_status() {
    use crate::observe::{admin_addr, admin_get, metric};
    let site = TestSite::new();
    site.file("index.html", "app").file("a.txt", "one");
    let server = Server::start(
        &site.root,
        &["--fallback", "/index.html", "--admin", "127.0.0.1:0"],
    );
    let admin = admin_addr(&server);
    std::fs::remove_file(site.path("index.html")).unwrap();
    site.file("a.txt", "two");
    assert!(server
        .wait_for_line("failed", Duration::from_secs(10))
        .is_some());
    let (_, metrics) = admin_get(admin, "/metrics");
    assert_eq!(
        metric(&metrics, "tachyon_reloads_total{result=\"failure\"}"),
        1.0
    );
    assert_eq!(metric(&metrics, "tachyon_last_reload_success"), 0.0);
    assert!(!metrics.contains("index.html"), "{metrics}");
    let (_, status) = admin_get(admin, "/status");
    assert!(status.contains("index.html"), "{status}");
}

#[test]
fn a_repointed_root_symlink_swaps_the_release() {
    let site = TestSite::new();
    site.file("releases/v1/index.html", "v1")
        .file("releases/v2/index.html", "v2");
    let current = site.path("current");
    std::os::unix::fs::symlink(site.path("releases/v1"), &current).unwrap();
    // Without the sandbox the repointed root is reloaded in place (under it,
    // a successor takes over: the next spec).
    let server = Server::start(&current, &["--no-sandbox"]);
    assert_eq!(server.connect().get("/", "").text(), "v1");
    // The way deploy tools do it: a new link, renamed over the old one.
    let next = site.path("current.next");
    std::os::unix::fs::symlink(site.path("releases/v2"), &next).unwrap();
    std::fs::rename(&next, &current).unwrap();
    eventually(&server, "/", "v2");
    // Edits in the new release are watched too.
    site.file("releases/v2/index.html", "v2.1");
    eventually(&server, "/", "v2.1");
}

/// Under the sandbox, a repointed root is a directory this process may
/// not read (its rules granted the release it pointed to, not the folder
/// of releases): a successor that confines itself to the new release
/// takes over, and edits in it are watched.
#[test]
fn a_repointed_root_under_the_sandbox_is_served_by_a_successor() {
    let site = TestSite::new();
    site.file("releases/v1/index.html", "v1")
        .file("releases/v2/index.html", "v2");
    let current = site.path("current");
    std::os::unix::fs::symlink(site.path("releases/v1"), &current).unwrap();
    let server = Server::start(&current, &[]);
    assert_eq!(server.connect().get("/", "").text(), "v1");
    let next = site.path("current.next");
    std::os::unix::fs::symlink(site.path("releases/v2"), &next).unwrap();
    std::fs::rename(&next, &current).unwrap();
    let line = server
        .wait_for_line("is serving", Duration::from_secs(20))
        .expect("a successor takes over");
    let _successor = Successor(upgraded_pid(&line));
    eventually(&server, "/", "v2");
    site.file("releases/v2/index.html", "v2.1");
    eventually(&server, "/", "v2.1");
}

/// The same deploy without the watcher: SIGHUP notices the repointed
/// symlink and hands over to a successor, as the watcher would.
#[test]
fn sighup_with_no_watch_serves_a_repointed_root_under_the_sandbox() {
    let site = TestSite::new();
    site.file("releases/v1/index.html", "v1")
        .file("releases/v2/index.html", "v2");
    let current = site.path("current");
    std::os::unix::fs::symlink(site.path("releases/v1"), &current).unwrap();
    let server = Server::start(&current, &["--no-watch"]);
    assert_eq!(server.connect().get("/", "").text(), "v1");
    let next = site.path("current.next");
    std::os::unix::fs::symlink(site.path("releases/v2"), &next).unwrap();
    std::fs::rename(&next, &current).unwrap();
    server.signal(rustix::process::Signal::HUP);
    let line = server
        .wait_for_line("is serving", Duration::from_secs(20))
        .expect("a successor takes over");
    let _successor = Successor(upgraded_pid(&line));
    eventually(&server, "/", "v2");
}

/// `rm -rf public && build`, under load and under the sandbox: the old
/// site is served until the new one is, by a successor confined to the
/// new directory; not one request fails.
#[test]
fn a_root_made_again_is_served_under_load_with_no_request_failed() {
    let site = TestSite::new();
    site.file("public/index.html", "old")
        .file("public/a.txt", "a");
    let root = site.path("public");
    let server = Server::start(&root, &[]);
    let addr = server.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let stop = stop.clone();
            std::thread::spawn(move || {
                let (mut served, mut new) = (0usize, 0usize);
                let mut c = Raw::connect(addr);
                while !stop.load(Ordering::Relaxed) {
                    if c.is_closed() {
                        c = Raw::connect(addr);
                    }
                    let r = c.get("/", "");
                    assert_eq!(r.status, 200, "a request failed: {}", r.text());
                    match r.text().as_str() {
                        "old" => {}
                        "new" => new += 1,
                        other => panic!("served {other:?}"),
                    }
                    served += 1;
                    if r.header("connection") == Some("close") {
                        c = Raw::connect(addr);
                    }
                }
                (served, new)
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    std::fs::remove_dir_all(&root).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    site.file("public/index.html", "new")
        .file("public/a.txt", "b");
    let line = server
        .wait_for_line("is serving", Duration::from_secs(20))
        .expect("a successor takes over");
    let _successor = Successor(upgraded_pid(&line));
    eventually(&server, "/", "new");
    std::thread::sleep(Duration::from_millis(300));
    stop.store(true, Ordering::Relaxed);
    let mut new_seen = 0;
    for c in clients {
        let (served, new) = c.join().expect("a client saw a failure");
        assert!(served > 0);
        new_seen += new;
    }
    assert!(new_seen > 0, "the new site was never served to the load");
}

#[test]
fn reloading_under_load_loses_no_request() {
    let site = TestSite::new();
    site.file("a.txt", "gen 0").file("index.html", "home");
    let server = Server::start(&site.root, &[]);
    let addr = server.addr;
    let stop = Arc::new(AtomicBool::new(false));
    let served = Arc::new(AtomicUsize::new(0));
    let clients: Vec<_> = (0..4)
        .map(|_| {
            let (stop, served) = (stop.clone(), served.clone());
            std::thread::spawn(move || {
                let mut c = Raw::connect(addr);
                while !stop.load(Ordering::Relaxed) {
                    let r = c.get("/a.txt", "");
                    assert_eq!(r.status, 200, "{}", r.head);
                    assert!(r.text().starts_with("gen "), "{}", r.text());
                    served.fetch_add(1, Ordering::Relaxed);
                }
            })
        })
        .collect();
    for generation in 1..=8 {
        // Written aside and renamed in, as deploys do: a build never reads
        // a half-written file.
        site.file(".a.txt.tmp", format!("gen {generation}"));
        std::fs::rename(site.path(".a.txt.tmp"), site.path("a.txt")).unwrap();
        std::thread::sleep(Duration::from_millis(250));
        server.signal(rustix::process::Signal::HUP);
        std::thread::sleep(Duration::from_millis(150));
    }
    stop.store(true, Ordering::Relaxed);
    for client in clients {
        client.join().expect("a client saw a failed request");
    }
    assert!(served.load(Ordering::Relaxed) > 100, "load was applied");
    eventually(&server, "/a.txt", "gen 8");
}

/// Reloads do not let the bodies they keep pin arenas of bodies that are
/// gone: an arena lives while any copy in it does, and a file that stops
/// changing shares its copy with every later generation. Here each of five
/// reloads leaves ten more files settled; their copies, packed among the
/// copies of files that changed, would each keep a 2 MiB arena of dead
/// bodies alive. A kept body alone in a mostly dead arena is copied again
/// among other survivors, so the arena goes with the old generation.
#[test]
fn reloads_do_not_let_kept_bodies_pin_dead_arenas() {
    use crate::observe::{admin_addr, admin_get, metric};
    use rustix::process::Signal;
    let site = TestSite::new();
    // 100 kB each, twenty to a 2 MiB arena.
    let body = |n: usize, version: usize| {
        let mut bytes = format!("file {n} version {version}\n").into_bytes();
        bytes.resize(100_000, b'.');
        bytes
    };
    for n in 0..100 {
        site.file(&format!("f{n}.bin"), body(n, 0));
    }
    let server = Server::start(
        &site.root,
        &["--no-watch", "--threads", "1", "--admin", "127.0.0.1:0"],
    );
    let admin = admin_addr(&server);
    let metrics = || admin_get(admin, "/metrics").1;
    let version_of = |n: usize, reload: usize| reload.min(n / 10);
    for reload in 1..=6 {
        std::thread::sleep(Duration::from_millis(20));
        // Files from 10 × reload on change; those below have settled.
        for n in (10 * reload)..100 {
            site.file(&format!("f{n}.bin"), body(n, reload));
        }
        server.signal(Signal::HUP);
        let reloaded = crate::support::eventually(Duration::from_secs(10), || {
            server.connect().get("/f99.bin", "").body == body(99, reload)
        });
        assert!(reloaded, "reload {reload} not served");
        // The generation before is gone once only this one's 100 bodies
        // are alive: the next reload then sees which arenas are sparse.
        let alone = crate::support::eventually(Duration::from_secs(10), || {
            server.connect().get("/f0.bin", "");
            metric(&metrics(), "tachyon_frozen_bodies") == 100.0
        });
        assert!(alone, "the generation before reload {reload} lives on");
    }
    // 10 MB of bodies: five arenas packed full, a few more partly (the
    // packers' current ones, the survivors'). Without the copy they grew
    // by one or two a reload (13 after the sixth).
    let arenas = metric(&metrics(), "tachyon_frozen_arena_bytes") / f64::from(2u32 << 20);
    assert!(
        arenas <= 8.0,
        "{arenas} arenas of 2 MiB for 10 MB of bodies"
    );
    let mut c = server.connect();
    for n in 0..100 {
        let got = c.get(&format!("/f{n}.bin"), "").body;
        assert!(got == body(n, version_of(n, 6)), "f{n}.bin");
    }
}
