//! Serving files, directories, methods, keep-alive and pipelining.

use crate::support::{run, Server, TestSite};

fn site() -> TestSite {
    let site = TestSite::new();
    site.file("index.html", "<h1>home</h1>\n")
        .file("style.css", "body{}")
        .file("docs/index.html", "docs")
        .file("docs/page.json", "{}")
        .file("empty/.keep", "");
    site
}

#[test]
fn file_has_type_length_validators_and_common_headers() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let r = server.connect().get("/style.css", "");
    assert_eq!(r.status, 200);
    assert_eq!(r.body, b"body{}");
    assert_eq!(r.header("content-type"), Some("text/css; charset=utf-8"));
    assert_eq!(r.header("content-length"), Some("6"));
    assert!(r.header("etag").unwrap().starts_with('"'), "strong etag");
    assert!(r.header("last-modified").unwrap().ends_with("GMT"));
    assert!(r.header("date").unwrap().ends_with("GMT"));
    assert_eq!(r.header("server"), Some("tachyon"));
    assert_eq!(r.header("x-content-type-options"), Some("nosniff"));
    assert_eq!(r.header("accept-ranges"), Some("bytes"));
}

#[test]
fn head_has_the_same_headers_and_no_body() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let get = c.get("/style.css", "");
    c.send("HEAD /style.css HTTP/1.1\r\nHost: t\r\n\r\n");
    let head = c.response(true);
    assert_eq!(head.status, 200);
    assert_eq!(head.header("content-length"), get.header("content-length"));
    assert_eq!(head.header("etag"), get.header("etag"));
    // The next response on the connection starts right after HEAD's head: no body was sent.
    assert_eq!(c.get("/style.css", "").body, b"body{}");
}

#[test]
fn directories_redirect_to_slash_and_serve_their_index() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let r = c.get("/docs?lang=en", "");
    assert_eq!(r.status, 301);
    assert_eq!(r.header("location"), Some("/docs/?lang=en"), "query kept");
    let r = c.get("/docs/", "");
    assert_eq!((r.status, r.text().as_str()), (200, "docs"));
    assert_eq!(c.get("/", "").text(), "<h1>home</h1>\n");
    assert_eq!(
        c.get("/empty/", "").status,
        404,
        "no index and listing is off"
    );
}

#[test]
fn query_strings_are_ignored_for_lookup_and_missing_files_are_404_html() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    assert_eq!(c.get("/style.css?v=3", "").body, b"body{}");
    let r = c.get("/nope.txt", "");
    assert_eq!(r.status, 404);
    assert!(r.header("content-type").unwrap().starts_with("text/html"));
    assert!(r.text().contains("404"));
    assert_eq!(
        c.get("/style.css", "").status,
        200,
        "404 keeps the connection"
    );
}

#[test]
fn options_answers_allow_and_other_methods_get_405() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    c.send("OPTIONS * HTTP/1.1\r\nHost: t\r\n\r\n");
    let r = c.response(false);
    assert_eq!(r.status, 204);
    assert_eq!(r.header("allow"), Some("GET, HEAD, OPTIONS"));
    for method in ["POST", "PUT", "DELETE", "PATCH", "TRACE"] {
        c.send(format!("{method} /style.css HTTP/1.1\r\nHost: t\r\n\r\n"));
        let r = c.response(false);
        assert_eq!(r.status, 405, "{method}");
        assert_eq!(r.header("allow"), Some("GET, HEAD, OPTIONS"), "{method}");
    }
}

#[test]
fn http10_closes_by_default_and_echoes_keep_alive() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    c.send("GET /style.css HTTP/1.0\r\n\r\n");
    let r = c.response(false);
    assert_eq!(r.status, 200);
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.is_closed());

    let mut c = server.connect();
    c.send("GET /style.css HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_eq!(c.response(false).header("connection"), Some("keep-alive"));
    c.send("GET /style.css HTTP/1.0\r\nConnection: keep-alive\r\n\r\n");
    assert_eq!(c.response(false).body, b"body{}", "same connection reused");
}

#[test]
fn connection_close_is_honoured() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let r = c.get("/style.css", "Connection: close\r\n");
    assert_eq!(r.header("connection"), Some("close"));
    assert!(c.is_closed());
}

#[test]
fn pipelined_requests_are_answered_in_order() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    let batch: String = ["/style.css", "/nope", "/docs/page.json", "/docs"]
        .iter()
        .map(|p| format!("GET {p} HTTP/1.1\r\nHost: t\r\n\r\n"))
        .collect();
    c.send(batch);
    let statuses: Vec<u16> = (0..4).map(|_| c.response(false).status).collect();
    assert_eq!(statuses, [200, 404, 200, 301]);
}

#[test]
fn pipelined_requests_split_mid_head_still_parse() {
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    c.send("GET /style.css HTTP/1.1\r\nHost: t\r\n\r\nGET /style.css HT");
    assert_eq!(c.response(false).body, b"body{}");
    std::thread::sleep(std::time::Duration::from_millis(50));
    c.send("TP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(c.response(false).body, b"body{}");
}

#[test]
fn large_files_are_sent_whole_from_disk_and_memory() {
    let site = site();
    let big: Vec<u8> = (0..10 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    site.file("big.bin", &big);
    // Once from disk (over the per-file memory limit), once from memory.
    for args in [
        &["--max-file-in-memory", "1MiB"][..],
        &["--max-file-in-memory", "64MiB"][..],
    ] {
        let server = Server::start(&site.root, args);
        let mut c = server.connect();
        let r = c.get("/big.bin", "");
        assert_eq!(r.body.len(), big.len(), "{args:?}");
        assert!(r.body == big, "{args:?}: content differs");
        assert_eq!(
            c.get("/style.css", "").status,
            200,
            "connection still usable"
        );
    }
}

#[test]
fn ipv6_loopback_listens() {
    if std::net::TcpListener::bind("[::1]:0").is_err() {
        panic!("this machine has no ::1; the spec needs IPv6 loopback");
    }
    let site = site();
    let server = Server::start_with(&site.root, "[::1]:0", &[]);
    assert!(server.url.starts_with("http://[::1]:"));
    assert_eq!(server.connect().get("/style.css", "").status, 200);
}

/// Bodies of 16 KiB and more are held as frozen in-memory copies (written
/// once into memory that is never written again, huge pages where the
/// kernel has them) and spliced to the socket, or copied from memory over
/// TLS: whole, in ranges and over TLS, byte for byte. Smaller ones stay on
/// the heap. A rewrite of the file on disk in place cannot reach a client:
/// the bytes the ETag names are served until a reload.
#[test]
fn large_bodies_are_frozen_copies_served_byte_for_byte() {
    use crate::observe::{admin_addr, admin_get, metric};
    let site = TestSite::new();
    let body: Vec<u8> = (0..1_048_576u32).map(|i| (i * 7 % 251) as u8).collect();
    let mid: Vec<u8> = (0..65_536u32).map(|i| (i * 13 % 241) as u8).collect();
    site.file("big.bin", &body)
        .file("mid.bin", &mid)
        .file("small.bin", &mid[..16_383]);
    let server = Server::start(
        &site.root,
        &[
            "--no-watch",
            "--https",
            "127.0.0.1:0",
            "--tls-self-signed",
            "--admin",
            "127.0.0.1:0",
            "--threads",
            "1",
        ],
    );
    let https = crate::tls::https_addr(&server);
    let admin = admin_addr(&server);
    let pipes = || metric(&admin_get(admin, "/metrics").1, "tachyon_pipes_open");
    let metrics = admin_get(admin, "/metrics").1;
    assert_eq!(
        metric(&metrics, "tachyon_frozen_bodies"),
        2.0,
        "big.bin and mid.bin, not small.bin, are frozen copies"
    );
    // Both are packed into one 2 MiB arena (big.bin is 1 MiB).
    assert_eq!(
        metric(&metrics, "tachyon_frozen_arena_bytes"),
        f64::from(2u32 << 20)
    );
    if huge_pages_on_request() {
        // The packed arena is one huge page (the only memory this process
        // asks huge pages for).
        assert!(
            server.anon_huge_kib() >= 2048,
            "no huge page behind the arenas: {} KiB",
            server.anon_huge_kib()
        );
    }
    let mut c = server.connect();
    let whole = c.get("/big.bin", "");
    assert_eq!(whole.status, 200);
    assert!(whole.body == body, "the body differs");
    let etag = whole.header("etag").unwrap().to_string();
    let part = c.get("/big.bin", "Range: bytes=1000-200999\r\n");
    assert_eq!(part.status, 206);
    assert!(part.body == body[1000..201_000], "the range differs");

    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(site.path("big.bin"))
        .unwrap();
    std::io::Write::write_all(&mut file, &vec![0xFF; body.len()]).unwrap();
    drop(file);
    let after = c.get("/big.bin", "");
    assert_eq!(after.header("etag"), Some(etag.as_str()));
    assert!(after.body == body, "a rewrite on disk reached the client");

    // The plain downloads left an empty pipe in the worker's pool; HTTP/1.1
    // over TLS, which copies frozen bodies, must leave it there (the loop
    // below goes over HTTP/2, which frames them from memory).
    let pooled = pipes();
    assert!(pooled >= 1.0, "no pipe carried the plain downloads");
    let out = site.path("over-tls.bin");
    let (ok, _, err) = run(
        "curl",
        &[
            "-sSk",
            "--http1.1",
            "-o",
            out.to_str().unwrap(),
            &format!("https://{https}/big.bin"),
        ],
    );
    assert!(ok, "{err}");
    assert!(std::fs::read(&out).unwrap() == body, "the TLS body differs");
    assert_eq!(pipes(), pooled, "a TLS download took a pipe it cannot use");
    for (path, range, expected) in [
        ("/mid.bin", "", &mid[..]),
        ("/mid.bin", "100-40099", &mid[100..40_100]),
        ("/small.bin", "", &mid[..16_383]),
    ] {
        let (ok, _, err) = run(
            "curl",
            &[
                "-sSk",
                "-r",
                range,
                "-o",
                out.to_str().unwrap(),
                &format!("https://{https}{path}"),
            ],
        );
        assert!(ok, "{err}");
        let got = std::fs::read(&out).unwrap();
        assert!(got == expected, "{path} {range} over TLS differs");
        let plain = c.get(
            path,
            &if range.is_empty() {
                String::new()
            } else {
                format!("Range: bytes={range}\r\n")
            },
        );
        assert!(plain.body == expected, "{path} {range} differs");
    }
}

/// Whether this kernel backs memory advised with `MADV_HUGEPAGE` by
/// transparent huge pages (`always` or `madvise`, not `never`).
fn huge_pages_on_request() -> bool {
    std::fs::read_to_string("/sys/kernel/mm/transparent_hugepage/enabled")
        .is_ok_and(|mode| !mode.contains("[never]"))
}

/// A site's frozen bodies are resident once: the heap copies the build read
/// them into are given back, not kept by the allocator (they were about
/// 95 MiB of a 10,000-file, 200 MiB site).
#[test]
fn a_loaded_site_is_resident_once() {
    let site = TestSite::new();
    let sizes = [20_000usize, 90_000, 300_000];
    let mut total = 0;
    for n in 0..720 {
        let len = sizes[n % 3];
        let body: Vec<u8> = (0..len).map(|i| ((i * 31 + n * 7) % 253) as u8).collect();
        site.file(&format!("d{}/f{n}.bin", n % 8), &body);
        total += len;
    }
    let server = Server::start(&site.root, &["--no-watch", "--no-compress"]);
    assert_eq!(server.connect().get("/d1/f1.bin", "").status, 200);
    let site_kib = (total / 1024) as u64;
    let rss = server.rss_kib();
    // The bodies, packing's unused room (under a sixteenth, here 2 MiB)
    // and the process itself (about 8 MiB, more for a debug build): 105 to
    // 110 MiB here for a 94 MiB site; 114 to 117 MiB when arenas were
    // whole 2 MiB (a seventh of one lost to each 300 kB body that did not
    // fit), 132 MiB when the heap copies were kept.
    assert!(
        rss < site_kib * 17 / 16 + 16 * 1024,
        "{rss} KiB resident for a {site_kib} KiB site"
    );
}

/// Frozen copies of mid-sized bodies hold no descriptor (the sealed memfds
/// they replaced each held one, capped at an eighth of the open-file
/// limit): under a limit of 256, all 40 bodies are frozen, packed into
/// 2 MiB arenas (one per loading thread), and served byte for byte.
#[test]
fn mid_sized_frozen_copies_hold_no_descriptors_and_share_an_arena() {
    use crate::observe::{admin_addr, admin_get, metric};
    let site = TestSite::new();
    let bodies: Vec<Vec<u8>> = (0..40u32)
        .map(|n| (0..20_000u32).map(|i| ((i + n) % 239) as u8).collect())
        .collect();
    for (n, body) in bodies.iter().enumerate() {
        site.file(&format!("f{n}.bin"), body);
    }
    let server = Server::start_limited(
        &site.root,
        256,
        &["--no-watch", "--threads", "1", "--admin", "127.0.0.1:0"],
    );
    let metrics = admin_get(admin_addr(&server), "/metrics").1;
    assert_eq!(metric(&metrics, "tachyon_frozen_bodies"), 40.0);
    // Packed: whole 2 MiB arenas, one per loading thread at most (alone,
    // each would take 20 KiB of its own).
    let arenas = metric(&metrics, "tachyon_frozen_arena_bytes") / f64::from(2u32 << 20);
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    assert!(
        arenas.fract() == 0.0 && (1.0..=cores as f64).contains(&arenas),
        "40 bodies of 20 kB in {arenas} arenas of 2 MiB, {cores} cores"
    );
    assert!(
        server.open_fds() < 40,
        "{} descriptors open: one per body?",
        server.open_fds()
    );
    let mut c = server.connect();
    for (n, body) in bodies.iter().enumerate() {
        let got = c.get(&format!("/f{n}.bin"), "");
        assert_eq!(got.status, 200);
        assert!(&got.body == body, "f{n}.bin differs");
    }
}

/// A response on a connection that closes after it leaves in one segment
/// with the FIN: the client gets the SYN-ACK, the ACK of its request and
/// then that one segment (`ss` counts them), not the response and then the
/// FIN apart. Fresh-connection workloads (ab without -k) pay a packet and
/// a wake-up less per request on both sides.
#[test]
fn a_closing_response_leaves_with_its_fin() {
    use std::io::{Read, Write};
    let site = TestSite::new();
    site.file("1k.bin", [7u8; 1024]);
    let server = Server::start(&site.root, &["--no-watch", "--threads", "1"]);
    let segments_in = |request: &str| {
        let mut s = std::net::TcpStream::connect(server.addr).unwrap();
        s.write_all(request.as_bytes()).unwrap();
        let mut response = Vec::new();
        s.read_to_end(&mut response).unwrap();
        // Our side is left open (CLOSE-WAIT) for ss to read its counters.
        let port = s.local_addr().unwrap().port();
        let filter = format!("sport = :{port}");
        let (ok, out, err) = run("ss", &["-tinH", "state", "close-wait", &filter]);
        assert!(ok, "ss: {err}");
        let segs = out
            .split_whitespace()
            .find_map(|w| w.strip_prefix("segs_in:")?.parse::<u32>().ok())
            .unwrap_or_else(|| panic!("no segs_in in {out:?}"));
        (String::from_utf8_lossy(&response).into_owned(), segs)
    };
    for (request, status) in [
        ("GET /1k.bin HTTP/1.0\r\n\r\n", "200"),
        (
            "GET /none HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
            "404",
        ),
        ("GET /1k.bin HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "400"),
    ] {
        let (response, segs) = segments_in(request);
        assert!(
            response.starts_with(&format!("HTTP/1.1 {status} ")),
            "{request:?}: {response:?}"
        );
        assert!(segs <= 3, "{request:?}: {segs} segments in, FIN apart");
    }
}
