//! Atomic generations: the watcher, SIGHUP, a repointed root symlink, a
//! failed build, and a reload under load that loses no request.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::support::{Raw, Server, TestSite};

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

#[test]
fn a_repointed_root_symlink_swaps_the_release() {
    let site = TestSite::new();
    site.file("releases/v1/index.html", "v1")
        .file("releases/v2/index.html", "v2");
    let current = site.path("current");
    std::os::unix::fs::symlink(site.path("releases/v1"), &current).unwrap();
    let server = Server::start(&current, &[]);
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
