//! HTTP/3: the same site over QUIC, checked with aioquic (a Python HTTP/3
//! stack independent of ours) on the UDP port of the HTTPS address.

use std::net::SocketAddr;
use std::process::Command;
use std::time::Duration;

use serde_json::Value;

use crate::support::{Server, TestSite};
use crate::tls::https_addr;

/// Starts tachyon with HTTPS (a self-signed certificate) and HTTP/3.
fn start(site: &TestSite, args: &[&str]) -> (Server, SocketAddr) {
    let mut all = vec!["--https", "127.0.0.1:0", "--tls-self-signed"];
    all.extend_from_slice(args);
    let server = Server::start(&site.path(""), &all);
    let https = https_addr(&server);
    server
        .wait_for_line("HTTP/3 on UDP", Duration::from_secs(10))
        .expect("an HTTP/3 line");
    (server, https)
}

/// Runs the aioquic client: one JSON object per response, in order.
pub(crate) fn h3(at: SocketAddr, args: &[&str]) -> Vec<Value> {
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/clients/h3client.py");
    let out = Command::new("python3")
        .arg(script)
        .arg("--addr")
        .arg(at.to_string())
        .args(args)
        .output()
        .expect("python3");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "h3client failed: {stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect()
}

/// An aioquic download certainly in flight: started once its first body
/// bytes arrived, after which the whole client stops for a while
/// (`--pause-after-first-data`), then reads the rest.
pub(crate) struct PausedDownload {
    client: std::process::Child,
    lines: std::io::Lines<std::io::BufReader<std::process::ChildStdout>>,
}

impl PausedDownload {
    /// Starts the download and returns once its first bytes arrived.
    pub(crate) fn start(at: SocketAddr, path: &str, pause_s: u32) -> PausedDownload {
        use std::io::BufRead;
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/clients/h3client.py");
        let mut client = Command::new("python3")
            .arg(script)
            .args(["--addr", &at.to_string()])
            .args(["--pause-after-first-data", &pause_s.to_string()])
            .arg(path)
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("python3");
        let stdout = client.stdout.take().unwrap();
        let mut lines = std::io::BufReader::new(stdout).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        assert!(first.contains("started"), "{first}");
        PausedDownload { client, lines }
    }

    /// The response as the client saw it in the end.
    pub(crate) fn finish(mut self) -> Value {
        let last = self.lines.map_while(Result::ok).last().unwrap_or_default();
        let _ = self.client.wait();
        serde_json::from_str(&last).expect("a JSON line")
    }
}

pub(crate) fn sha256_hex(bytes: &[u8]) -> String {
    ring::digest::digest(&ring::digest::SHA256, bytes)
        .as_ref()
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn get_head_conditional_and_range_requests_over_http3() {
    let site = TestSite::new();
    site.file("index.html", "<h1>home</h1>")
        .file("a.txt", "0123456789");
    let (_server, at) = start(&site, &[]);
    let got = h3(at, &["/", "/a.txt", "/missing"]);
    assert_eq!(got[0]["status"], 200);
    assert_eq!(got[0]["body"], "<h1>home</h1>");
    assert_eq!(
        got[0]["headers"]["content-type"],
        "text/html; charset=utf-8"
    );
    assert_eq!(got[1]["body"], "0123456789");
    assert_eq!(got[2]["status"], 404);
    let etag = got[1]["headers"]["etag"].as_str().unwrap().to_string();
    let cond = h3(at, &["-H", &format!("if-none-match: {etag}"), "/a.txt"]);
    assert_eq!(cond[0]["status"], 304);
    assert_eq!(cond[0]["len"], 0);
    let range = h3(at, &["-H", "range: bytes=2-4", "/a.txt"]);
    assert_eq!(range[0]["status"], 206);
    assert_eq!(range[0]["body"], "234");
    assert_eq!(range[0]["headers"]["content-range"], "bytes 2-4/10");
    // Two ranges: a multipart body of several DATA frames, whole.
    let multi = h3(at, &["-H", "range: bytes=0-1,7-8", "/a.txt"]);
    assert_eq!(multi[0]["status"], 206);
    let kind = multi[0]["headers"]["content-type"].as_str().unwrap();
    let boundary = kind
        .strip_prefix("multipart/byteranges; boundary=")
        .unwrap();
    let body = multi[0]["body"].as_str().unwrap();
    assert_eq!(body.matches(boundary).count(), 3, "{body}");
    assert!(body.contains("bytes 0-1/10\r\n\r\n01\r\n"), "{body}");
    assert!(body.contains("bytes 7-8/10\r\n\r\n78\r\n"), "{body}");
    assert_eq!(multi[0]["len"], body.len());
    let head = h3(at, &["--method", "HEAD", "/a.txt"]);
    assert_eq!(head[0]["status"], 200);
    assert_eq!(head[0]["headers"]["content-length"], "10");
    assert_eq!(head[0]["len"], 0);
}

#[test]
fn compressed_variants_and_a_large_body_arrive_whole() {
    let site = TestSite::new();
    let text = "tachyon serves static sites over HTTP/3. ".repeat(2000);
    let big: Vec<u8> = (0..10 * 1024 * 1024u32)
        .map(|i| (i * 7 + i / 13) as u8)
        .collect();
    site.file("app.js", &text).file("big.bin", &big);
    let (server, at) = start(&site, &[]);
    // Over 8 MiB in memory: served at once, compressed in the background
    // (gzip first, so a busy host could answer gzip before br is built).
    server
        .wait_for_line(
            "reloaded (variants built in the background)",
            Duration::from_secs(60),
        )
        .expect("the variants are swapped in");
    let got = h3(
        at,
        &["-H", "accept-encoding: br, gzip", "/app.js", "/big.bin"],
    );
    assert_eq!(got[0]["status"], 200);
    assert_eq!(got[0]["headers"]["content-encoding"], "br");
    assert!(got[0]["len"].as_u64().unwrap() < text.len() as u64 / 4);
    assert_eq!(got[1]["status"], 200);
    assert_eq!(got[1]["len"], big.len() as u64);
    assert_eq!(
        got[1]["sha256"],
        sha256_hex(&big),
        "the 10 MiB body, byte for byte"
    );
}

#[test]
fn a_hundred_concurrent_streams_on_one_connection() {
    let site = TestSite::new();
    for i in 0..100 {
        site.file(&format!("f{i}.txt"), format!("file {i}").repeat(100));
    }
    let (_server, at) = start(&site, &[]);
    let paths: Vec<String> = (0..100).map(|i| format!("/f{i}.txt")).collect();
    let args: Vec<&str> = paths.iter().map(String::as_str).collect();
    let got = h3(at, &args);
    assert_eq!(got.len(), 100);
    for (i, r) in got.iter().enumerate() {
        assert_eq!(r["status"], 200, "{i}");
        assert_eq!(r["body"], format!("file {i}").repeat(100), "{i}");
    }
}

#[test]
fn garbage_datagrams_and_a_client_that_stops_reading_harm_no_one() {
    let site = TestSite::new();
    site.file("a.txt", "fine")
        .file("big.bin", vec![7u8; 4 * 1024 * 1024]);
    let (server, at) = start(&site, &[]);
    let stuck = h3(at, &["--stop-reading", "/big.bin", "/big.bin"]);
    assert_eq!(stuck[0]["stopped"], true);
    let got = h3(at, &["--garbage", "200", "/a.txt"]);
    assert_eq!(got[0]["body"], "fine");
    // Over TCP the server is as before.
    assert_eq!(server.connect().get("/a.txt", "").status, 200);
}

/// The response head curl gets for `/a.txt` over HTTPS, lowercased.
fn https_head(at: SocketAddr) -> String {
    let url = format!("https://127.0.0.1:{}/a.txt", at.port());
    let (ok, out, err) = crate::support::run("curl", &["-sk", "-D", "-", "-o", "/dev/null", &url]);
    assert!(ok, "{err}");
    out.to_ascii_lowercase()
}

#[test]
fn https_responses_announce_http3_and_no_h3_turns_it_off() {
    let site = TestSite::new();
    site.file("a.txt", "x");
    let (_server, at) = start(&site, &[]);
    let head = https_head(at);
    let alt = format!("alt-svc: h3=\":{}\"; ma=86400", at.port());
    assert!(head.contains(&alt), "{head}");
    let off = Server::start(
        &site.path(""),
        &["--https", "127.0.0.1:0", "--tls-self-signed", "--no-h3"],
    );
    let head = https_head(https_addr(&off));
    assert!(!head.contains("alt-svc"), "{head}");
}

#[test]
fn ngtcp2_an_independent_stack_gets_the_same_bytes() {
    let site = TestSite::new();
    let big: Vec<u8> = (0..3 * 1024 * 1024u32)
        .map(|i| (i * 31 + i / 7) as u8)
        .collect();
    site.file("a.txt", "0123456789").file("big.bin", &big);
    let (_server, at) = start(&site, &[]);
    let into = TestSite::new();
    let url = |p: &str| format!("https://localhost:{}/{p}", at.port());
    let (ok, _, err) = crate::support::run(
        "timeout",
        &[
            "30",
            "gtlsclient",
            "-q",
            "--exit-on-all-streams-close",
            "--download",
            into.path("").to_str().unwrap(),
            "-n",
            "2",
            "127.0.0.1",
            &at.port().to_string(),
            &url("a.txt"),
            &url("big.bin"),
        ],
    );
    assert!(ok, "gtlsclient (ngtcp2-client) failed: {err}");
    assert_eq!(std::fs::read(into.path("a.txt")).unwrap(), b"0123456789");
    assert!(
        std::fs::read(into.path("big.bin")).unwrap() == big,
        "the 3 MiB body, byte for byte"
    );
}

/// Chromium, told to speak QUIC to the server's origin and trusting its
/// key by pin, loads Debian's python3-doc over HTTP/3: the page and its
/// scripts go out as HTTP/3.0 (the access log says so) and the page runs
/// without a console error.
#[test]
fn python_docs_load_in_chromium_over_http3() {
    const DOCS: &str = "/usr/share/doc/python3/html";
    assert!(
        std::path::Path::new(DOCS).join("_static").exists(),
        "python3-doc is required: apt-get install python3-doc (scripts/test.sh does)"
    );
    let pki = crate::tls::Pki::new();
    let issued = pki.issue("localhost", &["localhost", "127.0.0.1"]);
    let site = TestSite::new();
    let log = site.path("access.log");
    let (_server, at) = crate::tls::start_https(
        std::path::Path::new(DOCS),
        &issued,
        &[
            "--cache-dir",
            "off",
            "--access-log",
            log.to_str().unwrap(),
            "--log-format",
            "json",
        ],
    );
    let origin = format!("127.0.0.1:{}", at.port());
    let out = tachyon_testkit::chromium::headless(&crate::screenshot::chromium(), &site.path("p"))
        .arg(format!("--origin-to-force-quic-on={origin}"))
        .arg(format!(
            "--ignore-certificate-errors-spki-list={}",
            issued.spki_pin()
        ))
        .args([
            "--enable-logging=stderr",
            "--v=0",
            "--virtual-time-budget=5000",
            "--dump-dom",
        ])
        .arg(format!("https://{origin}/library/functions.html"))
        .output()
        .expect("run chromium");
    let stderr = String::from_utf8_lossy(&out.stderr);
    let console: Vec<&str> = stderr
        .lines()
        .filter(|l| l.contains(":CONSOLE") || l.contains("net::ERR"))
        .collect();
    assert!(console.is_empty(), "console:\n{}", console.join("\n"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("Built-in Functions"));
    let over_h3 = |l: &&str| l.contains("/_static/") && l.contains("HTTP/3.0");
    let logged = crate::support::eventually(Duration::from_secs(5), || {
        std::fs::read_to_string(&log)
            .unwrap_or_default()
            .lines()
            .any(|l| over_h3(&l))
    });
    let text = std::fs::read_to_string(&log).unwrap_or_default();
    assert!(logged, "no script over HTTP/3 in\n{text}");
    let page: Vec<&str> = text
        .lines()
        .filter(|l| l.contains("/library/functions.html"))
        .collect();
    assert!(
        !page.is_empty()
            && page
                .iter()
                .all(|l| l.contains("HTTP/3.0") && l.contains("\"status\":200")),
        "the page itself over HTTP/3:\n{text}"
    );
}

/// The value of `tachyon_quic_connections_total{event="retried"}` once
/// `requests` HTTP/3 requests are counted.
fn retried_after(server: &Server, requests: u64) -> u64 {
    let admin = crate::observe::admin_addr(server);
    let mut text = String::new();
    let counted = format!("tachyon_http3_requests_total {requests}\n");
    crate::support::eventually(Duration::from_secs(5), || {
        text = crate::observe::admin_get(admin, "/metrics").1;
        text.contains(&counted)
    });
    assert!(text.contains(&counted), "{text}");
    let line = text
        .lines()
        .find(|l| l.starts_with("tachyon_quic_connections_total{event=\"retried\"}"))
        .expect("the retried counter");
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

/// Under a flood of handshakes (here: a limit of 0 in progress) a new
/// client is sent a Retry, proves its address and is served; with the
/// default limit one client is never retried.
#[test]
fn retry_asks_new_clients_to_prove_their_address_under_load() {
    let site = TestSite::new();
    site.file("a.txt", "proved");
    let admin = ["--admin", "127.0.0.1:0"];
    let (server, at) = start(&site, &[&admin[..], &["--quic-retry-above", "0"]].concat());
    assert_eq!(h3(at, &["/a.txt"])[0]["body"], "proved");
    assert_eq!(h3(at, &["/a.txt"])[0]["body"], "proved");
    assert_eq!(retried_after(&server, 2), 2, "each new connection retried");
    let (calm, at) = start(&site, &admin);
    assert_eq!(h3(at, &["/a.txt"])[0]["body"], "proved");
    assert_eq!(retried_after(&calm, 1), 0);
}

/// SIGTERM while a 10 MiB response is in flight over HTTP/3: the client
/// gets GOAWAY (a QUIC connection cannot move to another process, so it
/// is told to come back on a new one), the response arrives whole, and
/// the server exits once it is sent.
#[test]
fn a_drain_finishes_the_http3_response_in_flight_then_exits() {
    let site = TestSite::new();
    let body: Vec<u8> = (0..10u32 << 20).map(|i| (i % 251) as u8).collect();
    site.file("big.bin", &body);
    let (mut server, at) = start(&site, &[]);
    // The body is on its way and the client reads nothing for a second.
    let download = PausedDownload::start(at, "/big.bin", 1);
    server.signal(rustix::process::Signal::TERM);
    let got = download.finish();
    assert_eq!(got["status"], 200, "{got}");
    assert_eq!(got["len"], body.len(), "{got}");
    assert_eq!(got["sha256"], sha256_hex(&body).as_str());
    assert_eq!(got["goaway"], true, "no GOAWAY during the drain: {got}");
    let exited = crate::support::eventually(Duration::from_secs(10), || {
        matches!(server.child.try_wait(), Ok(Some(_)))
    });
    assert!(exited, "the server did not exit after the drain");
}

/// Under socket activation with a UDP socket beside the HTTPS one
/// (systemd's `ListenDatagram=`, here `clients/activate.py`, which binds
/// it without SO_REUSEPORT, so that a server binding its own beside it
/// could not start), HTTP/3 is served on the socket handed over.
#[test]
fn socket_activation_serves_http3_on_the_udp_socket_handed_over() {
    let site = TestSite::new();
    site.file("a.txt", "activated over QUIC");
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/e2e/clients/activate.py");
    let mut command = Command::new("python3");
    command
        .arg(script)
        .arg("https")
        .arg(crate::support::binary())
        .arg(site.path(""))
        .args(["--tls-self-signed", "--no-watch"]);
    let server = Server::start_command(command);
    assert!(server.url.starts_with("https://"), "{}", server.url);
    server
        .wait_for_line("HTTP/3 on UDP", Duration::from_secs(10))
        .expect("an HTTP/3 line");
    let got = h3(server.addr, &["/a.txt"]);
    assert_eq!(got[0]["status"], 200, "{got:?}");
    assert_eq!(got[0]["body"], "activated over QUIC");
}
