//! systemd socket activation: sockets handed over in
//! `LISTEN_FDS`/`LISTEN_PID`, named by `LISTEN_FDNAMES` (`FileDescriptorName=`
//! in the unit): `https` (or `tls`) sockets speak TLS, an `admin` socket
//! serves the admin endpoints, every other one plain HTTP. A datagram
//! socket (`ListenDatagram=`), whatever its name, serves HTTP/3 on its
//! address.
//!
//! When sockets are handed over they replace the configured addresses: the
//! unit's `ListenStream=` lines are the configuration. Reading the
//! environment is `listenfd`'s job (it checks `LISTEN_PID` against our pid
//! and turns the descriptors into sockets without `unsafe` here).

use std::net::TcpListener;
use std::os::fd::OwnedFd;

use anyhow::{anyhow, Context};
use tachyon_server::{Handed, Scheme};

/// What systemd, or the process we replace, handed over.
pub struct Inherited {
    pub handed: Handed,
    pub admin: Option<TcpListener>,
}

/// The sockets systemd handed over, if we were socket-activated (a binary
/// upgrade's are `upgrade::inherited`'s, in the same shape).
pub fn inherited() -> anyhow::Result<Option<Inherited>> {
    let mut fds = listenfd::ListenFd::from_env();
    if fds.len() == 0 {
        return Ok(None);
    }
    let names = std::env::var("LISTEN_FDNAMES").unwrap_or_default();
    let names: Vec<&str> = names.split(':').collect();
    let mut inherited = Inherited {
        handed: Handed::default(),
        admin: None,
    };
    for i in 0..fds.len() {
        let name = names.get(i).copied().unwrap_or("");
        let what = || format!("the socket systemd handed over as {name:?} (fd {})", 3 + i);
        let taken = || anyhow!("socket {i} from systemd was already taken");
        // listenfd leaves a socket of another kind in place for the next try.
        let listener = match fds.take_tcp_listener(i) {
            Ok(listener) => listener,
            Err(stream) => {
                let udp = fds
                    .take_udp_socket(i)
                    .map_err(|_| stream)
                    .with_context(|| format!("{}: neither TCP nor UDP", what()))?
                    .ok_or_else(taken)?;
                inherited.handed.datagrams.push(OwnedFd::from(udp));
                continue;
            }
        };
        let listener = listener.ok_or_else(taken)?;
        match name {
            "admin" => inherited.admin = Some(listener),
            "https" | "tls" => inherited
                .handed
                .listeners
                .push((OwnedFd::from(listener), Scheme::Https)),
            _ => inherited
                .handed
                .listeners
                .push((OwnedFd::from(listener), Scheme::Http)),
        }
    }
    Ok(Some(inherited))
}
