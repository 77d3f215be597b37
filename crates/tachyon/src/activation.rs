//! systemd socket activation: listening sockets handed over in
//! `LISTEN_FDS`/`LISTEN_PID`, named by `LISTEN_FDNAMES` (`FileDescriptorName=`
//! in the unit): `https` (or `tls`) sockets speak TLS, an `admin` socket
//! serves the admin endpoints, every other one plain HTTP.
//!
//! When sockets are handed over they replace the configured addresses: the
//! unit's `ListenStream=` lines are the configuration. Reading the
//! environment is `listenfd`'s job (it checks `LISTEN_PID` against our pid
//! and turns the descriptors into listeners without `unsafe` here).

use std::net::TcpListener;
use std::os::fd::OwnedFd;

use anyhow::{anyhow, Context};
use tachyon_server::Scheme;

/// What systemd, or the process we replace, handed over.
pub struct Inherited {
    pub sockets: Vec<(OwnedFd, Scheme)>,
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
    let mut handed = Inherited {
        sockets: Vec::new(),
        admin: None,
    };
    for i in 0..fds.len() {
        let name = names.get(i).copied().unwrap_or("");
        let listener = fds
            .take_tcp_listener(i)
            .with_context(|| format!("the socket systemd handed over as {name:?} (fd {})", 3 + i))?
            .ok_or_else(|| anyhow!("socket {i} from systemd was already taken"))?;
        match name {
            "admin" => handed.admin = Some(listener),
            "https" | "tls" => handed
                .sockets
                .push((OwnedFd::from(listener), Scheme::Https)),
            _ => handed.sockets.push((OwnedFd::from(listener), Scheme::Http)),
        }
    }
    Ok(Some(handed))
}
