//! The footprint cells: a fresh server on the small site, `conns` idle
//! keep-alive connections held open, and its resident memory with and
//! without them (Boa's footprint claim, seed 002). In a TLS run the
//! connections are TLS sessions (rustls, certificate not checked: the run
//! made it), so the figure is memory per idle TLS connection; in an h2
//! run they negotiate `h2` by ALPN and each holds one finished stream, so
//! the figure is memory per idle HTTP/2 connection; in the h3 suite they
//! are QUIC connections held by `tachyon-bench h3load --hold`, each after
//! one finished request. "Without" is read after a warm-up of connections
//! made and closed.
//!
//! Invariant: the connections a row says were held are those the server
//! still held when its memory was read (a server that closes idle ones,
//! by timeout or to make room, is flagged, not credited with them).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use rustls::pki_types::ServerName;
use rustls::{ClientConfig, ClientConnection, StreamOwned};

use crate::peers::{Env, Running};
use crate::proc;
use crate::results::Row;
use crate::suites::Over;

/// Measures `server`'s peer on its own fresh instance serving the small
/// site, into `row`.
pub fn measure(server: &Running, env: &Env, conns: u32, over: Over, row: &mut Row) {
    // Its own scratch folder: this instance runs beside the main one,
    // and Apache refuses to start over a live pid file.
    let run_dir = env.run_dir.join("small");
    let small = Env {
        root: env.root.with_file_name("www-small"),
        run_dir: run_dir.clone(),
        ..env.clone()
    };
    if let Err(e) = crate::peers::scratch_dir(&run_dir) {
        row.ok = false;
        row.problems
            .push(format!("creating {}: {e}", run_dir.display()));
        return;
    }
    match Running::start(server.peer, &small) {
        Ok(fresh) if over == Over::H3 => hold_h3(&fresh, conns, row),
        Ok(fresh) => hold(&fresh, conns, over == Over::H2, row),
        Err(e) => {
            row.ok = false;
            row.problems
                .push(format!("starting on the small site: {e:#}"));
        }
    }
}

/// Connections opened and closed before the memory without any is read.
const WARM_UP: usize = 50;

/// Opens `conns` keep-alive connections, one request each, holds them, and
/// reads the server's resident memory with and without them.
fn hold(server: &Running, conns: u32, h2: bool, row: &mut Row) {
    let kind = match (server.tls, h2) {
        (true, true) => "HTTP/2 over TLS",
        (true, false) => "TLS",
        (false, true) => "h2c (prior knowledge)",
        (false, false) => "keep-alive",
    };
    row.client_command =
        format!("(built in) {conns} {kind} connections, one GET / each, held open");
    let tls = server.tls.then(|| client_config(h2));
    let open = || -> std::io::Result<Box<dyn Held>> {
        let stream = TcpStream::connect_timeout(&server.addr(), Duration::from_secs(2))?;
        stream.set_read_timeout(Some(Duration::from_secs(5)))?;
        // TLS writes its Finished and the request apart: with Nagle the
        // request waited for the server's delayed ACK, 40 ms a connection
        // (2,000 connections took 90 s a server on the 2026-12-02 host).
        stream.set_nodelay(true)?;
        Ok(match &tls {
            None if h2 => Box::new(one_h2_request(stream, false)?),
            None => Box::new(one_request(stream)?),
            Some(config) => {
                let name = ServerName::try_from("127.0.0.1").map_err(std::io::Error::other)?;
                let session = ClientConnection::new(Arc::clone(config), name)
                    .map_err(std::io::Error::other)?;
                let stream = StreamOwned::new(session, stream);
                if h2 {
                    Box::new(one_h2_request(stream, true)?)
                } else {
                    Box::new(one_request(stream)?)
                }
            }
        })
    };
    // "Without" is a server that has served: a few connections made and
    // closed first, so pools and caches every server fills on its first
    // requests are not counted per connection (h2o's resident memory
    // right after start was above its memory with 2,000 connections held,
    // which made its figure negative).
    let warm: Vec<_> = (0..WARM_UP).filter_map(|_| open().ok()).collect();
    drop(warm);
    std::thread::sleep(Duration::from_millis(300));
    let rest = proc::rss_bytes(server.pid());
    let mut held: Vec<Box<dyn Held>> = Vec::with_capacity(conns as usize);
    let mut failures = 0u64;
    for _ in 0..conns {
        let attempt = open();
        match attempt {
            Ok(stream) => held.push(stream),
            Err(_) => failures += 1,
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    let loaded = proc::rss_bytes(server.pid());
    // Counted after the reading: a server that closed idle connections
    // while the rest were opened (an idle timeout shorter than the
    // opening) was measured holding fewer than it was given.
    let open_now = held.iter().filter(|conn| still_open(conn.socket())).count();
    row.rss_rest_bytes = Some(rest);
    row.rss_loaded_bytes = Some(loaded);
    row.idle_conns_held = Some(open_now as u64);
    row.client.requests = held.len() as u64;
    row.client.socket_errors = failures;
    row.ok = failures == 0 && open_now == held.len();
    if failures > 0 {
        row.problems
            .push(format!("{failures} of {conns} connections failed"));
    }
    if open_now < held.len() {
        row.problems.push(format!(
            "the server closed {} of {} connections before its memory was read",
            held.len() - open_now,
            held.len()
        ));
    }
    drop(held);
    std::thread::sleep(Duration::from_millis(300));
}

/// The same over HTTP/3: `h3load` holds the connections in a child
/// process, and the server's memory is read once it says so.
fn hold_h3(server: &Running, conns: u32, row: &mut Row) {
    let bench = std::env::current_exe().unwrap_or_else(|_| "tachyon-bench".into());
    let url = server.url("/index.html");
    row.client_command = format!(
        "{} h3load -c{conns} -n{conns} --hold 4 {url}",
        bench.display()
    );
    let h3load = |args: &[String]| {
        std::process::Command::new(&bench)
            .arg("h3load")
            .args(args)
            .arg(&url)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::null())
            .spawn()
    };
    // Warm-up: connections made, used and closed.
    let warm = format!("-c{WARM_UP}");
    let warm_n = format!("-n{WARM_UP}");
    if let Ok(mut child) = h3load(&["--fresh".into(), warm, warm_n]) {
        let _ = child.wait();
    }
    std::thread::sleep(Duration::from_millis(300));
    let rest = proc::rss_bytes(server.pid());
    let args = [
        format!("-c{conns}"),
        format!("-n{conns}"),
        "--hold".into(),
        "4".into(),
    ];
    let mut child = match h3load(&args) {
        Ok(child) => child,
        Err(e) => {
            row.ok = false;
            row.problems.push(format!("starting h3load: {e}"));
            return;
        }
    };
    let mut text = String::new();
    if let Some(mut out) = child.stdout.take() {
        // Everything up to "holding …" (h3load prints it once all answered).
        let mut byte = [0u8; 1];
        while !text.contains("holding") && out.read(&mut byte).unwrap_or(0) == 1 {
            text.push(char::from(byte[0]));
        }
        std::thread::sleep(Duration::from_millis(300));
        row.rss_loaded_bytes = Some(proc::rss_bytes(server.pid()));
        let _ = child.wait();
    }
    row.rss_rest_bytes = Some(rest);
    let succeeded = crate::clients::parse_h2load(&text).map(|r| r.requests);
    let held = succeeded.unwrap_or(0);
    row.idle_conns_held = Some(held);
    row.client.requests = held;
    row.ok = held == u64::from(conns) && text.contains("holding");
    if !row.ok {
        row.problems.push(format!(
            "{held} of {conns} HTTP/3 connections answered before the hold"
        ));
    }
}

/// A connection held open, and its socket (one descriptor each: a second
/// handle would halve the connections a run's open-file limit allows).
trait Held: Send {
    fn socket(&self) -> &TcpStream;
}

impl Held for TcpStream {
    fn socket(&self) -> &TcpStream {
        self
    }
}

impl Held for StreamOwned<ClientConnection, TcpStream> {
    fn socket(&self) -> &TcpStream {
        &self.sock
    }
}

/// True while the server has not closed `socket`: reading what is waiting
/// (a session ticket, a close alert; the connection is dropped next, so
/// the bytes are not missed) ends in "would block", not end of stream or
/// a reset.
fn still_open(socket: &TcpStream) -> bool {
    if socket.set_nonblocking(true).is_err() {
        return false;
    }
    let mut buf = [0u8; 4096];
    loop {
        match (&*socket).read(&mut buf) {
            Ok(0) => return false,
            Ok(_) => continue,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return true,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(_) => return false,
        }
    }
}

/// Sends one GET and reads the start of a 200.
fn one_request<S: Read + Write>(mut stream: S) -> std::io::Result<S> {
    stream.write_all(b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")?;
    let mut buf = [0u8; 1024];
    let n = stream.read(&mut buf)?;
    if n < 12 || &buf[9..12] != b"200" {
        return Err(std::io::Error::other("no 200"));
    }
    Ok(stream)
}

/// Sends the HTTP/2 preface, an empty SETTINGS and one GET on stream 1,
/// acknowledges the server's SETTINGS, and reads frames until the response
/// HEADERS on stream 1 arrive.
fn one_h2_request<S: Read + Write>(mut stream: S, https: bool) -> std::io::Result<S> {
    // The header block, by hand (RFC 7541): :method GET (static 2),
    // :scheme https or http (7 or 6), :path /index.html (5), then
    // :authority (name 1) as a literal with incremental indexing, no
    // Huffman.
    let scheme = if https { 0x87 } else { 0x86 };
    let mut block = vec![0x82, scheme, 0x85, 0x41, 9];
    block.extend_from_slice(b"127.0.0.1");
    let mut out = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n".to_vec();
    out.extend_from_slice(&frame_head(0, 4, 0, 0));
    out.extend_from_slice(&frame_head(block.len(), 1, 0x4 | 0x1, 1));
    out.extend_from_slice(&block);
    stream.write_all(&out)?;
    loop {
        let mut head = [0u8; 9];
        stream.read_exact(&mut head)?;
        let len = usize::from(head[0]) << 16 | usize::from(head[1]) << 8 | usize::from(head[2]);
        let (kind, flags) = (head[3], head[4]);
        let id = u32::from_be_bytes([head[5], head[6], head[7], head[8]]) & 0x7fff_ffff;
        let mut payload = vec![0u8; len];
        stream.read_exact(&mut payload)?;
        match kind {
            4 if flags & 1 == 0 => stream.write_all(&frame_head(0, 4, 1, 0))?,
            1 if id == 1 => return Ok(stream),
            3 if id == 1 => return Err(std::io::Error::other("stream 1 reset")),
            7 => return Err(std::io::Error::other("GOAWAY")),
            _ => {}
        }
    }
}

/// A frame header: length, type, flags, stream id (RFC 9113 §4.1).
fn frame_head(len: usize, kind: u8, flags: u8, id: u32) -> [u8; 9] {
    let [_, a, b, c] = (len as u32).to_be_bytes();
    let [d, e, f, g] = id.to_be_bytes();
    [a, b, c, kind, flags, d, e, f, g]
}

/// A TLS client that takes the run's self-signed certificate (signatures
/// are still checked; only the chain of trust is skipped), offering `h2`
/// alone by ALPN when `h2`.
fn client_config(h2: bool) -> Arc<ClientConfig> {
    let alpn: &[&[u8]] = if h2 { &[b"h2"] } else { &[] };
    tachyon_testkit::tls::client_config(&[], alpn)
}

#[cfg(test)]
mod tests {
    use std::io::Write;
    use std::net::{Shutdown, TcpListener, TcpStream};

    use super::still_open;

    /// A loopback connection: the client's end and the server's.
    fn pair() -> (TcpStream, TcpStream) {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (server, _) = listener.accept().unwrap();
        (client, server)
    }

    #[test]
    fn a_held_connection_is_open_even_with_bytes_waiting() {
        let (client, mut server) = pair();
        assert!(still_open(&client));
        server.write_all(b"a session ticket").unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(still_open(&client));
    }

    #[test]
    fn a_connection_the_server_closed_is_not_held() {
        let (client, mut server) = pair();
        server.write_all(b"a close alert").unwrap();
        server.shutdown(Shutdown::Both).unwrap();
        drop(server);
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!still_open(&client));
    }
}
