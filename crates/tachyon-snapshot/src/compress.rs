//! Content codings built once, when the snapshot is built.
//!
//! Owns which files are worth encoding (by type and size), the encoder
//! settings, and the rule that a coding is kept only when it saves enough.
//! Precompressed siblings on disk (`app.js.br`) are found by the loader and
//! take priority; this module only encodes what has no sibling.

use std::collections::HashMap;
use std::io::Write;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tachyon_http::encoding::Coding;
use tachyon_sys::Cohort;

use crate::cache_dir::CacheDir;
use crate::dictionary::{self, DictionaryPolicy, Version, VersionStore, VersionsKept};
use crate::disk::DiskBody;

/// Which codings to offer and for which files.
#[derive(Debug, Clone)]
pub struct Compression {
    /// Codings to build, in preference order; empty turns building off
    /// (precompressed siblings are still served).
    pub codings: Vec<Coding>,
    /// Files smaller than this are not encoded: the saving would not cover
    /// the `Content-Encoding` and `Vary` header bytes.
    pub min_size: u64,
    /// The variants are built later, by another load (tachyon serves a large
    /// site first and compresses it in the background): none is built now,
    /// but every representation that would get one already carries
    /// `Vary: Accept-Encoding`, so responses say from the start that they
    /// depend on it.
    pub deferred: bool,
}

impl Default for Compression {
    fn default() -> Self {
        Compression {
            codings: Coding::ALL.to_vec(),
            min_size: 256,
            deferred: false,
        }
    }
}

/// Above this size the densest settings cost too much load time (brotli 11
/// runs at about 1 MB/s per core); larger files get a faster level.
const DENSE_MAX: usize = 1024 * 1024;

/// Whether a Content-Type is worth compressing: text and text-like formats,
/// wasm and uncompressed fonts. Images, video, archives and woff/woff2 are
/// already compressed.
pub fn compressible(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    essence.starts_with("text/")
        || matches!(
            essence,
            "application/javascript"
                | "application/json"
                | "application/manifest+json"
                | "application/ld+json"
                | "application/xml"
                | "application/xhtml+xml"
                | "application/rss+xml"
                | "application/atom+xml"
                | "application/wasm"
                | "application/x-javascript"
                | "image/svg+xml"
                | "image/x-icon"
                | "image/vnd.microsoft.icon"
                | "image/bmp"
                | "font/ttf"
                | "font/otf"
                | "application/vnd.ms-fontobject"
        )
}

/// How hard an encoder works.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Effort {
    /// The densest settings (brotli 11, zstd 19, gzip 9) up to
    /// [`DENSE_MAX`], faster ones past it: a file's variants, built once
    /// and kept (in memory and in the cache folder).
    Dense,
    /// Settings that run at tens of MB/s (brotli 5, zstd 3, gzip 6): pages
    /// generated on every build, as a directory listing is.
    Quick,
}

/// `data` encoded with `coding` at the densest effort (see [`Effort`]).
pub fn encode(coding: Coding, data: &[u8]) -> Option<Vec<u8>> {
    encode_with(coding, data, Effort::Dense)
}

/// `data` encoded with `coding`, or `None` when that does not save at least
/// a tenth of the bytes (then the identity is as good on the wire).
pub fn encode_with(coding: Coding, data: &[u8], effort: Effort) -> Option<Vec<u8>> {
    // The tier, then each coding's level for it.
    enum Tier {
        Quick,
        Faster,
        Densest,
    }
    let tier = match effort {
        Effort::Quick => Tier::Quick,
        Effort::Dense if data.len() <= DENSE_MAX => Tier::Densest,
        Effort::Dense => Tier::Faster,
    };
    let out = match coding {
        Coding::Br => {
            let mut out = Vec::with_capacity(data.len() / 3);
            let params = brotli::enc::BrotliEncoderParams {
                quality: match tier {
                    Tier::Quick => 5,
                    Tier::Faster => 9,
                    Tier::Densest => 11,
                },
                lgwin: 22,
                size_hint: data.len(),
                ..Default::default()
            };
            brotli::BrotliCompress(&mut &data[..], &mut out, &params).ok()?;
            out
        }
        Coding::Zstd => {
            let level = match tier {
                Tier::Quick => 3,
                Tier::Faster => 9,
                Tier::Densest => 19,
            };
            zstd::bulk::compress(data, level).ok()?
        }
        Coding::Gzip => {
            let level = match tier {
                Tier::Quick => flate2::Compression::default(),
                Tier::Faster | Tier::Densest => flate2::Compression::best(),
            };
            let mut encoder =
                flate2::write::GzEncoder::new(Vec::with_capacity(data.len() / 3), level);
            encoder.write_all(data).ok()?;
            encoder.finish().ok()?
        }
        // A delta needs a dictionary: `dictionary::encode_delta`.
        Coding::Dcb | Coding::Dcz => return None,
    };
    // The output buffers are sized for the worst case; a kept encoding lives
    // as long as its generation, so it gives the slack back (with 10,000
    // files that slack was most of the memory the encodings took).
    let mut out = out;
    out.shrink_to_fit();
    (out.len() as u64 * 10 <= data.len() as u64 * 9).then_some(out)
}

/// One variant a deferred build left to build later: which coding of
/// which bytes. Building it puts it in the root's [`EncodeCache`], where the
/// next build (deferred or not) finds it.
#[derive(Debug, Clone)]
pub struct PendingVariant {
    coding: Coding,
    data: Bytes,
    hash: u128,
    /// For a delta: the version it is the difference from.
    dictionary: Option<Arc<Version>>,
}

impl PendingVariant {
    pub(crate) fn new(coding: Coding, data: &Bytes, hash: u128) -> PendingVariant {
        PendingVariant {
            coding,
            data: data.clone(),
            hash,
            dictionary: None,
        }
    }

    pub(crate) fn delta(
        coding: Coding,
        data: &Bytes,
        hash: u128,
        dictionary: &Arc<Version>,
    ) -> PendingVariant {
        PendingVariant {
            dictionary: Some(Arc::clone(dictionary)),
            ..PendingVariant::new(coding, data, hash)
        }
    }

    pub fn coding(&self) -> Coding {
        self.coding
    }

    /// The identity's length, in bytes.
    pub fn len(&self) -> usize {
        self.data.len()
    }

    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// Encodes it into `cache` (the cache of the root it came from), unless
    /// it is known there already.
    pub fn build(&self, cache: &EncodeCache) {
        match &self.dictionary {
            None => {
                cache.encode(self.coding, &self.data, self.hash);
            }
            Some(dictionary) => {
                cache.delta(self.coding, &self.data, self.hash, dictionary);
            }
        }
    }
}

/// Encodings from earlier generations, by the identity's content hash and
/// length, so a reload compresses only what changed: brotli at quality 11
/// makes a full build of a 10,000-file site take over a minute of both
/// cores (`tachyon-bench build`), which a watcher would otherwise pay for
/// every edit. Results that were not worth keeping are remembered too.
#[derive(Debug, Default)]
pub struct EncodeCache {
    inner: Mutex<Generations>,
    /// Where results are also kept across restarts, when configured.
    disk: Option<Arc<CacheDir>>,
    /// The versions of the root's dictionary files, across generations.
    pub(crate) versions: VersionStore,
}

#[derive(Debug, Default)]
struct Generations {
    generation: u64,
    /// (coding, hash, length) → the encoding (None: not worth it).
    entries: Kept<(Coding, u128, u64), Option<Bytes>>,
    /// (coding, hash, length, dictionary's SHA-256) → the delta.
    deltas: Kept<(Coding, u128, u64, [u8; 32]), Option<Bytes>>,
    /// Identity bodies by (hash, length), so a generation shares the bytes
    /// of every unchanged file with the one before instead of holding a
    /// second copy: a reload of a 200 MiB site then needs 200 MiB more only
    /// for a moment per file, not for the whole build.
    bodies: Kept<(u128, u64), Bytes>,
    /// Frozen copies by (hash, length, modification time), shared the same
    /// way (a frozen body carries its modification time).
    frozen: Kept<(u128, u64, u64), Arc<DiskBody>>,
}

/// Values a build may reuse from the builds before it, each marked with
/// the last generation that used it, so that a build's end forgets what
/// it did not use.
#[derive(Debug)]
struct Kept<K, V>(HashMap<K, (V, u64)>);

impl<K, V> Default for Kept<K, V> {
    fn default() -> Self {
        Kept(HashMap::new())
    }
}

impl<K: Eq + std::hash::Hash, V: Clone> Kept<K, V> {
    /// The value under `key`, marked as used by `generation`.
    fn used(&mut self, key: &K, generation: u64) -> Option<V> {
        let (value, used) = self.0.get_mut(key)?;
        *used = generation;
        Some(value.clone())
    }

    /// The value already under `key` (dropping `value`: the key names the
    /// content, so both are the same), else `value`; marked as used by
    /// `generation`.
    fn keep(&mut self, key: K, value: V, generation: u64) -> V {
        let (kept, used) = self.0.entry(key).or_insert((value, generation));
        *used = generation;
        kept.clone()
    }

    fn forget(&mut self, key: &K) {
        self.0.remove(key);
    }

    fn forget_unused(&mut self, generation: u64) {
        self.0.retain(|_, (_, used)| *used == generation);
    }
}

impl EncodeCache {
    /// A cache that also keeps its results in `disk` (shared by every
    /// root's cache: entries are addressed by content).
    pub fn with_disk(disk: Arc<CacheDir>) -> EncodeCache {
        EncodeCache {
            inner: Mutex::default(),
            disk: Some(disk),
            versions: VersionStore::default(),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Generations> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// What is known without compressing: from memory, or else from the
    /// cache folder. `None`: it would have to be built.
    pub(crate) fn known(&self, coding: Coding, data: &Bytes, hash: u128) -> Option<Option<Bytes>> {
        let key = (coding, hash, data.len() as u64);
        {
            let mut guard = self.lock();
            let g = &mut *guard;
            if let Some(bytes) = g.entries.used(&key, g.generation) {
                return Some(bytes);
            }
        }
        let stored = self.disk.as_ref()?.read(coding, hash, key.2, None)?;
        let mut guard = self.lock();
        let g = &mut *guard;
        Some(g.entries.keep(key, stored, g.generation))
    }

    /// Starts a build: what this build does not use is dropped at `finish`.
    pub(crate) fn begin(&self) {
        self.lock().generation += 1;
    }

    /// `data` (whose xxh3-128 is `hash`: 64 bits would make a collision
    /// between two files of one length serve one's encoding for the other) encoded with `coding`, from the cache
    /// or built now and remembered.
    pub(crate) fn encode(&self, coding: Coding, data: &Bytes, hash: u128) -> Option<Bytes> {
        if let Some(known) = self.known(coding, data, hash) {
            return known;
        }
        let key = (coding, hash, data.len() as u64);
        // Encode outside the lock: this is the slow part, run in parallel.
        let bytes = encode(coding, data).map(Bytes::from);
        if let Some(disk) = &self.disk {
            disk.write(coding, hash, key.2, None, bytes.as_deref());
        }
        let mut guard = self.lock();
        let g = &mut *guard;
        g.entries.keep(key, bytes, g.generation)
    }

    /// Points the encoding of `identity_len` bytes hashed `hash` at
    /// `frozen`, the bytes of the frozen copy a build made of it, so the
    /// cache holds that copy rather than a second one on the heap. Once it
    /// does, later builds find the same allocation and compare nothing.
    pub(crate) fn hold_frozen(
        &self,
        coding: Coding,
        hash: u128,
        identity_len: u64,
        frozen: &Bytes,
    ) {
        let mut guard = self.lock();
        if let Some((Some(bytes), _)) = guard.entries.0.get_mut(&(coding, hash, identity_len)) {
            if bytes.as_ptr() != frozen.as_ptr() && bytes[..] == frozen[..] {
                *bytes = frozen.clone();
            }
        }
    }

    /// The delta of `data` from `dictionary` known without building it: from
    /// memory, or else from the cache folder.
    pub(crate) fn known_delta(
        &self,
        coding: Coding,
        data: &Bytes,
        hash: u128,
        dictionary: &Version,
    ) -> Option<Option<Bytes>> {
        let key = (coding, hash, data.len() as u64, dictionary.sha);
        {
            let mut guard = self.lock();
            let g = &mut *guard;
            if let Some(bytes) = g.deltas.used(&key, g.generation) {
                return Some(bytes);
            }
        }
        let stored = self
            .disk
            .as_ref()?
            .read(coding, hash, key.2, Some(&dictionary.sha))?;
        let mut guard = self.lock();
        let g = &mut *guard;
        Some(g.deltas.keep(key, stored, g.generation))
    }

    /// The delta of `data` from `dictionary` in `coding`, from the cache or
    /// built now and remembered.
    pub(crate) fn delta(
        &self,
        coding: Coding,
        data: &Bytes,
        hash: u128,
        dictionary: &Version,
    ) -> Option<Bytes> {
        if let Some(known) = self.known_delta(coding, data, hash, dictionary) {
            return known;
        }
        let key = (coding, hash, data.len() as u64, dictionary.sha);
        let dense = data.len() <= DENSE_MAX;
        let bytes = dictionary::encode_delta(coding, data, dictionary, dense).map(Bytes::from);
        if let Some(disk) = &self.disk {
            disk.write(coding, hash, key.2, Some(&dictionary.sha), bytes.as_deref());
        }
        let mut guard = self.lock();
        let g = &mut *guard;
        g.deltas.keep(key, bytes, g.generation)
    }

    /// Starts a build of `root` for the dictionary versions.
    pub(crate) fn begin_versions(&self, root: &std::path::Path) {
        let folder = self.disk.as_ref().map(|d| d.versions_folder(root));
        self.versions.begin(folder);
    }

    /// Ends a build for the dictionary versions: bounds what is kept.
    pub(crate) fn finish_versions(&self, policy: &DictionaryPolicy) -> VersionsKept {
        self.versions.finish(policy)
    }

    /// The identity body with these bytes that an earlier generation holds
    /// (dropping `data`), or `data`, remembered for the next one.
    pub(crate) fn share_body(&self, data: Bytes, hash: u128) -> Bytes {
        let mut guard = self.lock();
        let g = &mut *guard;
        g.bodies.keep((hash, data.len() as u64), data, g.generation)
    }

    /// The frozen copy of these bytes an earlier generation holds, or the
    /// one `freeze` makes, remembered for the next one.
    pub(crate) fn share_frozen(
        &self,
        key: (u128, u64, u64),
        freeze: impl FnOnce(Cohort) -> std::io::Result<DiskBody>,
    ) -> std::io::Result<Arc<DiskBody>> {
        let mut cohort = Cohort::New;
        {
            let mut guard = self.lock();
            let g = &mut *guard;
            if let Some(body) = g.frozen.used(&key, g.generation) {
                // A copy in a mostly dead arena is made again, among the
                // other survivors, so that the arena goes with the
                // generation before (see `Frozen::is_sparse`).
                if !body
                    .frozen_copy()
                    .is_some_and(tachyon_sys::Frozen::is_sparse)
                {
                    return Ok(body);
                }
                g.frozen.forget(&key);
                cohort = Cohort::Survivor;
            }
        }
        // Copy outside this lock: other files freeze in parallel.
        let body = Arc::new(freeze(cohort)?);
        let mut guard = self.lock();
        let g = &mut *guard;
        Ok(g.frozen.keep(key, body, g.generation))
    }

    /// Ends a build: forgets encodings and bodies the new generation does
    /// not use.
    pub(crate) fn finish(&self) {
        {
            let mut g = self.lock();
            let generation = g.generation;
            g.entries.forget_unused(generation);
            g.deltas.forget_unused(generation);
            g.bodies.forget_unused(generation);
            g.frozen.forget_unused(generation);
        }
        if let Some(disk) = &self.disk {
            disk.trim();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Read;

    #[test]
    fn the_cache_encodes_once_and_forgets_what_a_build_did_not_use() {
        let cache = EncodeCache::default();
        let a = Bytes::from("alpha ".repeat(100));
        let b = Bytes::from("beta ".repeat(100));
        cache.begin();
        let first = cache.encode(Coding::Gzip, &a, 1).unwrap();
        cache.encode(Coding::Gzip, &b, 2).unwrap();
        cache.finish();
        cache.begin();
        let again = cache.encode(Coding::Gzip, &a, 1).unwrap();
        assert_eq!(
            first.as_ptr(),
            again.as_ptr(),
            "the same bytes, not re-encoded"
        );
        cache.finish();
        let inner = cache.inner.lock().unwrap();
        assert_eq!(
            inner.entries.0.len(),
            1,
            "b was not used by the second build"
        );
    }

    #[test]
    fn a_frozen_encoding_is_held_once_not_again_on_the_heap() {
        // gzip shrinks these by about a third: a variant well over
        // FREEZE_FROM.
        let text = tachyon_testkit::random_letters(96 * 1024);
        let dir = tachyon_testkit::Scratch::new("frozen-encoding");
        std::fs::write(dir.join("app.js"), &text).unwrap();
        let options = crate::LoadOptions {
            settle: std::time::Duration::ZERO,
            ..Default::default()
        };
        let cache = EncodeCache::default();
        let site =
            crate::Snapshot::load_with(dir.path(), &options, &Default::default(), &cache).unwrap();
        let Some(crate::Entry::File(file)) = site.lookup(b"/app.js") else {
            panic!("app.js is a file");
        };
        let gzip = file
            .encoded
            .iter()
            .find(|e| e.coding == Coding::Gzip)
            .unwrap();
        let served = gzip.entry.memory().expect("a frozen copy is in memory");
        assert!(matches!(&gzip.entry.body, crate::Body::Disk(d) if d.is_frozen()));
        let inner = cache.inner.lock().unwrap();
        let held = inner
            .entries
            .0
            .iter()
            .find(|(key, _)| key.0 == Coding::Gzip)
            .and_then(|(_, (bytes, _))| bytes.as_ref())
            .expect("the cache holds the gzip encoding");
        assert_eq!(
            held.as_ptr(),
            served.as_ptr(),
            "the frozen copy, not a heap one"
        );
    }

    #[test]
    fn every_coding_round_trips_and_incompressible_data_is_refused() {
        let text = "tachyon serves static sites from memory. ".repeat(200);
        let efforts = Coding::ALL
            .into_iter()
            .flat_map(|c| [(c, Effort::Dense), (c, Effort::Quick)]);
        for (coding, effort) in efforts {
            let encoded = encode_with(coding, text.as_bytes(), effort).expect("text compresses");
            assert!(encoded.len() < text.len() / 5, "{coding:?} {effort:?}");
            let decoded = match coding {
                Coding::Br => {
                    let mut out = Vec::new();
                    brotli::BrotliDecompress(&mut &encoded[..], &mut out).unwrap();
                    out
                }
                Coding::Zstd => zstd::bulk::decompress(&encoded, text.len()).unwrap(),
                Coding::Gzip => {
                    let mut out = Vec::new();
                    flate2::read::GzDecoder::new(&encoded[..])
                        .read_to_end(&mut out)
                        .unwrap();
                    out
                }
                Coding::Dcb | Coding::Dcz => unreachable!("not in Coding::ALL"),
            };
            assert_eq!(decoded, text.as_bytes(), "{coding:?} {effort:?}");
        }
        // xorshift noise does not compress by a tenth.
        let mut x = 0x9e3779b97f4a7c15u64;
        let noise: Vec<u8> = (0..4096)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
        for coding in Coding::ALL {
            assert!(encode(coding, &noise).is_none(), "{coding:?}");
        }
    }

    #[test]
    fn compressible_types() {
        assert!(compressible("text/html; charset=utf-8"));
        assert!(compressible("application/javascript; charset=utf-8"));
        assert!(compressible("image/svg+xml; charset=utf-8"));
        assert!(compressible("application/wasm"));
        assert!(!compressible("image/png"));
        assert!(!compressible("font/woff2"));
        assert!(!compressible("application/octet-stream"));
    }
}
