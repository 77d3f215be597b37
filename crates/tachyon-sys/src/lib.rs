//! The workspace's only `unsafe`: socket options that rustix does not wrap,
//! set through libc, taking ownership of listening sockets inherited
//! across a binary upgrade, and mapping sealed memfds. Every other crate forbids unsafe code. Each function
//! takes a borrowed descriptor and plain values, so no caller can misuse
//! them; the argument for each block is beside it.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// Caps the bytes a TCP socket keeps queued but not yet sent (Linux 3.12+,
/// `TCP_NOTSENT_LOWAT`). Accepted sockets inherit it from their listener.
pub fn set_tcp_notsent_lowat(fd: BorrowedFd<'_>, bytes: u32) -> io::Result<()> {
    set_tcp_int(fd, libc::TCP_NOTSENT_LOWAT, bytes)
}

/// Makes a listening TCP socket hand over a connection only once its first
/// data has arrived, or after about `seconds` without any
/// (`TCP_DEFER_ACCEPT`, what nginx's `deferred` and h2o set).
pub fn set_tcp_defer_accept(fd: BorrowedFd<'_>, seconds: u32) -> io::Result<()> {
    set_tcp_int(fd, libc::TCP_DEFER_ACCEPT, seconds)
}

/// Sets an integer option at the `IPPROTO_TCP` level.
fn set_tcp_int(fd: BorrowedFd<'_>, name: libc::c_int, value: u32) -> io::Result<()> {
    let value = libc::c_int::try_from(value).unwrap_or(libc::c_int::MAX);
    // SAFETY: `fd` is an open descriptor for the whole call (the invariant of
    // `BorrowedFd`); `optval` points to a live, initialized `c_int` on this
    // stack frame and `optlen` is exactly its size, so the kernel reads only
    // memory we own; setsockopt keeps no pointer after it returns. An fd that
    // is not a TCP socket, or an option it does not take, makes the call
    // fail with an errno, never UB.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            name,
            std::ptr::from_ref(&value).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Takes ownership of listening sockets this process inherited across
/// `exec` from the tachyon it replaces (a binary upgrade), named by number
/// in the environment.
///
/// Each number is checked to be an open descriptor of a socket that is
/// listening before it is owned, and a number listed twice is refused (the
/// caller sets close-on-exec again, with rustix). Callable once per process (a second call
/// fails), before this process creates any listening socket of its own, so
/// every descriptor it takes was opened by the previous program and is
/// owned by nothing here yet: the same contract as systemd's
/// `sd_listen_fds`.
pub fn adopt_inherited_listeners(raw: &[RawFd]) -> io::Result<Vec<OwnedFd>> {
    static ADOPTED: AtomicBool = AtomicBool::new(false);
    if ADOPTED.swap(true, Ordering::SeqCst) {
        return Err(io::Error::other("inherited listeners were already adopted"));
    }
    let mut seen = Vec::with_capacity(raw.len());
    for &fd in raw {
        if fd < 3 || seen.contains(&fd) {
            return Err(io::Error::other(format!(
                "descriptor {fd} cannot be an inherited listener"
            )));
        }
        seen.push(fd);
        let mut listening: libc::c_int = 0;
        let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
        // SAFETY: getsockopt on any integer is memory-safe: a number that is
        // not an open socket fails with EBADF or ENOTSOCK. `optval` points
        // to a live `c_int` on this frame and `optlen` to its size, which
        // the kernel may lower; it keeps no pointer after returning.
        let rc = unsafe {
            libc::getsockopt(
                fd,
                libc::SOL_SOCKET,
                libc::SO_ACCEPTCONN,
                std::ptr::from_mut(&mut listening).cast(),
                &mut len,
            )
        };
        if rc != 0 {
            return Err(io::Error::last_os_error());
        }
        if listening == 0 {
            return Err(io::Error::other(format!(
                "descriptor {fd} is a socket that is not listening"
            )));
        }
    }
    Ok(raw
        .iter()
        .map(|&fd| {
            // SAFETY: `fd` is open (getsockopt above succeeded on it) and
            // owned by nothing in this process: it was inherited across
            // exec, listed once (duplicates refused above), this function
            // runs once per process (ADOPTED), and its contract is that the
            // process has created no listening socket before, so no other
            // owner of a listening descriptor can exist yet.
            unsafe { OwnedFd::from_raw_fd(fd) }
        })
        .collect())
}

/// A read-only view of a sealed memfd's bytes (see [`map_sealed`]).
pub struct SealedMapping(memmap2::Mmap);

impl AsRef<[u8]> for SealedMapping {
    fn as_ref(&self) -> &[u8] {
        &self.0
    }
}

/// Maps a memfd whose contents are sealed, shared and read-only, so its
/// bytes can be read in place (a TLS session or an HTTP/2 frame copies from
/// the mapping) instead of through a `pread` into a buffer.
///
/// Refused (an error, nothing mapped) unless the file carries `F_SEAL_WRITE`
/// and `F_SEAL_SHRINK`: they are what makes the mapping sound.
pub fn map_sealed(fd: BorrowedFd<'_>) -> io::Result<SealedMapping> {
    use rustix::fs::SealFlags;
    let seals = rustix::fs::fcntl_get_seals(fd)?;
    if !seals.contains(SealFlags::WRITE | SealFlags::SHRINK) {
        return Err(io::Error::other(
            "the file is not sealed against writes and shrinking",
        ));
    }
    // SAFETY: memmap2's contract is that the mapped file is not modified or
    // truncated while the mapping lives; otherwise the `&[u8]` it hands out
    // would change under the borrow, or a read past a shrunk end would raise
    // SIGBUS. The kernel enforces both here, for every process, checked just
    // above: F_SEAL_WRITE fails every write(2), fallocate and new writable
    // mapping, and could only have been added while no writable mapping
    // existed (fcntl refuses it otherwise), so none exists; F_SEAL_SHRINK
    // fails every truncation. Seals can never be removed. The mapping is
    // PROT_READ and MAP_SHARED, so it adds no writer itself, and it holds
    // its own reference to the file, so closing `fd` later leaves it valid.
    let map = unsafe { memmap2::Mmap::map(fd.as_raw_fd()) }?;
    Ok(SealedMapping(map))
}

#[cfg(test)]
mod tests {
    use super::*;
    use rustix::fs::{MemfdFlags, SealFlags};
    use std::os::fd::AsFd;

    fn memfd(data: &[u8]) -> OwnedFd {
        let fd =
            rustix::fs::memfd_create("t", MemfdFlags::CLOEXEC | MemfdFlags::ALLOW_SEALING).unwrap();
        rustix::io::write(&fd, data).unwrap();
        fd
    }

    #[test]
    fn a_sealed_memfd_maps_to_its_bytes() {
        let fd = memfd(b"sealed bytes");
        rustix::fs::fcntl_add_seals(&fd, SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW)
            .unwrap();
        let map = map_sealed(fd.as_fd()).unwrap();
        drop(fd);
        assert_eq!(map.as_ref(), b"sealed bytes");
    }

    #[test]
    fn an_unsealed_file_is_refused() {
        let fd = memfd(b"writable");
        assert!(map_sealed(fd.as_fd()).is_err());
        rustix::fs::fcntl_add_seals(&fd, SealFlags::SHRINK).unwrap();
        assert!(
            map_sealed(fd.as_fd()).is_err(),
            "shrink alone is not enough"
        );
    }
}
