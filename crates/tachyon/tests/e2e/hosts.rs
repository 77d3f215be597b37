//! Virtual hosts (Host → root, with the default site for every other Host)
//! and what `tachyon` with no root serves.

use std::time::{Duration, Instant};

use crate::support::{run_tachyon, Server, TestSite};

/// A default site in `www/`, and `docs/` answering for docs.test and
/// www.docs.test, with a config that gives docs its own 404 page.
fn two_sites() -> TestSite {
    let site = TestSite::new();
    site.file("www/index.html", "default home")
        .file("www/only-default.txt", "d")
        .file("docs/index.html", "docs home")
        .file("docs/404.html", "docs has no such page");
    let docs = site.path("docs");
    site.file(
        "tachyon.toml",
        format!(
            "[[hosts]]\nnames = [\"docs.test\", \"www.docs.test\"]\nroot = {:?}\nnot_found_page = \"/404.html\"\n",
            docs.to_str().unwrap()
        ),
    );
    site
}

/// RFC 9112 §3.2.2: an absolute-form target's authority names the site,
/// whatever the Host header says.
#[test]
fn an_absolute_form_target_picks_the_site_over_the_host_header() {
    let site = two_sites();
    let conf = site.path("tachyon.toml");
    let server = Server::start(&site.path("www"), &["--config", conf.to_str().unwrap()]);
    let mut c = server.connect();
    let r = c.get_from("other.test", "http://docs.test/", "");
    assert_eq!((r.status, r.text().as_str()), (200, "docs home"));
    let r = c.get_from("docs.test", "http://elsewhere.test/", "");
    assert_eq!((r.status, r.text().as_str()), (200, "default home"));
}

#[test]
fn the_host_header_picks_the_site_ignoring_case_port_and_trailing_dot() {
    let site = two_sites();
    let conf = site.path("tachyon.toml");
    let server = Server::start(&site.path("www"), &["--config", conf.to_str().unwrap()]);
    let mut c = server.connect();
    for host in [
        "docs.test",
        "DOCS.Test",
        "docs.test:8080",
        "docs.test.",
        "www.docs.test",
    ] {
        let r = c.get_from(host, "/", "");
        assert_eq!(
            (r.status, r.text().as_str()),
            (200, "docs home"),
            "Host {host}"
        );
    }
    let r = c.get_from("docs.test", "/only-default.txt", "");
    assert_eq!(r.status, 404, "a virtual host serves only its own root");
    assert_eq!(r.text(), "docs has no such page", "its own 404 page");
    for host in ["t", "other.test", "127.0.0.1", "docs.test.example"] {
        let r = c.get_from(host, "/", "");
        assert_eq!(
            r.text(),
            "default home",
            "Host {host} gets the default site"
        );
    }
    assert_eq!(c.get_from("t", "/nope", "").status, 404);
    // HTTP/1.0 may omit Host: the default site.
    let mut old = server.connect();
    old.send("GET / HTTP/1.0\r\n\r\n");
    assert_eq!(old.response(false).text(), "default home");
}

#[test]
fn a_virtual_host_reloads_when_its_root_changes() {
    let site = two_sites();
    let conf = site.path("tachyon.toml");
    let server = Server::start(&site.path("www"), &["--config", conf.to_str().unwrap()]);
    site.file("docs/index.html", "docs v2");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let r = server.connect().get_from("docs.test", "/", "");
        if r.text() == "docs v2" {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "docs never reloaded: {}",
            r.text()
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(server.connect().get("/", "").text(), "default home");
}

#[test]
fn bad_virtual_hosts_are_config_errors_naming_the_key() {
    let site = TestSite::new();
    site.file("www/index.html", "x");
    let cases = [
        ("[[hosts]]\nnames = []\nroot = \"/tmp\"\n", "hosts[0].names"),
        (
            "[[hosts]]\nnames = [\"a b\"]\nroot = \"/tmp\"\n",
            "hosts[0].names",
        ),
        ("[[hosts]]\nnames = [\"a.test\"]\n", "root"),
        (
            "[[hosts]]\nnames = [\"a.test\"]\nroot = \"/tmp\"\nport = 1\n",
            "port",
        ),
        (
            "[[hosts]]\nnames = [\"a.test\"]\nroot = \"/tmp\"\nfallback = \"x.html\"\n",
            "hosts[0].fallback",
        ),
    ];
    // tachyon www/ with `toml` as its config: it must exit without serving.
    let start = |toml: &str| {
        site.file("bad.toml", toml);
        run_tachyon([
            site.path("www").to_str().unwrap(),
            "--config",
            site.path("bad.toml").to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
        ])
    };
    for (toml, names) in cases {
        let out = start(toml);
        let err = &out.stderr;
        assert_eq!(out.code, Some(2), "{toml}: {err}");
        assert!(err.contains(names), "{toml}: stderr {err:?} names {names}");
        assert!(!err.contains("panicked"), "{err}");
    }
    // A host whose root does not exist fails at startup, naming the host.
    let out = start("[[hosts]]\nnames = [\"a.test\"]\nroot = \"/nonexistent/tachyon\"\n");
    let err = &out.stderr;
    assert_ne!(out.code, Some(0));
    assert!(
        err.contains("a.test") && err.contains("/nonexistent/tachyon"),
        "{err}"
    );
}

#[test]
fn with_no_root_a_directory_without_index_is_listed() {
    let site = TestSite::new();
    site.file("notes.txt", "n").file("sub/a.txt", "a");
    let server = Server::start_in(&site.root, &[]);
    let r = server.connect().get("/", "");
    assert_eq!(r.status, 200);
    assert!(
        r.text().contains("notes.txt") && r.text().contains("sub/"),
        "{}",
        r.text()
    );
    assert_eq!(server.connect().get("/notes.txt", "").text(), "n");
}

#[test]
fn with_no_root_an_index_page_is_served_and_nothing_is_listed() {
    let site = TestSite::new();
    site.file("index.html", "home").file("sub/a.txt", "a");
    let server = Server::start_in(&site.root, &[]);
    assert_eq!(server.connect().get("/", "").text(), "home");
    assert_eq!(server.connect().get("/sub/", "").status, 404);
}

#[test]
fn a_root_given_is_listed_only_when_asked() {
    let site = TestSite::new();
    site.file("notes.txt", "n");
    let server = Server::start(&site.root, &[]);
    assert_eq!(server.connect().get("/", "").status, 404);
    let server = Server::start_in(&site.root, &["--config", "/dev/null"]);
    assert_eq!(
        server.connect().get("/", "").status,
        200,
        "an empty config does not turn listing off"
    );
}
