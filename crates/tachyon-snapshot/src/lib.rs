//! The site held in memory: an immutable [`Snapshot`] of a document root.
//!
//! This crate owns walking the root, deciding what may be served (no dotfiles,
//! no symlink that leaves the root), reading bodies within a memory budget,
//! and precomputing everything a response needs: MIME type, strong ETag,
//! Last-Modified and the serialized head. It knows nothing of sockets or of
//! request parsing. Invariant: every [`Entry`] is complete before the snapshot
//! is published, and a snapshot never changes; a reload builds a new one.

mod entry;
mod load;
mod mime;

pub use entry::{Body, Entry, FileEntry};
pub use load::{LoadError, LoadOptions, LoadStats};

use std::collections::HashMap;
use std::path::{Path, PathBuf};

/// Site paths (decoded, normalized, see `tachyon_http::target`) to entries.
pub struct Snapshot {
    entries: HashMap<Box<[u8]>, Entry, foldhash::fast::RandomState>,
    root: PathBuf,
    stats: LoadStats,
}

impl Snapshot {
    /// Walks `root` and builds a snapshot of it.
    pub fn load(root: &Path, options: &LoadOptions) -> Result<Snapshot, LoadError> {
        load::load(root, options)
    }

    /// The entry for a site path, if the site has one.
    #[inline]
    pub fn lookup(&self, path: &[u8]) -> Option<&Entry> {
        self.entries.get(path)
    }

    /// The canonical root this snapshot was built from.
    pub fn root(&self) -> &Path {
        &self.root
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
