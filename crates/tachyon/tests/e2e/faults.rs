//! Fault injection through real sockets: clients that reset, stall or never
//! read, files that change under the server, descriptor exhaustion. Each spec
//! checks that whatever one connection did, the next one is served exactly
//! its own response.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use crate::support::{Server, TestSite};

/// Closes `stream` with a RST instead of a FIN (SO_LINGER with zero timeout).
fn reset(stream: TcpStream) {
    rustix::net::sockopt::set_socket_linger(stream.as_fd(), Some(Duration::ZERO)).unwrap();
    drop(stream);
}

/// A client asks for a file and resets before the response is sent; the
/// response must not be sent to the next client of that worker instead.
#[test]
fn a_reset_client_response_never_reaches_the_next_client() {
    let site = TestSite::new();
    site.file("a.txt", "hello")
        .file("big.txt", vec![b'x'; 16001]);
    let server = Server::start(&site.root, &["--threads", "1"]);
    for attempt in 0..40 {
        let mut a = TcpStream::connect(server.addr).unwrap();
        // Several pipelined requests make it likely that the worker writes
        // after the reset has arrived.
        a.write_all(
            "GET /big.txt HTTP/1.1\r\nHost: t\r\n\r\n"
                .repeat(8)
                .as_bytes(),
        )
        .unwrap();
        reset(a);
        let mut b = server.connect();
        let r = b.get("/a.txt", "");
        assert_eq!(
            (r.status, r.text().as_str()),
            (200, "hello"),
            "attempt {attempt}: the next client got {:?}",
            r.head
        );
    }
}

/// A disk-served file shrinks after load: whatever its own client gets, the
/// next client gets its own response, not a stuck or stale one.
#[test]
fn a_truncated_disk_file_does_not_poison_the_worker() {
    let site = TestSite::new();
    site.file("a.txt", "hello")
        .file("big.bin", vec![b'y'; 256 * 1024]);
    let server = Server::start(
        &site.root,
        &[
            "--threads",
            "1",
            "--max-file-in-memory",
            "1KiB",
            "--no-watch",
        ],
    );
    let mut a = server.connect();
    assert_eq!(a.get("/big.bin", "").body.len(), 256 * 1024);
    // Truncate in place: the snapshot still says 256 KiB.
    std::fs::OpenOptions::new()
        .write(true)
        .open(site.path("big.bin"))
        .unwrap()
        .set_len(1000)
        .unwrap();
    let mut a = server.connect();
    a.send("GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n");
    let mut got = Vec::new();
    let _ = a.stream.read_to_end(&mut got);
    let full = got.len() >= 256 * 1024;
    assert!(
        !full,
        "a truncated file was sent as if whole ({} bytes)",
        got.len()
    );
    for _ in 0..3 {
        let mut b = server.connect();
        let r = b.get("/a.txt", "");
        assert_eq!((r.status, r.text().as_str()), (200, "hello"), "{}", r.head);
    }
}

/// A client that sends a byte now and then but never reads must still meet
/// the send timeout: reading is not progress on the output.
#[test]
fn a_client_that_trickles_input_but_never_reads_is_timed_out() {
    let site = TestSite::new();
    site.file("big.bin", vec![b'z'; 8 * 1024 * 1024]);
    let server = Server::start(
        &site.root,
        &["--send-timeout", "2s", "--max-file-in-memory", "16MiB"],
    );
    let mut c = server.connect();
    c.send("GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n");
    let started = Instant::now();
    let closed = loop {
        std::thread::sleep(Duration::from_millis(250));
        // A byte of a next request: readable events must not count as sending.
        if c.stream.write_all(b"G").is_err() {
            break true;
        }
        if started.elapsed() > Duration::from_secs(8) {
            break false;
        }
    };
    assert!(closed, "still open after {:?}", started.elapsed());
}

/// 64 clients pipeline requests and never read: each may pin only a small
/// bounded amount of output (old behaviour: 1 MiB each, 65 MB in all).
#[test]
fn non_reading_pipeliners_pin_bounded_memory() {
    let site = TestSite::new();
    site.file("16k.txt", vec![b'p'; 16 * 1024]);
    let server = Server::start(&site.root, &["--threads", "1"]);
    // Warm up allocator and buffers.
    assert_eq!(server.connect().get("/16k.txt", "").status, 200);
    let before = server.rss_kib();
    let request = "GET /16k.txt HTTP/1.1\r\nHost: t\r\n\r\n".repeat(2000);
    let clients: Vec<TcpStream> = (0..64)
        .map(|_| {
            let mut c = TcpStream::connect(server.addr).unwrap();
            c.set_write_timeout(Some(Duration::from_millis(500)))
                .unwrap();
            let _ = c.write_all(request.as_bytes());
            c
        })
        .collect();
    std::thread::sleep(Duration::from_millis(500));
    let grown = server.rss_kib().saturating_sub(before);
    assert!(
        grown < 24 * 1024,
        "64 non-reading clients grew RSS by {grown} KiB"
    );
    // And the worker still answers others at once.
    let started = Instant::now();
    assert_eq!(server.connect().get("/16k.txt", "").status, 200);
    assert!(started.elapsed() < Duration::from_secs(1));
    drop(clients);
}

/// Out of descriptors: the worker stops watching its listeners instead of
/// waking for them in a loop, and accepts again once connections close.
#[test]
fn running_out_of_descriptors_does_not_spin_a_core() {
    let site = TestSite::new();
    site.file("a.txt", "hello");
    let server = Server::start(&site.root, &["--threads", "1"]);
    let limit = server.open_fds() + 8;
    let (ok, _, err) = crate::support::run(
        "prlimit",
        &[
            "--pid",
            &server.pid().to_string(),
            &format!("--nofile={limit}:{limit}"),
        ],
    );
    assert!(ok, "prlimit: {err}");
    let mut held: Vec<TcpStream> = (0..40)
        .map(|_| TcpStream::connect(server.addr).unwrap())
        .collect();
    std::thread::sleep(Duration::from_millis(300));
    let ticks = server.cpu_ticks();
    std::thread::sleep(Duration::from_millis(1500));
    let spent = server.cpu_ticks() - ticks;
    assert!(
        spent < 20,
        "{spent} CPU ticks in 1.5 s with the accept queue full at the fd limit"
    );
    held.clear();
    let served = crate::support::eventually(Duration::from_secs(5), || {
        let Ok(mut c) = TcpStream::connect(server.addr) else {
            return false;
        };
        c.set_read_timeout(Some(Duration::from_secs(2))).unwrap();
        let _ = c.write_all(b"GET /a.txt HTTP/1.1\r\nHost: t\r\n\r\n");
        let mut got = [0u8; 12];
        c.read_exact(&mut got).is_ok() && &got == b"HTTP/1.1 200"
    });
    assert!(served, "not serving again after connections closed");
}

/// A reload that cannot open files (here: at the descriptor limit) fails
/// and keeps the old generation, instead of publishing an empty site.
#[test]
fn a_reload_at_the_descriptor_limit_keeps_the_old_site() {
    let site = TestSite::new();
    for i in 0..30 {
        site.file(&format!("f{i}.bin"), vec![b'd'; 2048]);
    }
    site.file("index.html", "home");
    let server = Server::start(
        &site.root,
        &[
            "--threads",
            "1",
            "--no-watch",
            "--max-file-in-memory",
            "1KiB",
        ],
    );
    assert_eq!(server.connect().get("/f7.bin", "").status, 200);
    let limit = server.open_fds() + 4;
    let (ok, _, err) = crate::support::run(
        "prlimit",
        &[
            "--pid",
            &server.pid().to_string(),
            &format!("--nofile={limit}:{limit}"),
        ],
    );
    assert!(ok, "prlimit: {err}");
    site.file("index.html", "changed");
    server.signal(rustix::process::Signal::HUP);
    let failed = server.wait_for_line("failed", Duration::from_secs(10));
    assert!(failed.is_some(), "the reload at the limit did not fail");
    let mut c = server.connect();
    for path in ["/", "/f7.bin", "/f29.bin"] {
        let r = c.get(path, "");
        assert_eq!(r.status, 200, "{path} after a failed reload");
    }
    assert_eq!(c.get("/", "").text(), "home");
}

/// A disk-served file rewritten in place (same length, new bytes) is never
/// sent under its old ETag; a resumed download with If-Range does not
/// splice old and new bytes; and the server picks the new content up
/// without a watcher.
#[test]
fn a_file_rewritten_in_place_is_never_sent_under_its_old_etag() {
    let site = TestSite::new();
    let old = vec![b'o'; 64 * 1024];
    site.file("doc.bin", &old);
    let server = Server::start(&site.root, &["--no-watch", "--max-file-in-memory", "1KiB"]);
    let mut c = server.connect();
    let first = c.get("/doc.bin", "");
    let etag = first.header("etag").unwrap().to_string();
    // rsync --inplace: same file, same length, new content.
    std::thread::sleep(Duration::from_millis(20));
    let new = vec![b'n'; 64 * 1024];
    std::fs::OpenOptions::new()
        .write(true)
        .open(site.path("doc.bin"))
        .and_then(|mut f| f.write_all(&new))
        .unwrap();
    let resumed = server.connect().get(
        "/doc.bin",
        &format!("Range: bytes=32768-\r\nIf-Range: {etag}\r\n"),
    );
    if resumed.status == 206 {
        assert_eq!(resumed.header("etag"), Some(etag.as_str()));
        assert!(
            resumed.body.iter().all(|&b| b == b'o'),
            "206 under the old ETag with new bytes"
        );
    }
    let fresh = crate::support::eventually(Duration::from_secs(5), || {
        let r = server.connect().get("/doc.bin", "");
        if r.status == 200 && r.header("etag") == Some(etag.as_str()) {
            assert!(r.body == old, "old ETag with other bytes");
        }
        r.status == 200 && r.body == new && r.header("etag") != Some(etag.as_str())
    });
    assert!(fresh, "the new content was never served");
}

/// A tree with more disk-served files than the descriptors it may keep
/// (an eighth of the open-file limit) leaves the rest to connections: past
/// that share a file is opened for each response. A file renamed over is
/// still served from the inode kept open, and refused (503, never the new
/// bytes under the old ETag) where the path is opened again; SIGHUP then
/// serves the new content everywhere.
#[test]
fn a_tree_past_the_descriptor_share_is_served_by_reopening_its_files() {
    use rustix::process::Signal;
    let site = TestSite::new();
    let old = |n: usize| format!("old body of file {n}\n").repeat(50 + n);
    let new = |n: usize| format!("new body of file {n}\n").repeat(50 + n);
    const FILES: usize = 120;
    for n in 0..FILES {
        site.file(&format!("d/f{n}.txt"), old(n));
    }
    // 256 descriptors: at most 32 kept open, the other 88 reopened.
    let server = Server::start_limited(
        &site.root,
        256,
        &["--no-watch", "--threads", "1", "--max-file-in-memory", "16"],
    );
    let connections = server.startup.iter().find_map(|l| {
        l.strip_prefix("at most ")?
            .split(' ')
            .next()?
            .parse::<u32>()
            .ok()
    });
    assert!(
        connections.is_none_or(|n| n >= 64),
        "files held the connections' descriptors: {:?}",
        server.startup
    );
    assert!(
        server.open_fds() < 80,
        "{} descriptors open for {FILES} disk-served files",
        server.open_fds()
    );
    let mut c = server.connect();
    let mut etags = Vec::new();
    for n in 0..FILES {
        let r = c.get(&format!("/d/f{n}.txt"), "");
        assert_eq!((r.status, r.text()), (200, old(n)), "f{n}.txt");
        etags.push(r.header("etag").unwrap().to_string());
    }
    let r = c.get("/d/f100.txt", "Range: bytes=5-9\r\n");
    assert_eq!((r.status, r.text()), (206, old(100)[5..10].to_string()));
    // A deploy: each file written beside and renamed over.
    std::thread::sleep(Duration::from_millis(20));
    for n in 0..FILES {
        site.file(&format!("d/f{n}.new"), new(n));
        std::fs::rename(
            site.path(&format!("d/f{n}.new")),
            site.path(&format!("d/f{n}.txt")),
        )
        .unwrap();
    }
    let (mut kept, mut refused) = (0, 0);
    for (n, etag) in etags.iter().enumerate() {
        let r = server.connect().get(&format!("/d/f{n}.txt"), "");
        match r.status {
            200 => {
                assert_eq!(r.text(), old(n), "f{n}.txt: new bytes before a reload");
                assert_eq!(r.header("etag"), Some(etag.as_str()));
                kept += 1;
            }
            503 => refused += 1,
            other => panic!("f{n}.txt: {other}"),
        }
    }
    assert!(
        kept <= 32 && kept + refused == FILES,
        "{kept} kept, {refused} refused"
    );
    server.signal(Signal::HUP);
    let reloaded = crate::support::eventually(Duration::from_secs(10), || {
        server.connect().get("/d/f0.txt", "").text() == new(0)
    });
    assert!(reloaded, "SIGHUP did not pick the new files up");
    let mut c = server.connect();
    for (n, etag) in etags.iter().enumerate() {
        let r = c.get(&format!("/d/f{n}.txt"), "");
        assert_eq!(
            (r.status, r.text()),
            (200, new(n)),
            "f{n}.txt after the reload"
        );
        assert_ne!(r.header("etag"), Some(etag.as_str()));
    }
}

/// A file opened per response is opened before its head is written: with
/// no descriptor left to open it (the running server's open-file limit
/// lowered to none: it keeps what it holds), its client gets a 503 with
/// `Retry-After` on a connection that carries on, never a 200 head cut
/// short; files kept open are still served whole, and with descriptors
/// back every file is.
#[test]
fn a_file_with_no_descriptor_to_open_it_is_a_503_not_a_200_cut_short() {
    use crate::support::ReopenedSite;
    let site = ReopenedSite::start();
    let serves_every_file = |c: &mut crate::support::Raw| {
        for n in 0..ReopenedSite::FILES {
            let r = c.get(&format!("/d/f{n}.txt"), "");
            assert_eq!(
                (r.status, r.text()),
                (200, ReopenedSite::body(n)),
                "f{n}.txt"
            );
        }
    };
    let mut c = site.server.connect();
    serves_every_file(&mut c);
    // Accepted (the listener defers accepting until a request arrives),
    // and between responses.
    assert_eq!(c.get("/ping.txt", "").text(), "ok");
    // Not to what it holds: a descriptor closed since leaves a free number
    // below the limit, and one spare serves every response in turn.
    site.limit_descriptors(0);
    let (mut whole, mut refused) = (0, 0);
    for n in 0..ReopenedSite::FILES {
        let r = c.get(&format!("/d/f{n}.txt"), "");
        match r.status {
            200 => {
                assert_eq!(r.text(), ReopenedSite::body(n), "f{n}.txt");
                whole += 1;
            }
            503 => {
                assert_eq!(r.header("retry-after"), Some("1"), "f{n}.txt");
                refused += 1;
            }
            other => panic!("f{n}.txt: {other}"),
        }
    }
    assert!(
        (1..=ReopenedSite::KEPT).contains(&whole) && refused == ReopenedSite::FILES - whole,
        "{whole} whole, {refused} refused with no descriptor to spare"
    );
    site.limit_descriptors(256);
    serves_every_file(&mut c);
    serves_every_file(&mut site.server.connect());
}

/// A symlink inside the root that points at a dotfile does not expose it.
#[test]
fn a_symlink_to_a_dotfile_is_hidden_like_the_dotfile() {
    let site = TestSite::new();
    site.file(".env", "SECRET=1").file("a.txt", "hello");
    std::os::unix::fs::symlink(".env", site.path("pub.txt")).unwrap();
    let server = Server::start(&site.root, &[]);
    let mut c = server.connect();
    assert_eq!(c.get("/.env", "").status, 404);
    let r = c.get("/pub.txt", "");
    assert_eq!(r.status, 404, "served {:?}", r.text());
    assert!(
        server
            .startup
            .iter()
            .any(|l| l.contains("symlinks to dotfiles") && l.contains("pub.txt")),
        "the startup summary names what was skipped: {:?}",
        server.startup
    );
}

/// A FIFO in the root neither blocks the load nor SIGTERM.
#[test]
fn a_fifo_in_the_root_is_skipped_without_blocking() {
    let site = TestSite::new();
    site.file("a.txt", "hello");
    rustix::fs::mknodat(
        rustix::fs::CWD,
        site.path("pipe"),
        rustix::fs::FileType::Fifo,
        rustix::fs::Mode::from_raw_mode(0o644),
        0,
    )
    .unwrap();
    let mut server = Server::start(&site.root, &[]);
    assert_eq!(server.connect().get("/pipe", "").status, 404);
    server.signal(rustix::process::Signal::TERM);
    let stopped = crate::support::eventually(Duration::from_secs(5), || {
        matches!(server.child.try_wait(), Ok(Some(_)))
    });
    assert!(stopped);
}

/// The root deleted and recreated at the same path: the watcher follows
/// the new directory instead of going silent.
#[test]
fn a_recreated_root_is_watched_again() {
    let site = TestSite::new();
    let root = site.path("www");
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("index.html"), "one").unwrap();
    // The sandbox's rules name the root's inode: a root made anew is
    // outside them (the sandbox spec covers that refusal).
    let server = Server::start(&root, &["--no-sandbox"]);
    assert_eq!(server.connect().get("/", "").text(), "one");
    std::fs::remove_dir_all(&root).unwrap();
    std::thread::sleep(Duration::from_millis(1500));
    std::fs::create_dir_all(&root).unwrap();
    std::fs::write(root.join("index.html"), "two").unwrap();
    assert!(
        crate::support::eventually(Duration::from_secs(6), || {
            server.connect().get("/", "").text() == "two"
        }),
        "the recreated root was not picked up"
    );
    // And later edits still reload.
    std::fs::write(root.join("index.html"), "three").unwrap();
    assert!(crate::support::eventually(Duration::from_secs(6), || {
        server.connect().get("/", "").text() == "three"
    }));
}

/// A client pipelines a large request, then one whose head is too large,
/// and keeps sending (a browser with huge cookies): the 431 closes the
/// connection, and closing with that input unread would reset it and
/// discard the responses still queued for the client.
#[test]
fn an_error_close_does_not_destroy_queued_responses() {
    let site = TestSite::new();
    site.file("big.txt", vec![b'b'; 1024 * 1024]);
    let server = Server::start(&site.root, &[]);
    for _ in 0..3 {
        // A small receive window: the large response stays queued.
        let mut c = crate::support::connect_with_receive_buffer(server.addr, 4096);
        let mut requests = b"GET /big.txt HTTP/1.1\r\nHost: t\r\n\r\n".to_vec();
        requests.extend_from_slice(b"GET /big.txt HTTP/1.1\r\nHost: t\r\nCookie: ");
        requests.extend(std::iter::repeat_n(b'c', 20 * 1024));
        c.write_all(&requests).unwrap();
        std::thread::sleep(Duration::from_millis(100));
        // The rest of the cookie, sent after the server decided to close.
        let _ = c.write_all(&[b'c'; 2048]);
        let mut got = Vec::new();
        let result = c.read_to_end(&mut got).map_err(|e| e.kind());
        let text = String::from_utf8_lossy(&got);
        assert_eq!(result, Ok(got.len()), "after {} bytes", got.len());
        assert!(text.starts_with("HTTP/1.1 200 OK"));
        assert!(
            text.contains("HTTP/1.1 431"),
            "the 431 after the queued response was lost ({} bytes)",
            got.len()
        );
    }
}

/// A client that asks for `path`, reads its first 4 KiB and stops, behind a
/// 16 KiB receive window: the socket takes little of a large body, and a
/// pipe keeps the rest of what was loaded into it.
fn stalled_mid_body(server: std::net::SocketAddr, path: &str) -> TcpStream {
    let mut c = crate::support::connect_with_receive_buffer(server, 16 * 1024);
    c.write_all(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes())
        .unwrap();
    let mut some = [0u8; 4096];
    c.read_exact(&mut some).unwrap();
    c
}

/// Frozen bodies leave through a pipe (vmsplice, then splice), and a pipe
/// can hold part of a body the socket has not taken. A client that resets
/// then must take those bytes with it: the next clients of the worker get
/// exactly their own bodies, the pipe is closed (no descriptor left over
/// per reset), and a pipe back in the pool carries nothing.
#[test]
fn a_reset_with_a_body_in_the_pipe_leaves_nothing_for_the_next_client() {
    let site = TestSite::new();
    let big: Vec<u8> = (0..2 * 1024 * 1024u32).map(|i| (i % 251) as u8).collect();
    let other: Vec<u8> = (0..600 * 1024u32).map(|i| (i % 13) as u8 + b'a').collect();
    site.file("big.bin", &big).file("other.bin", &other);
    let server = Server::start(&site.root, &["--threads", "1"]);
    // One whole download first, so the worker's idle pipe exists.
    assert_eq!(server.connect().get("/big.bin", "").body, big);
    let fds_before = server.open_fds();
    for attempt in 0..40 {
        let a = stalled_mid_body(server.addr, "/big.bin");
        std::thread::sleep(Duration::from_millis(20));
        reset(a);
        let mut b = server.connect();
        let r = b.get("/other.bin", "");
        assert_eq!(r.status, 200, "attempt {attempt}");
        assert!(
            r.body == other,
            "attempt {attempt}: other.bin came back altered"
        );
        let r = b.get("/big.bin", "Range: bytes=4097-\r\n");
        assert_eq!(r.status, 206, "attempt {attempt}");
        assert!(
            r.body == big[4097..],
            "attempt {attempt}: a range of big.bin came back altered"
        );
    }
    // Every reset's pipe was closed: what stays open is the worker's pool
    // of empty pipes (at most 16, two descriptors each).
    assert!(
        crate::support::eventually(Duration::from_secs(5), || server.open_fds()
            <= fds_before + 2 * 16),
        "{} descriptors open after 40 resets, {fds_before} before",
        server.open_fds()
    );
}

/// Pipes are capped at a sixteenth of the open-file limit: clients stalled
/// mid-body hold pipes up to the cap and no further, a client that comes
/// then gets its body whole, copied from memory, and the pipes of clients
/// that leave are closed (the worker keeps at most 16 empty ones).
#[test]
fn past_the_pipe_cap_bodies_are_copied_and_pipes_are_closed() {
    use crate::observe::{admin_addr, admin_get, metric};
    let site = TestSite::new();
    let big: Vec<u8> = (0..2 * 1024 * 1024u32).map(|i| (i % 241) as u8).collect();
    site.file("big.bin", &big);
    // 1,024 descriptors: a cap of 64 pipes.
    let server = Server::start_limited(
        &site.root,
        1024,
        &["--threads", "1", "--admin", "127.0.0.1:0"],
    );
    let admin = admin_addr(&server);
    let pipes = || metric(&admin_get(admin, "/metrics").1, "tachyon_pipes_open");
    let stalled: Vec<TcpStream> = (0..100)
        .map(|_| stalled_mid_body(server.addr, "/big.bin"))
        .collect();
    assert!(
        crate::support::eventually(Duration::from_secs(5), || pipes() == 64.0),
        "{} pipes open with 100 clients stalled mid-body, the cap is 64",
        pipes()
    );
    let r = server.connect().get("/big.bin", "");
    assert_eq!(r.status, 200);
    assert!(
        r.body == big,
        "the body sent past the cap came back altered"
    );
    assert_eq!(pipes(), 64.0, "the cap held while it was sent");
    for c in stalled {
        reset(c);
    }
    assert!(
        crate::support::eventually(Duration::from_secs(5), || pipes() <= 16.0),
        "{} pipes still open after the stalled clients left",
        pipes()
    );
    assert_eq!(server.connect().get("/big.bin", "").body, big);
}

/// A client that sends part of a head and closes at once (data and FIN in
/// one edge) is closed at once, not held until the header timeout.
#[test]
fn a_client_that_closes_mid_head_is_let_go_at_once() {
    let site = TestSite::new();
    site.file("a.txt", "hello");
    let server = Server::start(&site.root, &["--threads", "1"]);
    let before = server.open_fds();
    for _ in 0..200 {
        let mut c = TcpStream::connect(server.addr).unwrap();
        c.write_all(b"GET /a.txt HTTP/1.1\r\nHo").unwrap();
    }
    assert!(
        crate::support::eventually(Duration::from_secs(3), || server.open_fds() <= before + 5),
        "{} descriptors held after 200 clients left ({before} before)",
        server.open_fds()
    );
}

/// A second server on a port already in use fails with a clear error
/// instead of joining the first one's reuseport group.
#[test]
fn a_port_in_use_is_an_error() {
    let site = TestSite::new();
    site.file("a.txt", "hello");
    let first = Server::start(&site.root, &[]);
    let root = site.root.to_str().unwrap();
    let out = crate::support::run_tachyon([root, "--listen", &first.addr.to_string()]);
    assert_ne!(out.code, Some(0));
    let err = out.stderr;
    assert!(err.contains("in use"), "{err}");
}

/// One client reading a large file as fast as it can does not hold its
/// worker: another client's small requests keep their latency.
#[test]
fn a_fast_large_download_does_not_starve_other_clients() {
    let site = TestSite::new();
    site.file("a.txt", "hello");
    let big = std::fs::File::create(site.path("big.bin")).unwrap();
    big.set_len(128 * 1024 * 1024).unwrap();
    drop(big);
    let server = Server::start(&site.root, &["--threads", "1"]);
    let addr = server.addr;
    let readers: Vec<_> = (0..4)
        .map(|_| {
            std::thread::spawn(move || {
                let mut c = TcpStream::connect(addr).unwrap();
                c.write_all(b"GET /big.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
                    .unwrap();
                let mut chunk = vec![0u8; 1 << 20];
                let mut total = 0usize;
                while let Ok(n) = c.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    total += n;
                }
                total
            })
        })
        .collect();
    std::thread::sleep(Duration::from_millis(100));
    let mut c = server.connect();
    let mut worst = Duration::ZERO;
    for _ in 0..100 {
        let started = Instant::now();
        assert_eq!(c.get("/a.txt", "").status, 200);
        worst = worst.max(started.elapsed());
    }
    eprintln!("worst small-request latency beside 4 downloads: {worst:?}");
    for reader in readers {
        assert!(
            reader.join().unwrap() > 128 * 1024 * 1024,
            "a download did not finish"
        );
    }
    assert!(
        worst < Duration::from_millis(50),
        "a small request waited {worst:?} behind a large download"
    );
}

/// Bytes already handed to the kernel for a disk-served file are the bytes
/// that were checked: a client that stops reading mid-download while the
/// file is rewritten in place (same length, new content) gets either the
/// old bytes in full or a short body, never a full-length mix. With
/// `--sendfile` the kernel holds page references, and this spec fails.
#[test]
fn a_rewrite_while_the_client_is_not_reading_never_tears_the_body() {
    let site = TestSite::new();
    let len = 8 * 1024 * 1024;
    site.file("big.bin", vec![b'o'; len]);
    let server = Server::start(&site.root, &["--no-watch", "--max-file-in-memory", "1MiB"]);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /big.bin HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    let mut got = vec![0u8; 64 * 1024];
    let mut filled = 0;
    while filled < got.len() {
        let n = stream.read(&mut got[filled..]).unwrap();
        assert!(n > 0, "closed before the first 64 KiB");
        filled += n;
    }
    // Let the server fill both socket buffers, then rewrite in place.
    std::thread::sleep(Duration::from_millis(300));
    std::fs::OpenOptions::new()
        .write(true)
        .open(site.path("big.bin"))
        .and_then(|mut f| f.write_all(&vec![b'n'; len]))
        .unwrap();
    stream.read_to_end(&mut got).unwrap();
    let head_end = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let body = &got[head_end..];
    assert!(body.len() <= len, "more than Content-Length");
    let mixed = body.iter().filter(|&&b| b != b'o').count();
    assert_eq!(
        mixed,
        0,
        "{} of {} bytes received under the old ETag are new content (full length: {})",
        mixed,
        body.len(),
        body.len() == len
    );
}

/// The server's send queue toward `client` (unsent plus unacknowledged
/// bytes), from /proc/net/tcp: the kernel memory that connection pins.
fn server_send_queue(server: std::net::SocketAddr, client: std::net::SocketAddr) -> Option<u64> {
    let table = std::fs::read_to_string("/proc/net/tcp").ok()?;
    let local = format!(":{:04X}", server.port());
    let remote = format!(":{:04X}", client.port());
    table.lines().skip(1).find_map(|line| {
        let fields: Vec<&str> = line.split_whitespace().collect();
        (fields.get(1)?.ends_with(&local) && fields.get(2)?.ends_with(&remote)).then(|| {
            let tx = fields.get(4)?.split(':').next()?;
            u64::from_str_radix(tx, 16).ok()
        })?
    })
}

/// A client that asks for large responses and never reads pins little
/// kernel memory: without a cap, the send buffer autotunes to 4 MiB per
/// connection, and 1,500 such clients drove the machine's TCP memory to
/// its global limit, stalling every other client's sends.
#[test]
fn a_client_that_never_reads_pins_little_kernel_memory() {
    let site = TestSite::new();
    site.file("big.bin", vec![b'b'; 2 * 1024 * 1024]);
    let server = Server::start(&site.root, &["--no-watch"]);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream
        .write_all(&b"GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n".repeat(4))
        .unwrap();
    let client = stream.local_addr().unwrap();
    std::thread::sleep(Duration::from_millis(500));
    let queued = server_send_queue(server.addr, client).expect("the server's socket");
    assert!(
        queued <= 256 * 1024,
        "{queued} bytes queued toward a client that reads nothing"
    );
    // Reading resumes the transfer: all four responses arrive.
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let want = 4 * 2 * 1024 * 1024;
    let mut got = 0usize;
    let mut buf = vec![0u8; 256 * 1024];
    let mut bodies = 0usize;
    while bodies < want {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "closed after {got} bytes");
        got += n;
        bodies += buf[..n].iter().filter(|&&b| b == b'b').count();
    }
    // Heads add a few 'b's of their own ("bytes"); the bodies are all there.
    assert!(
        bodies >= want && got < want + 4096,
        "{bodies} of {want}, {got} read"
    );
}

/// Unsent bytes on each of the server's connections, by client port, as
/// `ss` reports them (`notsent:`, absent when zero).
pub(crate) fn server_unsent(server: std::net::SocketAddr) -> std::collections::HashMap<u16, u64> {
    server_sockets(server)
        .into_iter()
        .map(|(port, socket)| (port, socket.unsent))
        .collect()
}

/// What `ss -ti` says of one of the server's connections.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct SocketFacts {
    /// Bytes queued but not yet sent (`notsent:`).
    pub unsent: u64,
    /// Bytes the client has acknowledged, i.e. received (`bytes_acked:`).
    pub acked: u64,
}

/// The server's established connections, by client port.
pub(crate) fn server_sockets(
    server: std::net::SocketAddr,
) -> std::collections::HashMap<u16, SocketFacts> {
    let out = std::process::Command::new("ss")
        .args(["-tinH", "state", "established"])
        .arg(format!("( sport = :{} )", server.port()))
        .output()
        .expect("ss (iproute2)");
    let text = String::from_utf8_lossy(&out.stdout);
    let mut sockets = std::collections::HashMap::new();
    let mut client = None;
    for line in text.lines() {
        if !line.starts_with(char::is_whitespace) {
            client = line
                .split_whitespace()
                .last()
                .and_then(|peer| peer.rsplit(':').next())
                .and_then(|port| port.parse::<u16>().ok());
        } else if let Some(port) = client.take() {
            let field = |name: &str| {
                line.split_whitespace()
                    .find_map(|f| f.strip_prefix(name))
                    .and_then(|n| n.parse().ok())
                    .unwrap_or(0)
            };
            let facts = SocketFacts {
                unsent: field("notsent:"),
                acked: field("bytes_acked:"),
            };
            sockets.insert(port, facts);
        }
    }
    sockets
}

/// A client that reads in small steps (ab reads 8 KiB at a time) never
/// takes 256 KiB in one wake-up at the common bound, but once it has taken
/// that much of a large body in all, it gets the raised bound too (10 MiB
/// by ab -c10: half the server CPU per response).
#[test]
fn a_client_reading_in_small_steps_gets_the_raised_send_bound() {
    let site = TestSite::new();
    site.file("big.bin", vec![b'b'; 8 * 1024 * 1024]);
    let server = Server::start(&site.root, &["--no-watch", "--threads", "1"]);
    let mut stream = TcpStream::connect(server.addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
        .write_all(b"GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    let mut buf = vec![0u8; 8 * 1024];
    let mut got = 0;
    while got < 1024 * 1024 {
        let n = stream.read(&mut buf).unwrap();
        assert!(n > 0, "closed after {got} bytes");
        got += n;
        std::thread::sleep(Duration::from_micros(200));
    }
    std::thread::sleep(Duration::from_millis(300));
    let port = stream.local_addr().unwrap().port();
    let unsent = server_unsent(server.addr)[&port];
    assert!(
        unsent > 256 * 1024,
        "{unsent} bytes unsent after the client took {got}: the common bound"
    );
}

/// A client that has shown it reads gets a larger bound on the bytes
/// left unsent toward it while a large body is on its way (fewer
/// wake-ups, and the queue is pushed as the client acknowledges: a 10 MiB
/// body costs less than half the server CPU), but only within the
/// worker's budget: a crowd of clients that read 3 MiB and then stop pins
/// at most 16 × 4 MiB per worker; the rest stay at the common 128 KiB.
#[test]
fn a_fast_reader_gets_a_larger_send_queue_within_the_workers_budget() {
    const CLIENTS: usize = 150;
    let site = TestSite::new();
    site.file("big.bin", vec![b'b'; 8 * 1024 * 1024]);
    let server = Server::start(&site.root, &["--no-watch", "--threads", "2"]);
    let mut streams = Vec::new();
    let mut buf = vec![0u8; 1024 * 1024];
    for _ in 0..CLIENTS {
        let mut stream = TcpStream::connect(server.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream
            .write_all(b"GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        let mut got = 0;
        while got < 3 * 1024 * 1024 {
            let n = stream.read(&mut buf).unwrap();
            assert!(n > 0, "closed after {got} bytes");
            got += n;
        }
        streams.push(stream);
    }
    std::thread::sleep(Duration::from_millis(500));
    let unsent = server_unsent(server.addr);
    let queues: Vec<u64> = streams
        .iter()
        .map(|s| unsent[&s.local_addr().unwrap().port()])
        .collect();
    // At the common 128 KiB bound a connection holds at most about one
    // segment more (under 192 KiB in every run seen); with the raised
    // bound most hold megabytes, but one whose send buffer had not grown
    // yet holds less (320 KiB and a 472 KiB one under load were seen): only
    // "above what the common bound allows" tells the two apart.
    let raised = queues.iter().filter(|&&q| q > 256 * 1024).count();
    // Which clients qualify depends on how much each wake-up moved, which
    // a loaded machine changes (alone: all the budget allows); the cap does
    // not.
    assert!(
        (8..=32).contains(&raised),
        "{raised} of {CLIENTS} connections hold more than 256 KiB unsent (want 8 to 2 × 16): {queues:?}"
    );
    let largest = queues.iter().max().copied().unwrap_or(0);
    assert!(
        largest <= 4 * 1024 * 1024 + 256 * 1024,
        "{largest} bytes unsent on one connection"
    );
}

/// The request that panics on purpose (debug builds only: the test hook of
/// tachyon-server's `guard`).
const PANIC: &str = "/__tachyon_test_panic__";

/// A body large enough to be under way while another connection panics.
const BIG: usize = 4 << 20;

/// A connection reading `/big.bin` slowly: the first 64 KiB now, the rest
/// later (`finish`), checked byte for byte.
struct Download(TcpStream, Vec<u8>);

impl Download {
    fn start(addr: std::net::SocketAddr) -> Download {
        let mut s = crate::support::connect_with_receive_buffer(addr, 64 * 1024);
        s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
        s.write_all(b"GET /big.bin HTTP/1.1\r\nHost: t\r\n\r\n")
            .unwrap();
        let mut got = vec![0u8; 64 * 1024];
        s.read_exact(&mut got).unwrap();
        Download(s, got)
    }

    fn finish(mut self) {
        let mut rest = Vec::new();
        let head_end = |b: &[u8]| b.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
        let end = head_end(&self.1);
        while self.1.len() + rest.len() < end + BIG {
            let mut chunk = [0u8; 65536];
            match self.0.read(&mut chunk) {
                Ok(0) | Err(_) => break,
                Ok(n) => rest.extend_from_slice(&chunk[..n]),
            }
        }
        self.1.extend(rest);
        assert_eq!(self.1.len() - end, BIG, "the download was cut");
        assert!(
            self.1[end..].iter().all(|&b| b == 7),
            "the download's bytes"
        );
    }
}

/// The site and the server of the panic specs: one worker, so the
/// connection that panics shares it with every other.
fn panic_site() -> TestSite {
    let site = TestSite::new();
    site.file("a.txt", "a").file("big.bin", vec![7u8; BIG]);
    site
}

/// The metric and the log line after one panic.
fn assert_one_panic_counted_and_logged(
    server: &Server,
    admin: std::net::SocketAddr,
    request: &str,
) {
    let line = server
        .wait_for_line("turn panicked", Duration::from_secs(5))
        .expect("the panic is logged");
    assert!(line.contains(request), "{line}");
    // Counters are published at the end of the worker's loop turn, which
    // may come just after the client's answer.
    let counted = crate::support::eventually(Duration::from_secs(5), || {
        let (_, metrics) = crate::observe::admin_get(admin, "/metrics");
        crate::observe::metric(&metrics, "tachyon_connection_panics_total") == 1.0
    });
    assert!(counted, "the panic is counted");
    let (_, metrics) = crate::observe::admin_get(admin, "/metrics");
    assert_eq!(
        crate::observe::metric(&metrics, "tachyon_worker_restarts_total"),
        0.0
    );
}

/// A panic while answering one HTTP/1.1 request closes that connection
/// only: a download under way on the same worker gets all its bytes, a
/// keep-alive connection and new ones are served, the panic is logged with
/// its request line and counted.
#[test]
fn a_panic_over_http1_closes_its_connection_only() {
    let site = panic_site();
    let server = Server::start(&site.root, &["--threads", "1", "--admin", "127.0.0.1:0"]);
    let admin = crate::observe::admin_addr(&server);
    let download = Download::start(server.addr);
    let mut kept = server.connect();
    assert_eq!(kept.get("/a.txt", "").text(), "a");
    let mut doomed = server.connect();
    doomed.send(format!("GET {PANIC} HTTP/1.1\r\nHost: t\r\n\r\n"));
    assert!(doomed.is_closed(), "the panicking connection is closed");
    assert_eq!(kept.get("/a.txt", "").text(), "a", "the kept connection");
    assert_eq!(server.connect().get("/a.txt", "").text(), "a", "a new one");
    download.finish();
    assert_one_panic_counted_and_logged(&server, admin, &format!("GET {PANIC}"));
}

/// Over HTTP/2 (h2c) the panicking stream's connection closes; another
/// HTTP/2 connection on the same worker, and the next ones, are served.
#[test]
fn a_panic_over_http2_closes_its_connection_only() {
    let site = panic_site();
    let server = Server::start(&site.root, &["--threads", "1", "--admin", "127.0.0.1:0"]);
    let admin = crate::observe::admin_addr(&server);
    let download = Download::start(server.addr);
    let url = |path: &str| format!("http://127.0.0.1:{}{path}", server.addr.port());
    let (ok, _, err) = crate::support::run(
        "curl",
        &[
            "-sS",
            "--max-time",
            "10",
            "--http2-prior-knowledge",
            &url(PANIC),
        ],
    );
    assert!(!ok, "the panicking stream got an answer: {err}");
    let (ok, out, err) = crate::support::run(
        "curl",
        &[
            "-sS",
            "--max-time",
            "10",
            "--http2-prior-knowledge",
            &url("/a.txt"),
        ],
    );
    assert!(ok && out == "a", "{out}{err}");
    download.finish();
    assert_one_panic_counted_and_logged(&server, admin, &format!("GET {PANIC}"));
}

/// Over TLS the same: the panicking connection's session ends, the others
/// are served.
#[test]
fn a_panic_over_tls_closes_its_connection_only() {
    let site = panic_site();
    let server = Server::start(
        &site.root,
        &[
            "--threads",
            "1",
            "--admin",
            "127.0.0.1:0",
            "--https",
            "127.0.0.1:0",
            "--tls-self-signed",
        ],
    );
    let https = crate::tls::https_addr(&server);
    let admin = crate::observe::admin_addr(&server);
    let download = Download::start(server.addr);
    let url = |path: &str| format!("https://127.0.0.1:{}{path}", https.port());
    let (ok, _, err) = crate::support::run("curl", &["-sSk", "--max-time", "10", &url(PANIC)]);
    assert!(!ok, "the panicking request got an answer: {err}");
    let (ok, out, err) = crate::support::run("curl", &["-sSk", "--max-time", "10", &url("/a.txt")]);
    assert!(ok && out == "a", "{out}{err}");
    download.finish();
    assert_one_panic_counted_and_logged(&server, admin, &format!("GET {PANIC}"));
}

/// A worker whose loop dies (a panic outside any connection's turn, asked
/// for by the test hook) is started again on the same listeners: the next
/// connections are served, and the restart is counted.
#[test]
fn a_worker_that_dies_is_started_again() {
    let site = panic_site();
    let server = Server::start(&site.root, &["--threads", "1", "--admin", "127.0.0.1:0"]);
    let admin = crate::observe::admin_addr(&server);
    let mut c = server.connect();
    let _ = c.get("/__tachyon_test_worker_panic__", "");
    server
        .wait_for_line("starting it again", Duration::from_secs(5))
        .expect("the restart is logged");
    for _ in 0..3 {
        assert_eq!(server.connect().get("/a.txt", "").text(), "a");
    }
    let counted = crate::support::eventually(Duration::from_secs(5), || {
        let (_, metrics) = crate::observe::admin_get(admin, "/metrics");
        crate::observe::metric(&metrics, "tachyon_worker_restarts_total") == 1.0
    });
    assert!(counted, "the restart is counted");
}
