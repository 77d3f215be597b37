//! Building a snapshot: one walk of the root, at start or on reload.
//!
//! Owns the serving policy for the filesystem: which names are visible
//! (dotfiles are not, except `/.well-known/`, RFC 8615), which symlinks are
//! followed (only those whose target is inside the root, unless allowed), how
//! much body data is held in memory, and what each directory maps to.

use std::collections::HashMap;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use rayon::prelude::*;
use tachyon_http::conditional::{format_date, seconds};
use tachyon_http::encoding::Coding;
use tachyon_http::h1;
use tachyon_http::h2::hpack;
use tachyon_http::response::{Field, Name};
use tachyon_http::Status;

use crate::compress::{self, Compression, Effort, EncodeCache, PendingVariant};
use crate::disk::{self, DiskBody, OpenError};
use crate::entry::{Body, Encoded, Entry, Representation};
use crate::listing::{self, Child};
use crate::mime;
use crate::rules::{HeaderRule, RedirectRule};
use crate::Snapshot;

/// Which symlinks under a root are followed. Whatever the policy, a link
/// whose target is a dotfile or lies in a hidden folder is not served
/// unless dotfiles are.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Symlinks {
    /// Every link, wherever it leads (what nginx, Apache, lighttpd, Caddy
    /// and static-web-server do): a documentation package linking its
    /// scripts from /usr/share/javascript works.
    #[default]
    Follow,
    /// Only links whose target lies inside the root.
    Inside,
    /// Links whose target has the owner of the link itself (nginx's
    /// `disable_symlinks if_not_owner`): a user cannot link to files of
    /// another's.
    Owner,
    /// No link at all.
    Never,
}

impl Symlinks {
    pub const ALL: [Symlinks; 4] = [
        Symlinks::Follow,
        Symlinks::Inside,
        Symlinks::Owner,
        Symlinks::Never,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Symlinks::Follow => "follow",
            Symlinks::Inside => "inside",
            Symlinks::Owner => "owner",
            Symlinks::Never => "never",
        }
    }

    pub fn parse(name: &str) -> Option<Symlinks> {
        Symlinks::ALL.into_iter().find(|s| s.name() == name)
    }
}

/// What to load, how much memory it may use, and the site's rules.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Total bytes of bodies held in memory; files beyond it are served from disk.
    pub max_memory: u64,
    /// Files larger than this are always served from disk (read from the
    /// page cache at each send, or sent with sendfile under `sendfile`).
    pub max_file_in_memory: u64,
    /// Index file names tried in order for `/dir/`.
    pub index_files: Vec<String>,
    /// Serve names starting with a dot.
    pub serve_dotfiles: bool,
    /// Which symlinks are followed.
    pub symlinks: Symlinks,
    /// Content codings built at load.
    pub compression: Compression,
    /// Headers per glob, applied in order.
    pub header_rules: Vec<HeaderRule>,
    /// List directories that have no index file.
    pub listing: bool,
    /// Serve `/about` from `about.html` when nothing else is named `/about`.
    pub clean_urls: bool,
    /// Site path of a file served with 200 for unknown paths (SPA routing).
    pub fallback: Option<String>,
    /// Site path of a file served as the body of 404 responses.
    pub not_found_page: Option<String>,
    /// Redirect rules; they take priority over files at the same path.
    pub redirects: Vec<RedirectRule>,
    /// How long after its last change a disk-served file may be stamped;
    /// the load waits for a younger one to settle.
    pub settle: Duration,
    /// Send disk-served bodies with sendfile instead of copying them. Faster
    /// for large files, but safe only where files are replaced by rename:
    /// a file rewritten in place while it is being sent can reach the
    /// client with bytes its ETag does not describe (see `DiskBody::zero_copy`).
    pub sendfile: bool,
    /// Disk-served files kept open, at most; the rest are opened again for
    /// each response. Each kept file is a descriptor for as long as its
    /// generation lives (two generations during a reload), taken from the
    /// connections' share of the open-file limit.
    pub keep_open: usize,
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_memory: 512 * 1024 * 1024,
            // Large bodies in memory are frozen copies spliced to sockets
            // (`freeze_large`), cheaper to send than a disk file and immune
            // to in-place writes; only the budget keeps them out.
            max_file_in_memory: 64 * 1024 * 1024,
            index_files: vec!["index.html".into(), "index.htm".into()],
            serve_dotfiles: false,
            symlinks: Symlinks::Follow,
            compression: Compression::default(),
            header_rules: Vec::new(),
            listing: false,
            clean_urls: false,
            fallback: None,
            not_found_page: None,
            redirects: Vec::new(),
            settle: Duration::from_secs(1),
            sendfile: false,
            keep_open: 1024,
        }
    }
}

/// Counts from one load, for the startup summary.
#[derive(Debug, Clone, Default)]
pub struct LoadStats {
    pub files: usize,
    pub directories: usize,
    pub bytes_in_memory: u64,
    pub files_on_disk: usize,
    pub bytes_on_disk: u64,
    /// Disk-served files past the share kept open (`LoadOptions::keep_open`),
    /// opened again for each response.
    pub files_reopened: usize,
    /// Per coding (in [`Coding::ALL`] order): representations and their bytes.
    pub encoded_files: [usize; 3],
    pub encoded_bytes: [u64; 3],
    /// Encodings built but dropped because the memory budget was spent.
    pub encodings_over_budget: usize,
    /// Encodings a deferred build left to the build after it (none known
    /// in memory or in the cache folder).
    pub variants_pending: usize,
    /// What the serving policy left out, and why.
    pub skipped: Vec<Skipped>,
    pub elapsed: Duration,
}

impl LoadStats {
    /// Counts one file and its encodings.
    fn count(&mut self, file: &Representation) {
        self.files += 1;
        match &file.body {
            Body::Memory(b) => self.bytes_in_memory += b.len() as u64,
            Body::Disk(d) if d.is_frozen() => self.bytes_in_memory += file.len,
            Body::Disk(d) => {
                self.files_on_disk += 1;
                self.bytes_on_disk += file.len;
                self.files_reopened += usize::from(!d.is_kept_open());
            }
        }
        for e in file.encoded.iter() {
            let i = e.coding as usize;
            self.encoded_files[i] += 1;
            self.encoded_bytes[i] += e.entry.len;
        }
    }
}

/// A path the snapshot does not serve, and why.
#[derive(Debug, Clone)]
pub struct Skipped {
    pub path: PathBuf,
    pub reason: SkipReason,
}

/// Why a path the walk met is not served. None of these is an error: they
/// are the policy, and a reload that meets them still publishes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum SkipReason {
    /// A name starting with a dot.
    Hidden,
    /// A symlink whose target is a dotfile or lies in a hidden directory.
    HiddenTarget,
    /// A symlink whose target is outside the root (`--symlinks inside`).
    OutsideRoot,
    /// A symlink whose target belongs to another owner (`--symlinks owner`).
    NotOwner,
    /// A symlink (`--symlinks never`).
    Symlink,
    /// A folder tagged as a cache (`CACHEDIR.TAG`): build output such as
    /// cargo's `target/`, never part of a site.
    CacheFolder,
    /// A symlink loop.
    Loop,
    /// A FIFO, socket or device.
    NotRegular,
    /// A dangling symlink, or a file deleted while the walk ran.
    Missing,
}

impl SkipReason {
    /// What the summary says about it.
    pub fn describe(self) -> &'static str {
        match self {
            SkipReason::Hidden => "dotfiles",
            SkipReason::HiddenTarget => "symlinks to dotfiles",
            SkipReason::OutsideRoot => "symlinks leaving the root",
            SkipReason::NotOwner => "symlinks to another owner's files",
            SkipReason::Symlink => "symlinks",
            SkipReason::CacheFolder => "cache folders (tagged by CACHEDIR.TAG)",
            SkipReason::Loop => "symlink loops",
            SkipReason::NotRegular => "not regular files",
            SkipReason::Missing => "dangling symlinks or files that vanished",
        }
    }

    /// The option that would serve it, if any.
    pub fn option(self) -> Option<&'static str> {
        match self {
            SkipReason::Hidden | SkipReason::HiddenTarget => Some("--dotfiles"),
            SkipReason::OutsideRoot | SkipReason::NotOwner | SkipReason::Symlink => {
                Some("--symlinks follow")
            }
            _ => None,
        }
    }
}

/// How far a load has got, readable from another thread while it runs: the
/// binary prints it for sites that take more than a moment to build.
#[derive(Debug, Default)]
pub struct Progress {
    /// Regular files found by the walk (final once `done` starts moving).
    pub files: AtomicUsize,
    /// Files read, hashed and compressed so far.
    pub done: AtomicUsize,
}

/// Why a snapshot could not be built. A failed build publishes nothing: the
/// previous generation keeps serving.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot open document root {path}")]
    Root { path: PathBuf, source: io::Error },
    #[error("document root {0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("walking {path}")]
    Walk { path: PathBuf, source: io::Error },
    #[error("reading {path}")]
    Read { path: PathBuf, source: io::Error },
    #[error("{path} changed while it was being loaded")]
    Changed { path: PathBuf },
    #[error("{key} = {path:?}: no such file in the document root")]
    MissingPage { key: &'static str, path: String },
}

/// A regular file found by the walk.
struct Found {
    path: PathBuf,
    /// Where it really is, when the walk reached it through a symlink (the
    /// file's own name or a directory above it): opening resolves beneath
    /// the root, where an absolute symlink is refused even if it points
    /// inside, so the real path is what is opened.
    real: Option<PathBuf>,
    key: Vec<u8>,
    len: u64,
    /// Device and inode the walk saw: the open must find the same file.
    id: (u64, u64),
    in_memory: bool,
}

/// A representation's bytes before its head is built.
#[derive(Clone)]
struct Raw {
    body: Body,
    len: u64,
    /// xxh3-128 of the bytes (of the stamp's size and modification time
    /// for a disk-served body, which is not read: `Stamp::digest`): the
    /// ETag shows 64 bits of it, the encoding cache is keyed by all 128.
    hash: u128,
    modified: u64,
}

/// What every representation of one resource shares.
struct Meta {
    modified: u64,
    content_type: String,
    /// Cache-Control, then the configured fields.
    fields: Vec<Field>,
}

/// What the walk found.
#[derive(Default)]
struct Walked {
    found: Vec<Found>,
    directories: Vec<Vec<u8>>,
    children: HashMap<Vec<u8>, Vec<Child>>,
    skipped: Vec<Skipped>,
}

pub(crate) fn load(
    root: &Path,
    options: &LoadOptions,
    progress: &Progress,
    cache: &EncodeCache,
) -> Result<Snapshot, LoadError> {
    cache.begin();
    let snapshot = load_generation(root, options, progress, cache);
    // A failed build keeps the previous generation serving, so it must not
    // empty the cache that generation's successor will want.
    if snapshot.is_ok() {
        cache.finish();
    }
    // The heap copies of frozen bodies (and a failed build's all) are free
    // now; most would stay resident otherwise.
    tachyon_sys::release_free_heap();
    snapshot
}

fn load_generation(
    root: &Path,
    options: &LoadOptions,
    progress: &Progress,
    cache: &EncodeCache,
) -> Result<Snapshot, LoadError> {
    let started = Instant::now();
    let root = root.canonicalize().map_err(|source| LoadError::Root {
        path: root.to_path_buf(),
        source,
    })?;
    let meta = std::fs::metadata(&root).map_err(|source| LoadError::Root {
        path: root.clone(),
        source,
    })?;
    if !meta.is_dir() {
        return Err(LoadError::NotADirectory(root));
    }
    let root_dir = Arc::new(disk::open_root(&root).map_err(|source| LoadError::Root {
        path: root.clone(),
        source,
    })?);
    let kept = AtomicUsize::new(0);
    let mut walked = walk(&root, options)?;
    let changed = Arc::new(AtomicBool::new(false));
    progress.files.store(walked.found.len(), Ordering::Relaxed);

    // Reading, hashing and compressing are independent per file: spread them
    // over the cores. Every file is read once, siblings included, so that a
    // `.gz` beside a file is one body serving two entries.
    let raws: Vec<Raw> = walked
        .found
        .par_iter()
        .map(|f| read(&root_dir, &root, f, options, &changed, &kept, cache))
        .collect::<Result<_, _>>()?;
    let by_key: HashMap<&[u8], &Raw> = walked
        .found
        .iter()
        .zip(&raws)
        .map(|(f, raw)| (f.key.as_slice(), raw))
        .collect();
    let identity_bytes: u64 = raws
        .iter()
        .filter(|r| matches!(r.body, Body::Memory(_)))
        .map(|r| r.len)
        .sum();
    // Encodings are charged to the same budget, after every identity body.
    let tally = Tally {
        budget: AtomicU64::new(options.max_memory.saturating_sub(identity_bytes)),
        over_budget: AtomicUsize::new(0),
        pending: Mutex::new(Vec::new()),
    };
    let files: Vec<Representation> = walked
        .found
        .par_iter()
        .zip(&raws)
        .map(|(f, raw)| {
            let file = represent_file(f, raw, &by_key, options, cache, &tally);
            progress.done.fetch_add(1, Ordering::Relaxed);
            file
        })
        .collect();

    let pending = tally
        .pending
        .into_inner()
        .unwrap_or_else(|e| e.into_inner());
    let mut stats = LoadStats {
        directories: walked.directories.len(),
        encodings_over_budget: tally.over_budget.into_inner(),
        variants_pending: pending.len(),
        ..LoadStats::default()
    };
    let mut entries: HashMap<Box<[u8]>, Entry, _> = HashMap::default();
    for (f, file) in walked.found.iter().zip(files) {
        stats.count(&file);
        entries.insert(
            f.key.clone().into_boxed_slice(),
            Entry::File(Arc::new(file)),
        );
    }
    add_directories(
        &mut entries,
        std::mem::take(&mut walked.directories),
        &mut walked.children,
        options,
    );
    if options.clean_urls {
        add_clean_urls(&mut entries);
    }
    for rule in &options.redirects {
        entries.insert(
            rule.from.clone().into_boxed_slice(),
            Entry::Redirect {
                status: rule.status,
                location: rule.to.clone().into_boxed_slice(),
            },
        );
    }
    let fallback = page(&entries, "fallback", &options.fallback)?;
    let not_found = page(&entries, "not_found_page", &options.not_found_page)?;

    stats.skipped = walked.skipped;
    stats.elapsed = started.elapsed();
    Ok(Snapshot {
        entries,
        root,
        stats,
        fallback,
        not_found,
        changed,
        pending: Mutex::new(pending),
    })
}

/// The file a page option (`fallback`, `not_found_page`) names, which must
/// be in the site.
fn page(
    entries: &HashMap<Box<[u8]>, Entry, impl std::hash::BuildHasher>,
    key: &'static str,
    path: &Option<String>,
) -> Result<Option<Arc<Representation>>, LoadError> {
    match path {
        None => Ok(None),
        Some(p) => match entries.get(p.as_bytes()) {
            Some(Entry::File(f)) => Ok(Some(Arc::clone(f))),
            _ => Err(LoadError::MissingPage {
                key,
                path: p.clone(),
            }),
        },
    }
}

/// Walks the root in name order, applying the visibility policy. Only a
/// file that vanished mid-walk, and what the policy leaves out, are skipped;
/// any other error fails the build.
fn walk(root: &Path, options: &LoadOptions) -> Result<Walked, LoadError> {
    let mut walked = Walked::default();
    let mut budget = options.max_memory;
    // Directories the walk entered through a symlink; everything under them
    // is reached through it too.
    let mut linked_dirs: std::collections::HashSet<PathBuf> = Default::default();
    let pruned = std::cell::RefCell::new(Vec::new());
    // Pruning here, not in the loop, stops the walk from descending into a
    // hidden directory or a symlinked directory that leaves the root.
    let walker = walkdir::WalkDir::new(root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            if e.depth() == 0 {
                return true;
            }
            let reason = refusal(root, e, options);
            if let Some(reason) = reason {
                pruned.borrow_mut().push(Skipped {
                    path: e.path().to_path_buf(),
                    reason,
                });
            }
            reason.is_none()
        });
    for item in walker {
        let item = match item {
            Ok(item) => item,
            Err(err) => {
                let path = err.path().map(Path::to_path_buf).unwrap_or_default();
                let skipped = if err.loop_ancestor().is_some() {
                    Skipped {
                        path,
                        reason: SkipReason::Loop,
                    }
                } else {
                    vanished(path, walk_io_error(err, "walk"))?
                };
                walked.skipped.push(skipped);
                continue;
            }
        };
        let path = item.path();
        let key = site_key(root, path);
        let is_dir = item.file_type().is_dir();
        if !is_dir && !item.file_type().is_file() {
            walked.skipped.push(Skipped {
                path: path.to_path_buf(),
                reason: SkipReason::NotRegular,
            });
            continue;
        }
        let metadata = match item.metadata() {
            Ok(m) => m,
            Err(err) => {
                let skipped = vanished(path.to_path_buf(), walk_io_error(err, "stat"))?;
                walked.skipped.push(skipped);
                continue;
            }
        };
        let modified = seconds(metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH));
        if item.depth() > 0 {
            if let Some(parent) = path.parent() {
                walked
                    .children
                    .entry(site_key(root, parent))
                    .or_default()
                    .push(Child {
                        name: item.file_name().to_string_lossy().into_owned(),
                        is_dir,
                        size: metadata.len(),
                        modified,
                    });
            }
        }
        let via_link =
            item.path_is_symlink() || path.parent().is_some_and(|p| linked_dirs.contains(p));
        if is_dir {
            if via_link {
                linked_dirs.insert(path.to_path_buf());
            }
            walked.directories.push(key);
            continue;
        }
        let real = match via_link.then(|| path.canonicalize()) {
            None => None,
            Some(Ok(real)) => Some(real),
            Some(Err(e)) => {
                walked.skipped.push(vanished(path.to_path_buf(), e)?);
                continue;
            }
        };
        let len = metadata.len();
        // The budget is handed out in walk order, before the parallel read.
        let in_memory = len <= options.max_file_in_memory && len <= budget;
        if in_memory {
            budget -= len;
        }
        walked.found.push(Found {
            path: path.to_path_buf(),
            real,
            key,
            len,
            id: (metadata.dev(), metadata.ino()),
            in_memory,
        });
    }
    walked.skipped.append(&mut pruned.into_inner());
    Ok(walked)
}

/// A file that vanished during the walk is skipped; any other error fails
/// the build (a reload that cannot read the site must not publish part of it).
fn vanished(path: PathBuf, error: io::Error) -> Result<Skipped, LoadError> {
    if error.kind() == io::ErrorKind::NotFound {
        Ok(Skipped {
            path,
            reason: SkipReason::Missing,
        })
    } else {
        Err(LoadError::Walk {
            path,
            source: error,
        })
    }
}

fn walk_io_error(err: walkdir::Error, doing: &str) -> io::Error {
    err.into_io_error()
        .unwrap_or_else(|| io::Error::other(doing.to_string()))
}

/// Why the walk must not serve (or descend into) `e`, if it must not.
fn refusal(root: &Path, e: &walkdir::DirEntry, options: &LoadOptions) -> Option<SkipReason> {
    if !options.serve_dotfiles && !visible(e.file_name().as_bytes()) {
        return Some(SkipReason::Hidden);
    }
    if e.file_type().is_dir() && is_cache_folder(e.path()) {
        return Some(SkipReason::CacheFolder);
    }
    if !e.path_is_symlink() {
        return None;
    }
    if options.symlinks == Symlinks::Never {
        return Some(SkipReason::Symlink);
    }
    // The policy applies to where a symlink leads, not only to its name:
    // `pub.txt -> .env` must not expose `.env`.
    let Ok(real) = e.path().canonicalize() else {
        return Some(SkipReason::Missing);
    };
    let within = real.strip_prefix(root).ok();
    if within.is_none() && options.symlinks == Symlinks::Inside {
        return Some(SkipReason::OutsideRoot);
    }
    if options.symlinks == Symlinks::Owner && !same_owner(e.path(), &real) {
        return Some(SkipReason::NotOwner);
    }
    let shown = within.unwrap_or(&real);
    let hidden = shown
        .components()
        .any(|c| !visible(c.as_os_str().as_bytes()) && c.as_os_str() != "/");
    (hidden && !options.serve_dotfiles).then_some(SkipReason::HiddenTarget)
}

/// A folder holding a `CACHEDIR.TAG` that begins with the signature of
/// the Cache Directory Tagging Specification (bford.info/cachedir): what
/// cargo, Go and other build tools mark their output with, and backup
/// tools skip.
fn is_cache_folder(dir: &Path) -> bool {
    const SIGNATURE: &[u8] = b"Signature: 8a477f597d28d172789f06886806bc55";
    let mut head = [0u8; SIGNATURE.len()];
    std::fs::File::open(dir.join("CACHEDIR.TAG"))
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head))
        .is_ok_and(|()| head == SIGNATURE)
}

/// Whether the link at `link` and what it leads to (`real`) have one
/// owner. Every link of a chain counts, as nginx checks every component.
fn same_owner(link: &Path, real: &Path) -> bool {
    let owner = |p: &Path| std::fs::symlink_metadata(p).ok().map(|m| m.uid());
    let Some(link_owner) = owner(link) else {
        return false;
    };
    let mut hop = link.to_path_buf();
    for _ in 0..40 {
        let Ok(target) = std::fs::read_link(&hop) else {
            break;
        };
        hop = match hop.parent() {
            Some(parent) => parent.join(target),
            None => target,
        };
        if owner(&hop) != Some(link_owner) {
            return false;
        }
    }
    owner(real) == Some(link_owner)
}

/// Opens and reads (or stamps, for a disk-served body) one file, checking
/// that it is the file the walk saw and that it did not change meanwhile.
/// `kept` counts the disk-served files this load keeps open.
fn read(
    root_dir: &Arc<OwnedFd>,
    root: &Path,
    f: &Found,
    options: &LoadOptions,
    changed: &Arc<AtomicBool>,
    kept: &AtomicUsize,
    cache: &EncodeCache,
) -> Result<Raw, LoadError> {
    let settle = options.settle;
    let real = f.real.as_deref().unwrap_or(&f.path);
    let (relative, beneath) = match real.strip_prefix(root) {
        Ok(relative) => (relative, true),
        // Only reachable through a symlink the policy follows out of the
        // root (`Symlinks::Follow` or `Owner`).
        Err(_) => (real, false),
    };
    let read_error = |source: io::Error| LoadError::Read {
        path: f.path.clone(),
        source,
    };
    // A disk-served body is later checked against its stamp; a stamp taken
    // in the tick of an ongoing write could not see the rest of that write.
    // So such a file is stamped only once it has settled (a few waits at
    // most: one written without pause fails the build as changed).
    let mut waits = 0;
    let (mut file, stamp) = loop {
        let (file, stamp) = match disk::open(root_dir, relative, real, beneath) {
            Ok(opened) => opened,
            // Between the walk and the open, the path was deleted or swapped
            // for something the policy refuses: this generation would not
            // match the tree, and the change has queued another reload.
            Err(OpenError::Vanished | OpenError::Refused) => {
                return Err(LoadError::Changed {
                    path: f.path.clone(),
                })
            }
            Err(OpenError::Failed(source)) => return Err(read_error(source)),
        };
        match stamp.settling(settle).filter(|_| !f.in_memory) {
            None => break (file, stamp),
            Some(left) if waits < 5 => {
                waits += 1;
                drop(file);
                std::thread::sleep(left);
            }
            Some(_) => {
                return Err(LoadError::Changed {
                    path: f.path.clone(),
                })
            }
        }
    };
    if stamp.id() != f.id || stamp.size() != f.len {
        return Err(LoadError::Changed {
            path: f.path.clone(),
        });
    }
    let modified = stamp.modified();
    if f.in_memory {
        let mut data = Vec::with_capacity(f.len as usize);
        file.read_to_end(&mut data).map_err(read_error)?;
        if data.len() as u64 != f.len {
            return Err(LoadError::Changed {
                path: f.path.clone(),
            });
        }
        let mut raw = raw(data);
        raw.modified = modified;
        // A large body is shared as its frozen copy (`freeze_large`); its
        // heap bytes live only while its variants are built.
        if let (Body::Memory(data), true) = (&raw.body, raw.len < FREEZE_FROM) {
            raw.body = Body::Memory(cache.share_body(data.clone(), raw.hash));
        }
        return Ok(raw);
    }
    // Its bytes are not read: the stamp is its validator, and the bytes are
    // checked against it at each send.
    let keep = kept
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
            (n < options.keep_open).then_some(n + 1)
        })
        .is_ok();
    let body = if keep {
        DiskBody::kept(file, stamp, Arc::clone(changed), options.sendfile)
    } else {
        drop(file);
        let place = disk::Place {
            root: Arc::clone(root_dir),
            path: if beneath { relative } else { real }.to_path_buf(),
            beneath,
        };
        DiskBody::reopened(place, stamp, Arc::clone(changed), options.sendfile)
    };
    Ok(Raw {
        body: Body::Disk(Arc::new(body)),
        len: f.len,
        hash: stamp.digest(),
        modified,
    })
}

/// What the parallel representation of files shares: the memory left for
/// encodings, and counts for the summary.
struct Tally {
    budget: AtomicU64,
    over_budget: AtomicUsize,
    /// Encodings a deferred build left for later.
    pending: Mutex<Vec<PendingVariant>>,
}

/// Builds one file's representations: its identity, the precompressed
/// siblings read beside it, and the codings built here while the memory
/// budget lasts.
fn represent_file(
    f: &Found,
    identity: &Raw,
    by_key: &HashMap<&[u8], &Raw>,
    options: &LoadOptions,
    cache: &EncodeCache,
    tally: &Tally,
) -> Representation {
    let Tally {
        budget,
        over_budget,
        pending,
    } = tally;
    let content_type = mime::content_type(&f.path);
    let site_path = String::from_utf8_lossy(&f.key);
    let cache_control = mime::cache_control(&f.path, &content_type);
    let meta = meta(
        &site_path,
        cache_control,
        content_type,
        identity.modified,
        options,
    );
    let mut encoded = Vec::new();
    let mut deferred = false;
    for coding in Coding::ALL {
        let mut sibling = f.key.clone();
        sibling.extend_from_slice(coding.suffix().as_bytes());
        if let Some(raw) = by_key.get(sibling.as_slice()) {
            // A precompressed sibling wins over building one (nginx's
            // gzip_static): the site owner chose its settings. Its body is
            // the sibling entry's own, already counted.
            encoded.push((coding, (*raw).clone()));
            continue;
        }
        if let (Body::Memory(data), true) = (
            &identity.body,
            worth_encoding(&meta, options, coding, identity.len),
        ) {
            // A deferred build takes what is already known (the cache
            // folder makes a restart ready with every variant at once) and
            // leaves the rest to the build after it.
            let result = if options.compression.deferred {
                match cache.known(coding, data, identity.hash) {
                    Some(known) => known,
                    None => {
                        deferred = true;
                        pending
                            .lock()
                            .unwrap_or_else(|e| e.into_inner())
                            .push(PendingVariant::new(coding, data, identity.hash));
                        continue;
                    }
                }
            } else if budget.load(Ordering::Relaxed) == 0 {
                over_budget.fetch_add(1, Ordering::Relaxed);
                continue;
            } else {
                cache.encode(coding, data, identity.hash)
            };
            if let Some(bytes) = result {
                let len = bytes.len() as u64;
                let charged = budget
                    .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |left| {
                        left.checked_sub(len)
                    })
                    .is_ok();
                if charged {
                    let mut raw = raw_bytes(bytes);
                    raw.modified = identity.modified;
                    encoded.push((coding, raw));
                } else {
                    over_budget.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    }
    assemble(
        freeze_large(identity.clone(), cache),
        encoded,
        deferred,
        &meta,
    )
}

/// Heap bodies from this size on move into a frozen copy, so they go out
/// without a copy from user space (see [`DiskBody::frozen`]). The head and
/// the body are then two calls where a heap body needs one `writev`, but
/// the copy saved is worth more from 16 KiB on: plain HTTP/1.1 keep-alive,
/// wrk -t1, server CPU per response, sealed memfd against heap side by side
/// (2026-11-25, by hand): 16 KiB c32 6.0 vs 6.6 µs, c256 5.3 vs 6.1; 32 KiB
/// c32 7.3 vs 9.0; 64 KiB c256 7.9 vs 10.5 (lighttpd, which sends from the
/// page cache, 9.5).
const FREEZE_FROM: u64 = 16 * 1024;

/// The identity body, frozen when it is large enough (variants stay on the
/// heap: they are smaller, and a range of one is rare).
fn freeze_large(raw: Raw, cache: &EncodeCache) -> Raw {
    let Body::Memory(data) = &raw.body else {
        return raw;
    };
    if raw.len < FREEZE_FROM {
        return raw;
    }
    let key = (raw.hash, raw.len, raw.modified);
    match cache.share_frozen(key, |cohort| DiskBody::frozen(data, raw.modified, cohort)) {
        Ok(body) => Raw {
            body: Body::Disk(body),
            ..raw
        },
        // No memory could be mapped for it: the heap body serves the same
        // bytes.
        Err(_) => on_heap(raw, cache),
    }
}

/// A body that could have been frozen but stays on the heap, shared with
/// the generations that hold the same bytes.
fn on_heap(mut raw: Raw, cache: &EncodeCache) -> Raw {
    if let Body::Memory(data) = &raw.body {
        raw.body = Body::Memory(cache.share_body(data.clone(), raw.hash));
    }
    raw
}

/// `/dir/` serves the first index file (or a listing); `/dir` redirects to `/dir/`.
fn add_directories(
    entries: &mut HashMap<Box<[u8]>, Entry, foldhash::fast::RandomState>,
    directories: Vec<Vec<u8>>,
    children: &mut HashMap<Vec<u8>, Vec<Child>>,
    options: &LoadOptions,
) {
    let mut listed = Vec::new();
    for dir in directories {
        let mut slash = dir.clone();
        if slash.last() != Some(&b'/') {
            slash.push(b'/');
        }
        let index = options.index_files.iter().find_map(|name| {
            let mut key = slash.clone();
            key.extend_from_slice(name.as_bytes());
            match entries.get(key.as_slice()) {
                Some(Entry::File(f)) => Some(Arc::clone(f)),
                _ => None,
            }
        });
        if let Some(index) = index {
            entries.insert(slash.clone().into_boxed_slice(), Entry::File(index));
        } else if options.listing {
            listed.push((slash.clone(), children.remove(&dir).unwrap_or_default()));
        }
        if dir != b"/" {
            let location = percent_encode_path(&slash).into_boxed_slice();
            entries.insert(
                dir.into_boxed_slice(),
                Entry::Redirect {
                    status: Status::MovedPermanently,
                    location,
                },
            );
        }
    }
    // Built over the cores: a build tree lists thousands of directories.
    let listings: Vec<_> = listed
        .into_par_iter()
        .map(|(slash, kids)| {
            let listing = listing_entry(&slash, &kids, options);
            (slash.into_boxed_slice(), listing)
        })
        .collect();
    entries.extend(listings);
}

/// `/about` → `about.html`, unless a file or directory is `/about`.
fn add_clean_urls(entries: &mut HashMap<Box<[u8]>, Entry, foldhash::fast::RandomState>) {
    let aliases: Vec<(Box<[u8]>, Entry)> = entries
        .iter()
        .filter_map(|(key, entry)| {
            let stem = key.strip_suffix(b".html")?;
            (!stem.ends_with(b"/") && !entries.contains_key(stem))
                .then(|| (stem.to_vec().into_boxed_slice(), entry.clone()))
        })
        .collect();
    entries.extend(aliases);
}

fn visible(name: &[u8]) -> bool {
    !name.starts_with(b".") || name == b".well-known"
}

/// `/` + the path relative to the root, `/`-separated, as raw bytes.
fn site_key(root: &Path, path: &Path) -> Vec<u8> {
    let relative = path.strip_prefix(root).unwrap_or(Path::new(""));
    let mut key = vec![b'/'];
    key.extend_from_slice(relative.as_os_str().as_bytes());
    key
}

fn worth_encoding(meta: &Meta, options: &LoadOptions, coding: Coding, len: u64) -> bool {
    options.compression.codings.contains(&coding)
        && len >= options.compression.min_size
        && compress::compressible(&meta.content_type)
}

/// The Cache-Control and configured headers for a site path.
fn meta(
    site_path: &str,
    default_cache_control: &str,
    content_type: String,
    modified: u64,
    options: &LoadOptions,
) -> Meta {
    let mut cache_control = default_cache_control;
    let mut fields = vec![];
    for rule in options.header_rules.iter().filter(|r| r.matches(site_path)) {
        if let Some(value) = rule.cache_control() {
            cache_control = value;
        }
        fields.extend_from_slice(rule.fields());
    }
    // The defaults are constants and rules were checked when built.
    if let Some(field) = Field::new(Name::CacheControl, cache_control) {
        fields.insert(0, field);
    }
    Meta {
        modified,
        content_type,
        fields,
    }
}

fn raw(data: Vec<u8>) -> Raw {
    raw_bytes(Bytes::from(data))
}

fn raw_bytes(data: Bytes) -> Raw {
    Raw {
        len: data.len() as u64,
        hash: xxhash_rust::xxh3::xxh3_128(&data),
        body: Body::Memory(data),
        modified: 0,
    }
}

/// Builds every representation's heads; all carry `Vary` when there is a
/// choice (RFC 9110 §12.5.5), or will be once deferred variants are built,
/// including identity and 304s.
fn assemble(
    identity: Raw,
    encoded: Vec<(Coding, Raw)>,
    deferred: bool,
    meta: &Meta,
) -> Representation {
    let vary = deferred || !encoded.is_empty();
    let encoded: Vec<Encoded> = encoded
        .into_iter()
        .map(|(coding, raw)| Encoded {
            coding,
            entry: Arc::new(represent(raw, Some(coding), vary, meta, Vec::new())),
        })
        .collect();
    represent(identity, None, vary, meta, encoded)
}

fn represent(
    raw: Raw,
    coding: Option<Coding>,
    vary: bool,
    meta: &Meta,
    encoded: Vec<Encoded>,
) -> Representation {
    // Each coding's tag differs even if two hashes collided: the suffix
    // names the coding, as nginx and Apache do for their variants.
    let etag = match coding {
        None => format!("\"{:016x}\"", raw.hash as u64),
        Some(c) => format!("\"{:016x}-{}\"", raw.hash as u64, c.token()),
    }
    .into_bytes()
    .into_boxed_slice();
    let mut fields = Vec::with_capacity(meta.fields.len() + 4);
    fields.extend(Field::new(Name::ETag, &String::from_utf8_lossy(&etag)));
    fields.extend(Field::new(Name::LastModified, &format_date(meta.modified)));
    fields.extend_from_slice(&meta.fields);
    if vary {
        fields.extend(Field::new(Name::Vary, "Accept-Encoding"));
    }
    fields.extend(Field::new(Name::AcceptRanges, "bytes"));
    let h1 = h1::Prepared::new(&fields, &meta.content_type, coding, raw.len);
    let h2 = hpack::Prepared::new(&fields, &meta.content_type, coding, raw.len);

    Representation {
        body: raw.body,
        len: raw.len,
        etag,
        last_modified: meta.modified,
        content_type: meta.content_type.clone().into_boxed_str(),
        coding,
        fields: fields.into_boxed_slice(),
        h1,
        h2,
        encoded: encoded.into_boxed_slice(),
    }
}

/// The listing page and JSON for a directory without an index file.
fn listing_entry(slash: &[u8], children: &[Child], options: &LoadOptions) -> Entry {
    let site_path = String::from_utf8_lossy(slash);
    let modified = children.iter().map(|c| c.modified).max().unwrap_or(0);
    let page = |body: String, content_type: &str| {
        // A listing changes whenever the directory does (no-cache unless a
        // rule says otherwise), and its HTML and JSON forms share the path.
        // Configured headers (CSP, CORS) apply as to any file.
        let mut meta = meta(
            &site_path,
            "no-cache",
            content_type.to_string(),
            modified,
            options,
        );
        meta.fields.extend(Field::new(Name::Vary, "Accept"));
        let data = body.into_bytes();
        let len = data.len() as u64;
        let mut encoded = Vec::new();
        for coding in Coding::ALL {
            // Generated on every build (and every reload) and served
            // no-cache: a quick level, not the densest. At the densest
            // settings a checkout's listings (target/ lists thousands of
            // files) took 27 s of one core before the first answer.
            if worth_encoding(&meta, options, coding, len) {
                if let Some(bytes) = compress::encode_with(coding, &data, Effort::Quick) {
                    encoded.push((coding, raw(bytes)));
                }
            }
        }
        Arc::new(assemble(raw(data), encoded, false, &meta))
    };
    Entry::Listing {
        html: page(
            listing::html(&site_path, children),
            "text/html; charset=utf-8",
        ),
        json: page(listing::json(children), "application/json"),
    }
}

/// Percent-encodes a site path for a Location header: unreserved characters,
/// sub-delims, `:`, `@` and `/` stay (RFC 3986 §3.3), all else is `%XX`.
fn percent_encode_path(path: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(path.len());
    for &b in path {
        let keep = b.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/".contains(&b);
        if keep {
            out.push(b);
        } else {
            out.extend_from_slice(format!("%{b:02X}").as_bytes());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn temp_site(files: &[(&str, &[u8])]) -> PathBuf {
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("tachyon-snapshot-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (name, body) in files {
            let path = dir.join(name);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, body).unwrap();
        }
        dir
    }

    fn file<'a>(snapshot: &'a Snapshot, key: &str) -> &'a Representation {
        match snapshot.lookup(key.as_bytes()) {
            Some(Entry::File(f)) => f,
            other => panic!("{key}: expected a file, got {other:?}"),
        }
    }

    #[test]
    fn files_indexes_and_directory_redirects() {
        let root = temp_site(&[
            ("index.html", b"home"),
            ("a b/index.html", b"sub"),
            ("a b/x.css", b"x{}"),
        ]);
        let snap = Snapshot::load(&root, &LoadOptions::default()).unwrap();
        assert_eq!(file(&snap, "/").memory().unwrap().as_ref(), b"home");
        assert_eq!(file(&snap, "/a b/").memory().unwrap().as_ref(), b"sub");
        assert!(file(&snap, "/a b/x.css")
            .content_type
            .starts_with("text/css"));
        match snap.lookup(b"/a b") {
            Some(Entry::Redirect { location, .. }) => assert_eq!(&**location, b"/a%20b/"),
            other => panic!("expected redirect, got {other:?}"),
        }
        assert_eq!(snap.stats().files, 3);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn dotfiles_are_hidden_except_well_known() {
        let root = temp_site(&[
            (".env", b"secret"),
            (".git/config", b"x"),
            (".well-known/security.txt", b"hi"),
        ]);
        let snap = Snapshot::load(&root, &LoadOptions::default()).unwrap();
        assert!(snap.lookup(b"/.env").is_none());
        assert!(snap.lookup(b"/.git/config").is_none());
        assert!(snap.lookup(b"/.well-known/security.txt").is_some());
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn symlinks_follow_the_policy() {
        let outside = temp_site(&[("lib.js", b"out")]);
        let root = temp_site(&[("ok.txt", b"yes")]);
        std::os::unix::fs::symlink(outside.join("lib.js"), root.join("lib.js")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("libdir")).unwrap();
        std::os::unix::fs::symlink(root.join("ok.txt"), root.join("alias.txt")).unwrap();
        let load = |symlinks| {
            let options = LoadOptions {
                symlinks,
                ..LoadOptions::default()
            };
            Snapshot::load(&root, &options).unwrap()
        };
        // Follow (the default) and owner (one user made them all): every link.
        for symlinks in [Symlinks::Follow, Symlinks::Owner] {
            let snap = load(symlinks);
            assert_eq!(file(&snap, "/lib.js").memory().unwrap().as_ref(), b"out");
            assert!(snap.lookup(b"/libdir/lib.js").is_some(), "{symlinks:?}");
            assert_eq!(file(&snap, "/alias.txt").memory().unwrap().as_ref(), b"yes");
        }
        let inside = load(Symlinks::Inside);
        assert!(inside.lookup(b"/lib.js").is_none());
        assert!(inside.lookup(b"/libdir/lib.js").is_none());
        assert_eq!(
            file(&inside, "/alias.txt").memory().unwrap().as_ref(),
            b"yes"
        );
        let never = load(Symlinks::Never);
        assert!(never.lookup(b"/lib.js").is_none());
        assert!(never.lookup(b"/alias.txt").is_none());
        assert!(never.lookup(b"/ok.txt").is_some());
        std::fs::remove_dir_all(root).unwrap();
        std::fs::remove_dir_all(outside).unwrap();
    }

    #[test]
    fn budget_moves_large_files_to_disk_and_etags_follow_content() {
        let root = temp_site(&[
            ("small", b"0123456789"),
            ("big", &[7u8; 4096]),
            ("same", b"0123456789"),
        ]);
        let options = LoadOptions {
            max_file_in_memory: 1024,
            settle: Duration::ZERO,
            ..LoadOptions::default()
        };
        let snap = Snapshot::load(&root, &options).unwrap();
        assert!(matches!(file(&snap, "/big").body, Body::Disk(_)));
        assert_eq!(file(&snap, "/big").len, 4096);
        assert_eq!(
            file(&snap, "/small").etag,
            file(&snap, "/same").etag,
            "content hash"
        );
        assert_ne!(file(&snap, "/small").etag, file(&snap, "/big").etag);
        let head = String::from_utf8(file(&snap, "/small").h1.ok_head().to_vec()).unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n") && head.contains("Content-Length: 10\r\n"));
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn a_precompressed_sibling_is_read_once_and_obeys_the_file_limit() {
        let js = "function tachyon() { return 1; }\n".repeat(100);
        let root = temp_site(&[
            ("app.js", js.as_bytes()),
            ("app.js.gz", &[1u8; 300]),
            ("big.css", b"a{}"),
            ("big.css.br", &[2u8; 8192]),
        ]);
        let options = LoadOptions {
            max_file_in_memory: 4096,
            settle: Duration::ZERO,
            compression: Compression {
                codings: vec![],
                ..Compression::default()
            },
            ..LoadOptions::default()
        };
        let snap = Snapshot::load(&root, &options).unwrap();
        let own = file(&snap, "/app.js.gz").memory().unwrap().as_ptr();
        let as_encoding = file(&snap, "/app.js")
            .encoding(Coding::Gzip)
            .unwrap()
            .memory()
            .unwrap()
            .as_ptr();
        assert_eq!(own, as_encoding, "one body, two entries");
        let br = file(&snap, "/big.css").encoding(Coding::Br).unwrap();
        assert!(
            matches!(br.body, Body::Disk(_)),
            "a sibling over max_file_in_memory is served from disk"
        );
        assert_eq!(snap.stats().bytes_in_memory, (js.len() + 300 + 3) as u64);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn encodings_are_charged_to_the_memory_budget() {
        let text = "tachyon serves static sites from memory. ".repeat(200);
        let root = temp_site(&[("a.txt", text.as_bytes()), ("b.txt", text.as_bytes())]);
        let exact = LoadOptions {
            max_memory: 2 * text.len() as u64,
            ..LoadOptions::default()
        };
        let snap = Snapshot::load(&root, &exact).unwrap();
        assert!(file(&snap, "/a.txt").encoded.is_empty());
        assert!(snap.stats().encodings_over_budget > 0);
        let roomy = Snapshot::load(&root, &LoadOptions::default()).unwrap();
        assert_eq!(file(&roomy, "/a.txt").encoded.len(), 3);
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn listings_carry_the_configured_headers() {
        let root = temp_site(&[("dir/a.txt", b"a")]);
        let options = LoadOptions {
            listing: true,
            header_rules: vec![HeaderRule::new(
                "*",
                None,
                &[(
                    "Content-Security-Policy".into(),
                    "default-src 'self'".into(),
                )],
            )
            .unwrap()],
            ..LoadOptions::default()
        };
        let snap = Snapshot::load(&root, &options).unwrap();
        let Some(Entry::Listing { html, .. }) = snap.lookup(b"/dir/") else {
            panic!("expected a listing");
        };
        let head = String::from_utf8_lossy(html.h1.ok_head()).into_owned();
        assert!(
            head.contains("Content-Security-Policy: default-src 'self'\r\n"),
            "{head}"
        );
        assert!(head.contains("Cache-Control: no-cache\r\n"), "{head}");
        std::fs::remove_dir_all(root).unwrap();
    }

    #[test]
    fn missing_root_is_a_clear_error() {
        let err = Snapshot::load(Path::new("/nonexistent/tachyon"), &LoadOptions::default())
            .err()
            .unwrap();
        assert!(err.to_string().contains("/nonexistent/tachyon"), "{err}");
    }
}
