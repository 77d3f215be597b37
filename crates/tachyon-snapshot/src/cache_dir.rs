//! The variants kept on disk across restarts: a content-addressed folder
//! where each encoding is stored under the hash and length of the body it
//! encodes, so a restart (or another process on the same site) finds every
//! variant it built before without compressing again.
//!
//! Owns the folder's layout, its file format, verifying what it reads and
//! bounding its size. Does not decide what to encode (`compress`).
//!
//! Invariants: an entry is written to a temporary name and renamed into
//! place, so a reader sees a whole entry or none; an entry whose checksum
//! does not match its payload is deleted and treated as absent, so a
//! damaged file costs a compression, never a wrong body.

use std::fs;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::SystemTime;

use bytes::Bytes;
use tachyon_http::encoding::Coding;

/// File format version; a new one uses a new folder and leaves the old.
const LAYOUT: &str = "v1";
const MAGIC: &[u8; 4] = b"TCv1";
/// Magic, a flag byte (1: encoded, 0: not worth encoding) and the payload's
/// xxh3-128.
const HEADER: usize = 4 + 1 + 16;

/// Where variants are kept, and how much of the disk they may use.
#[derive(Debug)]
pub struct CacheDir {
    dir: PathBuf,
    max_bytes: u64,
    /// Bytes written since the size was last checked: eviction runs only
    /// after builds that added something.
    written: AtomicU64,
    /// Temporary names, unique within this process (the pid makes them
    /// unique across processes).
    temp: AtomicU64,
}

impl CacheDir {
    /// Opens (creating) the folder. Fails when it cannot be created.
    pub fn open(dir: &Path, max_bytes: u64) -> std::io::Result<CacheDir> {
        let dir = dir.join(LAYOUT);
        for coding in Coding::EVERY {
            fs::create_dir_all(dir.join(coding.token()))?;
        }
        Ok(CacheDir {
            dir,
            max_bytes,
            written: AtomicU64::new(0),
            temp: AtomicU64::new(0),
        })
    }

    /// A delta's name also carries the first half of its dictionary's hash.
    fn path(&self, coding: Coding, hash: u128, len: u64, dictionary: Option<&[u8; 32]>) -> PathBuf {
        let name = match dictionary {
            None => format!("{hash:032x}-{len}"),
            Some(d) => format!(
                "{hash:032x}-{len}-{:032x}",
                u128::from_be_bytes(d[..16].try_into().unwrap_or_default())
            ),
        };
        self.dir.join(coding.token()).join(name)
    }

    /// The folder where one root's dictionary versions are kept (see
    /// `dictionary::VersionStore`), named by a hash of the root's path.
    pub(crate) fn versions_folder(&self, root: &Path) -> PathBuf {
        let id = xxhash_rust::xxh3::xxh3_64(root.as_os_str().as_encoded_bytes());
        self.dir.join("dict").join(format!("{id:016x}"))
    }

    /// The stored result for this body (a delta: against `dictionary`), if
    /// there is a sound one: `Some(None)` means "not worth encoding" was stored.
    pub fn read(
        &self,
        coding: Coding,
        hash: u128,
        len: u64,
        dictionary: Option<&[u8; 32]>,
    ) -> Option<Option<Bytes>> {
        let path = self.path(coding, hash, len, dictionary);
        let mut file = fs::File::open(&path).ok()?;
        let mut data = Vec::new();
        file.read_to_end(&mut data).ok()?;
        let Some(encoded) = parse(&data) else {
            let _ = fs::remove_file(&path);
            return None;
        };
        // Recently used entries survive eviction (oldest modified go first).
        let _ = file.set_modified(SystemTime::now());
        Some(encoded.then(|| Bytes::from(data).slice(HEADER..)))
    }

    /// Stores a result; failures (a full disk, a read-only folder) only
    /// cost a compression next time.
    pub fn write(
        &self,
        coding: Coding,
        hash: u128,
        len: u64,
        dictionary: Option<&[u8; 32]>,
        encoded: Option<&[u8]>,
    ) {
        let payload = encoded.unwrap_or_default();
        let final_path = self.path(coding, hash, len, dictionary);
        let temp = self.dir.join(coding.token()).join(format!(
            ".tmp-{}-{}",
            std::process::id(),
            self.temp.fetch_add(1, Ordering::Relaxed)
        ));
        let written = (|| {
            let mut file = fs::File::create(&temp)?;
            file.write_all(MAGIC)?;
            file.write_all(&[u8::from(encoded.is_some())])?;
            file.write_all(&xxhash_rust::xxh3::xxh3_128(payload).to_le_bytes())?;
            file.write_all(payload)?;
            fs::rename(&temp, &final_path)
        })();
        match written {
            Ok(()) => {
                self.written
                    .fetch_add((HEADER + payload.len()) as u64, Ordering::Relaxed);
            }
            Err(_) => {
                let _ = fs::remove_file(&temp);
            }
        }
    }

    /// After a build that wrote entries: when the folder holds more than
    /// its bound, deletes the least recently used entries (and temporary
    /// files left by a crash) until it holds at most nine tenths of it.
    pub fn trim(&self) {
        if self.written.swap(0, Ordering::Relaxed) == 0 {
            return;
        }
        let mut entries = Vec::new();
        let mut total = 0u64;
        for coding in Coding::EVERY {
            let Ok(dir) = fs::read_dir(self.dir.join(coding.token())) else {
                continue;
            };
            for entry in dir.flatten() {
                let Ok(meta) = entry.metadata() else { continue };
                if entry.file_name().to_string_lossy().starts_with(".tmp-") {
                    // Another process may be writing it; only an old one is
                    // left over.
                    let old = meta
                        .modified()
                        .ok()
                        .and_then(|m| m.elapsed().ok())
                        .is_some_and(|age| age.as_secs() > 3600);
                    if old {
                        let _ = fs::remove_file(entry.path());
                    }
                    continue;
                }
                total += meta.len();
                let modified = meta.modified().unwrap_or(SystemTime::UNIX_EPOCH);
                entries.push((modified, meta.len(), entry.path()));
            }
        }
        if total <= self.max_bytes {
            return;
        }
        entries.sort_unstable_by_key(|(modified, _, _)| *modified);
        let target = self.max_bytes / 10 * 9;
        for (_, len, path) in entries {
            if total <= target {
                break;
            }
            if fs::remove_file(&path).is_ok() {
                total -= len;
            }
        }
    }
}

/// The flag (encoded, or not worth encoding) when the header and checksum
/// hold; the payload follows the header.
fn parse(data: &[u8]) -> Option<bool> {
    if data.len() < HEADER || &data[..4] != MAGIC {
        return None;
    }
    let flag = match data[4] {
        0 => false,
        1 => true,
        _ => return None,
    };
    let sum = u128::from_le_bytes(data[5..HEADER].try_into().ok()?);
    let payload = &data[HEADER..];
    if sum != xxhash_rust::xxh3::xxh3_128(payload) || (!flag && !payload.is_empty()) {
        return None;
    }
    Some(flag)
}

#[cfg(test)]
mod tests {
    use tachyon_testkit::Scratch;

    use super::*;

    /// A cache folder not made yet, in a folder of the test's own.
    fn cache_dir(name: &str) -> (Scratch, PathBuf) {
        let scratch = Scratch::new(&format!("cache-{name}"));
        let dir = scratch.join("cache");
        (scratch, dir)
    }

    #[test]
    fn entries_round_trip_and_a_damaged_one_reads_as_absent() {
        let (_scratch, dir) = cache_dir("round-trip");
        let cache = CacheDir::open(&dir, 1 << 20).unwrap();
        cache.write(Coding::Br, 7, 100, None, Some(b"compressed"));
        cache.write(Coding::Gzip, 7, 100, None, None);
        assert_eq!(
            cache.read(Coding::Br, 7, 100, None),
            Some(Some(Bytes::from_static(b"compressed")))
        );
        assert_eq!(cache.read(Coding::Gzip, 7, 100, None), Some(None));
        assert_eq!(cache.read(Coding::Zstd, 7, 100, None), None);
        assert_eq!(cache.read(Coding::Br, 7, 101, None), None);

        let path = cache.path(Coding::Br, 7, 100, None);
        let mut bytes = fs::read(&path).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        fs::write(&path, bytes).unwrap();
        assert_eq!(cache.read(Coding::Br, 7, 100, None), None);
        assert!(!path.exists(), "a damaged entry is deleted");
    }

    #[test]
    fn trimming_keeps_the_folder_under_its_bound_oldest_first() {
        let (_scratch, dir) = cache_dir("trim");
        let cache = CacheDir::open(&dir, 10_000).unwrap();
        for i in 0..20u128 {
            cache.write(Coding::Br, i, 1, None, Some(&[i as u8; 1000]));
            let old = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000 + i as u64);
            let file = fs::File::options()
                .write(true)
                .open(cache.path(Coding::Br, i, 1, None))
                .unwrap();
            file.set_modified(old).unwrap();
        }
        cache.trim();
        let left: u64 = fs::read_dir(dir.join(LAYOUT).join("br"))
            .unwrap()
            .map(|e| e.unwrap().metadata().unwrap().len())
            .sum();
        assert!(left <= 9_000, "{left}");
        assert_eq!(
            cache.read(Coding::Br, 0, 1, None),
            None,
            "the oldest went first"
        );
        assert!(
            cache.read(Coding::Br, 19, 1, None).is_some(),
            "the newest stayed"
        );
    }
}
