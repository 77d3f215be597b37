//! The workspace's only `unsafe`: socket options that rustix does not wrap,
//! set through libc, taking ownership of the sockets inherited across a
//! binary upgrade, memory for bodies that is never written again
//! (frozen copies, and stamps: frame headers spliced between them), and
//! splicing those into pipes. Every other crate forbids unsafe code. Each function
//! takes a borrowed descriptor and plain values, so no caller can misuse
//! them; the argument for each block is beside it.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

mod stamp;
pub use stamp::Stamp;

/// Raises the open-file soft limit to the hard limit (as nginx's
/// `worker_rlimit_nofile` does) and returns the soft limit now in force:
/// each connection is a descriptor. The workspace's one such raiser (the
/// server, the benchmark and the tests use it).
pub fn raise_fd_limit() -> u64 {
    use rustix::process::{getrlimit, setrlimit, Resource};
    let mut limit = getrlimit(Resource::Nofile);
    if limit.maximum.is_some() && limit.current != limit.maximum {
        limit.current = limit.maximum;
        let _ = setrlimit(Resource::Nofile, limit);
    }
    getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX)
}

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

/// Steers the datagrams of a `SO_REUSEPORT` group of UDP sockets by the
/// first byte of the QUIC connection ID they carry, modulo `sockets`
/// (RFC 9000 §17: the destination connection ID starts at byte 1 of a
/// short header, byte 6 of a long one). The n-th socket bound to the
/// address gets the IDs whose first byte is n, so a connection's packets
/// reach the socket that issued its IDs whatever the client's address;
/// a client's first Initial, whose ID it chose, lands on any. Attached to
/// any one socket of the group, it serves the whole group.
pub fn steer_quic_by_cid(fd: BorrowedFd<'_>, sockets: u32) -> io::Result<()> {
    // Classic BPF over the UDP payload (the kernel pulls the UDP header
    // before running a reuseport program).
    let program = [
        // A = payload[0]; long header when its top bit is set.
        bpf(libc::BPF_LD | libc::BPF_B | libc::BPF_ABS, 0, 0, 0),
        bpf(libc::BPF_JMP | libc::BPF_JSET | libc::BPF_K, 2, 0, 0x80),
        // Short header: A = payload[1].
        bpf(libc::BPF_LD | libc::BPF_B | libc::BPF_ABS, 0, 0, 1),
        bpf(libc::BPF_JMP | libc::BPF_JA, 0, 0, 1),
        // Long header: A = payload[6].
        bpf(libc::BPF_LD | libc::BPF_B | libc::BPF_ABS, 0, 0, 6),
        bpf(
            libc::BPF_ALU | libc::BPF_MOD | libc::BPF_K,
            0,
            0,
            sockets.max(1),
        ),
        bpf(libc::BPF_RET | libc::BPF_A, 0, 0, 0),
    ];
    attach_reuseport_program(fd, &program)
}

/// Attaches a classic BPF program that picks the socket of `fd`'s
/// `SO_REUSEPORT` group by its index.
fn attach_reuseport_program(fd: BorrowedFd<'_>, program: &[libc::sock_filter]) -> io::Result<()> {
    let fprog = libc::sock_fprog {
        len: u16::try_from(program.len())
            .map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?,
        filter: program.as_ptr().cast_mut(),
    };
    // SAFETY: `fd` is open for the whole call (`BorrowedFd`); `fprog` lives
    // on this stack frame and the `program` slice it points to is borrowed
    // until the call returns, `optlen` is exactly `fprog`'s size, and the
    // kernel copies the program in before returning (it keeps no pointer
    // into our memory). A program it rejects, or an fd that is not a
    // reuseport socket, fails with an errno.
    let rc = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            libc::SOL_SOCKET,
            SO_ATTACH_REUSEPORT_CBPF,
            std::ptr::from_ref(&fprog).cast(),
            std::mem::size_of::<libc::sock_fprog>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// `SO_ATTACH_REUSEPORT_CBPF` (Linux 4.5+, asm-generic/socket.h), which
/// libc does not export for this target.
const SO_ATTACH_REUSEPORT_CBPF: libc::c_int = 51;

/// One classic BPF instruction.
fn bpf(code: u32, jt: u8, jf: u8, k: u32) -> libc::sock_filter {
    libc::sock_filter {
        code: code as u16,
        jt,
        jf,
        k,
    }
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

/// What a descriptor inherited from the tachyon this process replaces must
/// be: each kind is one this process creates only after adopting them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inherited {
    /// A listening TCP socket.
    Listener,
    /// A UDP socket (HTTP/3).
    Datagram,
    /// The predecessor's hold on those UDP sockets: one end of a
    /// `SOCK_SEQPACKET` pair, whose other end closes when it exits.
    Hold,
}

/// Takes ownership of the sockets this process inherited across `exec`
/// from the tachyon it replaces (a binary upgrade), named by number in
/// the environment.
///
/// Each number is checked to be an open socket of its kind before it is
/// owned, and a number listed twice is refused (the caller sets
/// close-on-exec again, with rustix). Callable once per process (a second
/// call fails), before this process creates any listening, UDP or
/// seqpacket socket of its own, so every descriptor it takes was opened by
/// the previous program and is owned by nothing here yet: the same
/// contract as systemd's `sd_listen_fds`.
pub fn adopt_inherited(raw: &[(RawFd, Inherited)]) -> io::Result<Vec<OwnedFd>> {
    static ADOPTED: AtomicBool = AtomicBool::new(false);
    if ADOPTED.swap(true, Ordering::SeqCst) {
        return Err(io::Error::other("inherited sockets were already adopted"));
    }
    let mut seen = Vec::with_capacity(raw.len());
    for &(fd, kind) in raw {
        if fd < 3 || seen.contains(&fd) {
            return Err(io::Error::other(format!(
                "descriptor {fd} cannot be an inherited socket"
            )));
        }
        seen.push(fd);
        let fits = match kind {
            Inherited::Listener => socket_int(fd, libc::SO_ACCEPTCONN)? != 0,
            Inherited::Datagram => socket_int(fd, libc::SO_TYPE)? == libc::SOCK_DGRAM,
            Inherited::Hold => socket_int(fd, libc::SO_TYPE)? == libc::SOCK_SEQPACKET,
        };
        if !fits {
            return Err(io::Error::other(format!(
                "descriptor {fd} is a socket, but not a {kind:?}"
            )));
        }
    }
    Ok(raw
        .iter()
        .map(|&(fd, _)| {
            // SAFETY: `fd` is an open socket (getsockopt above succeeded on
            // it) and owned by nothing in this process: it was inherited
            // across exec, listed once (duplicates refused above), this
            // function runs once per process (ADOPTED), and its contract is
            // that the process has created no socket of these kinds before,
            // so no other owner of such a descriptor can exist yet.
            unsafe { OwnedFd::from_raw_fd(fd) }
        })
        .collect())
}

/// An integer socket option at the `SOL_SOCKET` level of any descriptor
/// number.
fn socket_int(fd: RawFd, name: libc::c_int) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = std::mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: getsockopt on any integer is memory-safe: a number that is
    // not an open socket fails with EBADF or ENOTSOCK. `optval` points to a
    // live `c_int` on this frame and `optlen` to its size, which the kernel
    // may lower; it keeps no pointer after returning.
    let rc = unsafe {
        libc::getsockopt(
            fd,
            libc::SOL_SOCKET,
            name,
            std::ptr::from_mut(&mut value).cast(),
            &mut len,
        )
    };
    if rc == 0 {
        Ok(value)
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Bytes of arenas that copies reach (whole huge pages), for `/metrics`.
static ARENA_BYTES: AtomicUsize = AtomicUsize::new(0);

/// The size of a transparent huge page on x86-64 and arm64 (4 KiB base
/// pages): arenas start on this boundary so that the kernel can back each
/// whole 2 MiB of them with one page.
const HUGE_PAGE: usize = 2 << 20;
/// The address space of a packed arena: copies are laid end to end across
/// its huge pages, and one that does not fit the rest closes it, so what a
/// closed arena leaves unused is shorter than that copy (under 2 MiB, a
/// sixteenth). Pages no copy reaches are never touched, so the open
/// arena's rest costs address space, not memory.
const PACKED_ARENA: usize = 16 * HUGE_PAGE;
/// Anonymous memory holding frozen copies: mapped once, 2 MiB-aligned, with
/// `MADV_HUGEPAGE`; every byte is written once, before the [`Frozen`] that
/// covers it exists, and never again; unmapped when the last copy in it is
/// dropped.
struct Arena {
    base: std::ptr::NonNull<u8>,
    len: usize,
    /// Bytes from the start to the end of the last huge page a reserved
    /// range reaches: what the arena counts in [`ARENA_BYTES`].
    reached: AtomicUsize,
    /// Copies being written into it (each range reserved under the
    /// packer's lock, filled outside it).
    writers: AtomicUsize,
    /// No more ranges will be reserved in it.
    full: AtomicBool,
    /// Bytes of the copies in it that are still alive.
    live: AtomicUsize,
}

// SAFETY: an `Arena` is a plain address range owned by this value alone (no
// other handle to the mapping exists, and only `Drop` unmaps it). Its bytes
// are only read through `Frozen`, after they were written, and written
// only by `fill`, once per range, each range reserved for one writer under
// the packer's lock, at offsets no `Frozen` covers yet; so
// sharing it between threads and dropping it on any thread is sound.
unsafe impl Send for Arena {}
// SAFETY: see `Send` above: concurrent readers only read bytes that are
// never written again.
unsafe impl Sync for Arena {}

impl Arena {
    /// Maps `len` bytes (a multiple of the page size) starting on a 2 MiB
    /// boundary.
    fn map(len: usize) -> io::Result<Arena> {
        let span = len
            .checked_add(HUGE_PAGE)
            .ok_or_else(|| io::Error::other("arena too large"))?;
        let raw = map_anonymous(span)?;
        let start = raw as usize;
        let aligned = start.next_multiple_of(HUGE_PAGE);
        let head = aligned - start;
        let tail = span - head - len;
        // SAFETY: both ranges lie inside the mapping just made, which no
        // one else knows of; what stays mapped is [aligned, aligned + len).
        // munmap of a zero-length range is skipped.
        unsafe {
            if head > 0 {
                libc::munmap(raw, head);
            }
            if tail > 0 {
                libc::munmap((aligned + len) as *mut libc::c_void, tail);
            }
            // Advice only: a kernel without transparent huge pages keeps
            // 4 KiB pages, which serve the same bytes.
            libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
        }
        Ok(Arena {
            base: std::ptr::NonNull::new(aligned as *mut u8)
                .ok_or_else(|| io::Error::other("mmap returned null"))?,
            len,
            reached: AtomicUsize::new(0),
            writers: AtomicUsize::new(0),
            full: AtomicBool::new(false),
            live: AtomicUsize::new(0),
        })
    }

    /// Counts the huge pages up to `end` in [`ARENA_BYTES`], once each.
    fn reach(&self, end: usize) {
        let end = end.next_multiple_of(HUGE_PAGE).min(self.len);
        let before = self.reached.fetch_max(end, Ordering::Relaxed);
        ARENA_BYTES.fetch_add(end.saturating_sub(before), Ordering::Relaxed);
    }

    /// Copies `data` in at `at`.
    ///
    /// Its one caller, [`freeze`], writes each range once, before any
    /// `Frozen` covers it, and only a range reserved for that call alone.
    fn fill(&self, at: usize, data: &[u8]) {
        assert!(at + data.len() <= self.len, "a fill past the arena");
        // SAFETY: [at, at + len) is inside the mapping (asserted above),
        // which stays writable until `seal`, and that waits for every
        // writer (`seal_when_done`); no other call writes this range (each
        // is reserved once), and `data` cannot overlap it (no `Frozen`
        // covers these bytes yet, so no slice of them exists); the write
        // goes through the raw pointer, never a `&mut` that would alias
        // other ranges being read or written.
        unsafe {
            std::ptr::copy_nonoverlapping(data.as_ptr(), self.base.as_ptr().add(at), data.len());
        }
    }

    /// Seals the arena once it is full and no copy is being written into
    /// it: called by the packer when it moves on, and by each writer when
    /// it is done. Both store, then load (sequentially consistent), so the
    /// last of them to act sees the other's store: at least one seals.
    fn seal_when_done(&self) {
        if self.full.load(Ordering::SeqCst) && self.writers.load(Ordering::SeqCst) == 0 {
            self.seal();
        }
    }

    /// Makes the whole arena read-only, once nothing more is written in it:
    /// a stray write then faults instead of changing a body a pipe or a
    /// socket still references. Best effort (the invariant holds without).
    fn seal(&self) {
        // SAFETY: the range is exactly this arena's mapping; changing its
        // protection to read-only cannot invalidate a reader.
        unsafe {
            libc::mprotect(self.base.as_ptr().cast(), self.len, libc::PROT_READ);
        }
    }
}

impl Drop for Arena {
    fn drop(&mut self) {
        ARENA_BYTES.fetch_sub(self.reached.load(Ordering::Relaxed), Ordering::Relaxed);
        // SAFETY: the last `Frozen` into this arena is gone (each holds an
        // `Arc` of it) and the packer no longer holds it, so nothing reads
        // or writes the range. Pages a pipe or socket still references are
        // their own: the kernel frees them when those let go.
        unsafe {
            libc::munmap(self.base.as_ptr().cast(), self.len);
        }
    }
}

/// Maps `len` bytes of anonymous private memory, readable and writable,
/// at an address the kernel chooses.
fn map_anonymous(len: usize) -> io::Result<*mut libc::c_void> {
    // SAFETY: an anonymous private mapping at an address the kernel
    // chooses touches no existing memory; the result is checked before it
    // is returned.
    let raw = unsafe {
        libc::mmap(
            std::ptr::null_mut(),
            len,
            libc::PROT_READ | libc::PROT_WRITE,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        )
    };
    if raw == libc::MAP_FAILED {
        return Err(io::Error::last_os_error());
    }
    Ok(raw)
}

/// The arena copies shorter than a huge page are packed into, and how much
/// of it is used. Shared by every thread, so at most one arena is partly
/// used; a range is reserved under the lock and filled outside it, because
/// the first write to each 2 MiB page faults it in and the kernel clears it
/// (most of a build's cost in perf), which threads then do in parallel.
struct Packer {
    arena: Option<Arc<Arena>>,
    used: usize,
}

impl Packer {
    /// Reserves `len` bytes (under 2 MiB) after the last copy in the
    /// current arena, or, when there is none or they do not fit its rest,
    /// at the start of a new one, closing the old.
    fn reserve(&mut self, len: usize) -> io::Result<(Arc<Arena>, usize)> {
        let arena = match &self.arena {
            Some(arena) if len <= arena.len - self.used => Arc::clone(arena),
            _ => {
                let fresh = Arc::new(Arena::map(PACKED_ARENA)?);
                self.close();
                self.arena = Some(Arc::clone(&fresh));
                fresh
            }
        };
        let start = self.used;
        // The next copy starts on a cache line, so no two share one.
        self.used = (start + len).next_multiple_of(64).min(arena.len);
        arena.reach(start + len);
        arena.writers.fetch_add(1, Ordering::SeqCst);
        Ok((arena, start))
    }

    /// Lets go of the current arena: no more copies are packed into it,
    /// and it is made read-only once the last being written is done.
    fn close(&mut self) {
        if let Some(full) = self.arena.take() {
            full.full.store(true, Ordering::SeqCst);
            full.seal_when_done();
        }
        self.used = 0;
    }
}

/// Closes the arenas copies are being packed into, at the end of a build:
/// the next build packs into new ones, so that an arena holds one
/// generation's copies and goes with it (bodies a reload keeps are seen to
/// by [`Frozen::is_sparse`]) rather than staying open, up to 32 MiB of
/// copies of every generation since, while any is alive. Each close can
/// leave up to 2 MiB of its last huge page unused.
pub fn close_arenas() {
    for packer in [&PACKER, &SURVIVORS] {
        packer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .close();
    }
}

static PACKER: std::sync::Mutex<Packer> = std::sync::Mutex::new(Packer {
    arena: None,
    used: 0,
});

/// The packer for copies of bodies that outlived a reload (see
/// [`Cohort::Survivor`]).
static SURVIVORS: std::sync::Mutex<Packer> = std::sync::Mutex::new(Packer {
    arena: None,
    used: 0,
});

/// Which packed arenas a copy joins: bodies are packed with bodies of
/// their age, as a generational collector tenures survivors, so that a
/// body that stays across reloads does not keep an arena of bodies that
/// changed alive (and then, copied again, the next one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cohort {
    /// A body read by this build.
    New,
    /// A body an earlier generation already served, copied again out of a
    /// sparse arena ([`Frozen::is_sparse`]).
    Survivor,
}

/// A body's bytes, copied once into read-only anonymous memory and never
/// written again (see [`freeze`]); clones share them.
#[derive(Clone)]
pub struct Frozen {
    piece: Arc<Piece>,
}

/// One copy's range of an arena; counted in the arena's live bytes until
/// the last [`Frozen`] of it goes.
struct Piece {
    arena: Arc<Arena>,
    start: usize,
    len: usize,
}

impl Drop for Piece {
    fn drop(&mut self) {
        self.arena.live.fetch_sub(self.len, Ordering::Relaxed);
    }
}

impl std::fmt::Debug for Frozen {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Frozen({} bytes)", self.piece.len)
    }
}

impl Frozen {
    /// `range` of the copy, for a pipe to carry; `None` when outside it.
    pub fn still(&self, range: std::ops::Range<usize>) -> Option<Still<'_>> {
        self.as_ref().get(range).map(Still)
    }

    /// Whether this copy sits in a packed arena that is closed and more
    /// than half dead (of the huge pages its copies reach): an arena lives
    /// while any copy in it does, so one body a reload keeps (unchanged
    /// files share their copy across generations) would pin up to 32 MiB
    /// of bodies that are gone. A build copies such
    /// a body afresh among the other survivors ([`Cohort::Survivor`])
    /// instead of sharing it, and the arena goes with the generation
    /// before: what reloads leave behind stays under half of each arena,
    /// plus one generation. (Copied among new bodies instead, a survivor
    /// only moves the pin to the next arena.)
    pub fn is_sparse(&self) -> bool {
        let arena = &self.piece.arena;
        arena.full.load(Ordering::SeqCst)
            && arena.live.load(Ordering::Relaxed) * 2 < arena.reached.load(Ordering::Relaxed)
    }
}

impl AsRef<[u8]> for Frozen {
    fn as_ref(&self) -> &[u8] {
        let Piece { arena, start, len } = &*self.piece;
        // SAFETY: [start, start + len) is inside the arena's mapping, which
        // lives as long as the `Arc` this value holds; its bytes were
        // written by `fill` on the thread that made this value, before it
        // was made (another thread can only have it through something
        // that synchronizes, so the write happens-before its reads), and
        // nothing writes them again, so a shared slice of them is sound
        // for as long as `self` is borrowed.
        unsafe { std::slice::from_raw_parts(arena.base.as_ptr().add(*start), *len) }
    }
}

/// Copies `data` into memory that is never written again: the in-memory
/// form of bodies large enough to be spliced to sockets (see [`Pipe`]).
///
/// Why not a sealed memfd, as before: shmem pages are 4 KiB here
/// (`shmem_enabled` is `never` on stock kernels), and the page-table walk
/// `vmsplice` does per page (`gup_fast_fallback`) is then a large part of
/// a large response's cost. Anonymous memory can ask for 2 MiB pages
/// (`MADV_HUGEPAGE`, honoured when THP is `madvise` or `always`, the
/// defaults), one walk per 2 MiB (bench/results/hugepages-2026-11-26). So
/// that every body shorter than 2 MiB sits in huge pages too, those are
/// packed end to end into shared 32 MiB arenas (an arena of a body's own
/// size under 2 MiB cannot be one: bench/results/huge-512k-2026-12-03;
/// whole 2 MiB arenas lost up to a seventh of a site of 300 KB bodies to
/// their rests); longer ones get their own, whose whole 2 MiB blocks are
/// huge pages and whose tail is 4 KiB pages.
///
/// What the memfd's seal guaranteed the kernel, the code keeps here: an
/// arena's bytes are written once, before any copy covers them, and a full
/// arena is made read-only.
pub fn freeze(data: &[u8]) -> io::Result<Frozen> {
    freeze_in(data, Cohort::New)
}

/// [`freeze`], packing a short copy with others of `cohort`.
pub fn freeze_in(data: &[u8], cohort: Cohort) -> io::Result<Frozen> {
    let packer = match cohort {
        Cohort::New => &PACKER,
        Cohort::Survivor => &SURVIVORS,
    };
    freeze_with(data, packer)
}

/// [`freeze`], packing a short copy with `packer`'s.
fn freeze_with(data: &[u8], packer: &std::sync::Mutex<Packer>) -> io::Result<Frozen> {
    let (arena, start) = if data.len() >= HUGE_PAGE {
        let arena = Arena::map(data.len().next_multiple_of(rustix::param::page_size()))?;
        arena.reach(arena.len);
        arena.fill(0, data);
        arena.seal();
        // Its one copy is all of it: never sparse.
        (Arc::new(arena), 0)
    } else {
        let (arena, start) = packer
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .reserve(data.len())?;
        // [start, start + len) is this call's alone: reserved above, and
        // no other call is given it.
        arena.fill(start, data);
        arena.writers.fetch_sub(1, Ordering::SeqCst);
        arena.seal_when_done();
        (arena, start)
    };
    arena.live.fetch_add(data.len(), Ordering::Relaxed);
    Ok(Frozen {
        piece: Arc::new(Piece {
            arena,
            start,
            len: data.len(),
        }),
    })
}

/// Bytes of the arenas that hold frozen copies, counted in whole huge pages
/// up to the last one a copy reaches (so what packing leaves unused in
/// them is included, and an open arena's untouched rest is not).
pub fn arena_bytes() -> usize {
    ARENA_BYTES.load(Ordering::Relaxed)
}

/// Hands the heap's free memory back to the kernel (glibc's `malloc_trim`).
///
/// A build reads every file into the heap and frees the copies it freezes;
/// glibc keeps most of that (large frees raise its mmap threshold, so later
/// reads come from its arenas, and an arena only shrinks from its top). On
/// a 10,000-file, 200 MiB site that was about 95 MiB of resident memory
/// holding nothing. A no-op off glibc.
pub fn release_free_heap() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim takes no pointers; it walks glibc's own arenas
    // under their locks and only gives back pages that hold no allocation,
    // so it is sound from any thread at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Bytes that are never written again: a range of a frozen copy
/// ([`Frozen::still`]) or a stamp ([`Stamp::still`]), the only bytes a
/// [`Pipe`] may carry, since it holds references to their pages, not
/// copies.
#[derive(Clone, Copy)]
pub struct Still<'a>(&'a [u8]);

impl Still<'_> {
    /// Bytes it covers.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

/// Most pieces one [`Pipe::load`] takes.
pub const MAX_PIECES: usize = 64;

/// A pipe that carries bytes of frozen copies (and the stamps between
/// them) to sockets without copying them: `vmsplice` hands the pipe
/// references to the mappings' pages, and `splice` hands those on to the
/// socket, which on loopback the reader copies from. It counts the bytes
/// it holds, which are always a prefix of what its owner has still to
/// send.
///
/// Why not `sendfile` from the memory: it reads shmem pages through
/// `shmem_file_splice_read`, one lookup and lock per 4 KiB page; from the
/// mapping, the pages come from the page tables (`vmsplice`'s
/// get_user_pages), and cost less (bench/results/splice-2026-11-26).
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

    /// Bytes it can hold.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// Asks the kernel to let it hold `capacity` bytes; false when it
    /// would not (past `pipe-max-size`, or a user past the soft limit on
    /// pipe pages), and it holds what it did.
    pub fn grow(&mut self, capacity: usize) -> bool {
        match rustix::pipe::fcntl_setpipe_size(&self.write, capacity) {
            Ok(size) => {
                self.capacity = size;
                true
            }
            Err(_) => false,
        }
    }

    /// Bytes in the pipe, not yet passed on.
    pub fn held(&self) -> usize {
        self.held
    }

    /// Puts as much of `pieces`, in order, into the pipe as it has room
    /// (and slots) for, in one call (at most [`MAX_PIECES`] of them);
    /// returns how many bytes went in.
    pub fn load<'a>(&mut self, pieces: impl IntoIterator<Item = Still<'a>>) -> io::Result<usize> {
        use rustix::pipe::{vmsplice, IoSliceRaw, SpliceFlags};
        let mut room = self.capacity.saturating_sub(self.held);
        let mut slices: [IoSliceRaw<'_>; MAX_PIECES] =
            std::array::from_fn(|_| IoSliceRaw::from_slice(&[]));
        let mut count = 0;
        for piece in pieces.into_iter().take(MAX_PIECES) {
            if room == 0 {
                break;
            }
            if piece.is_empty() {
                continue;
            }
            let bytes = &piece.0[..piece.0.len().min(room)];
            room -= bytes.len();
            slices[count] = IoSliceRaw::from_slice(bytes);
            count += 1;
        }
        if count == 0 {
            return Ok(0);
        }
        // SAFETY: rustix's contract for vmsplice is that memory which must
        // not be mutated is only passed with the write end of a pipe:
        // `self.write` is that end (made by `pipe_with` above, never
        // swapped), so the kernel only reads the slices, which live for the
        // call. No GIFT flag, so no page-alignment contract applies. What
        // the pipe keeps after the call are references to the pages, not to
        // our mappings: they stay valid after those are unmapped, and the
        // bytes do not change, because a `Still` covers only bytes that are
        // never written again (a frozen copy's, see `freeze`, or a stamp's),
        // so what reaches the client is what the outbox queued.
        let n = unsafe { vmsplice(&self.write, &slices[..count], SpliceFlags::NONBLOCK) }?;
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
    use std::os::fd::AsFd;

    fn pattern(len: usize, seed: u8) -> Vec<u8> {
        (0..len).map(|i| (i as u8).wrapping_mul(7) ^ seed).collect()
    }

    /// A packer of the test's own, so that no other test's copies land in
    /// its arenas.
    fn packer() -> std::sync::Mutex<Packer> {
        std::sync::Mutex::new(Packer {
            arena: None,
            used: 0,
        })
    }

    fn same_arena(a: &Frozen, b: &Frozen) -> bool {
        Arc::ptr_eq(&a.piece.arena, &b.piece.arena)
    }

    #[test]
    fn frozen_copies_keep_their_bytes_packed_or_alone() {
        let packer = packer();
        let small: Vec<Vec<u8>> = (0..40).map(|n| pattern(70_000 + n, n as u8)).collect();
        let copies: Vec<Frozen> = small
            .iter()
            .map(|d| freeze_with(d, &packer).unwrap())
            .collect();
        let large = pattern(5 << 20, 9);
        let alone = freeze_with(&large, &packer).unwrap();
        for (copy, data) in copies.iter().zip(&small) {
            assert!(copy.as_ref() == data.as_slice());
        }
        assert!(alone.as_ref() == large.as_slice());
        // Packed: 40 copies of ~70 KB end to end in one arena, the 30th
        // across its first huge page's end.
        assert!(copies.iter().all(|c| same_arena(c, &copies[0])));
        assert_eq!(copies[1].piece.start, 70_016, "on the next cache line");
        let Piece { start, len, .. } = *copies[29].piece;
        assert!(start < HUGE_PAGE && start + len > HUGE_PAGE);
        assert_eq!(
            copies[0].piece.arena.reached.load(Ordering::Relaxed),
            2 * HUGE_PAGE
        );
        // Alone: its whole 2 MiB blocks can be huge pages.
        assert!(!same_arena(&alone, &copies[29]));
        assert_eq!(alone.piece.arena.base.as_ptr() as usize % HUGE_PAGE, 0);
        assert!(arena_bytes() >= (5 << 20) + 2 * HUGE_PAGE);
        let empty = freeze(b"").unwrap();
        assert!(empty.as_ref().is_empty());
    }

    #[test]
    fn every_copy_under_2_mib_is_packed_on_huge_pages() {
        let packer = packer();
        let copies: Vec<Frozen> = [256 << 10, 512 << 10, (2 << 20) - 1]
            .into_iter()
            .map(|len| freeze_with(&pattern(len, 1), &packer).unwrap())
            .collect();
        let arena = &copies[0].piece.arena;
        assert!(copies.iter().all(|c| same_arena(c, &copies[0])));
        assert_eq!(arena.base.as_ptr() as usize % HUGE_PAGE, 0);
        assert_eq!(
            (copies[2].piece.start, arena.reached.load(Ordering::Relaxed)),
            (768 << 10, 2 * HUGE_PAGE),
            "2,816 KiB of copies reach two huge pages"
        );
        let alone = freeze_with(&pattern(2 << 20, 2), &packer).unwrap();
        assert_eq!(alone.piece.start, 0);
        assert_eq!(alone.piece.arena.len, 2 << 20);
        // An empty copy is the first into a packer of its own too.
        let empty = freeze_with(b"", &self::packer()).unwrap();
        assert!(empty.as_ref().is_empty());
    }

    #[test]
    fn a_copy_that_does_not_fit_the_rest_closes_the_arena() {
        let packer = packer();
        let freeze = |len| freeze_with(&pattern(len, 3), &packer).unwrap();
        let full = |copy: &Frozen| copy.piece.arena.full.load(Ordering::SeqCst);
        // Seventeen copies of 1,900,000 bytes (1,900,032 with the cache
        // line) fit 32 MiB, with 1,253,888 bytes left.
        let first: Vec<Frozen> = (0..17).map(|_| freeze(1_900_000)).collect();
        assert!(first.iter().all(|c| same_arena(c, &first[0])));
        assert!(!full(&first[0]));
        let closing = freeze(1_253_889);
        assert!(!same_arena(&closing, &first[0]) && closing.piece.start == 0);
        assert!(full(&first[0]) && !full(&closing));
        // It would fit the first arena's rest to the byte.
        let rest = freeze(1_253_888);
        assert!(same_arena(&rest, &closing), "a closed arena takes no more");
        // A build's end closes it too; sparse is then of the huge pages its
        // copies reach (two, for 2,507,777 bytes), not of its 32 MiB.
        packer.lock().unwrap().close();
        let next = freeze(1000);
        assert!(!same_arena(&next, &rest) && full(&rest));
        assert!(!rest.is_sparse(), "2,507,777 bytes of 4 MiB alive");
        drop(closing);
        assert!(rest.is_sparse());
    }

    #[test]
    fn a_copy_left_nearly_alone_in_a_full_arena_is_sparse() {
        let packer = packer();
        let data: Vec<Vec<u8>> = (0..340).map(|n| pattern(100_000, n as u8)).collect();
        let mut copies: Vec<Frozen> = data
            .iter()
            .map(|d| freeze_with(d, &packer).unwrap())
            .collect();
        // 335 of 100 kB fill a 32 MiB arena (closed by the 336th).
        let first = copies[25].clone();
        let in_first = |c: &Frozen| same_arena(c, &first);
        assert_eq!(copies.iter().filter(|c| in_first(c)).count(), 335);
        assert!(!first.is_sparse(), "every copy in it is alive");
        // A clone is the same copy: dropping it changes nothing.
        drop(first.clone());
        assert!(!first.is_sparse());
        // Every other copy in the first arena goes, as a reload that
        // changed those files drops them.
        copies.retain(|c| !in_first(c));
        assert!(first.is_sparse());
        assert!(first.as_ref() == data[25].as_slice());
        // A copy alone in its own arena never is.
        let alone = freeze_with(&pattern(HUGE_PAGE, 3), &packer).unwrap();
        assert!(!alone.is_sparse());
        // Copied again as a survivor, it is packed apart from new copies.
        let survivor = freeze_in(first.as_ref(), Cohort::Survivor).unwrap();
        let newer = freeze(&data[1]).unwrap();
        assert!(survivor.as_ref() == data[25].as_slice());
        assert!(!same_arena(&survivor, &newer));
    }

    #[test]
    fn a_pipe_carries_a_frozen_range_in_order_and_counts_it() {
        let copy = freeze(&(0..=255u8).cycle().take(300_000).collect::<Vec<u8>>()).unwrap();
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut pipe = Pipe::new(64 * 1024).unwrap();
        assert!(pipe.grow(256 * 1024));
        assert_eq!(pipe.capacity(), 256 * 1024);
        let mut sent = 1000;
        let mut got = Vec::new();
        while sent < 250_000 || pipe.held() > 0 {
            sent += pipe.load([copy.still(sent..250_000).unwrap()]).unwrap();
            pipe.unload(a.as_fd(), sent < 250_000).unwrap();
            let mut buf = vec![0u8; 300_000];
            let n = std::io::Read::read(&mut b, &mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert_eq!(pipe.held(), 0);
        assert!(got == copy.as_ref()[1000..250_000]);
        assert!(copy.still(299_000..300_001).is_none());
    }

    #[test]
    fn a_pipe_carries_stamps_between_frozen_ranges_after_both_are_dropped() {
        let copy = freeze(&(0..=255u8).cycle().take(40_000).collect::<Vec<u8>>()).unwrap();
        let (a, mut b) = std::os::unix::net::UnixStream::pair().unwrap();
        let mut pipe = Pipe::new(256 * 1024).unwrap();
        let (one, two) = (
            Stamp::new(b"frame one").unwrap(),
            Stamp::new(b"two").unwrap(),
        );
        let pieces = [
            one.still(),
            copy.still(0..20_000).unwrap(),
            two.still(),
            copy.still(20_000..40_000).unwrap(),
        ];
        assert_eq!(pipe.load(pieces).unwrap(), 40_012);
        // What the pipe holds is not touched by later stamps on the same
        // page, nor by the stamps and the copy going away.
        let later: Vec<Stamp> = (0..500).map(|_| Stamp::new(b"LATER").unwrap()).collect();
        drop((one, two, later));
        let mut expected = b"frame one".to_vec();
        expected.extend_from_slice(&copy.as_ref()[..20_000]);
        expected.extend_from_slice(b"two");
        expected.extend_from_slice(&copy.as_ref()[20_000..]);
        drop(copy);
        let mut got = Vec::new();
        while pipe.held() > 0 {
            pipe.unload(a.as_fd(), false).unwrap();
            let mut buf = vec![0u8; 64 * 1024];
            let n = std::io::Read::read(&mut b, &mut buf).unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        assert!(got == expected);
    }
}
