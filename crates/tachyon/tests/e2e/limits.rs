//! Limits that protect the server: timeouts, connection caps, slow clients,
//! graceful shutdown.

use std::io::{Read, Write};
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use crate::support::{eventually, raise_nofile, Raw, Server, TestSite};

fn site() -> TestSite {
    let site = TestSite::new();
    site.file("a.txt", "hello");
    site
}

#[test]
fn an_unfinished_head_times_out_with_408() {
    let site = site();
    let server = Server::start(&site.root, &["--header-timeout", "1s"]);
    let mut c = server.connect();
    c.send("GET /a.txt HTTP/1.1\r\nHost: a\r\n");
    let started = Instant::now();
    // Keep trickling bytes: they must not extend the deadline.
    for _ in 0..3 {
        std::thread::sleep(Duration::from_millis(300));
        let _ = std::io::Write::write_all(&mut c.stream, b"X-Slow: 1\r\n");
    }
    let r = c.response(false);
    assert_eq!(r.status, 408);
    assert!(c.is_closed());
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "closed after {:?}",
        started.elapsed()
    );
}

/// Deadlines are whole seconds on the worker's clock, so a head begun late
/// in one of its seconds must still get the whole timeout: four clients,
/// begun a quarter second apart (one of them in each quarter of the
/// server's second), each finish their head 0.7 s after starting it,
/// while a fifth keeps the worker waking (and sweeping) every 20 ms.
#[test]
fn a_timeout_of_one_second_is_never_shorter_than_a_second() {
    let site = site();
    let server = Server::start(&site.root, &["--header-timeout", "1s", "--threads", "1"]);
    let mut ticker = server.connect();
    let ticking = std::thread::spawn(move || {
        for _ in 0..100 {
            assert_eq!(ticker.get("/a.txt", "").status, 200);
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let clients: Vec<_> = (0..4u64)
        .map(|i| {
            let mut c = server.connect();
            std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(250 * i));
                c.send("GET /a.txt HTTP/1.1\r\n");
                std::thread::sleep(Duration::from_millis(700));
                c.send("Host: a\r\n\r\n").response(false).status
            })
        })
        .collect();
    let statuses: Vec<u16> = clients.into_iter().map(|c| c.join().unwrap()).collect();
    assert_eq!(statuses, [200; 4]);
    ticking.join().unwrap();
}

/// Accepts wait for the client's first bytes (TCP_DEFER_ACCEPT): a client
/// that connects and says nothing holds none of a worker's descriptors
/// until it speaks, and one that speaks is answered in the turn of its
/// accept (one request per connection: 15 µs of server CPU instead of 24,
/// wrk -c32 `Connection: close`). One that never speaks is accepted after
/// about a second and closed by the idle timeout like any new connection.
#[test]
fn a_connection_is_accepted_when_its_client_first_speaks() {
    let site = site();
    let server = Server::start(
        &site.root,
        &["--idle-timeout", "1s", "--admin", "127.0.0.1:0"],
    );
    let admin = crate::observe::admin_addr(&server);
    let accepted = || {
        let (_, text) = crate::observe::admin_get(admin, "/metrics");
        crate::observe::metric(&text, "tachyon_connections_accepted_total{scheme=\"http\"}")
    };
    let mut quiet = server.connect();
    let mut c = server.connect();
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(accepted(), 0.0, "accepted before their clients spoke");
    assert_eq!(c.get("/a.txt", "").status, 200);
    // A worker publishes its counters when its turn ends, which may be
    // after the client has its response.
    assert!(
        eventually(Duration::from_secs(2), || accepted() == 1.0),
        "the client that spoke: {} accepted",
        accepted()
    );
    let started = Instant::now();
    assert!(quiet.is_closed());
    assert!(
        started.elapsed() < Duration::from_secs(6),
        "the silent client was closed after {:?}",
        started.elapsed()
    );
    assert_eq!(accepted(), 2.0, "the silent client, in the end");
}

#[test]
fn idle_keep_alive_connections_are_closed() {
    let site = site();
    let server = Server::start(&site.root, &["--idle-timeout", "1s"]);
    let mut c = server.connect();
    assert_eq!(c.get("/a.txt", "").status, 200);
    let started = Instant::now();
    assert!(c.is_closed());
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "idle close took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_thousand_slowloris_connections_do_not_stop_other_clients() {
    raise_nofile();
    let site = site();
    let server = Server::start(&site.root, &[]);
    let mut slow: Vec<Raw> = (0..1000).map(|_| server.connect()).collect();
    for c in &mut slow {
        c.send("GET /a.txt HTTP/1.1\r\nHost: a\r\nX-Never: ");
    }
    for _ in 0..20 {
        let started = Instant::now();
        assert_eq!(server.connect().get("/a.txt", "").status, 200);
        assert!(
            started.elapsed() < Duration::from_secs(1),
            "took {:?}",
            started.elapsed()
        );
    }
}

#[test]
fn connections_beyond_the_maximum_are_closed_and_existing_ones_served() {
    let site = site();
    let server = Server::start(&site.root, &["--threads", "1", "--max-connections", "2"]);
    let mut a = server.connect();
    let mut b = server.connect();
    assert_eq!(a.get("/a.txt", "").status, 200);
    assert_eq!(b.get("/a.txt", "").status, 200);
    let mut extra = server.connect();
    extra.send("GET /a.txt HTTP/1.1\r\nHost: a\r\n\r\n");
    let mut buf = [0u8; 64];
    assert!(
        matches!(extra.stream.read(&mut buf), Ok(0) | Err(_)),
        "third connection refused"
    );
    assert_eq!(
        a.get("/a.txt", "").status,
        200,
        "existing connection still served"
    );
    drop(b);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(
        server.connect().get("/a.txt", "").status,
        200,
        "a freed slot is reused"
    );
}

#[test]
fn a_client_that_stops_reading_is_dropped_after_the_send_timeout() {
    let site = site();
    site.file("big.bin", vec![1u8; 32 * 1024 * 1024]);
    let server = Server::start(
        &site.root,
        &["--send-timeout", "1s", "--max-file-in-memory", "1MiB"],
    );
    let mut stuck = server.connect();
    stuck.send("GET /big.bin HTTP/1.1\r\nHost: a\r\n\r\n");
    std::thread::sleep(Duration::from_millis(3000));
    // Others are served meanwhile, and the stuck one was cut off.
    assert_eq!(server.connect().get("/a.txt", "").status, 200);
    let mut total = 0usize;
    let mut buf = vec![0u8; 1 << 20];
    while let Ok(n) = stuck.stream.read(&mut buf) {
        if n == 0 {
            break;
        }
        total += n;
    }
    assert!(
        total < 32 * 1024 * 1024,
        "the whole body arrived: the timeout did not fire"
    );
}

#[test]
fn sigterm_finishes_responses_in_flight_then_exits() {
    let site = site();
    let big: Vec<u8> = (0..8 * 1024 * 1024u32).map(|i| i as u8).collect();
    site.file("big.bin", &big);
    let mut server = Server::start(&site.root, &["--max-file-in-memory", "1MiB"]);
    let mut c = server.connect();
    c.send("GET /big.bin HTTP/1.1\r\nHost: a\r\n\r\n");
    let mut first = [0u8; 100];
    c.stream.read_exact(&mut first).unwrap();
    server.signal(rustix::process::Signal::TERM);
    std::thread::sleep(Duration::from_millis(200));
    // New connections are refused once listeners are closed.
    assert!(
        std::net::TcpStream::connect(server.addr).is_err(),
        "still accepting after SIGTERM"
    );
    let mut got = first.to_vec();
    c.stream
        .read_to_end(&mut got)
        .expect("the drained connection is closed, not reset");
    let split = got.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    assert!(got.starts_with(b"HTTP/1.1 200 OK"));
    assert!(
        got[split..] == big[..],
        "the response in flight was cut short"
    );
    let started = Instant::now();
    while server.child.try_wait().unwrap().is_none() {
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "did not exit after draining"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(server.child.try_wait().unwrap().unwrap().success());
}

#[test]
fn a_drain_of_one_second_is_never_shorter_than_a_second() {
    // A client that stops reading holds its response in flight, so only the
    // drain's deadline ends the process; that deadline counts from SIGTERM.
    let site = site();
    let big: Vec<u8> = (0..8 * 1024 * 1024u32).map(|i| i as u8).collect();
    site.file("big.bin", &big);
    let mut server = Server::start(&site.root, &["--drain-timeout", "1s", "--threads", "1"]);
    let mut stalled = crate::support::connect_with_receive_buffer(server.addr, 4096);
    stalled
        .write_all(b"GET /big.bin HTTP/1.1\r\nHost: a\r\n\r\n")
        .unwrap();
    let mut first = [0u8; 100];
    stalled.read_exact(&mut first).unwrap();
    let signalled = Instant::now();
    server.signal(rustix::process::Signal::TERM);
    while server.child.try_wait().unwrap().is_none() {
        assert!(
            signalled.elapsed() < Duration::from_secs(5),
            "did not exit at the drain's deadline"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let drained = signalled.elapsed();
    assert!(
        drained >= Duration::from_secs(1),
        "a 1 s drain ended after {drained:?}"
    );
}

#[test]
fn connections_opened_together_are_all_served_by_two_workers() {
    // With a handful of connections the kernel's SO_REUSEPORT hash often puts
    // them all on one worker, which then hands some to the other before
    // reading a byte; every one must still be answered from its first
    // request on, pipelined or not.
    let site = site();
    let server = Server::start(&site.root, &["--threads", "2"]);
    let mut conns: Vec<_> = (0..32).map(|_| server.connect()).collect();
    std::thread::sleep(Duration::from_millis(50));
    for conn in conns.iter_mut().rev() {
        conn.send("GET /a.txt HTTP/1.1\r\nHost: a\r\n\r\nGET /a.txt HTTP/1.1\r\nHost: a\r\n\r\n");
    }
    for (i, conn) in conns.iter_mut().enumerate() {
        for round in 0..2 {
            assert_eq!(
                conn.response(false).status,
                200,
                "connection {i}, round {round}"
            );
        }
        assert_eq!(conn.get("/a.txt", "").status, 200, "connection {i}");
    }
}

/// The congestion control `ss` reports for the server's side of its one
/// established connection on `port`.
fn congestion_of_server_side(port: u16) -> String {
    let filter = format!("( sport = :{port} )");
    let (ok, out, err) = crate::support::run("ss", &["-tinH", "state", "established", &filter]);
    assert!(ok, "ss failed: {err}");
    ["cubic", "reno", "bbr", "dctcp", "vegas", "westwood", "htcp"]
        .into_iter()
        .find(|name| out.split_whitespace().any(|word| word == *name))
        .unwrap_or_else(|| panic!("no congestion control in ss's output: {out}"))
        .to_string()
}

/// A listener on a loopback address gives its connections a congestion
/// control that does not pace (cubic unless configured; `system` keeps
/// the system's), where BBR's pacing timers cost the server a timer per gap
/// with nothing to spare; a wildcard listener keeps the system's, since
/// its clients may be across a network.
#[test]
fn loopback_listeners_choose_their_congestion_control() {
    let site = site();
    let system = std::fs::read_to_string("/proc/sys/net/ipv4/tcp_congestion_control")
        .expect("the system's congestion control")
        .trim()
        .to_string();
    let cases: [(&str, &[&str], &str); 4] = [
        ("127.0.0.1:0", &[], "cubic"),
        ("127.0.0.1:0", &["--loopback-congestion", "reno"], "reno"),
        ("127.0.0.1:0", &["--loopback-congestion", "system"], &system),
        ("0.0.0.0:0", &["--loopback-congestion", "reno"], &system),
    ];
    for (listen, args, expected) in cases {
        let server = Server::start_with(&site.root, listen, args);
        let mut c = Raw::connect(SocketAddr::from(([127, 0, 0, 1], server.addr.port())));
        assert_eq!(c.get("/a.txt", "").status, 200);
        assert_eq!(
            congestion_of_server_side(server.addr.port()),
            expected,
            "listening on {listen} with {args:?}"
        );
    }
}

/// A congestion control the kernel lacks leaves the system's in place and
/// says so; a name no kernel could have is a configuration error.
#[test]
fn a_congestion_control_the_kernel_refuses_is_named() {
    let site = site();
    let server = Server::start(&site.root, &["--loopback-congestion", "nosuchcc"]);
    // Said on stderr before the URL on stdout; the two pipes may arrive
    // in either order.
    let refusal = "congestion control nosuchcc refused";
    assert!(
        server.startup.iter().any(|line| line.contains(refusal))
            || server
                .wait_for_line(refusal, Duration::from_secs(2))
                .is_some(),
        "startup: {:?}",
        server.startup
    );
    assert_eq!(server.connect().get("/a.txt", "").status, 200);
    let exit = crate::support::run_tachyon([
        site.root.to_str().unwrap(),
        "--listen",
        "127.0.0.1:0",
        "--loopback-congestion",
        "Cubic!",
    ]);
    assert_eq!(exit.code, Some(2), "a malformed name: {}", exit.stderr);
    assert!(
        exit.stderr
            .contains("loopback_congestion: \"Cubic!\" is not a congestion control"),
        "stderr: {}",
        exit.stderr
    );
}
