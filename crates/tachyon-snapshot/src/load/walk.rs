//! The walk of a root: which names the site has, under the visibility
//! policy (dotfiles, symlinks, cache folders), in name order.
//!
//! Owns what is visible and what is skipped, and why; reads no file's
//! bytes (`read` does). Invariant: a path the policy refuses is never in
//! `Walked::found`, nor anything beneath it.

use std::cell::RefCell;
use std::collections::{HashMap, HashSet};
use std::fs::Metadata;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use tachyon_http::conditional::seconds;

use super::{LoadError, LoadOptions, SkipReason, Skipped, Symlinks};
use crate::listing::Child;

/// A regular file found by the walk.
pub(super) struct Found {
    pub(super) path: PathBuf,
    /// Where it really is, when the walk reached it through a symlink (the
    /// file's own name or a directory above it): opening resolves beneath
    /// the root, where an absolute symlink is refused even if it points
    /// inside, so the real path is what is opened.
    pub(super) real: Option<PathBuf>,
    pub(super) key: Vec<u8>,
    pub(super) len: u64,
    /// Device and inode the walk saw: the open must find the same file.
    pub(super) id: (u64, u64),
    pub(super) in_memory: bool,
}

/// What the walk found.
#[derive(Default)]
pub(super) struct Walked {
    pub(super) found: Vec<Found>,
    pub(super) directories: Vec<Vec<u8>>,
    pub(super) children: HashMap<Vec<u8>, Vec<Child>>,
    pub(super) skipped: Vec<Skipped>,
}

/// Walks the root in name order, applying the visibility policy. Only a
/// file that vanished mid-walk, and what the policy leaves out, are skipped;
/// any other error fails the build.
pub(super) fn walk(root: &Path, options: &LoadOptions) -> Result<Walked, LoadError> {
    let mut walk = Walk {
        root,
        options,
        walked: Walked::default(),
        budget: options.max_memory,
        linked_dirs: HashSet::new(),
    };
    let pruned = RefCell::new(Vec::new());
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
        match item {
            Ok(item) => walk.visit(&item)?,
            Err(err) => {
                let skipped = unwalkable(err)?;
                walk.walked.skipped.push(skipped);
            }
        }
    }
    walk.walked.skipped.append(&mut pruned.into_inner());
    Ok(walk.walked)
}

/// The walk under way.
struct Walk<'w> {
    root: &'w Path,
    options: &'w LoadOptions,
    walked: Walked,
    /// Memory left for bodies, handed out in walk order (before the
    /// parallel read).
    budget: u64,
    /// Directories the walk entered through a symlink; everything under
    /// them is reached through it too.
    linked_dirs: HashSet<PathBuf>,
}

impl Walk<'_> {
    /// One entry the policy let through: a directory, a file, or a skip.
    fn visit(&mut self, item: &walkdir::DirEntry) -> Result<(), LoadError> {
        let path = item.path();
        let is_dir = item.file_type().is_dir();
        if !is_dir && !item.file_type().is_file() {
            self.skip(path, SkipReason::NotRegular);
            return Ok(());
        }
        let metadata = match item.metadata() {
            Ok(m) => m,
            Err(err) => {
                let skipped = vanished(path.to_path_buf(), walk_io_error(err, "stat"))?;
                self.walked.skipped.push(skipped);
                return Ok(());
            }
        };
        if item.depth() > 0 {
            self.list(item, &metadata);
        }
        let via_link =
            item.path_is_symlink() || path.parent().is_some_and(|p| self.linked_dirs.contains(p));
        if is_dir {
            if via_link {
                self.linked_dirs.insert(path.to_path_buf());
            }
            self.walked.directories.push(site_key(self.root, path));
            return Ok(());
        }
        let real = match via_link.then(|| path.canonicalize()) {
            None => None,
            Some(Ok(real)) => Some(real),
            Some(Err(e)) => {
                self.walked.skipped.push(vanished(path.to_path_buf(), e)?);
                return Ok(());
            }
        };
        self.found(path, real, &metadata);
        Ok(())
    }

    fn skip(&mut self, path: &Path, reason: SkipReason) {
        self.walked.skipped.push(Skipped {
            path: path.to_path_buf(),
            reason,
        });
    }

    /// Adds the entry to its parent's children, for a listing.
    fn list(&mut self, item: &walkdir::DirEntry, metadata: &Metadata) {
        let Some(parent) = item.path().parent() else {
            return;
        };
        let modified = seconds(metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH));
        self.walked
            .children
            .entry(site_key(self.root, parent))
            .or_default()
            .push(Child {
                name: item.file_name().to_string_lossy().into_owned(),
                is_dir: item.file_type().is_dir(),
                size: metadata.len(),
                modified,
            });
    }

    /// A regular file to serve, in memory while the budget lasts.
    fn found(&mut self, path: &Path, real: Option<PathBuf>, metadata: &Metadata) {
        let len = metadata.len();
        let in_memory = len <= self.options.max_file_in_memory && len <= self.budget;
        if in_memory {
            self.budget -= len;
        }
        self.walked.found.push(Found {
            path: path.to_path_buf(),
            real,
            key: site_key(self.root, path),
            len,
            id: (metadata.dev(), metadata.ino()),
            in_memory,
        });
    }
}

/// An entry walkdir could not give: a loop is skipped, and so is a file
/// that vanished; any other error fails the build.
fn unwalkable(err: walkdir::Error) -> Result<Skipped, LoadError> {
    let path = err.path().map(Path::to_path_buf).unwrap_or_default();
    if err.loop_ancestor().is_some() {
        return Ok(Skipped {
            path,
            reason: SkipReason::Loop,
        });
    }
    vanished(path, walk_io_error(err, "walk"))
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

/// Not a dotfile (`/.well-known/` is served: RFC 8615).
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
