//! The command line: defaults, errors as one clear line, config files.

use crate::support::{free_port, run_tachyon, Server, TestSite};

#[allow(dead_code)] // The build scripts' half.
#[path = "../../../../build/sources_stamp.rs"]
mod sources_stamp;

fn tachyon(args: &[&str]) -> (i32, String, String) {
    let exit = run_tachyon(args);
    (exit.code.unwrap_or(-1), exit.stdout, exit.stderr)
}

#[test]
fn without_a_root_it_serves_the_current_directory_and_prints_the_url() {
    let site = TestSite::new();
    site.file("here.txt", "cwd");
    let server = Server::start_in(&site.root, &[]);
    let root = site.root.canonicalize().unwrap();
    assert!(
        server.url.starts_with("http://127.0.0.1:"),
        "{}",
        server.url
    );
    let serving = format!("serving {} on {}", root.display(), server.url);
    assert!(
        server.startup_line().starts_with(&serving),
        "{:?} does not start with {serving:?}",
        server.startup_line()
    );
}

/// A checkout's build output is not loaded: cargo's `target/` (tagged by
/// `CACHEDIR.TAG`) is skipped and said so, the rest is listed and served.
/// The README's first command, run in the checkout, loaded 393 MiB of it
/// before printing the URL.
#[test]
fn build_output_tagged_as_a_cache_is_not_served() {
    let site = TestSite::new();
    site.file("README.md", "read me")
        .file("docs/guide.md", "guide")
        .file(
            "target/CACHEDIR.TAG",
            "Signature: 8a477f597d28d172789f06886806bc55\n# This file is a cache directory tag created by cargo.\n",
        )
        .file("target/release/tachyon", vec![0u8; 1 << 20]);
    let server = Server::start_in(&site.root, &[]);
    let mut c = server.connect();
    assert_eq!(c.get("/README.md", "").text(), "read me");
    assert_eq!(c.get("/target/release/tachyon", "").status, 404);
    let listing = c.get("/", "").text();
    assert!(
        listing.contains("README.md") && !listing.contains("target"),
        "{listing}"
    );
    assert!(
        server
            .startup
            .iter()
            .any(|l| l.contains("cache folders") && l.contains("target")),
        "{:#?}",
        server.startup
    );
}

#[test]
fn bad_input_is_one_clear_line_and_a_nonzero_exit() {
    let (code, _, err) = tachyon(&["--listen", "nonsense"]);
    assert_ne!(code, 0);
    assert!(err.contains("listen") && err.contains("nonsense"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");

    let (code, _, err) = tachyon(&["/definitely/not/here", "--listen", "127.0.0.1:0"]);
    assert_ne!(code, 0);
    assert!(err.contains("/definitely/not/here"), "{err}");
    assert!(!err.contains("panicked"), "{err}");

    let (code, _, err) = tachyon(&["--no-such-flag"]);
    assert_ne!(code, 0);
    assert!(err.contains("--no-such-flag"), "{err}");

    let (code, _, err) = tachyon(&["--threads", "0", "--listen", "127.0.0.1:0"]);
    assert_ne!(code, 0);
    assert!(err.contains("threads"), "{err}");
}

/// `--version` names the commit of the sources the binary was built from,
/// and ", modified" when they had changes since, as git tells it for the
/// same tree now (cargo built the binary from it for this test): a stamp
/// that cargo did not renew after an edit or a commit fails here. Reports
/// that name a build read this line, not the checkout around them.
#[test]
fn the_version_names_the_commit_its_sources_were_built_from() {
    let (code, out, _) = tachyon(&["--version"]);
    assert_eq!(code, 0);
    let now = sources_stamp::describe(sources_stamp::TACHYON);
    assert_eq!(
        out.trim_end(),
        format!("tachyon {}{now}", env!("CARGO_PKG_VERSION"))
    );
}

#[test]
fn a_port_in_use_is_reported() {
    let site = TestSite::new();
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap().to_string();
    let (code, _, err) = tachyon(&[site.root.to_str().unwrap(), "--listen", &addr]);
    assert_ne!(code, 0);
    assert!(err.contains(&addr) && err.contains("in use"), "{err}");
    assert!(!err.contains("panicked"), "{err}");
}

#[test]
fn config_file_sets_options_and_unknown_keys_are_named() {
    let site = TestSite::new();
    site.file("www/a.txt", "from config");
    site.file(
        "good.toml",
        format!(
            "root = {:?}\nthreads = 1\n[limits]\nidle_timeout = \"5s\"\n",
            site.path("www")
        ),
    );
    site.file("bad.toml", "threads = 1\nmax_memroy = \"1MiB\"\n");
    let (code, out, err) = tachyon(&[
        "--config",
        site.path("good.toml").to_str().unwrap(),
        "--print-config",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.contains("threads = 1") && out.contains("idle_timeout = \"5s\""),
        "{out}"
    );
    let (code, _, err) = tachyon(&["--config", site.path("bad.toml").to_str().unwrap()]);
    assert_ne!(code, 0);
    assert!(
        err.contains("max_memroy") && err.contains("line 2"),
        "{err}"
    );
}

#[test]
fn config_root_is_served() {
    let site = TestSite::new();
    site.file("www/a.txt", "from config");
    site.file(
        "c.toml",
        format!(
            "root = {:?}\nlisten = [\"127.0.0.1:0\"]\n",
            site.path("www")
        ),
    );
    let server = Server::start_args(&["--config", site.path("c.toml").to_str().unwrap()]);
    assert_eq!(server.connect().get("/a.txt", "").text(), "from config");
}

#[test]
fn the_example_config_is_valid_and_print_config_round_trips() {
    let example = concat!(env!("CARGO_MANIFEST_DIR"), "/../../tachyon.example.toml");
    let (code, printed, err) = tachyon(&["--config", example, "--print-config"]);
    assert_eq!(code, 0, "{err}");
    for key in [
        "[compression]",
        "[limits]",
        "[[headers]]",
        "[[redirects]]",
        "watch = true",
        "http2 = true",
    ] {
        assert!(printed.contains(key), "{key} missing from:\n{printed}");
    }
    let site = TestSite::new();
    site.file("printed.toml", &printed);
    let (code, again, err) = tachyon(&[
        "--config",
        site.path("printed.toml").to_str().unwrap(),
        "--print-config",
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        again, printed,
        "--print-config output is itself a valid config"
    );
    // And it passes --check as shipped, serving the folder it is run in
    // (its port moved off 8080, which this machine may use).
    site.file("index.html", "hi");
    let out = std::process::Command::new(crate::support::binary())
        .current_dir(&site.root)
        .args(["--config", example, "--check", "--listen", "127.0.0.1:0"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Under systemd's socket activation (here its `systemd-socket-activate`,
/// which listens, waits for the first connection, then starts tachyon with
/// the sockets in LISTEN_FDS), tachyon serves on the sockets it is given,
/// by name: plain HTTP, and the admin endpoints on the one named `admin`;
/// it binds nothing of its own (the default 8080 stays free).
#[test]
fn socket_activation_serves_on_the_sockets_systemd_hands_over() {
    let site = TestSite::new();
    site.file("a.txt", "activated");
    let (web, admin) = (free_port(), free_port());
    let mut child = std::process::Command::new("systemd-socket-activate")
        .args(["-l", &format!("127.0.0.1:{web}")])
        .args(["-l", &format!("127.0.0.1:{admin}")])
        .arg("--fdname=http:admin")
        .arg(crate::support::binary())
        .arg(&site.root)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("systemd-socket-activate (Debian's systemd package) is required");
    let addr: std::net::SocketAddr = format!("127.0.0.1:{web}").parse().unwrap();
    let mut ok = false;
    for _ in 0..50 {
        if std::net::TcpStream::connect(addr).is_ok() {
            ok = true;
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    assert!(ok, "systemd-socket-activate is not listening on {addr}");
    // The first connection starts tachyon; it answers once it has loaded.
    let mut c = crate::support::Raw::connect(addr);
    let r = c.get("/a.txt", "");
    assert_eq!((r.status, r.text().as_str()), (200, "activated"));
    let admin: std::net::SocketAddr = format!("127.0.0.1:{admin}").parse().unwrap();
    let health = crate::support::Raw::connect(admin).get("/healthz", "");
    assert_eq!((health.status, health.text().as_str()), (200, "ok\n"));
    let _ = child.kill();
    let out = child.wait_with_output().unwrap();
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains(&format!("on http://127.0.0.1:{web}/")),
        "{printed}"
    );
    assert!(!printed.contains(":8080"), "{printed}");
}

/// `--check` reads what a start would (config, roots, certificates) and
/// tries its addresses, and exits 0, or 1 naming what is wrong, keeping
/// nothing bound.
#[test]
fn check_validates_the_config_roots_and_certificates() {
    let site = TestSite::new();
    site.file("www/index.html", "hi");
    let root = site.path("www");
    let ok = run_tachyon([root.to_str().unwrap(), "--check", "--listen", "127.0.0.1:1"]);
    assert_eq!(ok.code, Some(0), "{}", ok.stderr);
    assert!(
        ok.stdout.starts_with("ok: 1 files under 1 root(s)"),
        "{}",
        ok.stdout
    );

    let missing = site.path("nowhere");
    let bad = run_tachyon([missing.to_str().unwrap(), "--check"]);
    assert_eq!(bad.code, Some(1));
    assert!(bad.stderr.contains("nowhere"), "{}", bad.stderr);

    let config = site.path("bad.toml");
    std::fs::write(&config, "max_memory = \"lots\"\n").unwrap();
    let bad = run_tachyon(["--check", "--config", config.to_str().unwrap()]);
    assert_eq!(bad.code, Some(1));
    assert!(bad.stderr.contains("max_memory"), "{}", bad.stderr);

    // A port another program listens on is an error, as it would be at a
    // start.
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().to_string();
    let bad = run_tachyon([root.to_str().unwrap(), "--check", "--listen", &port]);
    assert_eq!(bad.code, Some(1), "{}", bad.stdout);
    assert!(bad.stderr.contains(&port), "{}", bad.stderr);

    let cert = site.path("missing-cert.pem");
    // Addresses are tried before certificates: ports of its own, so
    // that a program on 8080 or 8443 does not answer first.
    let bad = run_tachyon([
        root.to_str().unwrap(),
        "--check",
        "--listen",
        "127.0.0.1:0",
        "--https",
        "127.0.0.1:0",
        "--tls-cert",
        cert.to_str().unwrap(),
        "--tls-key",
        cert.to_str().unwrap(),
    ]);
    assert_eq!(bad.code, Some(1));
    assert!(bad.stderr.contains("missing-cert.pem"), "{}", bad.stderr);
}

/// For a `Type=notify` unit: READY=1 once serving, RELOADING=1 (with the
/// monotonic time `Type=notify-reload` needs) then READY=1 around a
/// reload, STOPPING=1 on SIGTERM, sent to the socket in NOTIFY_SOCKET.
#[test]
fn systemd_is_told_ready_reloading_and_stopping() {
    let site = TestSite::new();
    site.file("www/index.html", "hi");
    let socket_path = site.path("notify.sock");
    let socket = std::os::unix::net::UnixDatagram::bind(&socket_path).unwrap();
    socket
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    let next = || {
        let mut buf = [0u8; 512];
        let n = socket.recv(&mut buf).expect("a notification");
        String::from_utf8_lossy(&buf[..n]).into_owned()
    };
    let server = Server::start_env(
        &site.path("www"),
        &["--no-watch"],
        &[("NOTIFY_SOCKET", socket_path.to_str().unwrap())],
    );
    assert_eq!(next(), "READY=1\n");
    server.signal(rustix::process::Signal::HUP);
    let reloading = next();
    assert!(
        reloading.starts_with("RELOADING=1\nMONOTONIC_USEC="),
        "{reloading}"
    );
    assert_eq!(next(), "READY=1\n");
    server.signal(rustix::process::Signal::TERM);
    assert_eq!(next(), "STOPPING=1\n");
}

/// `--user` drops root once every socket is bound: the process then runs
/// as that user (real and effective ids, no supplementary groups) and
/// still serves the site it read as root. An unknown user is refused at
/// start and by `--check`, naming the user.
#[test]
fn user_drops_root_after_binding() {
    let site = TestSite::new();
    site.file("www/index.html", "as nobody");
    let root = site.path("www");
    let unknown = run_tachyon([
        root.to_str().unwrap(),
        "--check",
        "--user",
        "no-such-user-here",
    ]);
    assert_eq!(unknown.code, Some(1));
    assert!(
        unknown.stderr.contains("no-such-user-here"),
        "{}",
        unknown.stderr
    );

    if !rustix::process::geteuid().is_root() {
        let refused = run_tachyon([
            root.to_str().unwrap(),
            "--listen",
            "127.0.0.1:0",
            "--user",
            "root",
        ]);
        assert_eq!(refused.code, Some(1));
        assert!(refused.stderr.contains("needs root"), "{}", refused.stderr);
        return;
    }
    let server = Server::start(&root, &["--no-watch", "--user", "nobody"]);
    // The URL is printed before the switch: the first request is served after it.
    let mut conn = server.connect();
    assert_eq!(conn.get("/", "").text(), "as nobody");
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.pid())).unwrap();
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .map(|v| v.split_whitespace().collect::<Vec<_>>())
            .unwrap()
    };
    assert_eq!(field("Uid:"), ["65534"; 4], "{status}");
    assert!(field("Groups:").iter().all(|g| *g == "65534"), "{status}");
    assert_eq!(conn.get("/", "").text(), "as nobody");
}

/// `--healthcheck ADDR` (for containers without curl) exits 0 when the
/// admin listener there says ready, 1 naming the problem otherwise.
#[test]
fn healthcheck_asks_the_admin_listener() {
    let site = TestSite::new();
    site.file("www/index.html", "hi");
    let server = Server::start(&site.path("www"), &["--no-watch", "--admin", "127.0.0.1:0"]);
    let admin = server
        .wait_for_line("admin on http://", std::time::Duration::from_secs(5))
        .and_then(|l| Some(l.split("http://").nth(1)?.split('/').next()?.to_string()))
        .expect("the admin address");
    let ready = run_tachyon(["--healthcheck", admin.as_str()]);
    assert_eq!(ready.code, Some(0), "{}", ready.stderr);

    // The site's own port answers /readyz with 404: not the admin listener.
    let wrong = run_tachyon(["--healthcheck", &server.addr.to_string()]);
    assert_eq!(wrong.code, Some(1));
    assert!(wrong.stderr.contains("404"), "{}", wrong.stderr);
}

/// A port already taken is reported before the site is read (a site of
/// 4,000 files takes a moment to load; the refusal must not wait for it),
/// with its cause said once.
#[test]
fn a_taken_port_is_reported_at_once_with_its_cause_once() {
    let site = TestSite::new();
    for i in 0..4000 {
        site.file(&format!("www/{i}.html"), "<p>page</p>".repeat(200));
    }
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().to_string();
    let exit = run_tachyon([
        site.path("www").to_str().unwrap(),
        "--listen",
        &port,
        "--cache-dir",
        "off",
    ]);
    assert_eq!(exit.code, Some(1), "{}", exit.stderr);
    assert!(
        !exit.stdout.contains("loaded"),
        "the site was loaded before the bind failed:\n{}",
        exit.stdout
    );
    let cause = "Address already in use";
    assert_eq!(
        exit.stderr.matches(cause).count(),
        1,
        "the cause said once: {}",
        exit.stderr
    );
    assert!(exit.stderr.contains(&port), "{}", exit.stderr);
}

/// A root that is missing, or a file, is one clear error, without a
/// watcher's "cannot watch … retrying" line before it.
#[test]
fn a_missing_root_or_a_file_root_is_one_clear_error() {
    let site = TestSite::new();
    site.file("file.html", "hi");
    for (root, says) in [
        (site.path("nowhere"), "cannot open document root"),
        (site.path("file.html"), "is not a directory"),
    ] {
        let exit = run_tachyon([root.to_str().unwrap(), "--listen", "127.0.0.1:0"]);
        assert_eq!(exit.code, Some(1), "{}", exit.stderr);
        assert!(exit.stderr.contains(says), "{}", exit.stderr);
        assert!(!exit.stderr.contains("watch"), "{}", exit.stderr);
        assert_eq!(exit.stderr.lines().count(), 1, "{}", exit.stderr);
    }
}
