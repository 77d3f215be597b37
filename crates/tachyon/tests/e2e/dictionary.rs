//! Compression dictionaries (RFC 9842): a changed script is sent as the
//! difference from the version the client holds, decoded by the real
//! tools (the `zstd` program, brotli's own decoder, Chromium), over
//! HTTP/1.1, HTTP/2 and HTTP/3, and the kept versions survive a restart.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use crate::observe::{admin_addr, admin_get, metric};
use crate::support::{Raw, Response, Server, TestSite};

/// A real library as a site ships it: Debian's jQuery (libjs-jquery).
const JQUERY: &str = "/usr/share/javascript/jquery/jquery.min.js";

fn release_1() -> Vec<u8> {
    std::fs::read(JQUERY).expect("jQuery: apt-get install -y libjs-jquery")
}

/// The next release: a change inside and a line at the end, as a patch
/// release would make (the page reads `window.__release`).
fn release_2() -> Vec<u8> {
    let text = String::from_utf8(release_1()).unwrap();
    let patched = text.replacen("\"use strict\";", "\"use strict\";/* patched */", 1);
    assert_ne!(patched, text, "jQuery has a \"use strict\" to patch");
    (patched + "\nwindow.__release = 2;\n").into_bytes()
}

fn sha256(data: &[u8]) -> Vec<u8> {
    ring::digest::digest(&ring::digest::SHA256, data)
        .as_ref()
        .to_vec()
}

/// The `Available-Dictionary` value naming `data`: `:base64(sha256):`.
fn available(data: &[u8]) -> String {
    use base64::Engine as _;
    format!(
        ":{}:",
        base64::engine::general_purpose::STANDARD.encode(sha256(data))
    )
}

/// Replaces a file the way deploys do (a new file renamed into place),
/// then waits for the reload that serves it.
fn deploy(server: &Server, site: &TestSite, path: &str, body: &[u8]) {
    let temp = site.path(&format!("{path}.new"));
    std::fs::write(&temp, body).unwrap();
    std::fs::rename(&temp, site.path(path)).unwrap();
    server
        .wait_for_line("reloaded", Duration::from_secs(20))
        .expect("the change is reloaded");
}

fn get(c: &mut Raw, path: &str, accept: &str, dictionary: Option<&[u8]>) -> Response {
    let mut extra = format!("Accept-Encoding: {accept}\r\n");
    if let Some(d) = dictionary {
        extra.push_str(&format!("Available-Dictionary: {}\r\n", available(d)));
    }
    c.get(path, &extra)
}

/// `zstd -d -D DICT` on a `dcz` body without its 40-byte header.
fn unzstd(dcz: &[u8], dictionary: &[u8], dir: &Path) -> Vec<u8> {
    let dict = dir.join("dictionary");
    let frame = dir.join("frame.zst");
    std::fs::write(&dict, dictionary).unwrap();
    std::fs::write(&frame, &dcz[40..]).unwrap();
    let out = Command::new("zstd")
        .args(["-d", "-q", "-c", "--long=27", "-D"])
        .arg(&dict)
        .arg(&frame)
        .output()
        .expect("zstd: apt-get install -y zstd");
    assert!(
        out.status.success(),
        "zstd: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// Brotli's own decoder with the dictionary as its raw prefix, on a `dcb`
/// body without its 36-byte header.
fn unbrotli(dcb: &[u8], dictionary: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    brotli_decompressor::BrotliDecompressCustomDict(
        &mut &dcb[36..],
        &mut out,
        &mut [0u8; 4096],
        &mut [0u8; 4096],
        dictionary.to_vec(),
    )
    .expect("a dcb body decodes with its dictionary");
    out
}

#[test]
fn a_changed_script_is_sent_as_a_delta_both_codings_decode_and_metrics_count_it() {
    let site = TestSite::new();
    site.file("www/assets/app.js", release_1());
    let log = site.path("access.log");
    let server = Server::start(
        &site.path("www"),
        &[
            "--admin",
            "127.0.0.1:0",
            "--access-log",
            log.to_str().unwrap(),
            "--log-format",
            "json",
        ],
    );
    let admin = admin_addr(&server);
    let mut c = server.connect();
    let first = get(&mut c, "/assets/app.js", "gzip, deflate, br, zstd", None);
    assert_eq!(first.header("content-encoding"), Some("br"));
    assert_eq!(
        first.header("use-as-dictionary"),
        Some("match=\"/assets/app.js\"")
    );
    assert_eq!(first.header("vary"), Some("Accept-Encoding"));

    deploy(&server, &site, "www/assets/app.js", &release_2());
    let mut c = server.connect();
    let br = get(&mut c, "/assets/app.js", "br", Some(&release_1()));
    assert_eq!(
        br.header("content-encoding"),
        Some("br"),
        "dcz not accepted"
    );
    let every = "gzip, deflate, br, zstd, dcz";
    let dcz = get(&mut c, "/assets/app.js", every, Some(&release_1()));
    assert_eq!(dcz.status, 200);
    assert_eq!(dcz.header("content-encoding"), Some("dcz"));
    assert_eq!(
        dcz.header("vary"),
        Some("Accept-Encoding, Available-Dictionary")
    );
    assert_eq!(
        dcz.header("use-as-dictionary"),
        Some("match=\"/assets/app.js\""),
        "the new version is the next dictionary"
    );
    assert_ne!(dcz.header("etag"), br.header("etag"));
    assert_eq!(&dcz.body[..8], &[0x5e, 0x2a, 0x4d, 0x18, 0x20, 0, 0, 0]);
    assert_eq!(&dcz.body[8..40], &sha256(&release_1())[..]);
    assert_eq!(unzstd(&dcz.body, &release_1(), &site.path("")), release_2());
    assert!(
        dcz.body.len() * 5 <= br.body.len(),
        "dcz {} bytes, br {}",
        dcz.body.len(),
        br.body.len()
    );

    let dcb = get(&mut c, "/assets/app.js", "br, dcb, dcz", Some(&release_1()));
    assert_eq!(dcb.header("content-encoding"), Some("dcb"));
    assert_eq!(&dcb.body[..4], &[0xff, 0x44, 0x43, 0x42]);
    assert_eq!(&dcb.body[4..36], &sha256(&release_1())[..]);
    assert_eq!(unbrotli(&dcb.body, &release_1()), release_2());
    assert_ne!(dcb.header("etag"), dcz.header("etag"));

    let (_, text) = admin_get(admin, "/metrics");
    let by = |coding: &str| {
        metric(
            &text,
            &format!("tachyon_http_responses_by_encoding_total{{encoding=\"{coding}\"}}"),
        )
    };
    assert_eq!((by("dcz"), by("dcb")), (1.0, 1.0));
    let saved = metric(&text, "tachyon_dictionary_saved_bytes_total") as usize;
    assert_eq!(
        saved,
        br.body.len() * 2 - dcz.body.len() - dcb.body.len(),
        "each delta saved its size's difference from brotli"
    );
    assert_eq!(metric(&text, "tachyon_snapshot_dictionaries"), 1.0);
    assert_eq!(metric(&text, "tachyon_dictionary_versions"), 1.0);
    assert_eq!(
        metric(&text, "tachyon_dictionary_versions_bytes") as usize,
        release_1().len()
    );
    assert_eq!(
        metric(&text, "tachyon_dictionary_current_versions_bytes") as usize,
        release_2().len()
    );
    let logged = log_once(&log, |text| {
        text.contains("\"Content-Encoding\":[\"dcz\"]")
            && text.contains("\"Content-Encoding\":[\"dcb\"]")
    });
    assert!(logged.is_ok(), "{logged:?}");
}

#[test]
fn an_unknown_or_malformed_dictionary_gets_the_ordinary_variant() {
    let site = TestSite::new();
    site.file("assets/app.js", release_1())
        .file("index.html", "<!doctype html><title>x</title>".repeat(100))
        .file("logo.png", [0x89u8, b'P', b'N', b'G'].repeat(1000));
    let server = Server::start(&site.path(""), &[]);
    deploy(&server, &site, "assets/app.js", &release_2());
    let mut c = server.connect();
    let accept = "br, dcb, dcz";
    let unknown = get(&mut c, "/assets/app.js", accept, Some(b"another file"));
    assert_eq!(unknown.header("content-encoding"), Some("br"));
    assert_eq!(
        unknown.header("vary"),
        Some("Accept-Encoding, Available-Dictionary")
    );
    for malformed in [
        "abc",
        ":not base64:",
        ":AAAA:",
        "\"a string\"",
        &available(&release_1())[1..],
    ] {
        let r = c.get(
            "/assets/app.js",
            &format!("Accept-Encoding: {accept}\r\nAvailable-Dictionary: {malformed}\r\n"),
        );
        assert_eq!(r.status, 200, "{malformed}");
        assert_eq!(r.header("content-encoding"), Some("br"), "{malformed}");
    }
    let ranged = c.get(
        "/assets/app.js",
        &format!(
            "Accept-Encoding: {accept}\r\nAvailable-Dictionary: {}\r\nRange: bytes=0-9\r\n",
            available(&release_1())
        ),
    );
    assert_eq!(ranged.status, 206, "a range of the delta, as of any coding");
    assert_eq!(ranged.header("content-encoding"), Some("dcb"));
    let page = get(&mut c, "/index.html", accept, None);
    let image = get(&mut c, "/logo.png", accept, None);
    assert_eq!(
        page.header("use-as-dictionary"),
        None,
        "HTML changes every deploy"
    );
    assert_eq!(image.header("use-as-dictionary"), None);

    let off = Server::start(&site.path(""), &["--no-dictionaries"]);
    let mut c = off.connect();
    let r = get(&mut c, "/assets/app.js", accept, Some(&release_1()));
    assert_eq!(r.header("content-encoding"), Some("br"));
    assert_eq!(r.header("use-as-dictionary"), None);
}

#[test]
fn fingerprinted_bundles_share_a_pattern_and_kept_versions_survive_a_restart() {
    let site = TestSite::new();
    site.file("www/assets/app.3f9a1c2b.js", release_1());
    let cache = site.path("cache");
    let cache_arg = ["--cache-dir", cache.to_str().unwrap()];
    let server = Server::start(&site.path("www"), &cache_arg);
    let mut c = server.connect();
    let r = get(&mut c, "/assets/app.3f9a1c2b.js", "br", None);
    assert_eq!(
        r.header("use-as-dictionary"),
        Some("match=\"/assets/app.*.js\"")
    );
    assert_eq!(
        r.header("cache-control"),
        Some("max-age=31536000, immutable")
    );
    // The deploy: the next bundle under its new name, the old one gone.
    std::fs::write(site.path("www/assets/app.9e8d7c6b.js"), release_2()).unwrap();
    std::fs::remove_file(site.path("www/assets/app.3f9a1c2b.js")).unwrap();
    server
        .wait_for_line("reloaded", Duration::from_secs(20))
        .expect("the deploy is reloaded");
    let mut c = server.connect();
    let before = get(&mut c, "/assets/app.9e8d7c6b.js", "dcz", Some(&release_1()));
    assert_eq!(before.header("content-encoding"), Some("dcz"));
    drop(server);

    // Only the new bundle on disk now: the old version comes from the
    // cache folder, and so does the delta.
    let again = Server::start(&site.path("www"), &cache_arg);
    assert!(
        again
            .startup
            .iter()
            .any(|l| l.contains("1 earlier versions kept")),
        "{:#?}",
        again.startup
    );
    let mut c = again.connect();
    let after = get(&mut c, "/assets/app.9e8d7c6b.js", "dcz", Some(&release_1()));
    assert_eq!(after.header("content-encoding"), Some("dcz"));
    assert_eq!(after.body, before.body);
}

#[test]
fn deltas_over_http2_and_http3() {
    let site = TestSite::new();
    site.file("assets/app.js", release_1());
    let server = Server::start(
        &site.path(""),
        &["--https", "127.0.0.1:0", "--tls-self-signed"],
    );
    let https = crate::tls::https_addr(&server);
    server
        .wait_for_line("HTTP/3 on UDP", Duration::from_secs(10))
        .expect("an HTTP/3 line");
    deploy(&server, &site, "assets/app.js", &release_2());
    let mut c = server.connect();
    let h1 = get(&mut c, "/assets/app.js", "dcz", Some(&release_1()));
    assert_eq!(h1.header("content-encoding"), Some("dcz"));

    let dictionary = format!("available-dictionary: {}", available(&release_1()));
    let body = site.path("h2.body");
    let (ok, headers, err) = crate::support::run(
        "curl",
        &[
            "-sk",
            "--http2",
            "-D-",
            "-o",
            body.to_str().unwrap(),
            "-H",
            "accept-encoding: dcz",
            "-H",
            &dictionary,
            &format!("https://{https}/assets/app.js"),
        ],
    );
    assert!(ok, "{err}");
    assert!(headers.starts_with("HTTP/2 200"), "{headers}");
    assert!(headers.contains("content-encoding: dcz"), "{headers}");
    assert_eq!(std::fs::read(&body).unwrap(), h1.body);

    let got = crate::h3::h3(
        https,
        &[
            "-H",
            "accept-encoding: dcz",
            "-H",
            &dictionary,
            "/assets/app.js",
        ],
    );
    assert_eq!(got[0]["status"], 200);
    assert_eq!(got[0]["headers"]["content-encoding"], "dcz");
    assert_eq!(got[0]["sha256"], crate::h3::sha256_hex(&h1.body));
}

/// Headless Chromium with one profile across two visits: the first loads
/// jQuery and keeps it as a dictionary, the deploy renames the bundle, the
/// second visit fetches the new bundle as a delta and runs it. Sizes from
/// Chromium's own resource timing.
#[test]
fn chromium_fetches_the_next_release_of_jquery_as_a_delta() {
    let site = TestSite::new();
    let page = |name: &str| {
        format!(
            "<!doctype html><title>t</title><script src=\"/assets/{name}\"></script>\
             <body><script>addEventListener('load', () => {{\
             const e = performance.getEntriesByName(location.origin + '/assets/{name}')[0];\
             document.body.textContent = 'transfer=' + e.transferSize + ' decoded=' + \
             e.decodedBodySize + ' release=' + (window.__release || 1) + ' jquery=' + \
             (window.jQuery ? 'yes' : 'no');}});</script>"
        )
    };
    site.file("www/assets/jquery.3f9a1c2b.min.js", release_1())
        .file("www/index.html", page("jquery.3f9a1c2b.min.js"));
    let log = site.path("access.log");
    let server = Server::start(
        &site.path("www"),
        &[
            "--access-log",
            log.to_str().unwrap(),
            "--log-format",
            "json",
        ],
    );
    let profile = site.path("profile");
    let url = format!("http://localhost:{}/", server.addr.port());
    let first = visit(&profile, &url);
    assert!(first.contains("release=1 jquery=yes"), "{first}");

    std::fs::write(site.path("www/assets/jquery.9e8d7c6b.min.js"), release_2()).unwrap();
    std::fs::remove_file(site.path("www/assets/jquery.3f9a1c2b.min.js")).unwrap();
    deploy(
        &server,
        &site,
        "www/index.html",
        page("jquery.9e8d7c6b.min.js").as_bytes(),
    );
    let second = visit(&profile, &url);
    assert!(second.contains("release=2 jquery=yes"), "{second}");

    let transfer = |dom: &str| -> u64 {
        let at = dom.find("transfer=").unwrap() + "transfer=".len();
        dom[at..].split(' ').next().unwrap().parse().unwrap()
    };
    let (full, delta) = (transfer(&first), transfer(&second));
    eprintln!("jQuery over the wire: first visit {full} bytes, the next release {delta} bytes");
    assert!(delta * 5 <= full, "first {full} bytes, update {delta}");
    let logged = log_once(&log, |text| text.contains("/assets/jquery.9e8d7c6b.min.js"))
        .expect("the update was requested");
    let update = logged
        .lines()
        .find(|l| l.contains("/assets/jquery.9e8d7c6b.min.js"))
        .unwrap();
    assert!(
        update.contains("\"Content-Encoding\":[\"dcb\"]")
            || update.contains("\"Content-Encoding\":[\"dcz\"]"),
        "{update}"
    );
}

/// The access log once `done` holds for it (lines are written in batches),
/// or what it held after 10 s.
fn log_once(log: &Path, done: impl Fn(&str) -> bool) -> Result<String, String> {
    let mut text = String::new();
    let held = crate::support::eventually(Duration::from_secs(10), || {
        text = std::fs::read_to_string(log).unwrap_or_default();
        done(&text)
    });
    if held {
        Ok(text)
    } else {
        Err(text)
    }
}

/// One visit: Chromium loads `url` with `profile` and prints the DOM.
fn visit(profile: &Path, url: &str) -> String {
    let out = Command::new(crate::screenshot::chromium())
        .args(["--headless", "--no-sandbox", "--disable-gpu"])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(["--virtual-time-budget=5000", "--dump-dom", url])
        .output()
        .expect("run chromium");
    String::from_utf8_lossy(&out.stdout).into_owned()
}
