//! The footprint cells: a fresh server on the small site, `conns` idle
//! keep-alive connections held open, and its resident memory with and
//! without them (Boa's footprint claim, seed 002).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use crate::peers::{Env, Running};
use crate::proc;
use crate::results::Row;

/// Measures `server`'s peer on its own fresh instance serving the small
/// site, into `row`.
pub fn measure(server: &Running, env: &Env, conns: u32, row: &mut Row) {
    // Its own scratch folder: this instance runs beside the main one,
    // and Apache refuses to start over a live pid file.
    let run_dir = env.run_dir.join("small");
    let small = Env {
        root: env.root.with_file_name("www-small"),
        run_dir: run_dir.clone(),
        ..env.clone()
    };
    if let Err(e) = crate::runner::scratch_dir(&run_dir) {
        row.ok = false;
        row.problems
            .push(format!("creating {}: {e}", run_dir.display()));
        return;
    }
    match Running::start(server.peer, &small) {
        Ok(fresh) => hold(&fresh, conns, row),
        Err(e) => {
            row.ok = false;
            row.problems
                .push(format!("starting on the small site: {e:#}"));
        }
    }
}

/// Opens `conns` keep-alive connections, one request each, holds them, and
/// reads the server's resident memory with and without them.
fn hold(server: &Running, conns: u32, row: &mut Row) {
    row.client_command =
        format!("(built in) {conns} keep-alive connections, one GET / each, held open");
    let rest = proc::rss_bytes(server.pid());
    let mut held = Vec::with_capacity(conns as usize);
    let mut failures = 0u64;
    let request = b"GET /index.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    for _ in 0..conns {
        let attempt = (|| -> std::io::Result<TcpStream> {
            let mut stream = TcpStream::connect_timeout(&server.addr(), Duration::from_secs(2))?;
            stream.set_read_timeout(Some(Duration::from_secs(5)))?;
            stream.write_all(request)?;
            let mut buf = [0u8; 1024];
            let n = stream.read(&mut buf)?;
            if n < 12 || &buf[9..12] != b"200" {
                return Err(std::io::Error::other("no 200"));
            }
            Ok(stream)
        })();
        match attempt {
            Ok(stream) => held.push(stream),
            Err(_) => failures += 1,
        }
    }
    std::thread::sleep(Duration::from_millis(300));
    let loaded = proc::rss_bytes(server.pid());
    row.rss_rest_bytes = Some(rest);
    row.rss_loaded_bytes = Some(loaded);
    row.idle_conns_held = Some(held.len() as u64);
    row.client.requests = held.len() as u64;
    row.client.socket_errors = failures;
    row.ok = failures == 0;
    if failures > 0 {
        row.problems.push(format!(
            "{failures} of {conns} connections failed or were dropped"
        ));
    }
    drop(held);
    std::thread::sleep(Duration::from_millis(300));
}
