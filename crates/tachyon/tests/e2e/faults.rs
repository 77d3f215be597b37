//! Fault injection through real sockets: clients that reset, stall or never
//! read, files that change under the server, descriptor exhaustion. Each spec
//! checks that whatever one connection did, the next one is served exactly
//! its own response.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::time::{Duration, Instant};

use crate::support::{Server, Site};

/// Closes `stream` with a RST instead of a FIN (SO_LINGER with zero timeout).
fn reset(stream: TcpStream) {
    rustix::net::sockopt::set_socket_linger(stream.as_fd(), Some(Duration::ZERO)).unwrap();
    drop(stream);
}

/// A client asks for a file and resets before the response is sent; the
/// response must not be sent to the next client of that worker instead.
#[test]
fn a_reset_client_response_never_reaches_the_next_client() {
    let site = Site::new();
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
    let site = Site::new();
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
    let site = Site::new();
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
