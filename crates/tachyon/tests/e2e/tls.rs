//! HTTPS: certificates chosen by SNI, ALPN, resumption, hot swap, the
//! options around TLS (redirect, HSTS), and what the TLS port does with
//! clients that do not speak TLS. Certificates come from a test CA made
//! per spec; curl and openssl s_client are the clients.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{announced_url, run, run_tachyon, Server, TestSite};

/// A certificate authority of the spec's own, and the files it issues.
pub(crate) struct Pki {
    dir: TestSite,
    ca: rcgen::Certificate,
    ca_key: rcgen::KeyPair,
}

/// A certificate chain and key written as PEM files.
pub(crate) struct Issued {
    cert: PathBuf,
    key: PathBuf,
}

impl Pki {
    pub(crate) fn new() -> Pki {
        let ca_key = rcgen::KeyPair::generate().unwrap();
        let mut params = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, "tachyon test CA");
        let ca = params.self_signed(&ca_key).unwrap();
        let dir = TestSite::new();
        dir.file("ca.pem", ca.pem());
        Pki { dir, ca, ca_key }
    }

    /// A rustls client configuration trusting this CA, offering `alpn`.
    pub(crate) fn client_config(&self, alpn: &[&[u8]]) -> std::sync::Arc<rustls::ClientConfig> {
        let mut roots = rustls::RootCertStore::empty();
        roots.add(self.ca.der().clone()).unwrap();
        let provider = std::sync::Arc::new(rustls::crypto::ring::default_provider());
        let mut config = rustls::ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_root_certificates(roots)
            .with_no_client_auth();
        config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
        std::sync::Arc::new(config)
    }

    pub(crate) fn ca_file(&self) -> String {
        self.dir.path("ca.pem").to_str().unwrap().to_string()
    }

    /// A certificate for `names`, its common name `cn`, saved as `cn.pem`
    /// and `cn.key`.
    pub(crate) fn issue(&self, cn: &str, names: &[&str]) -> Issued {
        let key = rcgen::KeyPair::generate().unwrap();
        let names: Vec<String> = names.iter().map(|n| n.to_string()).collect();
        let mut params = rcgen::CertificateParams::new(names).unwrap();
        params
            .distinguished_name
            .push(rcgen::DnType::CommonName, cn);
        let cert = params.signed_by(&key, &self.ca, &self.ca_key).unwrap();
        self.dir.file(&format!("{cn}.pem"), cert.pem());
        self.dir.file(&format!("{cn}.key"), key.serialize_pem());
        Issued {
            cert: self.dir.path(&format!("{cn}.pem")),
            key: self.dir.path(&format!("{cn}.key")),
        }
    }
}

impl Issued {
    /// The base64 SHA-256 of the certificate's public key, as Chromium's
    /// `--ignore-certificate-errors-spki-list` takes it (QUIC connections
    /// ignore `--ignore-certificate-errors`).
    pub(crate) fn spki_pin(&self) -> String {
        let pipeline = format!(
            "openssl x509 -in '{}' -pubkey -noout | openssl pkey -pubin -outform der \
             | openssl dgst -sha256 -binary | base64",
            path(&self.cert)
        );
        let (ok, out, err) = run("sh", &["-c", &pipeline]);
        assert!(ok, "{err}");
        out.trim().to_string()
    }
}

fn path(p: &std::path::Path) -> &str {
    p.to_str().unwrap()
}

/// Starts tachyon on `root` with HTTPS on an ephemeral port and `args`;
/// returns the server and its HTTPS address.
pub(crate) fn start_https(
    root: &std::path::Path,
    issued: &Issued,
    args: &[&str],
) -> (Server, SocketAddr) {
    let mut all = vec![
        "--https",
        "127.0.0.1:0",
        "--tls-cert",
        path(&issued.cert),
        "--tls-key",
        path(&issued.key),
    ];
    all.extend_from_slice(args);
    let server = Server::start(root, &all);
    let https = https_addr(&server);
    (server, https)
}

/// The start most specs here share: a CA of the spec's own, a certificate
/// for `localhost`, and tachyon serving `site` on an ephemeral HTTPS port
/// with `args`. Returns the server, its HTTPS address and the CA, which
/// the caller holds while the server runs (its directory holds the
/// certificate's files).
pub(crate) fn serve_localhost(site: &TestSite, args: &[&str]) -> (Server, SocketAddr, Pki) {
    let pki = Pki::new();
    let issued = pki.issue("localhost", &["localhost"]);
    let (server, https) = start_https(&site.path(""), &issued, args);
    (server, https, pki)
}

/// The HTTPS address from the server's `serving … on https://…` line.
pub(crate) fn https_addr(server: &Server) -> SocketAddr {
    let line = server
        .wait_for_line("on https://", Duration::from_secs(10))
        .expect("an https URL line");
    announced_url(&line)
        .expect("an address in the https URL line")
        .1
}

/// `curl` against `https://NAME:PORT/PATH` resolved to the server, trusting
/// the test CA; returns (success, stdout, stderr).
pub(crate) fn curl(
    pki: &Pki,
    at: SocketAddr,
    name: &str,
    target: &str,
    extra: &[&str],
) -> (bool, String, String) {
    let resolve = format!("{name}:{}:127.0.0.1", at.port());
    let url = format!("https://{name}:{}{target}", at.port());
    let ca = pki.ca_file();
    let mut args = vec![
        "-sS",
        "--max-time",
        "10",
        "--cacert",
        &ca,
        "--resolve",
        &resolve,
    ];
    args.extend_from_slice(extra);
    args.push(&url);
    run("curl", &args)
}

/// The subject openssl s_client prints for the certificate it got, without
/// blanks (`subject=CN=localhost`; OpenSSL 3.0 writes `CN = localhost`).
fn served_subject(at: SocketAddr, name: &str) -> String {
    let (_, out, _) = s_client(at, name, &[], b"");
    out.lines()
        .find(|l| l.starts_with("subject="))
        .unwrap_or_default()
        .replace(' ', "")
}

/// `openssl s_client` to the server, stdin and stdout piped.
fn spawn_s_client(
    at: SocketAddr,
    name: &str,
    extra: &[&str],
    stderr: Stdio,
) -> std::process::Child {
    let connect = format!("127.0.0.1:{}", at.port());
    Command::new("openssl")
        .args(["s_client", "-connect", &connect, "-servername", name])
        .args(extra)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(stderr)
        .spawn()
        .expect("openssl is required for this test")
}

/// Runs `openssl s_client` with `input` on its stdin; returns (success,
/// stdout, stderr).
fn s_client(at: SocketAddr, name: &str, extra: &[&str], input: &[u8]) -> (bool, String, String) {
    let mut child = spawn_s_client(at, name, extra, Stdio::piped());
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn https_serves_the_site_over_http_1_1_with_hsts_only_on_tls() {
    let site = TestSite::new();
    site.file("a.txt", "secret sauce");
    let (server, https, pki) = serve_localhost(&site, &["--hsts"]);
    let (ok, out, err) = curl(
        &pki,
        https,
        "localhost",
        "/a.txt",
        &["--http1.1", "-D", "-", "-w", "\nversion=%{http_version}"],
    );
    assert!(ok, "{err}");
    assert!(out.starts_with("HTTP/1.1 200"), "{out}");
    assert!(out.contains("\r\nsecret sauce\nversion=1.1"), "{out}");
    assert!(
        out.to_ascii_lowercase()
            .contains("strict-transport-security: max-age=31536000\r\n"),
        "{out}"
    );
    // RFC 6797 §7.2: never over plain HTTP.
    let plain = server.connect().get("/a.txt", "");
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("strict-transport-security"), None);
}

#[test]
fn each_virtual_host_gets_its_own_certificate_by_sni() {
    let site = TestSite::new();
    site.file("www/index.html", "default home")
        .file("docs/index.html", "docs home");
    let pki = Pki::new();
    let default = pki.issue("localhost", &["localhost"]);
    let docs = pki.issue("docs.test", &["docs.test"]);
    site.file(
        "tachyon.toml",
        format!(
            "[[hosts]]\nnames = [\"docs.test\"]\nroot = {:?}\ntls_cert = {:?}\ntls_key = {:?}\n",
            path(&site.path("docs")),
            path(&docs.cert),
            path(&docs.key)
        ),
    );
    let conf = site.path("tachyon.toml");
    let (_server, https) = start_https(&site.path("www"), &default, &["--config", path(&conf)]);
    // Each name verifies against its own certificate: the default one does
    // not cover docs.test, nor the docs one localhost.
    let (ok, body, err) = curl(&pki, https, "docs.test", "/", &[]);
    assert!(ok, "{err}");
    assert_eq!(body, "docs home");
    let (ok, body, err) = curl(&pki, https, "localhost", "/", &[]);
    assert!(ok, "{err}");
    assert_eq!(body, "default home");
    // A name nobody claims gets the default certificate.
    assert!(served_subject(https, "other.test").contains("CN=localhost"));
    assert!(served_subject(https, "DOCS.test").contains("CN=docs.test"));
}

#[test]
fn plain_http_on_the_tls_port_is_told_so_in_plaintext() {
    let site = TestSite::new();
    site.file("a.txt", "a");
    let (_server, https, _pki) = serve_localhost(&site, &[]);
    let mut raw = crate::support::Raw::connect(https);
    let r = raw.get("/a.txt", "");
    assert_eq!(r.status, 400);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(raw.is_closed());
    // A client that connects, waits, then writes: the server has looked
    // at the socket before any byte arrived, and must still tell.
    let mut late = crate::support::Raw::connect(https);
    std::thread::sleep(std::time::Duration::from_millis(300));
    assert_eq!(late.get("/a.txt", "").status, 400);
}

#[test]
fn garbage_and_silence_on_the_tls_port_are_closed_and_the_worker_keeps_serving() {
    let site = TestSite::new();
    site.file("a.txt", "still here");
    let (_server, https, pki) =
        serve_localhost(&site, &["--threads", "1", "--header-timeout", "1s"]);
    // A record header that claims a handshake, then garbage.
    let mut garbage = TcpStream::connect(https).unwrap();
    garbage
        .write_all(&[0x16, 0x03, 0x01, 0x00, 0x05, 0xde, 0xad, 0xbe, 0xef, 0x00])
        .unwrap();
    garbage
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let mut sink = Vec::new();
    let _ = garbage.read_to_end(&mut sink);
    // Whatever came back (an alert) came within the timeout, then the close.
    assert!(sink.len() < 64, "{sink:?}");
    // A client that connects and says nothing: the handshake runs under
    // the header timeout.
    let started = Instant::now();
    let mut silent = TcpStream::connect(https).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let n = silent.read(&mut [0u8; 16]).unwrap_or(0);
    assert_eq!(n, 0, "closed without a byte");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "{:?}",
        started.elapsed()
    );
    let (ok, body, err) = curl(&pki, https, "localhost", "/a.txt", &[]);
    assert!(ok, "{err}");
    assert_eq!(body, "still here");
}

/// A relay between curl and the server that hands the server the client's
/// bytes one at a time (so every TLS record, the ClientHello included,
/// arrives in pieces across reads) and stops reading the response for a
/// while (so the server's socket refuses sealed records and the session
/// must keep them, in order, until the next drain). Returns the relay's
/// address.
fn trickling_relay(server: SocketAddr) -> SocketAddr {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let at = listener.local_addr().unwrap();
    std::thread::spawn(move || {
        let (client, _) = listener.accept().unwrap();
        let upstream = TcpStream::connect(server).unwrap();
        upstream.set_nodelay(true).unwrap();
        let (mut from_client, mut to_server) =
            (client.try_clone().unwrap(), upstream.try_clone().unwrap());
        std::thread::spawn(move || {
            let mut byte = [0u8; 1];
            while let Ok(1) = from_client.read(&mut byte) {
                if to_server.write_all(&byte).is_err() {
                    break;
                }
                std::thread::sleep(Duration::from_micros(300));
            }
            let _ = to_server.shutdown(std::net::Shutdown::Write);
        });
        let (mut from_server, mut to_client) = (upstream, client);
        let mut buf = vec![0u8; 16 * 1024];
        let mut relayed = 0usize;
        let mut paused = false;
        while let Ok(n) = from_server.read(&mut buf) {
            if n == 0 || to_client.write_all(&buf[..n]).is_err() {
                break;
            }
            relayed += n;
            if !paused && relayed > 256 * 1024 {
                paused = true;
                std::thread::sleep(Duration::from_millis(700));
            }
        }
        let _ = to_client.shutdown(std::net::Shutdown::Write);
    });
    at
}

#[test]
fn records_in_pieces_and_a_reader_that_pauses_get_every_byte_in_order() {
    let site = TestSite::new();
    // Bytes that differ at every offset, so a record out of order or
    // repeated shows.
    let body: Vec<u8> = (0..3_000_000u32).map(|i| (i * 7 + i / 251) as u8).collect();
    site.file("big.bin", &body);
    site.file("small.txt", "small");
    let (_server, https, pki) = serve_localhost(&site, &["--threads", "1"]);
    let out = site.path("got.bin");
    let relay = trickling_relay(https);
    let (ok, _, err) = curl(
        &pki,
        relay,
        "localhost",
        "/big.bin",
        &["--http1.1", "-o", path(&out)],
    );
    assert!(ok, "{err}");
    let got = std::fs::read(&out).unwrap();
    assert_eq!(got.len(), body.len());
    assert!(got == body, "the body differs from the file");
    // The worker is left clean for the next client.
    let (ok, text, err) = curl(&pki, https, "localhost", "/small.txt", &[]);
    assert!(ok, "{err}");
    assert_eq!(text, "small");
}

/// An `openssl s_client` kept open, fed a line at a time: its stdin is
/// read in chunks and a chunk that starts with `K` or `k` is a command
/// (a key update) and nothing else, so each write waits for the output of
/// the one before.
struct Interactive {
    child: std::process::Child,
    stdin: std::process::ChildStdin,
    out: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Interactive {
    fn start(at: SocketAddr, name: &str, extra: &[&str]) -> Interactive {
        let mut child = spawn_s_client(at, name, extra, Stdio::null());
        let stdin = child.stdin.take().unwrap();
        let mut stdout = child.stdout.take().unwrap();
        let out = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let sink = std::sync::Arc::clone(&out);
        std::thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n @ 1..) = stdout.read(&mut chunk) {
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&chunk[..n]));
            }
        });
        Interactive { child, stdin, out }
    }

    /// Writes `input`, then waits until `expect` appears `times` times in
    /// all the output so far.
    fn send(&mut self, input: &str, expect: &str, times: usize) {
        self.stdin.write_all(input.as_bytes()).unwrap();
        self.stdin.flush().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while self.out.lock().unwrap().matches(expect).count() < times {
            assert!(
                Instant::now() < deadline,
                "no {expect:?} (x{times}) after {input:?}; output:\n{}",
                self.out.lock().unwrap()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Interactive {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// TLS 1.3 records are protected by tachyon's own record layer once
/// rustls has run the handshake; a key update (RFC 8446 §4.6.3) is where
/// it must derive keys itself. `K` asks for an update in return (which
/// `-msg` shows arriving, and every later response opens only under the
/// next keys); `k` does not.
#[test]
fn key_updates_either_way_keep_a_tls_1_3_connection_serving() {
    let site = TestSite::new();
    site.file("a.txt", "secret sauce");
    let (_server, https, _pki) = serve_localhost(&site, &[]);
    let request = "GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let mut client = Interactive::start(
        https,
        "localhost",
        &["-tls1_3", "-alpn", "http/1.1", "-msg"],
    );
    client.send(request, "secret sauce", 1);
    client.send("K\n", "<<< TLS 1.3, Handshake [length 0005], KeyUpdate", 1);
    client.send(request, "secret sauce", 2);
    client.send("k\n", ">>> TLS 1.3, Handshake [length 0005], KeyUpdate", 2);
    client.send(request, "secret sauce", 3);
    client.send("K\n", "<<< TLS 1.3, Handshake [length 0005], KeyUpdate", 2);
    client.send(request, "secret sauce", 4);
    let out = client.out.lock().unwrap().clone();
    assert_eq!(out.matches("HTTP/1.1 200 OK").count(), 4, "{out}");
    assert!(!out.contains("alert"), "{out}");
}

/// A TLS 1.3 session idle for two sweeps drops its expanded keys (one to
/// two seconds without a record); the next records, either way and after
/// a key update, are protected with keys expanded again from its secrets.
#[test]
fn a_tls_1_3_connection_idle_across_sweeps_keeps_serving() {
    let site = TestSite::new();
    site.file("a.txt", "secret sauce");
    let (_server, https, _pki) = serve_localhost(&site, &[]);
    let request = "GET /a.txt HTTP/1.1\r\nHost: localhost\r\n\r\n";
    let mut client = Interactive::start(https, "localhost", &["-tls1_3", "-msg"]);
    client.send(request, "secret sauce", 1);
    std::thread::sleep(Duration::from_millis(2500));
    client.send(request, "secret sauce", 2);
    std::thread::sleep(Duration::from_millis(2500));
    client.send("K\n", "<<< TLS 1.3, Handshake [length 0005], KeyUpdate", 1);
    client.send(request, "secret sauce", 3);
    let out = client.out.lock().unwrap().clone();
    assert_eq!(out.matches("HTTP/1.1 200 OK").count(), 3, "{out}");
    assert!(!out.contains("alert"), "{out}");
}

/// TLS 1.2 sessions stay with rustls from handshake to close.
#[test]
fn tls_1_2_and_each_tls_1_3_cipher_suite_serve_a_large_body_intact() {
    let site = TestSite::new();
    let body: Vec<u8> = (0..1_000_000u32)
        .map(|i| (i * 13 + i / 509) as u8)
        .collect();
    site.file("big.bin", &body);
    let (_server, https, pki) = serve_localhost(&site, &[]);
    let out = site.path("got.bin");
    for how in [
        ["--tls13-ciphers", "TLS_AES_128_GCM_SHA256"],
        ["--tls13-ciphers", "TLS_AES_256_GCM_SHA384"],
        ["--tls13-ciphers", "TLS_CHACHA20_POLY1305_SHA256"],
        ["--tls-max", "1.2"],
    ] {
        for version in ["--http1.1", "--http2"] {
            let (ok, _, err) = curl(
                &pki,
                https,
                "localhost",
                "/big.bin",
                &[how[0], how[1], version, "-o", path(&out)],
            );
            assert!(ok, "{how:?} {version}: {err}");
            assert!(
                std::fs::read(&out).unwrap() == body,
                "{how:?} {version}: the body differs"
            );
        }
    }
}

#[test]
fn redirect_https_sends_plain_requests_to_the_same_url_on_https() {
    let site = TestSite::new();
    site.file("a.txt", "a");
    let (server, https, pki) = serve_localhost(&site, &["--redirect-https"]);
    let mut c = server.connect();
    let r = c.get_from("example.test:8080", "/a.txt?x=1", "");
    assert_eq!(r.status, 308);
    assert_eq!(
        r.header("location"),
        Some(format!("https://example.test:{}/a.txt?x=1", https.port()).as_str())
    );
    // The Host is echoed into Location only when it is a host name.
    let r = c.get_from("evil.test/@x", "/", "");
    assert_eq!(r.status, 400);
    // HTTPS itself serves the file.
    let (ok, body, err) = curl(&pki, https, "localhost", "/a.txt", &[]);
    assert!(ok, "{err}");
    assert_eq!(body, "a");
}

/// ALPN (RFC 7301): http/1.1 is chosen when offered, http/1.0 when only
/// it is (`curl --http1.0`); a client that offers only protocols tachyon
/// does not speak is refused with the no_application_protocol alert
/// (§3.2) rather than answered in HTTP/1.1. HTTP/2 is preferred when
/// offered, and with `--no-h2` it is one of those protocols.
#[test]
fn alpn_prefers_h2_and_refuses_what_tachyon_does_not_speak() {
    let site = TestSite::new();
    site.file("a.txt", "a");
    let pki = Pki::new();
    let issued = pki.issue("localhost", &["localhost"]);
    let (_server, https) = start_https(&site.path(""), &issued, &[]);
    let (_, out, err) = s_client(https, "localhost", &["-alpn", "http/1.1,h2"], b"");
    assert!(out.contains("ALPN protocol: h2"), "{out}{err}");
    let (_, out, err) = s_client(https, "localhost", &["-alpn", "http/1.0"], b"");
    assert!(out.contains("ALPN protocol: http/1.0"), "{out}{err}");
    let (ok, body, err) = curl(&pki, https, "localhost", "/a.txt", &["--http1.0"]);
    assert!(ok, "curl --http1.0: {err}");
    assert_eq!(body, "a");
    let (_, out, err) = s_client(https, "localhost", &["-alpn", "spdy/3"], b"");
    assert!(!out.contains("ALPN protocol:"), "{out}");
    assert!(err.contains("no application protocol"), "{out}{err}");
    let (_server, https) = start_https(&site.path(""), &issued, &["--no-h2"]);
    let (_, out, err) = s_client(https, "localhost", &["-alpn", "h2,http/1.1"], b"");
    assert!(out.contains("ALPN protocol: http/1.1"), "{out}{err}");
    let (_, out, err) = s_client(https, "localhost", &["-alpn", "h2"], b"");
    assert!(!out.contains("ALPN protocol:"), "{out}");
    assert!(err.contains("no application protocol"), "{out}{err}");
    // Without ALPN at all the connection is HTTP/1.1 as before.
    let (_, out, err) = s_client(https, "localhost", &[], b"");
    assert!(out.contains("No ALPN negotiated"), "{out}{err}");
}

#[test]
fn a_session_resumes_from_its_ticket() {
    let site = TestSite::new();
    site.file("a.txt", "a");
    let (_server, https, _pki) = serve_localhost(&site, &[]);
    let session = site.path("session.pem");
    let request = b"GET /a.txt HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n";
    for version in ["-tls1_3", "-tls1_2"] {
        let (_, first, err) = s_client(
            https,
            "localhost",
            &[version, "-ign_eof", "-sess_out", path(&session)],
            request,
        );
        assert!(first.contains("New, TLSv1"), "{first}{err}");
        let (_, second, err) = s_client(
            https,
            "localhost",
            &[version, "-ign_eof", "-sess_in", path(&session)],
            request,
        );
        assert!(second.contains("Reused, TLSv1"), "{version}: {second}{err}");
    }
}

#[test]
fn a_renewed_certificate_is_served_without_a_restart_and_a_broken_one_is_refused() {
    let site = TestSite::new();
    site.file("a.txt", "a");
    let pki = Pki::new();
    let issued = pki.issue("localhost", &["localhost"]);
    let (server, https) = start_https(&site.path(""), &issued, &[]);
    assert!(served_subject(https, "localhost").contains("CN=localhost"));
    // Requests keep succeeding while the certificate changes under them.
    let ca = pki.ca_file();
    let load = std::thread::spawn(move || {
        let url = format!("https://localhost:{}/a.txt", https.port());
        let resolve = format!("localhost:{}:127.0.0.1", https.port());
        (0..30)
            .filter(|_| {
                let (ok, body, _) = run(
                    "curl",
                    &[
                        "-sS",
                        "--max-time",
                        "5",
                        "--cacert",
                        &ca,
                        "--resolve",
                        &resolve,
                        &url,
                    ],
                );
                !(ok && body == "a")
            })
            .count()
    });
    // A renewal as certbot does it: new files in place of the old.
    let renewed = pki.issue("renewed", &["localhost"]);
    std::fs::copy(&renewed.key, site.path("next.key")).unwrap();
    std::fs::copy(&renewed.cert, site.path("next.pem")).unwrap();
    std::fs::rename(site.path("next.key"), &issued.key).unwrap();
    std::fs::rename(site.path("next.pem"), &issued.cert).unwrap();
    // The poll of certificate files reloads, or the watcher already did:
    // these files are inside the root.
    assert!(
        server
            .wait_for_line("reloaded (", Duration::from_secs(10))
            .is_some(),
        "no reload"
    );
    assert!(
        crate::support::eventually(Duration::from_secs(5), || {
            served_subject(https, "localhost").contains("CN=renewed")
        }),
        "the renewed certificate is not served"
    );
    assert_eq!(load.join().unwrap(), 0, "failed requests during the swap");
    // A key that does not belong to the certificate: the old pair stays.
    let stranger = pki.issue("stranger", &["localhost"]);
    std::fs::copy(&stranger.key, &issued.key).unwrap();
    let warning = server
        .wait_for_line("keeping the previous certificates", Duration::from_secs(10))
        .expect("a warning");
    assert!(warning.contains("do not belong together"), "{warning}");
    assert!(served_subject(https, "localhost").contains("CN=renewed"));
}

#[test]
fn a_missing_or_mismatched_certificate_at_start_is_an_error_naming_the_file() {
    let site = TestSite::new();
    site.file("a.txt", "a");
    let pki = Pki::new();
    let one = pki.issue("one", &["localhost"]);
    let two = pki.issue("two", &["localhost"]);
    let root = path(&site.path("")).to_string();
    let missing = site.path("nope.pem");
    let exit = run_tachyon([
        &root,
        "--listen",
        "127.0.0.1:0",
        "--https",
        "127.0.0.1:0",
        "--tls-cert",
        path(&missing),
        "--tls-key",
        path(&one.key),
    ]);
    assert_ne!(exit.code, Some(0));
    assert!(exit.stderr.contains(path(&missing)), "{}", exit.stderr);
    let exit = run_tachyon([
        &root,
        "--listen",
        "127.0.0.1:0",
        "--https",
        "127.0.0.1:0",
        "--tls-cert",
        path(&one.cert),
        "--tls-key",
        path(&two.key),
    ]);
    assert_ne!(exit.code, Some(0));
    assert!(
        exit.stderr.contains("do not belong together"),
        "{}",
        exit.stderr
    );
    let exit = run_tachyon([&root, "--redirect-https"]);
    assert_eq!(exit.code, Some(2));
    assert!(
        exit.stderr.contains("tls.redirect_https"),
        "{}",
        exit.stderr
    );
}

#[test]
fn self_signed_serves_localhost_and_prints_its_fingerprint() {
    let site = TestSite::new();
    site.file("a.txt", "dev");
    let server = Server::start(
        &site.path(""),
        &["--https", "127.0.0.1:0", "--tls-self-signed"],
    );
    let line = server
        .startup
        .iter()
        .find(|l| l.contains("self-signed"))
        .expect("a fingerprint line")
        .clone();
    let fingerprint = line.rsplit(' ').next().unwrap().to_string();
    assert_eq!(fingerprint.len(), 32 * 3 - 1, "{line}");
    let https = https_addr(&server);
    let (_, out, _) = s_client(https, "localhost", &["-showcerts"], b"");
    let pem_start = out.find("-----BEGIN CERTIFICATE-----").unwrap();
    let pem_end = out.find("-----END CERTIFICATE-----").unwrap() + 25;
    site.file("served.pem", &out[pem_start..pem_end]);
    let (ok, digest, _) = run(
        "openssl",
        &[
            "x509",
            "-noout",
            "-fingerprint",
            "-sha256",
            "-in",
            path(&site.path("served.pem")),
        ],
    );
    assert!(ok);
    assert!(
        digest.trim().ends_with(&fingerprint),
        "{digest} vs {fingerprint}"
    );
}

/// testssl.sh, the tool operators run before going live: no vulnerability,
/// no weak protocol, no weak cipher.
#[test]
fn testssl_finds_nothing_weak() {
    let site = TestSite::new();
    site.file("index.html", "<!doctype html><title>t</title>");
    let (_server, https, _pki) = serve_localhost(&site, &[]);
    let report = site.path("testssl.json");
    let target = format!("127.0.0.1:{}", https.port());
    let (_, out, err) = run(
        "testssl",
        &[
            "--quiet",
            "--color",
            "0",
            "--warnings",
            "off",
            "--protocols",
            "--std",
            "--vulnerable",
            "--jsonfile",
            path(&report),
            &target,
        ],
    );
    let json = std::fs::read_to_string(&report).unwrap_or_else(|_| panic!("{out}{err}"));
    let findings: Vec<serde_json::Value> = serde_json::from_str(&json).unwrap();
    let bad: Vec<String> = findings
        .iter()
        .filter(|f| {
            matches!(
                f["severity"].as_str(),
                Some("LOW" | "MEDIUM" | "HIGH" | "CRITICAL")
            )
        })
        .map(|f| format!("{} {}: {}", f["severity"], f["id"], f["finding"]))
        .collect();
    assert!(bad.is_empty(), "testssl flagged:\n{}", bad.join("\n"));
    assert!(
        findings
            .iter()
            .any(|f| f["id"] == "TLS1_3" && f["finding"] == "offered with final"),
        "TLS 1.3 offered"
    );
}

/// SSLKEYLOGFILE works as with any rustls program (the key log is no
/// longer taken for handing over TLS 1.3 secrets): a TLS 1.3 connection's
/// traffic secrets are written there, under the sandbox too.
#[test]
fn sslkeylogfile_receives_the_traffic_secrets() {
    let site = TestSite::new();
    site.file("www/a.txt", "a");
    let keylog = site.path("keys/sslkeys.log");
    std::fs::create_dir_all(keylog.parent().unwrap()).unwrap();
    let pki = Pki::new();
    let issued = pki.issue("localhost", &["localhost"]);
    let server = Server::start_env(
        &site.path("www"),
        &[
            "--https",
            "127.0.0.1:0",
            "--tls-cert",
            path(&issued.cert),
            "--tls-key",
            path(&issued.key),
        ],
        &[("SSLKEYLOGFILE", keylog.to_str().unwrap())],
    );
    let https = https_addr(&server);
    let (ok, out, err) = curl(&pki, https, "localhost", "/a.txt", &["--tlsv1.3"]);
    assert!(ok && out == "a", "{err}");
    let written = crate::support::eventually(Duration::from_secs(5), || {
        std::fs::read_to_string(&keylog).is_ok_and(|t| t.contains("CLIENT_TRAFFIC_SECRET_0"))
    });
    assert!(written, "{:?}", std::fs::read_to_string(&keylog));
}
