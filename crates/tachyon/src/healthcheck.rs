//! `tachyon --healthcheck ADDR`: the client a container's health check
//! runs (an image without curl), asking the admin listener's `/readyz`.

use std::time::Duration;

use anyhow::Context;

/// `--healthcheck ADDR`: `GET /readyz` on the admin listener, bounded to
/// two seconds; ready only on a 200.
pub(crate) fn healthcheck(addr: &str) -> anyhow::Result<()> {
    use std::io::{Read, Write};
    use std::net::ToSocketAddrs;
    let addr = addr
        .to_socket_addrs()
        .with_context(|| format!("{addr:?} is not an address"))?
        .next()
        .ok_or_else(|| anyhow::anyhow!("{addr:?} resolves to nothing"))?;
    let within = Duration::from_secs(2);
    let mut stream = std::net::TcpStream::connect_timeout(&addr, within)
        .with_context(|| format!("connecting to {addr}"))?;
    stream.set_read_timeout(Some(within))?;
    stream.set_write_timeout(Some(within))?;
    stream.write_all(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut head = [0u8; 16];
    let mut got = 0;
    while got < head.len() {
        match stream.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    let line = String::from_utf8_lossy(&head[..got]);
    if line.starts_with("HTTP/1.1 200") {
        Ok(())
    } else {
        anyhow::bail!("{addr} answered {:?}", line.lines().next().unwrap_or(""))
    }
}
