//! The workspace's only `unsafe`: socket options that rustix does not wrap,
//! set through libc, and taking ownership of listening sockets inherited
//! across a binary upgrade. Every other crate forbids unsafe code. Each function
//! takes a borrowed descriptor and plain values, so no caller can misuse
//! them; the argument for each block is beside it.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, Ordering};

/// Caps the bytes a TCP socket keeps queued but not yet sent (Linux 3.12+,
/// `TCP_NOTSENT_LOWAT`). Accepted sockets inherit it from their listener.
pub fn set_tcp_notsent_lowat(fd: BorrowedFd<'_>, bytes: u32) -> io::Result<()> {
    let value = libc::c_int::try_from(bytes).unwrap_or(libc::c_int::MAX);
    // SAFETY: `fd` is an open descriptor for the whole call (the invariant of
    // `BorrowedFd`); `optval` points to a live, initialized `c_int` on this
    // stack frame and `optlen` is exactly its size, so the kernel reads only
    // memory we own; setsockopt keeps no pointer after it returns. An fd that
    // is not a TCP socket makes the call fail with an errno, never UB.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::IPPROTO_TCP,
            libc::TCP_NOTSENT_LOWAT,
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
