//! Binary upgrade on SIGUSR2: the binary at the server's own path starts on
//! the same sockets, and the old process drains only once it serves; a
//! successor that fails, or a stop while it starts, changes nothing else.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::time::Duration;

use rustix::process::Signal;

use crate::h3::{sha256_hex, PausedDownload};
use crate::support::{binary, eventually, run, upgraded_pid, Raw, Server, Successor, TestSite};

/// The binary as an operator installs it: a file of its own in a bin folder.
fn installed(site: &TestSite) -> PathBuf {
    let exe = site.path("bin/tachyon");
    std::fs::create_dir_all(exe.parent().unwrap()).unwrap();
    replace(&exe, Program::Built);
    exe
}

enum Program {
    /// The binary under test.
    Built,
    /// A copy of this program (a system binary).
    Copy(&'static str),
    /// A shell script with this body. The sandbox does not let the server
    /// run /bin/sh, so specs that use one turn it off.
    Script(&'static str),
}

/// Replaces the file at `exe` by rename, as `install` and dpkg do. The new
/// file is written by a child process: a file this (multi-threaded) test
/// process held open for writing could leak into another spec's fork and
/// make exec fail with ETXTBSY.
fn replace(exe: &Path, with: Program) {
    let next = exe.with_extension("new");
    let next = next.to_str().unwrap();
    let (ok, _, err) = match with {
        Program::Built => run("cp", &[binary().to_str().unwrap(), next]),
        Program::Copy(program) => run("cp", &[program, next]),
        Program::Script(body) => run(
            "sh",
            &["-c", r#"printf '%s' "$1" > "$2""#, "sh", body, next],
        ),
    };
    assert!(ok, "{err}");
    std::fs::set_permissions(next, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::rename(next, exe).unwrap();
}

fn alive(server: &mut Server) -> bool {
    server.child.try_wait().unwrap().is_none()
}

/// 64 wrk connections keep requesting through an upgrade to a new file at
/// the same path: not one request fails and no connection is reset; the
/// old process exits once drained and the new one answers on the same
/// port, its admin listener included.
#[test]
fn an_upgrade_under_load_fails_no_request() {
    let site = TestSite::new();
    site.file("www/index.html", "before and after");
    site.file("www/1k", "k".repeat(1024));
    let exe = installed(&site);
    let mut server = Server::start_program(
        &exe,
        &site.path("www"),
        &["--no-watch", "--admin", "127.0.0.1:0"],
    );
    let admin: std::net::SocketAddr = server
        .wait_for_line("admin on http://", Duration::from_secs(5))
        .and_then(|l| l.split("http://").nth(1)?.split('/').next()?.parse().ok())
        .expect("the admin address");
    replace(&exe, Program::Built);

    let url = server.url("/1k");
    let load = std::thread::spawn(move || run("wrk", &["-t1", "-c64", "-d4s", &url]));
    std::thread::sleep(Duration::from_secs(1));
    server.signal(Signal::USR2);
    let line = server
        .wait_for_line("upgrade: process", Duration::from_secs(20))
        .expect("the upgrade reported");
    let _successor = Successor(upgraded_pid(&line));
    let (ok, out, err) = load.join().unwrap();
    assert!(ok, "{err}");
    assert!(out.contains("requests in"), "{out}");
    assert!(!out.contains("Socket errors"), "{out}");
    assert!(!out.contains("Non-2xx"), "{out}");

    assert!(
        eventually(Duration::from_secs(10), || !alive(&mut server)),
        "the old process did not exit after draining"
    );
    assert_eq!(
        Raw::connect(server.addr).get("/", "").text(),
        "before and after"
    );
    let ready = Raw::connect(admin).get("/readyz", "");
    assert_eq!(ready.status, 200);
}

/// A successor that exits before it is ready is reported with its exit
/// status; the old process keeps serving on its sockets, and a later
/// upgrade to a working binary still succeeds.
#[test]
fn a_failed_successor_leaves_the_old_process_serving() {
    let site = TestSite::new();
    site.file("www/index.html", "still here");
    let exe = installed(&site);
    let mut server = Server::start_program(&exe, &site.path("www"), &["--no-watch"]);
    // An executable in the binary's folder, as the sandbox allows, that
    // fails whatever its arguments.
    replace(&exe, Program::Copy("/bin/false"));
    server.signal(Signal::USR2);
    let failed = server
        .wait_for_line("upgrade failed", Duration::from_secs(20))
        .expect("the failure reported");
    assert!(failed.contains("exit status: 1"), "{failed}");
    assert!(failed.contains("still serving"), "{failed}");
    assert!(alive(&mut server));
    assert_eq!(Raw::connect(server.addr).get("/", "").text(), "still here");

    replace(&exe, Program::Built);
    server.signal(Signal::USR2);
    let line = server
        .wait_for_line("upgrade: process", Duration::from_secs(20))
        .expect("the second upgrade reported");
    let _successor = Successor(upgraded_pid(&line));
    assert!(eventually(Duration::from_secs(10), || !alive(&mut server)));
    assert_eq!(Raw::connect(server.addr).get("/", "").text(), "still here");
}

/// SIGTERM while a successor is starting stops both: the successor holds
/// the listening sockets, so leaving it behind would keep the port bound
/// with nobody answering.
#[test]
fn a_stop_during_an_upgrade_takes_the_successor_too() {
    let site = TestSite::new();
    site.file("www/index.html", "x");
    let exe = installed(&site);
    let mut server =
        Server::start_program(&exe, &site.path("www"), &["--no-watch", "--no-sandbox"]);
    let addr = server.addr;
    replace(&exe, Program::Script("#!/bin/sh\nexec sleep 30\n"));
    server.signal(Signal::USR2);
    std::thread::sleep(Duration::from_millis(500));
    server.signal(Signal::TERM);
    assert!(eventually(Duration::from_secs(10), || !alive(&mut server)));
    assert!(
        eventually(Duration::from_secs(5), || std::net::TcpListener::bind(addr)
            .is_ok()),
        "something still holds {addr}"
    );
}

/// A server that upgrades to the same binary, HTTP/3 on, with a
/// `big.bin` of 4 MiB and an `a.txt` saying `text`.
struct H3Upgrade {
    /// Kept: the site's folder lives as long as the server.
    _site: TestSite,
    server: Server,
    at: std::net::SocketAddr,
    body: Vec<u8>,
    /// The inodes of its UDP sockets before any upgrade.
    before: Vec<u64>,
}

impl H3Upgrade {
    fn start(text: &str) -> H3Upgrade {
        let site = TestSite::new();
        let body: Vec<u8> = (0..4u32 << 20).map(|i| (i % 251) as u8).collect();
        site.file("www/big.bin", &body);
        site.file("www/a.txt", text);
        let exe = installed(&site);
        let server = Server::start_program(
            &exe,
            &site.path("www"),
            &["--no-watch", "--https", "127.0.0.1:0", "--tls-self-signed"],
        );
        let at = crate::tls::https_addr(&server);
        server
            .wait_for_line("HTTP/3 on UDP", Duration::from_secs(10))
            .expect("an HTTP/3 line");
        let before = udp_inodes(at.port());
        assert!(!before.is_empty(), "no UDP socket on port {}", at.port());
        replace(&exe, Program::Built);
        H3Upgrade {
            _site: site,
            server,
            at,
            body,
            before,
        }
    }

    /// The successor `signal` started, once reported on `server`'s output
    /// (every process of the chain prints there).
    fn upgraded(&self, signal: impl FnOnce()) -> Successor {
        signal();
        let line = self
            .server
            .wait_for_line("upgrade: process", Duration::from_secs(20))
            .expect("the upgrade reported");
        Successor(upgraded_pid(&line))
    }

    /// The download finished whole, the oldest process exited, and the
    /// newest answers HTTP/3 on the same UDP sockets.
    fn check_after(&mut self, download: serde_json::Value, text: &str) {
        assert_eq!(download["status"], 200, "{download}");
        assert_eq!(download["len"], self.body.len(), "{download}");
        assert_eq!(download["sha256"], sha256_hex(&self.body).as_str());
        assert!(
            eventually(Duration::from_secs(10), || !alive(&mut self.server)),
            "the oldest process did not exit after draining"
        );
        let after = crate::h3::h3(self.at, &["/a.txt"]);
        assert_eq!(after[0]["status"], 200, "{after:?}");
        assert_eq!(after[0]["body"], text);
        assert_eq!(
            udp_inodes(self.at.port()),
            self.before,
            "the newest process serves HTTP/3 on sockets of its own"
        );
    }
}

/// With HTTP/3 on, an upgrade hands the UDP sockets over too: the same
/// sockets serve after it, none bound again (a server that dropped the
/// privilege to bind its port could not). A download in flight on the old
/// process finishes there with a GOAWAY, as the successor reads no
/// datagram until the old process has exited (were both reading, each
/// would take half of the connection's packets); then the successor
/// answers HTTP/3 on the same port.
#[test]
fn an_upgrade_hands_over_the_udp_sockets_and_finishes_http3_in_flight() {
    let mut up = H3Upgrade::start("after");
    let download = PausedDownload::start(up.at, "/big.bin", 2);
    let _successor = up.upgraded(|| up.server.signal(Signal::USR2));
    let got = download.finish();
    assert_eq!(got["goaway"], true, "no GOAWAY from the old process: {got}");
    up.check_after(got, "after");
}

/// A second upgrade while the first one's old process still finishes an
/// HTTP/3 download: the newest process waits for both predecessors (the
/// middle one passes its own hold on), so the download still finishes
/// whole, and HTTP/3 then answers from the newest on the same sockets.
#[test]
fn a_second_upgrade_during_the_overlap_waits_for_the_oldest_process() {
    let mut up = H3Upgrade::start("third");
    let download = PausedDownload::start(up.at, "/big.bin", 4);
    let middle = up.upgraded(|| up.server.signal(Signal::USR2));
    let pid = rustix::process::Pid::from_raw(middle.0).unwrap();
    let _newest = up.upgraded(|| rustix::process::kill_process(pid, Signal::USR2).unwrap());
    up.check_after(download.finish(), "third");
}

/// The inodes of the UDP sockets bound to `port` (/proc/net/udp), sorted.
fn udp_inodes(port: u16) -> Vec<u64> {
    let table = std::fs::read_to_string("/proc/net/udp").unwrap();
    let mut inodes: Vec<u64> = table
        .lines()
        .skip(1)
        .filter_map(|line| {
            let cols: Vec<&str> = line.split_whitespace().collect();
            let local = cols.get(1)?.rsplit(':').next()?;
            let inode = cols.get(9)?.parse().ok()?;
            (u16::from_str_radix(local, 16).ok()? == port).then_some(inode)
        })
        .collect();
    inodes.sort_unstable();
    inodes
}
