//! The site held in memory: an immutable [`Snapshot`] of a document root.
//!
//! This crate owns walking the root, deciding what may be served (no dotfiles,
//! no symlink that leaves the root), reading bodies within a memory budget,
//! and precomputing everything a response needs: MIME type, strong ETag,
//! Last-Modified, the content codings (built once, here) and the serialized
//! heads, plus the site's rules (headers per glob, redirects, clean URLs,
//! listings, fallback and 404 pages). It knows nothing of sockets or of
//! request parsing. Invariant: every [`Entry`] is complete before the snapshot
//! is published, and a snapshot never changes; a reload builds a new one.

mod cache_dir;
mod compress;
mod dictionary;
mod disk;
mod entry;
mod listing;
mod load;
mod mime;
mod rules;

pub use cache_dir::CacheDir;
pub use compress::{Compression, EncodeCache, PendingVariant};
pub use dictionary::{DictionaryPolicy, VersionsKept};
pub use disk::{frozen_footprint, read_exact_at, DiskBody};
pub use entry::{Body, Delta, Encoded, Entry, Representation};
pub use load::{LoadError, LoadOptions, LoadStats, Progress, SkipReason, Skipped, Symlinks};
pub use rules::{DictionaryRule, HeaderRule, RedirectRule, RuleError};

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Site paths (decoded, normalized, see `tachyon_http::target`) to entries.
pub struct Snapshot {
    entries: HashMap<Box<[u8]>, Entry, foldhash::fast::RandomState>,
    root: PathBuf,
    stats: LoadStats,
    fallback: Option<Arc<Representation>>,
    not_found: Option<Arc<Representation>>,
    /// Set by a send that found a disk-served file changed since load.
    changed: Arc<AtomicBool>,
    /// What a deferred build left to build, until taken.
    pending: Mutex<Vec<PendingVariant>>,
}

impl Snapshot {
    /// Walks `root` and builds a snapshot of it.
    pub fn load(root: &Path, options: &LoadOptions) -> Result<Snapshot, LoadError> {
        load::load(root, options, &Progress::default(), &EncodeCache::default())
    }

    /// Like [`Snapshot::load`], counting files into `progress` as they load
    /// and reusing the encodings in `cache` from earlier generations of the
    /// same root (one cache per root).
    pub fn load_with(
        root: &Path,
        options: &LoadOptions,
        progress: &Progress,
        cache: &EncodeCache,
    ) -> Result<Snapshot, LoadError> {
        load::load(root, options, progress, cache)
    }

    /// The entry for a site path, if the site has one.
    #[inline]
    pub fn lookup(&self, path: &[u8]) -> Option<&Entry> {
        self.entries.get(path)
    }

    /// The file served with 200 for paths the site does not have (SPA routing).
    pub fn fallback(&self) -> Option<&Arc<Representation>> {
        self.fallback.as_ref()
    }

    /// The file whose content is the body of 404 responses.
    pub fn not_found_page(&self) -> Option<&Arc<Representation>> {
        self.not_found.as_ref()
    }

    /// The canonical root this snapshot was built from.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// True once a send found a disk-served file of this snapshot no longer
    /// matching its load-time stamp: time to build a new generation.
    pub fn has_changed_files(&self) -> bool {
        self.changed.load(Ordering::Relaxed)
    }

    /// The variants a deferred build (`Compression::deferred`) left to
    /// build, handed over once: whoever takes them builds them into this
    /// root's cache, and a later build picks them up. Holding them keeps
    /// their identity bodies alive, so a build nobody takes them from
    /// should take and drop them.
    pub fn take_pending(&self) -> Vec<PendingVariant> {
        std::mem::take(&mut self.pending.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// What loading found and how long it took.
    pub fn stats(&self) -> &LoadStats {
        &self.stats
    }

    /// Number of site paths (files, index aliases, directory redirects).
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True for an empty site.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
