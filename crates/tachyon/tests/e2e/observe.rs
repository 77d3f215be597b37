//! Observability: the access log (combined and JSON), its rotation, the
//! admin listener's `/metrics` (checked by promtool and against a known
//! request mix), `/healthz`, `/readyz` during a drain, `/status`, and the
//! server's own messages as JSON.

use std::io::{BufRead, BufReader, Read};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::support::{announced_url, eventually, run, run_tachyon, Raw, Server, TestSite};

fn lines(path: &std::path::Path) -> Vec<String> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

/// Waits until the log at `path` holds `n` lines (workers hand theirs over
/// at least once a second), and returns them.
fn wait_lines(path: &std::path::Path, n: usize) -> Vec<String> {
    eventually(Duration::from_secs(5), || lines(path).len() >= n);
    let got = lines(path);
    assert_eq!(got.len(), n, "{got:#?}");
    got
}

/// The admin address the server announced.
pub(crate) fn admin_addr(server: &Server) -> SocketAddr {
    let line = server
        .wait_for_line("admin on http://", Duration::from_secs(5))
        .expect("the admin listener is announced");
    announced_url(&line)
        .expect("an address in the admin line")
        .1
}

pub(crate) fn admin_get(admin: SocketAddr, path: &str) -> (u16, String) {
    let mut c = Raw::connect(admin);
    let r = c.get(path, "");
    (r.status, r.text())
}

/// One metric's value, by its full series name as printed.
pub(crate) fn metric(text: &str, series: &str) -> f64 {
    text.lines()
        .find_map(|l| l.strip_prefix(series)?.strip_prefix(' ')?.parse().ok())
        .unwrap_or_else(|| panic!("no {series} in\n{text}"))
}

#[test]
fn the_combined_log_has_nginx_s_fields_for_every_kind_of_answer() {
    let site = TestSite::new();
    site.file("www/a.txt", "secret sauce");
    let big = vec![7u8; 3 << 20];
    site.file("www/big.bin", &big);
    let log = site.path("access.log");
    let _ = std::fs::remove_file(&log);
    let server = Server::start(&site.path("www"), &["--access-log", log.to_str().unwrap()]);
    let mut c = server.connect();
    let ok = c.get(
        "/a.txt",
        "User-Agent: spec/1.0 \"quoted\"\r\nReferer: http://ref.example/\r\n",
    );
    assert_eq!(ok.status, 200);
    let etag = ok.header("etag").unwrap().to_string();
    c.send("HEAD /a.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(true).status, 200);
    assert_eq!(
        c.get("/a.txt", &format!("If-None-Match: {etag}\r\n"))
            .status,
        304
    );
    assert_eq!(c.get("/a.txt", "Range: bytes=0-3\r\n").status, 206);
    assert_eq!(c.get("/missing", "").status, 404);
    let mut bad = server.connect();
    bad.send("GET /x HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n");
    assert_eq!(bad.response(false).status, 400);
    // Closed early: asks for 3 MiB, reads nothing, resets.
    let early = server.connect();
    (&early.stream)
        .write_all(b"GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    std::thread::sleep(Duration::from_millis(100));
    socket2_reset(early.stream);

    let got = wait_lines(&log, 7);
    let fields = |line: &str| -> (String, String, String) {
        // 127.0.0.1 - - [24/Nov/2026:17:40:01 +0000] "GET /a.txt HTTP/1.1" 200 12 "-" "-"
        let (addr, rest) = line.split_once(" - - [").unwrap();
        let (time, rest) = rest.split_once("] \"").unwrap();
        assert_eq!(time.len(), 26, "{line}");
        assert!(time.ends_with(" +0000"), "{line}");
        (addr.to_string(), time.to_string(), rest.to_string())
    };
    let tails: Vec<String> = got.iter().map(|l| fields(l).2).collect();
    assert!(got.iter().all(|l| l.starts_with("127.0.0.1 - - [")));
    // Each worker hands its own lines over, so connections served by
    // different workers may be logged in either order; one connection's
    // lines keep theirs.
    let has = |expected: &str| tails.iter().any(|t| t == expected);
    let one_connection: Vec<&String> = tails
        .iter()
        .filter(|t| t.contains("/a.txt ") || t.contains("/missing "))
        .collect();
    assert_eq!(
        one_connection[..4],
        [
            "GET /a.txt HTTP/1.1\" 200 12 \"http://ref.example/\" \"spec/1.0 \\x22quoted\\x22\"",
            "HEAD /a.txt HTTP/1.1\" 200 0 \"-\" \"-\"",
            "GET /a.txt HTTP/1.1\" 304 0 \"-\" \"-\"",
            "GET /a.txt HTTP/1.1\" 206 4 \"-\" \"-\"",
        ],
        "{tails:#?}"
    );
    assert!(
        one_connection[4].starts_with("GET /missing HTTP/1.1\" 404 "),
        "{tails:#?}"
    );
    // A request that could not be parsed shows its line as sent (nginx
    // does the same), with the error page's length.
    assert!(has("GET /x HTTP/1.1\" 400 72 \"-\" \"-\""), "{tails:#?}");
    // Closed early: logged with the response's status and length (what
    // was answered, not what the client took).
    assert!(
        has(&format!(
            "GET /big.bin HTTP/1.1\" 200 {} \"-\" \"-\"",
            3 << 20
        )),
        "{tails:#?}"
    );
    drop(server);
}

/// Closes with a reset (SO_LINGER 0), as a client that gives up does.
fn socket2_reset(stream: std::net::TcpStream) {
    let fd = rustix::fd::OwnedFd::from(stream);
    rustix::net::sockopt::set_socket_linger(&fd, Some(Duration::ZERO)).unwrap();
    drop(fd);
}

use std::io::Write;

#[test]
fn the_json_log_has_caddy_s_field_names() {
    let site = TestSite::new();
    site.file("www/app.js", "function f() { return 1; }\n".repeat(40));
    let log = site.path("access.json");
    let _ = std::fs::remove_file(&log);
    let server = Server::start(
        &site.path("www"),
        &[
            "--access-log",
            log.to_str().unwrap(),
            "--log-format",
            "json",
        ],
    );
    let mut c = server.connect();
    let r = c.get_from(
        "example.test",
        "/app.js?v=1",
        "Accept-Encoding: gzip\r\nUser-Agent: spec\r\n",
    );
    assert_eq!(r.status, 200);
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    let got = wait_lines(&log, 1);
    let v: serde_json::Value = serde_json::from_str(&got[0]).expect("one JSON object");
    let req = &v["request"];
    assert_eq!(req["remote_ip"], "127.0.0.1");
    assert!(req["remote_port"].as_str().unwrap().parse::<u16>().is_ok());
    assert_eq!(req["proto"], "HTTP/1.1");
    assert_eq!(req["method"], "GET");
    assert_eq!(req["host"], "example.test");
    assert_eq!(req["uri"], "/app.js?v=1");
    assert_eq!(req["headers"]["User-Agent"][0], "spec");
    assert_eq!(v["status"], 200);
    assert_eq!(v["size"], r.body.len());
    assert_eq!(v["resp_headers"]["Content-Encoding"][0], "gzip");
    assert_eq!(v["logger"], "http.log.access");
    let duration = v["duration"].as_f64().unwrap();
    assert!((0.0..1.0).contains(&duration), "{duration}");
    assert!(v["ts"].as_f64().unwrap() > 1.7e9);
}

#[test]
fn every_request_of_a_load_run_has_its_line() {
    let site = TestSite::new();
    site.file("www/index.html", "hello");
    let log = site.path("load.log");
    let _ = std::fs::remove_file(&log);
    let server = Server::start(&site.path("www"), &["--access-log", log.to_str().unwrap()]);
    // ab sends exactly -n requests; every one must have its line.
    let (ok, out, err) = run(
        "ab",
        &["-k", "-n", "20000", "-c", "8", &server.url("/index.html")],
    );
    assert!(ok, "{out}{err}");
    assert!(out.contains("Complete requests:      20000"), "{out}");
    wait_lines(&log, 20_000);
    // wrk stops mid-flight: lines are its count plus at most one answered
    // but uncounted request per connection.
    std::fs::remove_file(&log).unwrap();
    server.signal(rustix::process::Signal::USR1);
    std::thread::sleep(Duration::from_millis(300));
    let (ok, out, err) = run("wrk", &["-t1", "-c4", "-d1s", &server.url("/index.html")]);
    assert!(ok, "{err}");
    let counted: usize = out
        .lines()
        .find_map(|l| l.trim().split_once(" requests in ")?.0.parse().ok())
        .expect("wrk's total");
    assert!(eventually(Duration::from_secs(5), || {
        let n = lines(&log).len();
        (counted..=counted + 4).contains(&n)
    }));
}

#[test]
fn sigusr1_reopens_the_log_under_load_without_losing_a_line() {
    let site = TestSite::new();
    site.file("www/index.html", "hello");
    let log = site.path("rotate.log");
    let rotated = site.path("rotate.log.1");
    let _ = std::fs::remove_file(&log);
    let _ = std::fs::remove_file(&rotated);
    let server = Server::start(&site.path("www"), &["--access-log", log.to_str().unwrap()]);
    let url = server.url("/index.html");
    let load = std::thread::spawn(move || run("ab", &["-k", "-n", "30000", "-c", "4", &url]));
    assert!(eventually(Duration::from_secs(5), || !lines(&log).is_empty()));
    // logrotate's dance: rename, then ask for a new file.
    std::fs::rename(&log, &rotated).unwrap();
    server.signal(rustix::process::Signal::USR1);
    let (ok, out, err) = load.join().unwrap();
    assert!(
        ok && out.contains("Complete requests:      30000"),
        "{out}{err}"
    );
    assert!(eventually(Duration::from_secs(5), || {
        lines(&rotated).len() + lines(&log).len() == 30_000
    }));
    assert!(!lines(&log).is_empty(), "the reopened file got no line");
    assert!(!lines(&rotated).is_empty());
}

#[test]
fn metrics_pass_promtool_and_count_a_known_mix() {
    let site = TestSite::new();
    site.file("www/a.txt", "hello");
    site.file("www/app.js", "function f() { return 1; }\n".repeat(40));
    let server = Server::start(&site.path("www"), &["--admin", "127.0.0.1:0"]);
    let admin = admin_addr(&server);
    let mut c = server.connect();
    for _ in 0..3 {
        assert_eq!(c.get("/a.txt", "").status, 200);
    }
    c.send("HEAD /a.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(true).status, 200);
    assert_eq!(c.get("/nope", "").status, 404);
    assert_eq!(c.get("/nope", "").status, 404);
    assert_eq!(c.get("/app.js", "Accept-Encoding: br\r\n").status, 200);
    c.send("DELETE /a.txt HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).status, 405);
    drop(c);

    let mut text = String::new();
    assert!(eventually(Duration::from_secs(3), || {
        text = admin_get(admin, "/metrics").1;
        text.contains("tachyon_connections_closed_total{reason=\"client\"} 1")
    }));
    let get_2xx = "tachyon_http_requests_total{method=\"GET\",code=\"2xx\"}";
    assert_eq!(metric(&text, get_2xx), 4.0);
    assert_eq!(
        metric(
            &text,
            "tachyon_http_requests_total{method=\"HEAD\",code=\"2xx\"}"
        ),
        1.0
    );
    assert_eq!(
        metric(
            &text,
            "tachyon_http_requests_total{method=\"GET\",code=\"4xx\"}"
        ),
        2.0
    );
    assert_eq!(
        metric(
            &text,
            "tachyon_http_requests_total{method=\"other\",code=\"4xx\"}"
        ),
        1.0
    );
    assert_eq!(
        metric(
            &text,
            "tachyon_http_responses_by_encoding_total{encoding=\"br\"}"
        ),
        1.0
    );
    assert_eq!(
        metric(&text, "tachyon_http_request_duration_seconds_count"),
        8.0
    );
    assert_eq!(
        metric(&text, "tachyon_connections_accepted_total{scheme=\"http\"}"),
        1.0
    );
    assert_eq!(metric(&text, "tachyon_snapshot_generation"), 1.0);
    assert!(metric(&text, "tachyon_sent_bytes_total") > 1000.0);
    assert_eq!(
        metric(&text, "tachyon_snapshot_files{encoding=\"identity\"}"),
        2.0
    );
    // Prometheus's own linter accepts the exposition.
    let mut promtool = Command::new("promtool")
        .args(["check", "metrics"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("promtool (Debian's prometheus package) is required; .ci/run installs it");
    promtool
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = promtool.wait_with_output().unwrap();
    assert!(
        out.status.success() && out.stdout.is_empty() && out.stderr.is_empty(),
        "promtool: {}{}\n{text}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// True when the workspace is a git checkout (the build stamp needs one).
fn in_git() -> bool {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../.git")
        .exists()
}

#[test]
fn health_readiness_and_status_and_readyz_fails_while_draining() {
    let site = TestSite::new();
    let big: Vec<u8> = (0..3 * 1024 * 1024u32).map(|i| i as u8).collect();
    site.file("www/big.bin", &big);
    let server = Server::start(
        &site.path("www"),
        &["--admin", "127.0.0.1:0", "--drain-timeout", "10s"],
    );
    let admin = admin_addr(&server);
    assert_eq!(admin_get(admin, "/healthz"), (200, "ok\n".into()));
    assert_eq!(admin_get(admin, "/readyz"), (200, "ready\n".into()));
    assert_eq!(admin_get(admin, "/nothing-here").0, 404);
    let (status, body) = admin_get(admin, "/status");
    assert_eq!(status, 200);
    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
    assert_eq!(v["generation"], 1);
    assert_eq!(v["draining"], false);
    assert_eq!(v["files_in_memory"], 1);
    // The build the operator sees is the one `--version` names, build stamp
    // included (not the package version alone), in /status and the metrics.
    let version = run_tachyon(["--version"]).stdout;
    let version = version.trim_end().strip_prefix("tachyon ").unwrap();
    assert!(version.contains("(sources at ") || !in_git(), "{version}");
    assert_eq!(v["version"], version);
    let metrics = admin_get(admin, "/metrics").1;
    let info = format!("tachyon_build_info{{version=\"{version}\"}} 1");
    assert!(metrics.contains(&info), "{metrics}");
    // The site's port is not the admin's.
    assert_eq!(server.connect().get("/metrics", "").status, 404);

    // A response in flight keeps the drain going: readiness fails, health holds.
    let mut slow = server.connect();
    slow.send("GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n");
    let mut first = [0u8; 100];
    slow.stream.read_exact(&mut first).unwrap();
    server.signal(rustix::process::Signal::TERM);
    assert!(eventually(Duration::from_secs(3), || {
        admin_get(admin, "/readyz") == (503, "draining\n".into())
    }));
    assert_eq!(admin_get(admin, "/healthz").0, 200);
    let v: serde_json::Value = serde_json::from_str(&admin_get(admin, "/status").1).unwrap();
    assert_eq!(v["draining"], true);
    let mut rest = Vec::new();
    slow.stream.read_to_end(&mut rest).unwrap();
}

#[test]
fn log_json_prints_the_server_s_own_messages_as_json_lines() {
    let site = TestSite::new();
    site.file("www/index.html", "hi");
    let mut child = Command::new(crate::support::binary())
        .arg(site.path("www"))
        .args(["--listen", "127.0.0.1:0", "--log-json"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut seen = Vec::new();
    loop {
        let mut line = String::new();
        assert!(out.read_line(&mut line).unwrap() > 0, "{seen:#?}");
        let v: serde_json::Value = serde_json::from_str(&line).expect("a JSON line");
        assert_eq!(v["level"], "info");
        assert!(v["ts"].as_f64().unwrap() > 1.7e9);
        let msg = v["msg"].as_str().unwrap().to_string();
        seen.push(msg.clone());
        if msg.starts_with("serving ") {
            break;
        }
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn a_bad_log_format_or_admin_address_is_an_error_naming_the_key() {
    let exit = crate::support::run_tachyon(["--log-format", "xml", "."]);
    assert_eq!(exit.code, Some(2));
    assert!(
        exit.stderr.contains("log.format: \"xml\""),
        "{}",
        exit.stderr
    );
    let exit = crate::support::run_tachyon(["--admin", "localhost", "."]);
    assert_eq!(exit.code, Some(2));
    assert!(
        exit.stderr.contains("admin: \"localhost\""),
        "{}",
        exit.stderr
    );
    let exit = crate::support::run_tachyon([
        "--access-log",
        "/nonexistent-dir/x.log",
        "--listen",
        "127.0.0.1:0",
        ".",
    ]);
    assert_eq!(exit.code, Some(1));
    assert!(
        exit.stderr.contains("access log /nonexistent-dir/x.log"),
        "{}",
        exit.stderr
    );
}

/// A client trickling its request a byte at a time does not hold the admin
/// listener: health checks and scrapes beside it are answered at once, and
/// the trickler is cut off within the request's time.
#[test]
fn slow_admin_clients_do_not_block_health_checks() {
    let site = TestSite::new();
    site.file("www/a.txt", "a");
    let server = Server::start(&site.path("www"), &["--admin", "127.0.0.1:0"]);
    let admin = admin_addr(&server);
    let tricklers: Vec<std::thread::JoinHandle<Duration>> = (0..8)
        .map(|_| {
            std::thread::spawn(move || {
                let started = std::time::Instant::now();
                let mut s = std::net::TcpStream::connect(admin).unwrap();
                for b in b"GET /metrics HTTP/1.1\r\nHost: x\r\n".iter().cycle() {
                    if s.write_all(&[*b]).is_err() || started.elapsed() > Duration::from_secs(20) {
                        break;
                    }
                    std::thread::sleep(Duration::from_millis(300));
                }
                started.elapsed()
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    for path in ["/healthz", "/readyz", "/metrics"] {
        let asked = std::time::Instant::now();
        let (status, _) = admin_get(admin, path);
        assert_eq!(status, 200, "{path}");
        assert!(
            asked.elapsed() < Duration::from_secs(1),
            "{path} took {:?}",
            asked.elapsed()
        );
    }
    for t in tricklers {
        let held = t.join().unwrap();
        assert!(
            held < Duration::from_secs(10),
            "a trickler was held {held:?}"
        );
    }
}
