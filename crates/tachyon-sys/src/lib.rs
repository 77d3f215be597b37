//! The workspace's only `unsafe`: socket options that rustix does not wrap,
//! set through libc. Every other crate forbids unsafe code. Each function
//! takes a borrowed descriptor and plain values, so no caller can misuse
//! them; the argument for each block is beside it.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd};

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
