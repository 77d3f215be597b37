//! Test fixtures: a temp document root, the real binary on an ephemeral
//! loopback port (killed by pid on drop), and a raw HTTP/1.1 client that reads
//! exactly one response so tests can assert bytes and connection reuse.

#![allow(dead_code)]

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

/// A temporary directory removed on drop.
pub struct TestSite {
    pub root: PathBuf,
    _folder: tachyon_testkit::Scratch,
}

impl TestSite {
    pub fn new() -> TestSite {
        let folder = tachyon_testkit::Scratch::new("e2e");
        TestSite {
            root: folder.path().to_path_buf(),
            _folder: folder,
        }
    }

    /// Writes `body` at `path` (relative), creating directories.
    pub fn file(&self, path: &str, body: impl AsRef<[u8]>) -> &TestSite {
        let full = self.root.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, body).unwrap();
        self
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }
}

/// The tachyon binary, running; killed (by its own pid) on drop.
pub struct Server {
    pub child: Child,
    /// `XDG_CACHE_HOME` for this server, removed when it is dropped.
    cache_home: tachyon_testkit::Scratch,
    pub addr: SocketAddr,
    pub url: String,
    /// Lines the server printed after its URL, stdout and stderr together.
    pub lines: std::sync::mpsc::Receiver<String>,
    /// What the server printed before its URL (the load summary).
    pub startup: Vec<String>,
    /// The line that announced the URL.
    announced: String,
}

impl Server {
    /// Starts `tachyon ROOT --listen 127.0.0.1:0 ARGS…` and waits for its URL line.
    pub fn start(root: &Path, args: &[&str]) -> Server {
        Server::start_with(root, "127.0.0.1:0", args)
    }

    pub fn start_with(root: &Path, listen: &str, args: &[&str]) -> Server {
        let mut command = Command::new(binary());
        command.arg(root).args(["--listen", listen]).args(args);
        Server::spawn(command)
    }

    /// Like [`Server::start`], running `program` instead of the binary
    /// under test (a copy that an upgrade spec replaces).
    pub fn start_program(program: &Path, root: &Path, args: &[&str]) -> Server {
        let mut command = Command::new(program);
        command
            .arg(root)
            .args(["--listen", "127.0.0.1:0"])
            .args(args);
        Server::spawn(command)
    }

    /// Like [`Server::start`], with environment variables set.
    pub fn start_env(root: &Path, args: &[&str], env: &[(&str, &str)]) -> Server {
        let mut command = Command::new(binary());
        command
            .arg(root)
            .args(["--listen", "127.0.0.1:0"])
            .args(args)
            .envs(env.iter().copied());
        Server::spawn(command)
    }

    /// Like [`Server::start`], under an open-file limit of `nofile` (soft
    /// and hard, set by util-linux's `prlimit`, which then execs the binary
    /// in the same process).
    pub fn start_limited(root: &Path, nofile: u64, args: &[&str]) -> Server {
        let mut command = Command::new("prlimit");
        command
            .arg(format!("--nofile={nofile}:{nofile}"))
            .arg("--")
            .arg(binary())
            .arg(root)
            .args(["--listen", "127.0.0.1:0"])
            .args(args);
        Server::spawn(command)
    }

    /// Starts `tachyon ARGS…` as given (the arguments or the config file
    /// name the root and a loopback address).
    pub fn start_args(args: &[&str]) -> Server {
        let mut command = Command::new(binary());
        command.args(args);
        Server::spawn(command)
    }

    /// Starts `tachyon --listen 127.0.0.1:0 ARGS…` with no root, in `dir`.
    pub fn start_in(dir: &Path, args: &[&str]) -> Server {
        let mut command = Command::new(binary());
        command
            .current_dir(dir)
            .args(["--listen", "127.0.0.1:0"])
            .args(args);
        Server::spawn(command)
    }

    /// Starts `command`, which execs the binary under test in its own
    /// process (a launcher that sets up its environment first), and waits
    /// for its URL line.
    pub fn start_command(command: Command) -> Server {
        Server::spawn(command)
    }

    fn spawn(mut command: Command) -> Server {
        // A cache folder of its own (unless the spec names one): variants
        // another spec built must not make this one's build a cache hit.
        let cache_home = tachyon_testkit::Scratch::new("e2e-cache");
        command.env("XDG_CACHE_HOME", cache_home.path());
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn tachyon");
        let (tx, rx) = std::sync::mpsc::channel();
        // Keep draining both pipes so the server never sees one full or
        // closed; their lines meet in one channel the specs wait on.
        let stdout = child.stdout.take().unwrap();
        let stderr = child.stderr.take().unwrap();
        let err_tx = tx.clone();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                let _ = err_tx.send(line);
            }
        });
        let mut startup = Vec::new();
        let (url, addr, announced) = loop {
            match rx.recv_timeout(Duration::from_secs(20)) {
                Ok(line) => match announced_url(&line) {
                    Some((url, addr)) => break (url, addr, line),
                    // Any other line, on stdout or stderr and in whatever
                    // order the two pipes' readers deliver, is start-up
                    // output (under the whole suite another line with
                    // " on " once came first, in an ACME spec).
                    None => startup.push(line),
                },
                Err(_) => {
                    let _ = child.kill();
                    let _ = child.wait();
                    startup.extend(rx.try_iter());
                    panic!("tachyon did not print its URL; it printed: {startup:#?}");
                }
            }
        };
        Server {
            child,
            cache_home,
            addr,
            url,
            lines: rx,
            startup,
            announced,
        }
    }

    /// The `serving ROOT on URL` line.
    pub fn startup_line(&self) -> &str {
        &self.announced
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{}", self.url.trim_end_matches('/'), path)
    }

    pub fn connect(&self) -> Raw {
        Raw::connect(self.addr)
    }

    /// The server's pid.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// CPU time the server has used so far, in clock ticks (utime + stime).
    pub fn cpu_ticks(&self) -> u64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        // Fields after the parenthesised command name; utime and stime are
        // the 14th and 15th fields of the whole line.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap()
    }

    /// Resident memory, in KiB.
    pub fn rss_kib(&self) -> u64 {
        self.proc_kib("status", "VmRSS:").unwrap()
    }

    /// KiB of the anonymous memory in transparent huge pages.
    pub fn anon_huge_kib(&self) -> u64 {
        self.proc_kib("smaps_rollup", "AnonHugePages:").unwrap_or(0)
    }

    /// A "Key:  N kB" line of one of the process's `/proc` files.
    fn proc_kib(&self, file: &str, key: &str) -> Option<u64> {
        std::fs::read_to_string(format!("/proc/{}/{file}", self.pid()))
            .unwrap()
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())?
            .parse()
            .ok()
    }

    /// Open descriptors.
    pub fn open_fds(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.pid()))
            .unwrap()
            .count()
    }

    /// Waits up to `within` for a line on the server's stdout containing `needle`.
    pub fn wait_for_line(&self, needle: &str, within: Duration) -> Option<String> {
        let deadline = std::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return Some(line),
                Ok(_) => {}
                Err(_) => return None,
            }
        }
    }

    /// Sends a signal to this child only.
    pub fn signal(&self, signal: rustix::process::Signal) {
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, signal).unwrap();
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The binary under test: `TACHYON_BIN` when set (to run these specs against
/// another build, e.g. an older commit's, to show a spec fails there), else
/// the one cargo built.
pub fn binary() -> PathBuf {
    std::env::var_os("TACHYON_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_tachyon")))
}

/// What a tachyon run that exits printed (`--print-config`, a startup error).
pub struct Exit {
    /// The exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
}

/// Runs `tachyon ARGS…` to its exit.
pub fn run_tachyon<S: AsRef<std::ffi::OsStr>>(args: impl IntoIterator<Item = S>) -> Exit {
    let out = Command::new(binary())
        .args(args)
        .output()
        .expect("spawn tachyon");
    Exit {
        code: out.status.code(),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

/// A free loopback port (bound, read, released: the spec binds it again
/// at once).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// Polls `check` every 50 ms until it holds or `within` passes.
pub fn eventually(within: Duration, mut check: impl FnMut() -> bool) -> bool {
    let deadline = std::time::Instant::now() + within;
    while std::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    check()
}

pub use tachyon_testkit::Response;

/// A raw client on one connection: writes go to `stream` as they are,
/// responses are read through its own buffer.
pub struct Raw {
    pub stream: TcpStream,
    reader: BufReader<TcpStream>,
}

impl Raw {
    pub fn connect(addr: SocketAddr) -> Raw {
        let stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let reader = BufReader::with_capacity(64 * 1024, stream.try_clone().expect("clone"));
        Raw { stream, reader }
    }

    pub fn send(&mut self, bytes: impl AsRef<[u8]>) -> &mut Raw {
        self.stream.write_all(bytes.as_ref()).expect("send");
        self
    }

    /// `GET path` with Host, plus extra header lines (each ending in CRLF).
    pub fn get(&mut self, path: &str, extra: &str) -> Response {
        self.get_from("t", path, extra)
    }

    /// `GET path` with the given Host.
    pub fn get_from(&mut self, host: &str, path: &str, extra: &str) -> Response {
        self.send(format!(
            "GET {path} HTTP/1.1\r\nHost: {host}\r\n{extra}\r\n"
        ));
        self.response(false)
    }

    /// Reads one response; `head_only` for HEAD or when the body must not be read.
    pub fn response(&mut self, head_only: bool) -> Response {
        let response = tachyon_testkit::read_response(&mut self.reader, head_only)
            .unwrap_or_else(|e| panic!("reading a response: {e}"));
        assert!(!response.short, "connection closed before the full body");
        response
    }

    /// True when the server closed the connection (EOF) with nothing more to read.
    pub fn is_closed(&mut self) -> bool {
        matches!(
            self.reader.fill_buf().map(|b| b.is_empty()),
            Ok(true) | Err(_)
        )
    }
}

/// Raises this test process's open-file limit (for the many-connection specs).
pub fn raise_nofile() {
    tachyon_sys::raise_fd_limit();
}

/// Runs a command, returning (success, stdout, stderr); panics if it cannot start.
pub fn run(program: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| {
            panic!("{program} is required for this test ({e}); .ci/run installs it")
        });
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A TCP connection whose receive buffer is fixed at `bytes` (set before
/// connecting, so the kernel does not grow it); reads time out after 10 s.
pub fn connect_with_receive_buffer(addr: SocketAddr, bytes: usize) -> TcpStream {
    use rustix::net::{sockopt, AddressFamily, SocketType};
    let family = if addr.is_ipv4() {
        AddressFamily::INET
    } else {
        AddressFamily::INET6
    };
    let fd = rustix::net::socket(family, SocketType::STREAM, None).unwrap();
    sockopt::set_socket_recv_buffer_size(&fd, bytes).unwrap();
    rustix::net::connect(&fd, &addr).unwrap();
    let stream = TcpStream::from(fd);
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream
}

/// A site of [`ReopenedSite::FILES`] disk-served files under `d/`, served
/// with 256 descriptors, so that 32 are kept open and the rest opened for
/// each response, and `ping.txt`, small enough to stay in memory (asking
/// for it holds no descriptor); one worker.
pub struct ReopenedSite {
    pub server: Server,
    _site: TestSite,
}

impl ReopenedSite {
    pub const FILES: usize = 40;
    /// The most files the server keeps open (an eighth of 256).
    pub const KEPT: usize = 32;

    pub fn start() -> ReopenedSite {
        let site = TestSite::new();
        for n in 0..Self::FILES {
            site.file(&format!("d/f{n}.txt"), Self::body(n));
        }
        site.file("ping.txt", "ok");
        let server = Server::start_limited(
            &site.root,
            256,
            &[
                "--no-watch",
                "--no-compress",
                "--cache-dir",
                "off",
                "--threads",
                "1",
                "--max-file-in-memory",
                "16",
            ],
        );
        ReopenedSite {
            server,
            _site: site,
        }
    }

    /// File `n`'s bytes (22 KB).
    pub fn body(n: usize) -> String {
        format!("body of file {n}\n").repeat(1500)
    }

    /// Sets the running server's soft open-file limit (with `prlimit`).
    pub fn limit_descriptors(&self, soft: usize) {
        let pid = self.server.pid().to_string();
        let (ok, _, err) = run("prlimit", &["--pid", &pid, &format!("--nofile={soft}:256")]);
        assert!(ok, "prlimit: {err}");
    }
}

/// A process the server under test started (an upgrade's successor),
/// killed (by pid) when the spec ends.
pub struct Successor(pub i32);

impl Drop for Successor {
    fn drop(&mut self) {
        if let Some(pid) = rustix::process::Pid::from_raw(self.0) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }
}

/// The successor's pid in `upgrade: process N is serving; …`.
pub fn upgraded_pid(line: &str) -> i32 {
    line.split("process ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| panic!("no pid in {line:?}"))
}

/// The URL and address of an announce line, `... on http://127.0.0.1:8080/`
/// (or `https://`, or the admin listener's), its address parsed; `None` for
/// any other line.
pub fn announced_url(line: &str) -> Option<(String, SocketAddr)> {
    let (_, rest) = line.split_once(" on http")?;
    let url = format!("http{}", rest.split_whitespace().next()?);
    let hostport = url
        .trim_start_matches("http://")
        .trim_start_matches("https://")
        .trim_end_matches('/');
    let addr = hostport.parse().ok()?;
    Some((url, addr))
}
