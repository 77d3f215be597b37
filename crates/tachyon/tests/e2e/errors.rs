//! Malformed and oversized input gets the right status, and the connection is
//! closed where the framing can no longer be trusted.

use crate::support::{Server, TestSite};

fn server() -> (TestSite, Server) {
    let site = TestSite::new();
    site.file("a.txt", "hello");
    let server = Server::start(&site.root, &[]);
    (site, server)
}

/// Sends `request` on a fresh connection; returns the status and whether the
/// server closed the connection afterwards.
fn answer(server: &Server, request: &[u8]) -> (u16, bool) {
    let mut c = server.connect();
    c.send(request);
    let r = c.response(false);
    (r.status, c.is_closed())
}

#[test]
fn malformed_requests_are_400_and_close() {
    let (_site, server) = server();
    let cases: &[(&[u8], &str)] = &[
        (b"GARBAGE\r\n\r\n", "no target or version"),
        (b"GET / HTTP/1.1\r\n\r\n", "1.1 without Host"),
        (b"GET / HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", "two Hosts"),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nBad Header: x\r\n\r\n",
            "space in field name",
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n",
            "CL + TE",
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "two CLs",
        ),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip\r\n\r\n",
            "TE without chunked",
        ),
        (
            b"GET relative HTTP/1.1\r\nHost: a\r\n\r\n",
            "not origin-form",
        ),
        (
            b"GET /a%zz HTTP/1.1\r\nHost: a\r\n\r\n",
            "bad percent-encoding",
        ),
        (b"GET / HTTP/1.1\nHost: a\n\n", "bare LF line ends"),
        (b"GET / HTTP/1.1\r\nHost: a\r\n x\r\n\r\n", "a folded line"),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nA: b\x7fc\r\n\r\n",
            "DEL in a value",
        ),
        (
            b"GET /\xc3 HTTP/1.1\r\nHost: a\r\n\r\n",
            "a target that is not UTF-8",
        ),
    ];
    for (request, what) in cases {
        assert_eq!(answer(&server, request), (400, true), "{what}");
    }
}

#[test]
fn a_bad_byte_is_answered_before_the_head_ends() {
    // A client that sends a bare LF or a control byte gets its 400 at once,
    // not when the head timeout ends the wait for the rest of the head.
    let (_site, server) = server();
    let cases: &[(&[u8], &str)] = &[
        (b"GET / HTTP/1.1\nHost: a", "bare LF"),
        (
            b"GET / HTTP/1.1\r\nHost: a\r\nUser-Agent: x\x01",
            "a control byte",
        ),
    ];
    for (request, what) in cases {
        let started = std::time::Instant::now();
        assert_eq!(answer(&server, request), (400, true), "{what}");
        let waited = started.elapsed();
        assert!(
            waited < std::time::Duration::from_secs(2),
            "{what}: answered after {waited:?}"
        );
    }
}

#[test]
fn unsupported_version_is_505() {
    let (_site, server) = server();
    assert_eq!(
        answer(&server, b"GET / HTTP/2.0\r\nHost: a\r\n\r\n"),
        (505, true)
    );
    assert_eq!(
        answer(&server, b"GET / HTTP/1.7\r\nHost: a\r\n\r\n"),
        (505, true)
    );
}

#[test]
fn long_targets_are_414_and_large_heads_431() {
    let (_site, server) = server();
    let long_target = format!("GET /{} HTTP/1.1\r\nHost: a\r\n\r\n", "a".repeat(9000));
    assert_eq!(answer(&server, long_target.as_bytes()), (414, true));
    let big_header = format!(
        "GET / HTTP/1.1\r\nHost: a\r\nX-Big: {}\r\n\r\n",
        "b".repeat(20_000)
    );
    assert_eq!(answer(&server, big_header.as_bytes()), (431, true));
    let many: String = (0..150).map(|i| format!("X-{i}: 1\r\n")).collect();
    assert_eq!(
        answer(
            &server,
            format!("GET / HTTP/1.1\r\nHost: a\r\n{many}\r\n").as_bytes()
        ),
        (431, true)
    );
}

#[test]
fn a_small_body_on_get_is_discarded_and_the_connection_reused() {
    let (_site, server) = server();
    let mut c = server.connect();
    c.send("GET /a.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nXXXXXGET /a.txt HTTP/1.1\r\nHost: a\r\n\r\n");
    assert_eq!(c.response(false).text(), "hello");
    assert_eq!(
        c.response(false).text(),
        "hello",
        "the body was not parsed as a request"
    );
}

#[test]
fn a_large_body_is_413_and_close() {
    let (_site, server) = server();
    let request = b"GET /a.txt HTTP/1.1\r\nHost: a\r\nContent-Length: 100000000\r\n\r\n";
    assert_eq!(answer(&server, request), (413, true));
}

#[test]
fn a_chunked_body_is_answered_then_the_connection_closed() {
    let (_site, server) = server();
    let request = b"GET /a.txt HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nGET /\r\n0\r\n\r\n";
    let mut c = server.connect();
    c.send(request);
    let r = c.response(false);
    assert_eq!((r.status, r.header("connection")), (200, Some("close")));
    assert!(
        c.is_closed(),
        "the chunked body must never be parsed as a request"
    );
}
