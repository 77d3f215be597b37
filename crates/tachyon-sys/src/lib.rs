//! The workspace's only `unsafe`: socket options that rustix does not wrap,
//! set through libc, taking ownership of listening sockets inherited
//! across a binary upgrade, mapping sealed memfds, and splicing those
//! mappings into pipes. Every other crate forbids unsafe code. Each function
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

/// A read-only view of a sealed memfd's bytes (see [`map_sealed`]); clones
/// share the one mapping.
#[derive(Clone)]
pub struct SealedMapping(std::sync::Arc<memmap2::Mmap>);

impl std::fmt::Debug for SealedMapping {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SealedMapping({} bytes)", self.0.len())
    }
}

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
    Ok(SealedMapping(std::sync::Arc::new(map)))
}

/// A pipe that carries bytes of sealed mappings to sockets without copying
/// them: `vmsplice` hands the pipe references to the mapping's pages, and
/// `splice` hands those on to the socket, which on loopback the reader
/// copies from. It counts the bytes it holds, which are always a prefix
/// of what its owner has still to send.
///
/// Why not `sendfile` from the memfd: it reads shmem pages through
/// `shmem_file_splice_read`, one lookup and lock per 4 KiB page, which
/// perf put at a third of the server's CPU on 10 MiB responses. From the
/// mapping, the pages come from the page tables (`vmsplice`'s
/// get_user_pages). Measured here (C, both ways on one sealed memfd, ab
/// -n1000 -c10, one 10 MiB request per connection, 4 rounds interleaved):
/// 410-480 µs of server CPU per response against 610-660 by sendfile.
pub struct Pipe {
    read: OwnedFd,
    write: OwnedFd,
    held: usize,
    capacity: usize,
}

impl Pipe {
    /// A non-blocking pipe asked to hold `capacity` bytes (best effort: a
    /// user near `/proc/sys/fs/pipe-user-pages-soft` keeps what the kernel
    /// gave, 64 KiB, or two pages past that limit, which only means more
    /// calls).
    pub fn new(capacity: usize) -> io::Result<Pipe> {
        use rustix::pipe::{fcntl_getpipe_size, fcntl_setpipe_size, pipe_with, PipeFlags};
        let (read, write) = pipe_with(PipeFlags::NONBLOCK | PipeFlags::CLOEXEC)?;
        let capacity = match fcntl_setpipe_size(&write, capacity) {
            Ok(size) => size,
            Err(_) => fcntl_getpipe_size(&write)?,
        };
        Ok(Pipe {
            read,
            write,
            held: 0,
            capacity,
        })
    }

    /// Bytes in the pipe, not yet passed on.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Puts up to `range` of `map` into the pipe, as many bytes as it has
    /// room for; returns how many. A range outside the mapping is an error.
    pub fn load(
        &mut self,
        map: &SealedMapping,
        range: std::ops::Range<usize>,
    ) -> io::Result<usize> {
        use rustix::pipe::{vmsplice, IoSliceRaw, SpliceFlags};
        let Some(bytes) = map.0.get(range) else {
            return Err(io::Error::other("range outside the sealed mapping"));
        };
        let room = self.capacity.saturating_sub(self.held);
        if room == 0 || bytes.is_empty() {
            return Ok(0);
        }
        let bytes = &bytes[..bytes.len().min(room)];
        // SAFETY: rustix's contract for vmsplice is that memory which must
        // not be mutated is only passed with the write end of a pipe:
        // `self.write` is that end (made by `pipe_with` above, never
        // swapped), so the kernel only reads `bytes`, which live for the
        // call. No GIFT flag, so no page-alignment contract applies. What
        // the pipe keeps after the call are references to the pages, not to
        // our mapping: they stay valid after it is unmapped, and the pages
        // cannot change, because the memfd is sealed against writes for
        // every process (see `map_sealed`), so what reaches the client is
        // the representation the head announced.
        let n = unsafe {
            vmsplice(
                &self.write,
                &[IoSliceRaw::from_slice(bytes)],
                SpliceFlags::NONBLOCK,
            )
        }?;
        self.held += n;
        Ok(n)
    }

    /// Passes what the pipe holds on to `socket`, as much as it takes;
    /// `more` says further bytes follow at once (the last segment of a
    /// response must not wait for them). Returns how many bytes left.
    pub fn unload(&mut self, socket: BorrowedFd<'_>, more: bool) -> io::Result<usize> {
        use rustix::pipe::{splice, SpliceFlags};
        if self.held == 0 {
            return Ok(0);
        }
        let mut flags = SpliceFlags::NONBLOCK;
        if more {
            flags |= SpliceFlags::MORE;
        }
        let n = splice(&self.read, None, socket, None, self.held, flags)?;
        self.held -= n;
        Ok(n)
    }
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
    fn a_pipe_carries_a_sealed_range_in_order_and_counts_it() {
        let fd = memfd(&(0..=255u8).cycle().take(200_000).collect::<Vec<u8>>());
        rustix::fs::fcntl_add_seals(&fd, SealFlags::WRITE | SealFlags::SHRINK | SealFlags::GROW)
            .unwrap();
        let map = map_sealed(fd.as_fd()).unwrap();
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut pipe = Pipe::new(256 * 1024).unwrap();
        let mut sent = 1000;
        let mut got = Vec::new();
        while sent < 150_000 || pipe.held() > 0 {
            sent += pipe.load(&map, sent..150_000).unwrap();
            pipe.unload(a.as_fd(), sent < 150_000).unwrap();
            let mut buf = vec![0u8; 300_000];
            let n = std::io::Read::read(&mut b, &mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(pipe.held(), 0);
        assert_eq!(got, map.as_ref()[1000..150_000]);
        assert!(pipe.load(&map, 199_000..200_001).is_err());
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
