//! Automatic HTTPS against a real ACME server, offline: Let's Encrypt's
//! test CA, pebble, with pebble-challtestsrv as its DNS (every name is
//! 127.0.0.1), its validation ports set to the server's. Certificates are
//! checked by curl against the root pebble issues from.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::support::{eventually, free_port, run, Server, TestSite};

const NAME: &str = "site.tachyon.test";

/// pebble and its DNS, on ports of their own; killed on drop.
struct Pebble {
    dir: PathBuf,
    children: Vec<Child>,
    directory: String,
    management: u16,
    /// The CA pebble's own HTTPS (its API) is signed by.
    api_root: PathBuf,
    config: PathBuf,
    dns: u16,
}

/// Where pebble validates, and how long its certificates live.
struct PebbleSetup {
    http_port: u16,
    tls_port: u16,
    validity_s: u64,
}

impl Pebble {
    fn start(site: &TestSite, setup: PebbleSetup) -> Pebble {
        let dir = site.path("pebble");
        std::fs::create_dir_all(&dir).unwrap();
        let api_root = dir.join("api-root.pem");
        let (cert, key) = api_certificate(&api_root);
        std::fs::write(dir.join("api-cert.pem"), cert).unwrap();
        std::fs::write(dir.join("api-key.pem"), key).unwrap();
        let (api, management, dns, dns_management) =
            (free_port(), free_port(), free_port(), free_port());
        let config = dir.join("pebble.json");
        let text = serde_json::json!({ "pebble": {
            "listenAddress": format!("127.0.0.1:{api}"),
            "managementListenAddress": format!("127.0.0.1:{management}"),
            "certificate": dir.join("api-cert.pem"),
            "privateKey": dir.join("api-key.pem"),
            "httpPort": setup.http_port,
            "tlsPort": setup.tls_port,
            "ocspResponderURL": "",
            "externalAccountBindingRequired": false,
            "certificateValidityPeriod": setup.validity_s,
        }});
        std::fs::write(&config, text.to_string()).unwrap();
        let dns_server = Command::new("pebble-challtestsrv")
            .args(["-dns01", &format!("127.0.0.1:{dns}")])
            .args(["-management", &format!("127.0.0.1:{dns_management}")])
            .args(["-http01", "", "-https01", "", "-tlsalpn01", ""])
            .args(["-defaultIPv4", "127.0.0.1", "-defaultIPv6", ""])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pebble-challtestsrv (Debian package pebble) is needed");
        let mut pebble = Pebble {
            dir,
            children: vec![dns_server],
            directory: format!("https://127.0.0.1:{api}/dir"),
            management,
            api_root,
            config,
            dns,
        };
        pebble.run_ca();
        pebble
    }

    /// Starts (or starts again) the CA itself and waits for its directory.
    fn run_ca(&mut self) {
        let ca = Command::new("pebble")
            .arg("-config")
            .arg(&self.config)
            .args(["-dnsserver", &format!("127.0.0.1:{}", self.dns)])
            .env("PEBBLE_VA_NOSLEEP", "1")
            .env("PEBBLE_WFE_NONCEREJECT", "0")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("pebble (Debian package pebble) is needed");
        self.children.push(ca);
        let root = self.api_root.display().to_string();
        let up = eventually(Duration::from_secs(10), || {
            run("curl", &["-sf", "--cacert", &root, &self.directory]).0
        });
        assert!(up, "pebble did not answer at {}", self.directory);
    }

    /// Stops the CA (its DNS stays).
    fn stop_ca(&mut self) {
        if self.children.len() > 1 {
            let mut ca = self.children.pop().unwrap();
            let _ = ca.kill();
            let _ = ca.wait();
        }
    }

    /// The root pebble signs certificates under, for curl.
    fn issuing_root(&self) -> PathBuf {
        let path = self
            .dir
            .join(format!("issuing-root-{}.pem", self.children.len()));
        let url = format!("https://127.0.0.1:{}/roots/0", self.management);
        let root = self.api_root.display().to_string();
        let (ok, pem, err) = run("curl", &["-sf", "--cacert", &root, &url]);
        assert!(ok, "pebble's root: {err}");
        std::fs::write(&path, pem).unwrap();
        path
    }
}

impl Drop for Pebble {
    fn drop(&mut self) {
        for child in &mut self.children {
            let _ = child.kill();
            let _ = child.wait();
        }
    }
}

/// A CA of the test's own and a certificate for 127.0.0.1 it signed:
/// pebble's HTTPS, which tachyon trusts through `--acme-ca-root`.
fn api_certificate(root_path: &Path) -> (String, String) {
    let ca_key = rcgen::KeyPair::generate().unwrap();
    let mut ca = rcgen::CertificateParams::new(Vec::<String>::new()).unwrap();
    ca.is_ca = rcgen::IsCa::Ca(rcgen::BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(rcgen::DnType::CommonName, "tachyon test API root");
    let ca_cert = ca.self_signed(&ca_key).unwrap();
    std::fs::write(root_path, ca_cert.pem()).unwrap();
    let key = rcgen::KeyPair::generate().unwrap();
    let params =
        rcgen::CertificateParams::new(vec!["127.0.0.1".to_string(), "localhost".to_string()])
            .unwrap();
    let cert = params.signed_by(&key, &ca_cert, &ca_key).unwrap();
    (cert.pem(), key.serialize_pem())
}

/// tachyon with `--acme` for NAME against `pebble`, HTTPS on `tls_port`
/// and plain HTTP on `http_port`.
fn tachyon(
    site: &TestSite,
    pebble: &Pebble,
    acme_dir: &Path,
    (http_port, tls_port): (u16, u16),
    extra: &[&str],
) -> Server {
    let listen = format!("127.0.0.1:{http_port}");
    let https = format!("127.0.0.1:{tls_port}");
    let root = pebble.api_root.display().to_string();
    let dir = acme_dir.display().to_string();
    let mut args = vec![
        site.root.to_str().unwrap(),
        "--listen",
        &listen,
        "--https",
        &https,
        "--acme",
        "--domain",
        NAME,
        "--acme-directory",
        &pebble.directory,
        "--acme-ca-root",
        &root,
        "--acme-dir",
        &dir,
        "--no-h3",
    ];
    args.extend_from_slice(extra);
    Server::start_args(&args)
}

/// curl over HTTPS to NAME on `port`, trusting `root`: the body, or why not.
fn verified_get(root: &Path, port: u16, path: &str) -> Result<String, String> {
    let resolve = format!("{NAME}:{port}:127.0.0.1");
    let url = format!("https://{NAME}:{port}{path}");
    let root = root.display().to_string();
    let (ok, out, err) = run(
        "curl",
        &[
            "-sS",
            "--max-time",
            "5",
            "--cacert",
            &root,
            "--resolve",
            &resolve,
            &url,
        ],
    );
    if ok {
        Ok(out)
    } else {
        Err(err)
    }
}

/// The serial number of the certificate a new connection gets.
fn served_serial(port: u16) -> String {
    let connect = format!("127.0.0.1:{port}");
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "openssl s_client -connect {connect} -servername {NAME} </dev/null 2>/dev/null \
             | openssl x509 -noout -serial"
        ))
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A site, pebble, and the ports tachyon listens on: plain HTTP (where
/// pebble validates HTTP-01) and HTTPS.
struct Setup {
    // Before the site: pebble's files are in it.
    pebble: Pebble,
    site: TestSite,
    http: u16,
    tls: u16,
    /// Where pebble validates with `TlsAlpn::Elsewhere`.
    elsewhere: u16,
}

/// Where pebble validates TLS-ALPN-01.
#[derive(PartialEq)]
enum TlsAlpn {
    /// On tachyon's HTTPS port.
    Here,
    /// On another port: nothing listens there, or another replica does
    /// (`Setup::elsewhere`).
    Elsewhere,
}

fn setup(tls_alpn: TlsAlpn, validity_s: u64) -> Setup {
    let site = TestSite::new();
    site.file("index.html", "hello over automatic https\n");
    let (http, tls, elsewhere) = (free_port(), free_port(), free_port());
    let tls_port = match tls_alpn {
        TlsAlpn::Here => tls,
        TlsAlpn::Elsewhere => elsewhere,
    };
    let pebble = Pebble::start(
        &site,
        PebbleSetup {
            http_port: http,
            tls_port,
            validity_s,
        },
    );
    Setup {
        pebble,
        site,
        http,
        tls,
        elsewhere,
    }
}

impl Setup {
    /// tachyon on this setup's ports, its ACME folder `acme` in the site.
    fn tachyon(&self, extra: &[&str]) -> Server {
        let dir = self.site.path("acme");
        tachyon(&self.site, &self.pebble, &dir, (self.http, self.tls), extra)
    }
}

#[test]
fn tls_alpn_01_gets_a_certificate_curl_verifies_within_three_seconds() {
    let t = setup(TlsAlpn::Here, 3600);
    let (root, tls) = (t.pebble.issuing_root(), t.tls);
    let admin = format!("127.0.0.1:{}", free_port());
    let started = Instant::now();
    let server = t.tachyon(&["--admin", &admin]);
    let mut last = String::new();
    let served = eventually(Duration::from_secs(20), || {
        match verified_get(&root, tls, "/index.html") {
            Ok(body) => body == "hello over automatic https\n",
            Err(e) => {
                last = e;
                false
            }
        }
    });
    let took = started.elapsed();
    assert!(served, "no verified HTTPS response: {last}");
    eprintln!("tls-alpn-01: from start to a verified HTTPS response in {took:?}");
    assert!(took < Duration::from_secs(3), "took {took:?}");
    assert!(server
        .wait_for_line("issued by", Duration::from_secs(1))
        .is_some());
    // Seen in /metrics and /status.
    let (_, metrics, _) = run("curl", &["-sf", &format!("http://{admin}/metrics")]);
    let expiry = format!("tachyon_tls_certificate_expiry_timestamp_seconds{{name=\"{NAME}\"}}");
    assert!(metrics.contains(&expiry), "{metrics}");
    assert!(
        metrics.contains("tachyon_acme_orders_total{result=\"success\"} 1"),
        "{metrics}"
    );
    let (_, status, _) = run("curl", &["-sf", &format!("http://{admin}/status")]);
    let status: serde_json::Value = serde_json::from_str(&status).unwrap();
    let certificate = &status["certificates"][0];
    assert_eq!(certificate["names"][0], NAME, "{status}");
    assert!(certificate["not_after"].as_i64().unwrap() > 0, "{status}");
    assert!(
        certificate["issuer"].as_str().unwrap().contains("Pebble"),
        "{status}"
    );
    // Stored privately.
    use std::os::unix::fs::PermissionsExt;
    let file = t.site.path(&format!("acme/{NAME}/certificate.pem"));
    let mode = std::fs::metadata(&file).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o600, "{}", file.display());
}

#[test]
fn http_01_gets_a_certificate_through_the_plain_listener() {
    let t = setup(TlsAlpn::Elsewhere, 3600);
    let (root, tls) = (t.pebble.issuing_root(), t.tls);
    // The rest of plain HTTP goes to HTTPS; the challenge path does not.
    let server = t.tachyon(&["--acme-challenge", "http-01", "--redirect-https"]);
    let answered = server.wait_for_line("answering the http-01 challenge", Duration::from_secs(10));
    assert!(answered.is_some(), "no HTTP-01 challenge answered");
    let served = eventually(Duration::from_secs(20), || {
        verified_get(&root, tls, "/index.html").is_ok()
    });
    assert!(
        served,
        "no verified HTTPS response over an HTTP-01 certificate"
    );
}

#[test]
fn a_restart_orders_nothing_and_serves_the_stored_certificate_at_once() {
    let t = setup(TlsAlpn::Here, 3600);
    let (root, tls) = (t.pebble.issuing_root(), t.tls);
    let first = t.tachyon(&[]);
    assert!(first
        .wait_for_line("issued by", Duration::from_secs(20))
        .is_some());
    drop(first);
    let second = t.tachyon(&[]);
    assert_eq!(
        verified_get(&root, tls, "/index.html").as_deref(),
        Ok("hello over automatic https\n"),
        "the stored certificate is served as soon as the URL shows"
    );
    assert!(
        second
            .wait_for_line("ordering a certificate", Duration::from_secs(3))
            .is_none(),
        "a restart ordered again"
    );
}

#[test]
fn two_processes_sharing_the_folder_order_once() {
    let t = setup(TlsAlpn::Here, 3600);
    let root = t.pebble.issuing_root();
    let first = t.tachyon(&[]);
    assert!(first
        .wait_for_line("ordering a certificate", Duration::from_secs(10))
        .is_some());
    // The second starts while the first holds the lock: it waits for the
    // first's certificate and serves it, on its own ports.
    let (http2, tls2) = (free_port(), free_port());
    let dir = t.site.path("acme");
    let second = tachyon(&t.site, &t.pebble, &dir, (http2, tls2), &[]);
    let served = eventually(Duration::from_secs(20), || {
        verified_get(&root, tls2, "/index.html").is_ok()
    });
    assert!(
        served,
        "the second process never served the first's certificate"
    );
    assert!(
        second
            .wait_for_line("ordering a certificate", Duration::from_secs(1))
            .is_none(),
        "the second process ordered too"
    );
}

/// Replicas behind one load balancer: the CA's validation reaches one
/// that did not order, which answers from the shared folder.
#[test]
fn a_replica_that_did_not_order_answers_the_validation_from_the_shared_folder() {
    let t = setup(TlsAlpn::Elsewhere, 3600);
    let root = t.pebble.issuing_root();
    let orderer = t.tachyon(&[]);
    assert!(orderer
        .wait_for_line("ordering a certificate", Duration::from_secs(10))
        .is_some());
    // pebble validates on this one's HTTPS port, never on the orderer's.
    let dir = t.site.path("acme");
    let replica = tachyon(&t.site, &t.pebble, &dir, (free_port(), t.elsewhere), &[]);
    let served = eventually(Duration::from_secs(30), || {
        verified_get(&root, t.tls, "/index.html").is_ok()
            && verified_get(&root, t.elsewhere, "/index.html").is_ok()
    });
    assert!(
        served,
        "no certificate: the replica did not answer for the orderer"
    );
    assert!(
        replica
            .wait_for_line("ordering a certificate", Duration::from_secs(1))
            .is_none(),
        "the replica ordered too"
    );
    let answers = t.site.path("acme/challenges/tls-alpn-01");
    let left = std::fs::read_dir(&answers).map_or(0, |d| d.count());
    assert_eq!(left, 0, "the shared answer is taken down after the order");
}

#[test]
fn a_challenge_the_ca_cannot_validate_is_reported_with_its_error() {
    // pebble validates TLS-ALPN-01 on a port nothing listens on.
    let t = setup(TlsAlpn::Elsewhere, 3600);
    let server = t.tachyon(&[]);
    let line = server
        .wait_for_line("failed", Duration::from_secs(30))
        .expect("the failure is logged");
    assert!(line.contains("could not validate"), "{line}");
    assert!(line.contains("next attempt in"), "{line}");
    // Plain HTTP keeps serving meanwhile.
    let plain = format!("http://127.0.0.1:{}/index.html", t.http);
    let (ok, body, _) = run("curl", &["-sf", &plain]);
    assert!(ok && body.contains("automatic"), "{body}");
}

#[test]
fn a_renewal_under_load_fails_no_request_and_the_next_connection_gets_the_new_serial() {
    // 30 s certificates: renewed when ten seconds are left.
    let mut t = setup(TlsAlpn::Here, 30);
    let tls = t.tls;
    let server = t.tachyon(&[]);
    assert!(server
        .wait_for_line("issued by", Duration::from_secs(20))
        .is_some());
    // Served once the reloader's poll of certificate files has seen it.
    let mut first = String::new();
    let served = eventually(Duration::from_secs(5), || {
        first = served_serial(tls);
        !first.is_empty()
    });
    assert!(served, "no certificate served");
    // Load over HTTPS across the renewal.
    let url = format!("https://127.0.0.1:{tls}/index.html");
    let load = Command::new("wrk")
        .args(["-t1", "-c8", "-d24s", &url])
        .output()
        .expect("wrk");
    let report = String::from_utf8_lossy(&load.stdout);
    eprintln!("wrk across the renewal:\n{report}");
    assert!(!report.contains("Socket errors"), "{report}");
    assert!(!report.contains("Non-2xx"), "{report}");
    let renewed = served_serial(tls);
    assert_ne!(
        first, renewed,
        "still the first certificate after its renewal"
    );
    // The CA goes away: the certificate in hand is kept, the failure
    // logged with the next attempt, and the next one succeeds once the CA
    // is back.
    t.pebble.stop_ca();
    let failed = server.wait_for_line("failed", Duration::from_secs(30));
    assert!(failed.is_some_and(|l| l.contains("next attempt in")));
    assert_eq!(served_serial(tls), renewed, "the certificate in hand stays");
    t.pebble.run_ca();
    assert!(server
        .wait_for_line("issued by", Duration::from_secs(60))
        .is_some());
}
