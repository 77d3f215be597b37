//! Zero-downtime binary upgrade: on SIGUSR2 the running process starts the
//! binary at its own path with the same arguments, hands it its listening
//! sockets, waits until it says it serves, and only then drains.
//!
//! The sockets themselves are handed over, not bound again: closing a
//! SO_REUSEPORT listener drops the connections waiting in its queue, and a
//! new group would split traffic with the old one. The successor inherits
//! the descriptors across exec (their close-on-exec flag is cleared for the
//! one spawn), finds them named in `TACHYON_UPGRADE_FDS` (`fd:name,…`, the
//! names systemd socket activation uses: `http`, `https`, `admin`; `quic`
//! for the UDP sockets of HTTP/3), and says `READY=1` on the datagram
//! socket named in `TACHYON_UPGRADE_READY` once its workers run. If it
//! exits first or is not ready in time, it is killed and the old process
//! keeps serving as if nothing happened.
//!
//! UDP sockets are handed over too (binding them again needs the privilege
//! the first process may have dropped), but the old process keeps reading
//! them while it finishes its QUIC connections, which cannot move: the
//! successor gets one end of a socket pair (`hold`) whose other end this
//! process keeps open until it exits, and reads no datagram before then
//! (nor before this process's own predecessor has exited, when it still
//! holds: its holds are passed on too).
//!
//! This module owns both sides of that exchange; it does not decide when
//! to drain (the caller does, on success) and touches no connection.

use std::ffi::OsString;
use std::io::ErrorKind;
use std::net::TcpListener;
use std::os::fd::{AsRawFd, IntoRawFd, OwnedFd};
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

use anyhow::{anyhow, bail, Context};
use rustix::io::{fcntl_setfd, FdFlags};
use rustix::net::{socketpair, AddressFamily, SocketFlags, SocketType};
use tachyon_server::{Handed, Listeners, Scheme};
use tachyon_sys::Inherited as Kind;

use crate::activation::Inherited;

const FDS_VAR: &str = "TACHYON_UPGRADE_FDS";
const READY_VAR: &str = "TACHYON_UPGRADE_READY";

/// What a handed socket is for, by the name it has in `TACHYON_UPGRADE_FDS`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Http,
    Https,
    Admin,
    /// A UDP socket of HTTP/3.
    Quic,
    /// One end of a predecessor's hold (see the module doc).
    Hold,
}

impl Role {
    const ALL: [Role; 5] = [Role::Http, Role::Https, Role::Admin, Role::Quic, Role::Hold];

    fn name(self) -> &'static str {
        match self {
            Role::Http => "http",
            Role::Https => "https",
            Role::Admin => "admin",
            Role::Quic => "quic",
            Role::Hold => "hold",
        }
    }

    fn from_name(name: &str) -> Option<Role> {
        Role::ALL.into_iter().find(|r| r.name() == name)
    }

    /// How `tachyon_sys::adopt_inherited` checks the descriptor.
    fn kind(self) -> Kind {
        match self {
            Role::Quic => Kind::Datagram,
            Role::Hold => Kind::Hold,
            Role::Http | Role::Https | Role::Admin => Kind::Listener,
        }
    }
}

/// What a successor needs: the program, its arguments, the sockets.
pub struct Handover {
    exe: PathBuf,
    args: Vec<OsString>,
    sockets: Vec<(OwnedFd, Role)>,
    /// The successor being started (0: none). It holds our sockets, so a
    /// stop while it starts must not leave it behind.
    pending: AtomicU32,
}

impl Handover {
    /// Duplicates every distinct listening socket (the workers of an adopted
    /// socket share one; reuseport groups have one per worker, and each
    /// holds its own queue, so all of them go).
    pub fn new(listeners: &Listeners, admin: Option<&TcpListener>) -> anyhow::Result<Handover> {
        let exe = std::env::current_exe().context("finding our own binary")?;
        let mut seen = Vec::new();
        let mut sockets = Vec::new();
        for worker in &listeners.per_worker {
            for (fd, endpoint) in worker.iter().zip(&listeners.local) {
                let stat = rustix::fs::fstat(fd).context("upgrade: fstat of a listener")?;
                if seen.contains(&(stat.st_dev, stat.st_ino)) {
                    continue;
                }
                seen.push((stat.st_dev, stat.st_ino));
                let role = match endpoint.scheme {
                    Scheme::Http => Role::Http,
                    Scheme::Https => Role::Https,
                };
                sockets.push((fd.try_clone()?, role));
            }
        }
        if let Some(admin) = admin {
            sockets.push((OwnedFd::from(admin.try_clone()?), Role::Admin));
        }
        // In the order of their groups: the successor takes an address's
        // k-th socket as its group's k-th (`Listeners::adopt_quic` counts
        // per address, so addresses may interleave).
        let mut udp: Vec<_> = listeners.quic.iter().flatten().collect();
        udp.sort_by_key(|s| s.index);
        for socket in &udp {
            sockets.push((socket.fd.try_clone()?, Role::Quic));
        }
        // Our predecessors' holds go on with them: one that already ended
        // costs the successor nothing.
        for hold in &listeners.quic_holds {
            sockets.push((hold.try_clone()?, Role::Hold));
        }
        Ok(Handover {
            exe,
            args: std::env::args_os().skip(1).collect(),
            sockets,
            pending: AtomicU32::new(0),
        })
    }

    /// Starts the successor and waits until it serves; returns its pid.
    /// On any failure the successor is gone and nothing here changed.
    pub fn start_successor(&self, within: Duration) -> anyhow::Result<u32> {
        static ATTEMPT: AtomicU32 = AtomicU32::new(0);
        let ready_path = std::env::temp_dir().join(format!(
            "tachyon-upgrade-{}-{}.sock",
            std::process::id(),
            ATTEMPT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_file(&ready_path);
        let ready = UnixDatagram::bind(&ready_path)
            .with_context(|| format!("upgrade: binding {}", ready_path.display()))?;
        let result = self.spawn_and_wait(&ready, &ready_path, within);
        let _ = std::fs::remove_file(&ready_path);
        result
    }

    /// Kills a successor still starting (we are stopping instead).
    pub fn abandon(&self) {
        let pid = self.pending.swap(0, Ordering::SeqCst);
        if let Some(pid) = rustix::process::Pid::from_raw(pid as i32) {
            let _ = rustix::process::kill_process(pid, rustix::process::Signal::KILL);
        }
    }

    fn spawn_and_wait(
        &self,
        ready: &UnixDatagram,
        ready_path: &Path,
        within: Duration,
    ) -> anyhow::Result<u32> {
        // UDP sockets are read by a successor only once this process is
        // gone: ours stays open until it exits; theirs is inherited.
        let udp = self.sockets.iter().any(|(_, role)| *role == Role::Quic);
        let hold = match udp {
            true => Some(
                socketpair(
                    AddressFamily::UNIX,
                    SocketType::SEQPACKET,
                    SocketFlags::CLOEXEC,
                    None,
                )
                .context("upgrade: a socket pair for the UDP sockets' hold")?,
            ),
            false => None,
        };
        let handed: Vec<(&OwnedFd, Role)> = self
            .sockets
            .iter()
            .map(|(fd, role)| (fd, *role))
            .chain(hold.as_ref().map(|(_, theirs)| (theirs, Role::Hold)))
            .collect();
        let names: Vec<String> = handed
            .iter()
            .map(|(fd, role)| format!("{}:{}", fd.as_raw_fd(), role.name()))
            .collect();
        let mut command = Command::new(&self.exe);
        command
            .args(&self.args)
            .env_remove("LISTEN_FDS")
            .env_remove("LISTEN_PID")
            .env_remove("LISTEN_FDNAMES")
            .env(FDS_VAR, names.join(","))
            .env(READY_VAR, ready_path);
        // Inheritable for this one spawn only. No other thread starts a
        // process, so no other child can receive them.
        for (fd, _) in &handed {
            fcntl_setfd(fd, FdFlags::empty()).context("upgrade: clearing close-on-exec")?;
        }
        let spawned = command.spawn();
        for (fd, _) in &handed {
            let _ = fcntl_setfd(fd, FdFlags::CLOEXEC);
        }
        let mut child = spawned.with_context(|| format!("starting {}", self.exe.display()))?;
        let pid = child.id();
        self.pending.store(pid, Ordering::SeqCst);
        let outcome = self.wait_ready(ready, &mut child, within);
        // Cleared before the child can be reaped, so `abandon` never
        // signals a pid that was reused.
        if self.pending.swap(0, Ordering::SeqCst) == 0 && outcome.is_ok() {
            bail!("stopped while the new process {pid} was starting; it was killed");
        }
        if outcome.is_err() {
            let _ = child.kill();
            let _ = child.wait();
        } else if let Some((ours, _)) = hold {
            // Deliberately never closed: the kernel closes it when this
            // process exits, its QUIC connections done, and that is the
            // successor's signal to read the UDP sockets.
            let _ = ours.into_raw_fd();
        }
        outcome
    }

    fn wait_ready(
        &self,
        ready: &UnixDatagram,
        child: &mut std::process::Child,
        within: Duration,
    ) -> anyhow::Result<u32> {
        let pid = child.id();
        ready.set_read_timeout(Some(Duration::from_millis(100)))?;
        let deadline = Instant::now() + within;
        let mut buf = [0u8; 64];
        loop {
            match ready.recv(&mut buf) {
                Ok(n) if buf[..n].starts_with(b"READY=1") => return Ok(pid),
                Ok(_) => {}
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {}
                Err(e) => return Err(e).context("upgrade: waiting for the new process"),
            }
            if let Some(status) = child.try_wait()? {
                bail!(
                    "{} (pid {pid}) exited with {status} before it was ready",
                    self.exe.display()
                );
            }
            if Instant::now() >= deadline {
                bail!(
                    "{} (pid {pid}) was not ready within {} s; it was killed",
                    self.exe.display(),
                    within.as_secs()
                );
            }
        }
    }
}

/// The sockets a predecessor handed over, if we are its successor.
pub fn inherited() -> anyhow::Result<Option<Inherited>> {
    let Some(spec) = std::env::var_os(FDS_VAR) else {
        return Ok(None);
    };
    let spec = spec
        .into_string()
        .map_err(|_| anyhow!("{FDS_VAR} is not UTF-8"))?;
    let mut numbers: Vec<(i32, Kind)> = Vec::new();
    let mut roles = Vec::new();
    for item in spec.split(',').filter(|s| !s.is_empty()) {
        let (fd, name) = item
            .split_once(':')
            .ok_or_else(|| anyhow!("{FDS_VAR}: {item:?} is not fd:name"))?;
        let role = Role::from_name(name)
            .ok_or_else(|| anyhow!("{FDS_VAR}: {name:?} is not a socket's role"))?;
        numbers.push((
            fd.parse::<i32>()
                .map_err(|_| anyhow!("{FDS_VAR}: {fd:?} is not a descriptor"))?,
            role.kind(),
        ));
        roles.push(role);
    }
    let fds = tachyon_sys::adopt_inherited(&numbers)
        .context("taking the sockets the previous process handed over")?;
    // Inheritable only for the exec that brought them here.
    for fd in &fds {
        fcntl_setfd(fd, FdFlags::CLOEXEC).context("setting close-on-exec on a handed socket")?;
    }
    let mut inherited = Inherited {
        handed: Handed::default(),
        admin: None,
    };
    let handed = &mut inherited.handed;
    for (fd, role) in fds.into_iter().zip(roles) {
        match role {
            Role::Admin => inherited.admin = Some(TcpListener::from(fd)),
            Role::Https => handed.listeners.push((fd, Scheme::Https)),
            Role::Http => handed.listeners.push((fd, Scheme::Http)),
            Role::Quic => handed.datagrams.push(fd),
            Role::Hold => handed.holds.push(fd),
        }
    }
    Ok(Some(inherited))
}

/// Tells the predecessor we serve. False when we were not started by one.
pub fn tell_predecessor() -> bool {
    let Some(path) = std::env::var_os(READY_VAR) else {
        return false;
    };
    let sent = UnixDatagram::unbound().and_then(|s| s.send_to(b"READY=1", &path));
    if let Err(e) = sent {
        crate::warn(&format!(
            "upgrade: could not tell the previous process we serve ({e}); it will stop us"
        ));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_role_is_read_back_from_its_name_and_nothing_else_is() {
        for role in Role::ALL {
            assert_eq!(Role::from_name(role.name()), Some(role));
        }
        assert_eq!(Role::from_name("tls"), None);
        assert_eq!(Role::from_name(""), None);
    }
}
