//! Reading the files the walk found: each opened beneath the root,
//! checked to be the file the walk saw, then read into memory (and large
//! bodies frozen) or stamped to be served from disk.
//!
//! Owns the memory-or-disk decision's outcome and the freezing of large
//! bodies; decides nothing about headers (`represent`). Invariant: a body
//! read here is the walked file's exactly (same inode, same size, settled),
//! or the build fails as changed.

use std::fs::File;
use std::io::{self, Read};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

use bytes::Bytes;
use rayon::prelude::*;
use tachyon_http::encoding::Coding;

use super::walk::Found;
use super::{LoadError, LoadOptions};
use crate::compress::EncodeCache;
use crate::disk::{self, DiskBody, OpenError, Stamp};
use crate::entry::Body;

/// A representation's bytes before its head is built.
#[derive(Clone)]
pub(super) struct Raw {
    pub(super) body: Body,
    pub(super) len: u64,
    /// xxh3-128 of the bytes (of the stamp's size and modification time
    /// for a disk-served body, which is not read: `Stamp::digest`): the
    /// ETag shows 64 bits of it, the encoding cache is keyed by all 128.
    pub(super) hash: u128,
    pub(super) modified: u64,
}

/// Reads every file the walk found, spread over the cores (reading,
/// hashing and compressing are independent per file). Every file is read
/// once, siblings included, so that a `.gz` beside a file is one body
/// serving two entries.
pub(super) fn read_all(
    root: &Path,
    found: &[Found],
    options: &LoadOptions,
    changed: &Arc<AtomicBool>,
    cache: &EncodeCache,
) -> Result<Vec<Raw>, LoadError> {
    let root_dir = Arc::new(disk::open_root(root).map_err(|source| LoadError::Root {
        path: root.to_path_buf(),
        source,
    })?);
    let reader = Reader {
        root_dir,
        root,
        options,
        changed,
        kept: AtomicUsize::new(0),
        cache,
    };
    found.par_iter().map(|f| reader.read(f)).collect()
}

/// What reading one file needs from the load.
struct Reader<'l> {
    root_dir: Arc<OwnedFd>,
    root: &'l Path,
    options: &'l LoadOptions,
    /// Set by a send that finds a disk-served file changed.
    changed: &'l Arc<AtomicBool>,
    /// The disk-served files this load keeps open.
    kept: AtomicUsize,
    cache: &'l EncodeCache,
}

/// Where one file is opened: beneath the root, or (only through a symlink
/// the policy follows out of the root) at its real path.
struct Place<'f> {
    relative: &'f Path,
    real: &'f Path,
    beneath: bool,
}

impl Reader<'_> {
    /// Opens and reads (or stamps, for a disk-served body) one file,
    /// checking that it is the file the walk saw and that it did not
    /// change meanwhile.
    fn read(&self, f: &Found) -> Result<Raw, LoadError> {
        let real = f.real.as_deref().unwrap_or(&f.path);
        let place = match real.strip_prefix(self.root) {
            Ok(relative) => Place {
                relative,
                real,
                beneath: true,
            },
            Err(_) => Place {
                relative: real,
                real,
                beneath: false,
            },
        };
        let (file, stamp) = self.open_settled(f, &place)?;
        if stamp.id() != f.id || stamp.size() != f.len {
            return Err(changed(f));
        }
        if f.in_memory {
            self.in_memory(f, file, stamp.modified())
        } else {
            Ok(self.on_disk(f, file, stamp, &place))
        }
    }

    /// Opens the file once it has settled. A disk-served body is later
    /// checked against its stamp; a stamp taken in the tick of an ongoing
    /// write could not see the rest of that write, so such a file is
    /// stamped only once it has settled (a few waits at most: one written
    /// without pause fails the build as changed).
    fn open_settled(&self, f: &Found, place: &Place<'_>) -> Result<(File, Stamp), LoadError> {
        let mut waits = 0;
        loop {
            let (file, stamp) =
                match disk::open(&self.root_dir, place.relative, place.real, place.beneath) {
                    Ok(opened) => opened,
                    // Between the walk and the open, the path was deleted or
                    // swapped for something the policy refuses: this
                    // generation would not match the tree, and the change has
                    // queued another reload.
                    Err(OpenError::Vanished | OpenError::Refused) => return Err(changed(f)),
                    Err(OpenError::Failed(source)) => return Err(read_error(f, source)),
                };
            match stamp.settling(self.options.settle).filter(|_| !f.in_memory) {
                None => return Ok((file, stamp)),
                Some(left) if waits < 5 => {
                    waits += 1;
                    drop(file);
                    std::thread::sleep(left);
                }
                Some(_) => return Err(changed(f)),
            }
        }
    }

    /// Reads a body held in memory.
    fn in_memory(&self, f: &Found, mut file: File, modified: u64) -> Result<Raw, LoadError> {
        let mut data = Vec::with_capacity(f.len as usize);
        file.read_to_end(&mut data)
            .map_err(|source| read_error(f, source))?;
        if data.len() as u64 != f.len {
            return Err(changed(f));
        }
        let mut raw = raw(data);
        raw.modified = modified;
        // A large body is shared as its frozen copy (`freeze_large`); its
        // heap bytes live only while its variants are built.
        if let (Body::Memory(data), true) = (&raw.body, raw.len < FREEZE_FROM) {
            raw.body = Body::Memory(self.cache.share_body(data.clone(), raw.hash));
        }
        Ok(raw)
    }

    /// A disk-served body: its bytes are not read. The stamp is its
    /// validator, and the bytes are checked against it at each send.
    fn on_disk(&self, f: &Found, file: File, stamp: Stamp, place: &Place<'_>) -> Raw {
        let options = self.options;
        let keep = self
            .kept
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < options.keep_open).then_some(n + 1)
            })
            .is_ok();
        let changed = Arc::clone(self.changed);
        let body = if keep {
            DiskBody::kept(file, stamp, changed, options.sendfile)
        } else {
            drop(file);
            let reopen = disk::Place {
                root: Arc::clone(&self.root_dir),
                path: if place.beneath {
                    place.relative
                } else {
                    place.real
                }
                .to_path_buf(),
                beneath: place.beneath,
            };
            DiskBody::reopened(reopen, stamp, changed, options.sendfile)
        };
        Raw {
            body: Body::Disk(Arc::new(body)),
            len: f.len,
            hash: stamp.digest(),
            modified: stamp.modified(),
        }
    }
}

fn changed(f: &Found) -> LoadError {
    LoadError::Changed {
        path: f.path.clone(),
    }
}

fn read_error(f: &Found, source: io::Error) -> LoadError {
    LoadError::Read {
        path: f.path.clone(),
        source,
    }
}

/// Heap bodies from this size on move into a frozen copy, so they go out
/// without a copy from user space (see [`DiskBody::frozen`]); the copy
/// saved is worth the second send call from 16 KiB on
/// (bench/results/freeze-from-2026-11-25). Frozen bodies go through a pipe
/// (two calls, not one), so the server still copies those of exactly this
/// size at send time (`outbox::COPY_FROZEN_UP_TO`).
pub(super) const FREEZE_FROM: u64 = 16 * 1024;

/// A body, the identity or a content coding's, frozen when it is large
/// enough: a 20 KiB gzip of a script leaves without a copy like a 20 KiB
/// image (bench/results/splice-variants-2026-12-06).
pub(super) fn freeze_large(raw: Raw, cache: &EncodeCache) -> Raw {
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

/// A content coding of `identity` that the encode cache built or kept,
/// frozen like any body (`freeze_large`); when it is, the cache holds the
/// frozen copy's bytes from then on instead of its own heap copy.
pub(super) fn freeze_encoding(
    encoded: Raw,
    coding: Coding,
    identity: &Raw,
    cache: &EncodeCache,
) -> Raw {
    let encoded = freeze_large(encoded, cache);
    if let Body::Disk(frozen) = &encoded.body {
        if let Some(bytes) = frozen.mapped() {
            cache.hold_frozen(coding, identity.hash, identity.len, bytes);
        }
    }
    encoded
}

/// A body that could have been frozen but stays on the heap, shared with
/// the generations that hold the same bytes.
fn on_heap(mut raw: Raw, cache: &EncodeCache) -> Raw {
    if let Body::Memory(data) = &raw.body {
        raw.body = Body::Memory(cache.share_body(data.clone(), raw.hash));
    }
    raw
}

pub(super) fn raw(data: Vec<u8>) -> Raw {
    raw_bytes(Bytes::from(data))
}

pub(super) fn raw_bytes(data: Bytes) -> Raw {
    Raw {
        len: data.len() as u64,
        hash: xxhash_rust::xxh3::xxh3_128(&data),
        body: Body::Memory(data),
        modified: 0,
    }
}
