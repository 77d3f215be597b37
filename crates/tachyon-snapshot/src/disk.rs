//! Opening site files safely, and knowing later whether one has changed.
//!
//! Owns the open policy: a file is opened relative to its root with
//! `openat2(RESOLVE_BENEATH)`, so no symlink swapped in after the walk can
//! lead outside the root (the kernel refuses with EXDEV; where there is no
//! openat2, the opened handle's own path must lie under the root's); with `O_NONBLOCK`,
//! so a FIFO swapped in cannot block the loader; and it is accepted only if
//! the opened handle is a regular file. The checks run on the handle, never
//! on the path again. Also owns a disk-served body's [`Stamp`]: what the
//! file was at load (device, inode, size, modification and change times), so
//! a send can tell that the bytes on disk are no longer the ones its ETag
//! and Content-Length describe. A disk-served file is kept open while the
//! load's share of descriptors lasts (so a file renamed over keeps serving
//! what it held), and past it is opened again for each response and
//! checked against its stamp, so a site of any size leaves the descriptors
//! to connections. A [`DiskBody`] is also how a large body in memory is
//! held, as a frozen copy (`tachyon_sys::freeze`), which is sent without a
//! copy the same way and has no stamp to check.

use std::fs::File;
use std::io;
use std::os::fd::{AsFd, AsRawFd, OwnedFd};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use rustix::fs::{FileType, Mode, OFlags, ResolveFlags};
use rustix::io::Errno;

/// What a file was when it was loaded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    dev: u64,
    ino: u64,
    size: u64,
    mtime: (i64, i128),
    ctime: (i64, i128),
    nlink: u64,
}

impl Stamp {
    fn of(stat: &rustix::fs::Stat) -> Stamp {
        Stamp {
            dev: stat.st_dev,
            ino: stat.st_ino,
            size: stat.st_size as u64,
            mtime: (stat.st_mtime, i128::from(stat.st_mtime_nsec)),
            ctime: (stat.st_ctime, i128::from(stat.st_ctime_nsec)),
            nlink: stat.st_nlink,
        }
    }

    /// Whether the file still holds the bytes it held when this stamp was
    /// taken. The change time catches a write that restored the
    /// modification time (`rsync --inplace -t`), but it also moves when a
    /// link is added or removed: a file renamed over, whose old inode we
    /// still hold, keeps its content. So when the link count moved, the
    /// change time is not evidence.
    fn same_content(&self, now: &Stamp) -> bool {
        let base =
            (self.dev, self.ino, self.size, self.mtime) == (now.dev, now.ino, now.size, now.mtime);
        base && (self.ctime == now.ctime || self.nlink != now.nlink)
    }

    /// The stamp of a body that has no file behind it (a frozen copy).
    fn frozen(size: u64, modified: u64) -> Stamp {
        Stamp {
            dev: 0,
            ino: 0,
            size,
            mtime: (modified.min(i64::MAX as u64) as i64, 0),
            ctime: (0, 0),
            nlink: 0,
        }
    }

    /// Size in bytes.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Seconds since the epoch of the last modification.
    pub fn modified(&self) -> u64 {
        self.mtime.0.max(0) as u64
    }

    /// How much longer to wait before this file has gone `settle` without
    /// a change, or `None` when it already has: a write may still be going
    /// on in the tick of the last change, and a later write in that tick
    /// would not move the stamp (git's "racily clean" index entries).
    pub fn settling(&self, settle: std::time::Duration) -> Option<std::time::Duration> {
        let changed = std::time::UNIX_EPOCH
            + std::time::Duration::new(
                self.ctime.0.max(0) as u64,
                self.ctime.1.clamp(0, 999_999_999) as u32,
            );
        let age = std::time::SystemTime::now()
            .duration_since(changed)
            .unwrap_or_default();
        settle.checked_sub(age).filter(|left| !left.is_zero())
    }

    /// Device and inode: which file this is, whatever its content.
    pub fn id(&self) -> (u64, u64) {
        (self.dev, self.ino)
    }

    /// A digest of the size and modification time (to the nanosecond): a
    /// disk-served file's validator, taken without reading its bytes, as
    /// nginx's `mtime-size` ETag is, and like it the same on replicas
    /// deployed with their times kept (`rsync -a`, an image). Reading the
    /// bytes was most of a start-up on a large tree (a checkout with 7.9 GB
    /// past the memory budget: 42 s before the first answer). A write
    /// moves the time; bytes changed under the same size and time are what
    /// the stamp's inode and change time are checked for at every send.
    pub fn digest(&self) -> u128 {
        let mut words = [0u8; 24];
        let fields = [self.size, self.mtime.0 as u64, self.mtime.1 as u64];
        for (at, field) in words.chunks_exact_mut(8).zip(fields) {
            at.copy_from_slice(&field.to_le_bytes());
        }
        xxhash_rust::xxh3::xxh3_128(&words)
    }
}

/// Why a file was not opened.
#[derive(Debug)]
pub enum OpenError {
    /// Gone since the walk saw it.
    Vanished,
    /// Not something the serving policy allows: a symlink leading outside
    /// the root, a loop, or not a regular file (FIFO, socket, device).
    Refused,
    /// Any other failure (EACCES, EMFILE, EIO…): the build must not go on.
    Failed(io::Error),
}

/// Opens `relative` under `root`, or `absolute` anywhere when symlinks may
/// leave the root, and returns the handle with its stamp.
pub fn open(
    root: &OwnedFd,
    relative: &Path,
    absolute: &Path,
    beneath: bool,
) -> Result<(File, Stamp), OpenError> {
    let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC | OFlags::NOCTTY;
    let fd = if beneath {
        let relative = if relative.as_os_str().is_empty() {
            Path::new(".")
        } else {
            relative
        };
        match rustix::fs::openat2(
            root,
            relative,
            flags,
            Mode::empty(),
            ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS,
        ) {
            // Linux before 5.6, or a seccomp filter (a container's, valgrind)
            // that does not know openat2.
            Err(Errno::NOSYS) => open_then_confirm(root, relative, flags)?,
            opened => opened.map_err(OpenError::from)?,
        }
    } else {
        rustix::fs::open(absolute, flags, Mode::empty())?
    };
    let stat = rustix::fs::fstat(&fd).map_err(|e| OpenError::Failed(e.into()))?;
    if FileType::from_raw_mode(stat.st_mode) != FileType::RegularFile {
        return Err(OpenError::Refused);
    }
    Ok((File::from(fd), Stamp::of(&stat)))
}

impl From<Errno> for OpenError {
    fn from(e: Errno) -> OpenError {
        match e {
            Errno::NOENT => OpenError::Vanished,
            Errno::XDEV | Errno::LOOP => OpenError::Refused,
            e => OpenError::Failed(e.into()),
        }
    }
}

/// [`open`] beneath the root without openat2: the kernel resolves the path
/// as it would for anyone, and the handle is kept only if what it names
/// (`/proc/self/fd`, the file opened, not the path asked for) lies under
/// the root; a symlink or `..` that led elsewhere is refused, as openat2
/// refuses it. The check is on the handle, so nothing swapped in after it
/// matters.
fn open_then_confirm(root: &OwnedFd, relative: &Path, flags: OFlags) -> Result<OwnedFd, OpenError> {
    let fd = rustix::fs::openat(root, relative, flags, Mode::empty())?;
    let named = |fd: &OwnedFd| {
        let link = format!("/proc/self/fd/{}", fd.as_raw_fd());
        rustix::fs::readlink(link, Vec::new()).map_err(|e| {
            OpenError::Failed(io::Error::other(format!(
                "this kernel has no openat2, and /proc/self/fd cannot tell \
                 where an opened file is ({e}): refusing to serve it"
            )))
        })
    };
    let (file, top) = (named(&fd)?, named(root)?);
    let path = |name: &std::ffi::CStr| {
        use std::os::unix::ffi::OsStrExt;
        Path::new(std::ffi::OsStr::from_bytes(name.to_bytes())).to_owned()
    };
    // Whole components: `/srv/site2/a` is not under `/srv/site`.
    match path(&file).starts_with(path(&top)) {
        true => Ok(fd),
        false => Err(OpenError::Refused),
    }
}

/// Opens a root directory, for [`open`] to resolve beneath.
pub fn open_root(root: &Path) -> io::Result<OwnedFd> {
    Ok(rustix::fs::open(
        root,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

/// Frozen copies alive in this process (every generation's, counted once
/// each: generations share them through the encode cache).
static FROZEN_LIVE: AtomicUsize = AtomicUsize::new(0);

/// Frozen copies alive, and the bytes of the arenas that hold them.
pub fn frozen_footprint() -> (usize, usize) {
    (
        FROZEN_LIVE.load(Ordering::Relaxed),
        tachyon_sys::arena_bytes(),
    )
}

/// Where a disk-served file is found again when it is not kept open.
#[derive(Debug)]
pub(crate) struct Place {
    /// The load's root directory, which a relative path resolves beneath.
    pub(crate) root: Arc<OwnedFd>,
    /// Relative to `root` when `beneath`, else absolute (a symlink allowed
    /// to lead outside the root).
    pub(crate) path: std::path::PathBuf,
    pub(crate) beneath: bool,
}

/// Where a body's bytes are read from.
#[derive(Debug)]
enum Source {
    /// A file kept open since load, which can change under us.
    Kept(Arc<File>),
    /// A file opened again for each response: past the load's share of
    /// descriptors. Its path may since hold another file (renamed over),
    /// which the stamp tells apart.
    Reopened(Place),
    /// A frozen in-memory copy (see [`DiskBody::frozen`]), and the same
    /// bytes as `Bytes` for the paths that slice them (TLS, HTTP/2).
    Frozen {
        copy: tachyon_sys::Frozen,
        bytes: Bytes,
    },
}

/// A body served from a kept-open file, or from a frozen in-memory copy:
/// the bodies a send can pass to the kernel without copying them.
#[derive(Debug)]
pub struct DiskBody {
    source: Source,
    stamp: Stamp,
    /// Set when a send finds the file changed; shared by one snapshot's disk
    /// bodies so the reloader can notice and rebuild.
    changed: Arc<AtomicBool>,
    /// Send with sendfile (the operator promised files are replaced by
    /// rename, never rewritten in place) rather than through a copy.
    zero_copy: bool,
}

impl DiskBody {
    /// A body read from `file`, kept open.
    pub(crate) fn kept(
        file: File,
        stamp: Stamp,
        changed: Arc<AtomicBool>,
        zero_copy: bool,
    ) -> DiskBody {
        DiskBody {
            source: Source::Kept(Arc::new(file)),
            stamp,
            changed,
            zero_copy,
        }
    }

    /// A body read from the file at `place`, opened for each response.
    pub(crate) fn reopened(
        place: Place,
        stamp: Stamp,
        changed: Arc<AtomicBool>,
        zero_copy: bool,
    ) -> DiskBody {
        DiskBody {
            source: Source::Reopened(place),
            stamp,
            changed,
            zero_copy,
        }
    }

    /// A body held in memory as a frozen copy (`tachyon_sys::freeze`):
    /// written once into anonymous memory, backed by huge pages where the
    /// kernel has them, and never written again, so it stays the
    /// representation its ETag names, and the pages a pipe or socket still
    /// references are that representation. Unlike a heap body it goes out
    /// on plain HTTP/1.1 without a copy from user space into the socket
    /// (spliced through a pipe), the reason bodies from 16 KiB on are
    /// frozen (see `load::FREEZE_FROM`). A frozen copy holds no descriptor.
    pub(crate) fn frozen(
        data: &[u8],
        modified: u64,
        cohort: tachyon_sys::Cohort,
    ) -> io::Result<DiskBody> {
        let copy = tachyon_sys::freeze_in(data, cohort)?;
        FROZEN_LIVE.fetch_add(1, Ordering::Relaxed);
        Ok(DiskBody {
            source: Source::Frozen {
                bytes: Bytes::from_owner(copy.clone()),
                copy,
            },
            stamp: Stamp::frozen(data.len() as u64, modified),
            // Never set: a frozen copy cannot change.
            changed: Arc::default(),
            zero_copy: false,
        })
    }

    /// A frozen copy's bytes in place.
    pub fn mapped(&self) -> Option<&Bytes> {
        match &self.source {
            Source::Frozen { bytes, .. } => Some(bytes),
            Source::Kept(_) | Source::Reopened(_) => None,
        }
    }

    /// A frozen copy, for splicing its pages to a socket.
    pub fn frozen_copy(&self) -> Option<&tachyon_sys::Frozen> {
        match &self.source {
            Source::Frozen { copy, .. } => Some(copy),
            Source::Kept(_) | Source::Reopened(_) => None,
        }
    }

    /// Whether this is a frozen in-memory copy (counted as memory).
    pub fn is_frozen(&self) -> bool {
        matches!(self.source, Source::Frozen { .. })
    }

    /// Whether the file is kept open (not opened for each response).
    pub fn is_kept_open(&self) -> bool {
        matches!(self.source, Source::Kept(_))
    }

    /// Whether each response opens the file again (see [`DiskBody::open`]).
    pub fn opens_per_response(&self) -> bool {
        matches!(self.source, Source::Reopened(_))
    }

    /// The file to send one response from: the one kept open, or the path
    /// opened now, if it still holds the loaded file. A file that is no
    /// longer the loaded one is remembered for the reloader. A frozen copy
    /// has none (it is sent from memory).
    pub fn open(&self) -> io::Result<Arc<File>> {
        match &self.source {
            Source::Kept(file) => Ok(Arc::clone(file)),
            Source::Reopened(place) => {
                let opened = open(&place.root, &place.path, &place.path, place.beneath);
                match opened {
                    Ok((file, now)) if self.stamp.same_content(&now) => Ok(Arc::new(file)),
                    Ok(_) | Err(OpenError::Vanished | OpenError::Refused) => {
                        self.changed.store(true, Ordering::Relaxed);
                        Err(io::Error::other("no longer the loaded file"))
                    }
                    Err(OpenError::Failed(e)) => Err(e),
                }
            }
            Source::Frozen { .. } => Err(io::Error::other("a frozen copy has no file")),
        }
    }

    /// Whether this body may be sent with sendfile. sendfile hands the
    /// socket references to page-cache pages, not copies: a write after the
    /// call, even after every check, can still change bytes the client has
    /// not received (on loopback, until the client reads them). Only a copy
    /// taken before a successful stamp check is known to be the announced
    /// representation; the soak of 2026-11-23 saw torn bodies without it.
    pub fn zero_copy(&self) -> bool {
        self.zero_copy
    }

    /// True while the file is still the one loaded: one fstat of a kept
    /// file, one stat of a reopened one's path (the send opens it, beneath
    /// the root, and checks again). A mismatch is remembered for the
    /// reloader.
    pub fn unchanged(&self) -> bool {
        let same = match &self.source {
            Source::Kept(file) => return self.still_loaded(file),
            Source::Reopened(place) => {
                let now = if place.beneath {
                    rustix::fs::statat(&*place.root, &place.path, rustix::fs::AtFlags::empty())
                } else {
                    rustix::fs::stat(&place.path)
                };
                now.is_ok_and(|s| self.stamp.same_content(&Stamp::of(&s)))
            }
            Source::Frozen { .. } => return true,
        };
        if !same {
            self.changed.store(true, Ordering::Relaxed);
        }
        same
    }

    /// True while `file` (from [`DiskBody::open`]) still holds the loaded
    /// bytes: one fstat. A mismatch is remembered for the reloader.
    pub fn still_loaded(&self, file: &File) -> bool {
        let same =
            rustix::fs::fstat(file.as_fd()).is_ok_and(|s| self.stamp.same_content(&Stamp::of(&s)));
        if !same {
            self.changed.store(true, Ordering::Relaxed);
        }
        same
    }
}

/// Fills `buf` from `offset` of `file`; a file that ends early has changed.
pub fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    let mut done = 0;
    while done < buf.len() {
        match rustix::io::pread(file, &mut buf[done..], offset + done as u64) {
            Ok(0) => {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "file truncated",
                ))
            }
            Ok(n) => done += n,
            Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(())
}

impl Drop for DiskBody {
    fn drop(&mut self) {
        if self.is_frozen() {
            FROZEN_LIVE.fetch_sub(1, Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use tachyon_testkit::Scratch;

    use super::*;

    fn temp(name: &str) -> Scratch {
        Scratch::new(&format!("disk-{name}"))
    }

    fn byte_at(body: &DiskBody, offset: u64) -> u8 {
        let mut byte = [0u8];
        read_exact_at(&body.open().unwrap(), &mut byte, offset).unwrap();
        byte[0]
    }

    #[test]
    fn open_refuses_escapes_fifos_and_reports_vanished_files() {
        let root = temp("root");
        let outside = temp("outside");
        std::fs::write(outside.join("secret"), "no").unwrap();
        std::fs::write(root.join("ok"), "yes").unwrap();
        std::os::unix::fs::symlink(outside.join("secret"), root.join("leak")).unwrap();
        rustix::fs::mknodat(
            rustix::fs::CWD,
            root.join("fifo"),
            FileType::Fifo,
            Mode::from_raw_mode(0o600),
            0,
        )
        .unwrap();
        let dir = open_root(&root).unwrap();
        let at = |name: &str| open(&dir, Path::new(name), &root.join(name), true);
        assert!(at("ok").is_ok());
        assert!(matches!(at("leak"), Err(OpenError::Refused)));
        assert!(matches!(at("fifo"), Err(OpenError::Refused)));
        assert!(matches!(at("gone"), Err(OpenError::Vanished)));
    }

    #[test]
    fn without_openat2_the_opened_file_must_lie_under_the_root() {
        let scratch = temp("no-openat2");
        let (root, sibling) = (scratch.join("site"), scratch.join("site2"));
        std::fs::create_dir_all(root.join("css")).unwrap();
        std::fs::create_dir(&sibling).unwrap();
        std::fs::write(sibling.join("secret"), "no").unwrap();
        std::fs::write(root.join("css/a.css"), "yes").unwrap();
        std::os::unix::fs::symlink("css/a.css", root.join("inside")).unwrap();
        std::os::unix::fs::symlink(sibling.join("secret"), root.join("leak")).unwrap();
        let dir = open_root(&root).unwrap();
        let flags = OFlags::RDONLY | OFlags::NONBLOCK | OFlags::CLOEXEC;
        let at = |name: &str| open_then_confirm(&dir, Path::new(name), flags);
        assert!(at("css/a.css").is_ok());
        assert!(
            at("inside").is_ok(),
            "a symlink within the root is followed"
        );
        assert!(matches!(at("leak"), Err(OpenError::Refused)));
        assert!(matches!(at("../site2/secret"), Err(OpenError::Refused)));
        assert!(matches!(
            at("css/../../site2/secret"),
            Err(OpenError::Refused)
        ));
        assert!(matches!(at("gone"), Err(OpenError::Vanished)));
    }

    #[test]
    fn an_in_place_write_is_noticed() {
        let root = temp("stamp");
        std::fs::write(root.join("f"), "0123456789").unwrap();
        let dir = open_root(&root).unwrap();
        let (file, stamp) = open(&dir, Path::new("f"), &root.join("f"), true).unwrap();
        let changed = Arc::new(AtomicBool::new(false));
        let body = DiskBody::kept(file, stamp, Arc::clone(&changed), false);
        assert!(body.unchanged());
        assert_eq!(byte_at(&body, 9), b'9');
        // Same length, new bytes, as `rsync --inplace` or `cp` over it would.
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(root.join("f"), "abcdefghij").unwrap();
        assert!(!body.unchanged());
        assert!(changed.load(Ordering::Relaxed));
    }

    #[test]
    fn a_file_renamed_over_keeps_its_content() {
        let root = temp("renamed");
        std::fs::write(root.join("f"), "old content").unwrap();
        let dir = open_root(&root).unwrap();
        let (file, stamp) = open(&dir, Path::new("f"), &root.join("f"), true).unwrap();
        let body = DiskBody::kept(file, stamp, Arc::new(AtomicBool::new(false)), false);
        std::thread::sleep(std::time::Duration::from_millis(20));
        // A deploy writes the new version beside it and renames it over.
        std::fs::write(root.join("f.new"), "new content").unwrap();
        std::fs::rename(root.join("f.new"), root.join("f")).unwrap();
        assert!(body.unchanged(), "the held inode still has the old bytes");
        assert_eq!(byte_at(&body, 0), b'o');
    }

    #[test]
    fn a_reopened_file_is_served_only_while_its_path_holds_the_loaded_file() {
        let root = temp("reopened");
        std::fs::write(root.join("f"), "old content").unwrap();
        let dir = Arc::new(open_root(&root).unwrap());
        let (file, stamp) = open(&dir, Path::new("f"), &root.join("f"), true).unwrap();
        drop(file);
        let changed = Arc::new(AtomicBool::new(false));
        let place = Place {
            root: Arc::clone(&dir),
            path: "f".into(),
            beneath: true,
        };
        let body = DiskBody::reopened(place, stamp, Arc::clone(&changed), false);
        assert!(!body.is_kept_open());
        assert!(body.unchanged());
        assert_eq!(byte_at(&body, 0), b'o');
        let held = body.open().unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(root.join("f.new"), "new content").unwrap();
        std::fs::rename(root.join("f.new"), root.join("f")).unwrap();
        // A response already under way keeps the inode it opened...
        assert!(body.still_loaded(&held));
        assert!(!changed.load(Ordering::Relaxed));
        // ...but the path now names another file: no new response from it.
        assert!(body.open().is_err());
        assert!(!body.unchanged());
        assert!(changed.load(Ordering::Relaxed));
    }

    #[test]
    fn a_digest_follows_size_and_modification_time_not_the_inode() {
        let root = temp("digest");
        std::fs::write(root.join("a"), "same").unwrap();
        std::fs::copy(root.join("a"), root.join("b")).unwrap();
        let time = std::time::UNIX_EPOCH + std::time::Duration::new(1_700_000_000, 123);
        for name in ["a", "b"] {
            let file = std::fs::File::options()
                .write(true)
                .open(root.join(name))
                .unwrap();
            file.set_modified(time).unwrap();
        }
        let dir = open_root(&root).unwrap();
        let stamp = |name: &str| {
            open(&dir, Path::new(name), &root.join(name), true)
                .unwrap()
                .1
        };
        // Two copies with their time kept, as replicas deployed by rsync -a.
        assert_ne!(stamp("a").id(), stamp("b").id());
        assert_eq!(stamp("a").digest(), stamp("b").digest());
        let file = std::fs::File::options()
            .write(true)
            .open(root.join("b"))
            .unwrap();
        file.set_modified(time + std::time::Duration::from_nanos(1))
            .unwrap();
        assert_ne!(stamp("a").digest(), stamp("b").digest());
        std::fs::write(root.join("b"), "samer").unwrap();
        assert_ne!(stamp("a").digest(), stamp("b").digest());
    }
}
