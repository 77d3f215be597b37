//! Content codings built at load, precompressed siblings, negotiation.

use std::io::Read;

use crate::support::{run, Server, TestSite};

/// Text that compresses well, large enough to be worth it.
fn script() -> String {
    (0..400)
        .map(|i| format!("function f{i}() {{ return {i} * 2; }}\n"))
        .collect()
}

fn site() -> TestSite {
    let site = TestSite::new();
    site.file("app.js", script())
        .file("tiny.css", "a{}")
        .file(
            "photo.png",
            [0x89u8, b'P', b'N', b'G', 0, 1, 2, 3].repeat(100),
        )
        .file("pre.css", "body{color:red}".repeat(50))
        .file("pre.css.gz", "not really gzip, but the owner's bytes");
    site
}

fn decode(coding: &str, data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match coding {
        "br" => brotli::BrotliDecompress(&mut &data[..], &mut out).unwrap(),
        "zstd" => out = zstd::stream::decode_all(data).unwrap(),
        "gzip" => {
            flate2::read::GzDecoder::new(data)
                .read_to_end(&mut out)
                .unwrap();
        }
        other => panic!("unexpected coding {other}"),
    }
    out
}

#[test]
fn each_coding_decodes_to_the_file_with_its_own_etag_and_exact_length() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let identity = c.get("/app.js", "");
    assert_eq!(identity.body, script().as_bytes());
    assert_eq!(identity.header("vary"), Some("Accept-Encoding"));
    assert_eq!(identity.header("content-encoding"), None);
    let mut etags = vec![identity.header("etag").unwrap().to_string()];
    for coding in ["br", "zstd", "gzip"] {
        let r = c.get("/app.js", &format!("Accept-Encoding: {coding}\r\n"));
        assert_eq!(r.status, 200);
        assert_eq!(r.header("content-encoding"), Some(coding));
        assert_eq!(r.header("vary"), Some("Accept-Encoding"));
        assert_eq!(
            r.header("content-length")
                .unwrap()
                .parse::<usize>()
                .unwrap(),
            r.body.len()
        );
        assert!(r.body.len() < script().len() / 4, "{coding} compresses");
        assert_eq!(decode(coding, &r.body), script().as_bytes(), "{coding}");
        etags.push(r.header("etag").unwrap().to_string());
    }
    etags.sort();
    etags.dedup();
    assert_eq!(etags.len(), 4, "one strong ETag per representation");
}

#[test]
fn negotiation_follows_q_values_and_identity_can_be_refused() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let coding = |c: &mut crate::support::Raw, path: &str, accept: &str| {
        let r = c.get(path, &format!("Accept-Encoding: {accept}\r\n"));
        (r.status, r.header("content-encoding").map(str::to_string))
    };
    let some = |s: &str| Some(s.to_string());
    assert_eq!(
        coding(&mut c, "/app.js", "gzip, deflate, br"),
        (200, some("br"))
    );
    assert_eq!(
        coding(&mut c, "/app.js", "br;q=0.2, gzip;q=0.9"),
        (200, some("gzip"))
    );
    assert_eq!(coding(&mut c, "/app.js", "*"), (200, some("br")));
    assert_eq!(
        coding(&mut c, "/app.js", "br;q=0, *;q=0.5"),
        (200, some("zstd"))
    );
    assert_eq!(coding(&mut c, "/app.js", "identity"), (200, None));
    assert_eq!(coding(&mut c, "/app.js", "deflate"), (200, None));
    // Tiny and already-compressed files have no variants, and no Vary.
    let r = c.get("/tiny.css", "Accept-Encoding: br\r\n");
    assert_eq!(
        (r.header("content-encoding"), r.header("vary")),
        (None, None)
    );
    let r = c.get("/photo.png", "Accept-Encoding: gzip\r\n");
    assert_eq!(r.header("content-encoding"), None);
    // Identity refused and nothing else on offer: 406.
    assert_eq!(coding(&mut c, "/photo.png", "identity;q=0").0, 406);
    assert_eq!(
        coding(&mut c, "/app.js", "identity;q=0, gzip").1,
        some("gzip")
    );
}

#[test]
fn a_precompressed_sibling_is_served_as_is() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let r = c.get("/pre.css", "Accept-Encoding: gzip\r\n");
    assert_eq!(r.header("content-encoding"), Some("gzip"));
    assert_eq!(r.body, b"not really gzip, but the owner's bytes");
    assert_eq!(r.header("content-type"), Some("text/css; charset=utf-8"));
    // Codings without a sibling are still built.
    let r = c.get("/pre.css", "Accept-Encoding: br\r\n");
    assert_eq!(
        decode("br", &r.body),
        "body{color:red}".repeat(50).as_bytes()
    );
}

#[test]
fn conditional_and_range_requests_work_per_representation() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let full = c.get("/app.js", "Accept-Encoding: br\r\n");
    let etag = full.header("etag").unwrap().to_string();
    let r = c.get(
        "/app.js",
        &format!("Accept-Encoding: br\r\nIf-None-Match: {etag}\r\n"),
    );
    assert_eq!(r.status, 304);
    assert_eq!(r.header("vary"), Some("Accept-Encoding"), "Vary on 304");
    assert_eq!(r.header("content-encoding"), None);
    // The identity's tag does not validate the brotli representation.
    let identity_tag = c.get("/app.js", "").header("etag").unwrap().to_string();
    let r = c.get(
        "/app.js",
        &format!("Accept-Encoding: br\r\nIf-None-Match: {identity_tag}\r\n"),
    );
    assert_eq!(r.status, 200);
    // A range is a slice of the encoded bytes.
    let r = c.get("/app.js", "Accept-Encoding: br\r\nRange: bytes=0-9\r\n");
    assert_eq!(r.status, 206);
    assert_eq!(r.header("content-encoding"), Some("br"));
    assert_eq!(r.header("vary"), Some("Accept-Encoding"));
    assert_eq!(r.body, &full.body[..10]);
    let total = full.body.len();
    assert_eq!(
        r.header("content-range"),
        Some(format!("bytes 0-9/{total}").as_str())
    );
    // Several ranges are served from the identity, never double-encoded.
    let r = c.get(
        "/app.js",
        "Accept-Encoding: br\r\nRange: bytes=0-3, 10-13\r\n",
    );
    assert_eq!(r.status, 206);
    assert_eq!(r.header("content-encoding"), None);
    assert!(r.text().contains("func"), "identity bytes in the parts");
}

#[test]
fn curl_compressed_gets_the_same_bytes() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let (ok, out, err) = run(
        "curl",
        &["-sS", "--compressed", "-D", "-", &server.url("/app.js")],
    );
    assert!(ok, "{err}");
    let (head, body) = out.split_once("\r\n\r\n").unwrap();
    assert!(
        head.to_ascii_lowercase().contains("content-encoding:"),
        "{head}"
    );
    assert_eq!(body, script());
}

#[test]
fn no_compress_builds_nothing_but_keeps_siblings() {
    let site = site();
    let server = Server::start(&site.root, &["--no-compress"]);
    let mut c = server.connect();
    let r = c.get("/app.js", "Accept-Encoding: br, gzip\r\n");
    assert_eq!(
        (r.header("content-encoding"), r.header("vary")),
        (None, None)
    );
    let r = c.get("/pre.css", "Accept-Encoding: br, gzip\r\n");
    assert_eq!(r.header("content-encoding"), Some("gzip"));
}

#[test]
fn encodings_follow_edits_across_reloads() {
    // Encodings are reused across generations by content hash: an edited
    // file must get fresh ones, an unchanged file keeps serving the same.
    let site = TestSite::new();
    let v1 = "first version of the script; ".repeat(100);
    let same = "a stylesheet that does not change; ".repeat(100);
    site.file("app.js", &v1).file("site.css", &same);
    let server = Server::start(&site.root, &["--no-watch"]);
    let fetch = |path: &str| {
        let r = server.connect().get(path, "Accept-Encoding: br\r\n");
        assert_eq!(r.header("content-encoding"), Some("br"), "{path}");
        String::from_utf8(decode("br", &r.body)).unwrap()
    };
    assert_eq!(fetch("/app.js"), v1);
    let v2 = "second version, longer than the first; ".repeat(120);
    site.file("app.js", &v2);
    server.signal(rustix::process::Signal::HUP);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while fetch("/app.js") != v2 {
        assert!(std::time::Instant::now() < deadline, "never reloaded");
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    assert_eq!(fetch("/site.css"), same);
}

/// A site with more than 8 MiB in memory is served before its variants
/// are built: the first answers are identity, and once the background
/// build swaps in the variants, the same request gets brotli with its own
/// ETag and length. `Vary` is sent throughout. The variants are kept in the
/// cache folder, so a restart serves every one of them at once.
#[test]
fn a_large_site_is_served_at_once_and_gains_its_variants_in_the_background() {
    let site = TestSite::new();
    // 9 MiB of scripts, 72 different files of 128 KiB (different, so the
    // build compresses each: seconds of work, well after the first request).
    for i in 0..72 {
        let body: String = (0..)
            .map(|n| format!("function f{i}_{n}() {{ return {n} * {i}; }}\n"))
            .flat_map(|line| line.into_bytes())
            .take(128 * 1024)
            .map(char::from)
            .collect();
        site.file(&format!("site/js/app{i:02}.js"), &body);
    }
    let cache = site.path("cache");
    let root = site.path("site");
    let args = ["--no-watch", "--cache-dir", cache.to_str().unwrap()];
    let started = std::time::Instant::now();
    let server = Server::start(&root, &args);
    assert!(
        server
            .startup
            .iter()
            .any(|l| l.starts_with("serving before compressing: 9.0 MiB")),
        "{:#?}",
        server.startup
    );
    let mut c = server.connect();
    let first = c.get("/js/app00.js", "Accept-Encoding: br\r\n");
    assert!(
        server.lines.try_iter().all(|l| !l.starts_with("reloaded")),
        "the variants were built before the first request: the spec proves nothing"
    );
    let ready = started.elapsed();
    assert_eq!(first.status, 200);
    assert_eq!(first.header("content-encoding"), None);
    assert_eq!(first.body.len(), 128 * 1024);
    assert_eq!(first.header("vary"), Some("Accept-Encoding"));
    assert!(ready < std::time::Duration::from_secs(5), "{ready:?}");
    // gzip is built first and swapped in before the denser codings: a
    // client that takes gzip gets it long before the build ends.
    server
        .wait_for_line(
            "variants swapped in (gzip 72 of 72, zstd ",
            std::time::Duration::from_secs(60),
        )
        .expect("the gzip variants are swapped in on their own");
    let gzip = c.get("/js/app00.js", "Accept-Encoding: gzip\r\n");
    assert_eq!(gzip.header("content-encoding"), Some("gzip"));
    assert_eq!(gzip.header("vary"), Some("Accept-Encoding"));
    assert_ne!(gzip.header("etag"), first.header("etag"));
    assert_eq!(decode("gzip", &gzip.body), first.body);
    server
        .wait_for_line(
            "reloaded (variants built in the background)",
            std::time::Duration::from_secs(120),
        )
        .expect("the variants are swapped in");
    // A new connection: on a slow host the denser codings take longer than
    // the idle timeout (60 s), which closes `c` meanwhile, as it should.
    let later = server
        .connect()
        .get("/js/app00.js", "Accept-Encoding: br\r\n");
    assert_eq!(later.header("content-encoding"), Some("br"));
    assert_ne!(later.header("etag"), first.header("etag"));
    assert_eq!(decode("br", &later.body), first.body);
    drop(server);

    let restarted = Server::start(&root, &args);
    assert!(
        !restarted
            .startup
            .iter()
            .any(|l| l.starts_with("serving before compressing")),
        "{:#?}",
        restarted.startup
    );
    let at_once = restarted
        .connect()
        .get("/js/app00.js", "Accept-Encoding: br\r\n");
    assert_eq!(at_once.header("content-encoding"), Some("br"));
    assert_eq!(at_once.header("etag"), later.header("etag"));
    assert_eq!(at_once.body, later.body);
}
