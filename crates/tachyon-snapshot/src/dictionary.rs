//! Compression dictionaries (RFC 9842): which files a browser is told to
//! keep as a dictionary and under which URL pattern, the earlier versions
//! of those files kept so that a new version can be sent as its difference
//! from one the browser holds, and the `dcb`/`dcz` encoders.
//!
//! Owns the policy (kinds, sizes, the fingerprint patterns of bundlers), the
//! store of versions (bounded in count per pattern and in bytes, oldest out
//! first; in the cache folder when there is one, so a restart keeps them)
//! and the byte formats of the two codings. Does not own negotiation
//! (`tachyon_http::encoding::delta`) nor caching the deltas built
//! (`compress::EncodeCache`).
//!
//! Invariant: a delta is only built against bytes whose SHA-256 is the one
//! its header names, and a version read back from the cache folder is
//! checked against the hash it is stored under, so a client that names a
//! hash holds exactly the bytes the delta was made from.

use std::collections::HashMap;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use bytes::Bytes;
use tachyon_http::encoding::Coding;

/// Whether and how long dictionaries are kept.
#[derive(Debug, Clone)]
pub struct DictionaryPolicy {
    /// Offer dictionaries and send deltas (on by default).
    pub enabled: bool,
    /// Earlier versions kept per URL pattern (the current ones come on top).
    pub keep_versions: usize,
    /// Bytes of earlier versions kept for the whole root, oldest out first.
    pub keep_bytes: u64,
}

impl Default for DictionaryPolicy {
    fn default() -> Self {
        DictionaryPolicy {
            enabled: true,
            keep_versions: 3,
            keep_bytes: 64 * 1024 * 1024,
        }
    }
}

/// Smaller files are not offered: a delta's header (36 or 40 bytes) and the
/// extra request and response fields cost more than it could save.
pub const MIN_LEN: u64 = 1024;
/// Larger files are not offered: a `dcz` window must cover the dictionary
/// and stay within 8 MiB for every decoder (RFC 9842 §4.2), and a browser
/// keeps dictionaries in a bounded store.
pub const MAX_LEN: u64 = 8 * 1024 * 1024;

/// The kinds that change with deploys and are fetched again after them:
/// scripts, stylesheets, wasm and JSON.
pub fn offered_kind(content_type: &str) -> bool {
    let essence = content_type.split(';').next().unwrap_or("").trim();
    matches!(
        essence,
        "text/javascript"
            | "application/javascript"
            | "application/x-javascript"
            | "text/css"
            | "application/wasm"
            | "application/json"
            | "application/manifest+json"
    )
}

/// The `match` pattern (a URLPattern path, RFC 9842 §2.1.1) that this
/// file's next version will also match: its own path, or with its
/// fingerprint replaced by `*` (`/assets/app.3f9a1c2b.js` →
/// `/assets/app.*.js`). `None` for paths with characters that would need
/// escaping in a URL, a URLPattern or a Structured Field string: those are
/// left to an explicit pattern in the configuration.
pub fn pattern(site_path: &str) -> Option<String> {
    let safe = |b: u8| b.is_ascii_alphanumeric() || b"/-._~".contains(&b);
    if !site_path.starts_with('/') || !site_path.bytes().all(safe) {
        return None;
    }
    let name_at = site_path.rfind('/')? + 1;
    let name = &site_path[name_at..];
    Some(match fingerprint(name) {
        Some(span) => format!(
            "{}{}*{}",
            &site_path[..name_at],
            &name[..span.start],
            &name[span.end..]
        ),
        None => site_path.to_string(),
    })
}

/// Where a bundler put the content hash in a file name, if it did:
/// - a dot-separated part after the first: `main.3f9a1c2b.js` (webpack,
///   Parcel, Angular), `main.3f9a1c2b.chunk.js` (Create React App),
///   `main.min.<sha256>.css` (Hugo);
/// - the end of the name before its first dot, after `-` or `_`:
///   `index-BXcFdp5N.js` (Vite, Rollup; their hash may itself hold `-`
///   or `_`, so its last 8 characters are tried first), `app-5NTVRXJB.js`
///   (esbuild), `main-0123456789abcdef.js` (Next.js),
///   `application-5d41…592.css` (Rails).
fn fingerprint(name: &str) -> Option<std::ops::Range<usize>> {
    let (stem, _extension) = name.rsplit_once('.')?;
    let mut at = 0;
    for (i, part) in stem.split('.').enumerate() {
        if i > 0 && is_hash(part) {
            return Some(at..at + part.len());
        }
        at += part.len() + 1;
    }
    let first = stem.split('.').next()?;
    let bytes = first.as_bytes();
    if bytes.len() > 9 && bytes[bytes.len() - 9] == b'-' && is_hash(&first[bytes.len() - 8..]) {
        return Some(bytes.len() - 8..bytes.len());
    }
    let cut = first.rfind(['-', '_'])?;
    let tail = &first[cut + 1..];
    (cut > 0 && is_hash(tail)).then_some(cut + 1..first.len())
}

/// A content hash as bundlers print one: 8 to 64 characters of hex with a
/// digit in it, or of base32/base64url with a digit or both cases (a word
/// such as `vendors` or `polyfills` is neither).
fn is_hash(part: &str) -> bool {
    let b = part.as_bytes();
    if !(8..=64).contains(&b.len())
        || !b
            .iter()
            .all(|&c| c.is_ascii_alphanumeric() || c == b'_' || c == b'-')
    {
        return false;
    }
    let digit = b.iter().any(u8::is_ascii_digit);
    let upper = b.iter().any(u8::is_ascii_uppercase);
    let lower = b.iter().any(u8::is_ascii_lowercase);
    let hex = b.iter().all(u8::is_ascii_hexdigit);
    (hex && digit) || (upper && (digit || lower))
}

/// The SHA-256 a client names a dictionary by (RFC 9842 §2.2).
pub fn sha256(data: &[u8]) -> [u8; 32] {
    let digest = ring::digest::digest(&ring::digest::SHA256, data);
    let mut out = [0u8; 32];
    out.copy_from_slice(digest.as_ref());
    out
}

/// One version of a file as a browser may hold it.
#[derive(Debug)]
pub struct Version {
    pub sha: [u8; 32],
    pub body: Bytes,
}

/// `dcb`: a fixed prefix, the dictionary's hash, then brotli with the
/// dictionary as its raw prefix (RFC 9842 §4.1).
const DCB_MAGIC: [u8; 4] = [0xff, 0x44, 0x43, 0x42];
/// `dcz`: a Zstandard skippable frame holding the dictionary's hash, then
/// one frame with the dictionary as raw content (RFC 9842 §4.2).
const DCZ_MAGIC: [u8; 8] = [0x5e, 0x2a, 0x4d, 0x18, 0x20, 0x00, 0x00, 0x00];
/// `dcz` windows stay within what every decoder must accept (8 MiB).
const DCZ_WINDOW_LOG_MAX: u32 = 23;

/// `data` as the difference from `dictionary` in a dictionary coding
/// (`Coding::Dcb` or `Coding::Dcz`), or `None` if it could not be built.
/// `dense` picks the slowest, densest settings (for files up to a MiB).
pub fn encode_delta(
    coding: Coding,
    data: &[u8],
    dictionary: &Version,
    dense: bool,
) -> Option<Vec<u8>> {
    let dict = &dictionary.body[..];
    // The window must reach back over the dictionary to the start of it.
    let span = (dict.len() + data.len()).max(1 << 10) as u64;
    let window_log = 64 - (span - 1).leading_zeros();
    let mut out = match coding {
        Coding::Dcb => {
            let params = brotli::enc::BrotliEncoderParams {
                quality: if dense { 11 } else { 9 },
                // The dictionary must fit in the window (brotli: 16 MiB).
                lgwin: (window_log + 1).clamp(16, 24) as i32,
                size_hint: data.len(),
                ..Default::default()
            };
            let mut out = DCB_MAGIC.to_vec();
            out.extend_from_slice(&dictionary.sha);
            let mut input = [0u8; 4096];
            let mut output = [0u8; 4096];
            use brotli::enc::{interface, StandardAlloc};
            let mut nothing =
                |_: &mut interface::PredictionModeContextMap<brotli::InputReferenceMut>,
                 _: &mut [interface::StaticCommand],
                 _: interface::InputPair,
                 _: &mut StandardAlloc| ();
            brotli::enc::BrotliCompressCustomIoCustomDict(
                &mut brotli::IoReaderWrapper(&mut &data[..]),
                &mut brotli::IoWriterWrapper(&mut out),
                &mut input,
                &mut output,
                &params,
                StandardAlloc::default(),
                &mut nothing,
                dict,
                std::io::Error::from(std::io::ErrorKind::UnexpectedEof),
            )
            .ok()?;
            out
        }
        Coding::Dcz => {
            use zstd::zstd_safe::{CCtx, CParameter};
            let mut cctx = CCtx::create();
            let level = if dense { 19 } else { 9 };
            let window_log = window_log.clamp(10, DCZ_WINDOW_LOG_MAX);
            cctx.set_parameter(CParameter::CompressionLevel(level))
                .ok()?;
            cctx.set_parameter(CParameter::WindowLog(window_log)).ok()?;
            cctx.set_parameter(CParameter::ContentSizeFlag(true)).ok()?;
            cctx.ref_prefix(dict).ok()?;
            let mut frame = Vec::with_capacity(zstd::zstd_safe::compress_bound(data.len()));
            cctx.compress2(&mut frame, data).ok()?;
            let mut out = Vec::with_capacity(DCZ_MAGIC.len() + 32 + frame.len());
            out.extend_from_slice(&DCZ_MAGIC);
            out.extend_from_slice(&dictionary.sha);
            out.extend_from_slice(&frame);
            out
        }
        _ => return None,
    };
    out.shrink_to_fit();
    Some(out)
}

/// The versions of one root's offered files: every current one, and the
/// earlier ones a browser may still hold, by URL pattern.
///
/// With a folder (the cache folder's, per root) a version's bytes live
/// there, written when it is first served and read back, checked against
/// their hash, only to build a delta; memory holds names and sizes. Without
/// one they stay in memory, at most `keep_bytes` of them in all (a current
/// version past that is not kept: its next release gets no delta).
#[derive(Debug, Default)]
pub(crate) struct VersionStore {
    inner: Mutex<Versions>,
}

#[derive(Debug, Default)]
struct Versions {
    /// Where the bytes are kept, once known.
    folder: Option<PathBuf>,
    /// Read back from the folder yet.
    opened: bool,
    by_pattern: HashMap<String, Vec<Held>>,
}

#[derive(Debug)]
struct Held {
    sha: [u8; 32],
    len: u64,
    /// The bytes, when there is no folder to keep them in.
    body: Option<Bytes>,
    /// When a build last served it; the oldest go first.
    seen: SystemTime,
    /// Served by the build in progress (or the last one).
    current: bool,
}

/// What the store holds, for the summary, `/status` and `/metrics`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct VersionsKept {
    /// Earlier versions kept as dictionaries (the current ones not counted).
    pub versions: usize,
    /// Their bytes (in the cache folder when there is one, else in memory).
    pub bytes: u64,
    /// Bytes of the versions being served, kept too so that the next deploy
    /// has them: as many as the offered files hold (a copy in the cache
    /// folder; without one, in memory within `keep_bytes`).
    pub current_bytes: u64,
}

/// A stored version: magic, the pattern's length (u16, little-endian), the
/// pattern, then the body; named by its SHA-256, which is checked on read.
const VERSION_MAGIC: &[u8; 4] = b"TDv1";

impl VersionStore {
    fn lock(&self) -> std::sync::MutexGuard<'_, Versions> {
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Starts a build of `root`: the first one finds the versions an
    /// earlier process kept in `folder`.
    pub(crate) fn begin(&self, folder: Option<PathBuf>) {
        let mut v = self.lock();
        if !v.opened {
            v.opened = true;
            v.folder = folder;
            if let Some(folder) = v.folder.clone() {
                read_folder(&folder, &mut v.by_pattern);
            }
        }
        for held in v.by_pattern.values_mut().flatten() {
            held.current = false;
        }
    }

    /// Records the versions this build serves, `(pattern, hash, body)`.
    pub(crate) fn note(&self, served: Vec<(String, [u8; 32], Bytes)>, policy: &DictionaryPolicy) {
        let now = SystemTime::now();
        let mut v = self.lock();
        let folder = v.folder.clone();
        let mut in_memory: u64 = v
            .by_pattern
            .values()
            .flatten()
            .filter_map(|h| h.body.as_ref())
            .map(|b| b.len() as u64)
            .sum();
        for (pattern, sha, body) in served {
            let list = v.by_pattern.entry(pattern.clone()).or_default();
            if let Some(held) = list.iter_mut().find(|h| h.sha == sha) {
                held.seen = now;
                held.current = true;
                if let Some(folder) = &folder {
                    touch(&folder.join(hex(&sha)), now);
                }
                continue;
            }
            let len = body.len() as u64;
            let body = match &folder {
                Some(folder) => {
                    store(folder, &pattern, &sha, &body);
                    None
                }
                None if in_memory + len <= policy.keep_bytes => {
                    in_memory += len;
                    Some(body)
                }
                None => continue,
            };
            list.push(Held {
                sha,
                len,
                body,
                seen: now,
                current: true,
            });
        }
    }

    /// The versions under `pattern` other than `sha`, most recently served
    /// first, at most `keep`, with their bytes: what a delta for `sha` is
    /// built against. A version whose bytes cannot be read back whole is
    /// forgotten.
    pub(crate) fn sources(&self, pattern: &str, sha: &[u8; 32], keep: usize) -> Vec<Arc<Version>> {
        let (wanted, folder) = {
            let v = self.lock();
            let Some(list) = v.by_pattern.get(pattern) else {
                return Vec::new();
            };
            let mut others: Vec<&Held> = list.iter().filter(|h| h.sha != *sha).collect();
            others.sort_by_key(|h| std::cmp::Reverse(h.seen));
            let wanted: Vec<([u8; 32], Option<Bytes>)> = others
                .into_iter()
                .take(keep)
                .map(|h| (h.sha, h.body.clone()))
                .collect();
            (wanted, v.folder.clone())
        };
        // Read outside the lock: other files build their deltas in parallel.
        let mut lost = Vec::new();
        let found = wanted
            .into_iter()
            .filter_map(|(sha, body)| {
                let body = body.or_else(|| {
                    let path = folder.as_ref()?.join(hex(&sha));
                    let read = fs::read(&path)
                        .ok()
                        .and_then(|d| parse_version(&hex(&sha), d));
                    if read.is_none() {
                        let _ = fs::remove_file(&path);
                        lost.push(sha);
                    }
                    read.map(|(_, version)| version.body)
                })?;
                Some(Arc::new(Version { sha, body }))
            })
            .collect();
        if !lost.is_empty() {
            let mut v = self.lock();
            if let Some(list) = v.by_pattern.get_mut(pattern) {
                list.retain(|h| !lost.contains(&h.sha));
            }
        }
        found
    }

    /// Ends a build: keeps every current version, and of the others at most
    /// `keep_versions` per pattern and `keep_bytes` in all, the most
    /// recently served first; forgets (and deletes) the rest.
    pub(crate) fn finish(&self, policy: &DictionaryPolicy) -> VersionsKept {
        let mut v = self.lock();
        let folder = v.folder.clone();
        let mut earlier: Vec<(SystemTime, u64, String, [u8; 32])> = Vec::new();
        let mut dropped: Vec<[u8; 32]> = Vec::new();
        for (pattern, list) in &mut v.by_pattern {
            list.sort_by(|a, b| b.current.cmp(&a.current).then(b.seen.cmp(&a.seen)));
            let currents = list.iter().filter(|h| h.current).count();
            let keep = currents + policy.keep_versions;
            dropped.extend(list.drain(keep.min(list.len())..).map(|h| h.sha));
            earlier.extend(
                list.iter()
                    .filter(|h| !h.current)
                    .map(|h| (h.seen, h.len, pattern.clone(), h.sha)),
            );
        }
        earlier.sort_by_key(|e| std::cmp::Reverse(e.0));
        let mut kept = VersionsKept {
            current_bytes: v
                .by_pattern
                .values()
                .flatten()
                .filter(|h| h.current)
                .map(|h| h.len)
                .sum(),
            ..VersionsKept::default()
        };
        for (_, len, pattern, sha) in earlier {
            if kept.bytes + len <= policy.keep_bytes {
                kept.bytes += len;
                kept.versions += 1;
            } else if let Some(list) = v.by_pattern.get_mut(&pattern) {
                list.retain(|h| h.sha != sha);
                dropped.push(sha);
            }
        }
        v.by_pattern.retain(|_, list| !list.is_empty());
        if let Some(folder) = &folder {
            for sha in dropped {
                let _ = fs::remove_file(folder.join(hex(&sha)));
            }
        }
        kept
    }
}

fn hex(sha: &[u8; 32]) -> String {
    sha.iter().map(|b| format!("{b:02x}")).collect()
}

fn unhex(name: &str) -> Option<[u8; 32]> {
    if name.len() != 64 {
        return None;
    }
    let mut sha = [0u8; 32];
    for (i, byte) in sha.iter_mut().enumerate() {
        *byte = u8::from_str_radix(name.get(2 * i..2 * i + 2)?, 16).ok()?;
    }
    Some(sha)
}

/// Writes a version under its hash (a temporary name, then a rename, so a
/// reader sees all of it or nothing); failures only cost the deltas from
/// this version.
fn store(folder: &Path, pattern: &str, sha: &[u8; 32], body: &[u8]) {
    let Ok(pattern_len) = u16::try_from(pattern.len()) else {
        return;
    };
    let path = folder.join(hex(sha));
    let temp = folder.join(format!(".tmp-{}-{}", std::process::id(), hex(sha)));
    let written = (|| {
        fs::create_dir_all(folder)?;
        let mut file = fs::File::create(&temp)?;
        file.write_all(VERSION_MAGIC)?;
        file.write_all(&pattern_len.to_le_bytes())?;
        file.write_all(pattern.as_bytes())?;
        file.write_all(body)?;
        fs::rename(&temp, &path)
    })();
    if written.is_err() {
        let _ = fs::remove_file(&temp);
    }
}

fn touch(path: &Path, now: SystemTime) {
    if let Ok(file) = fs::File::options().write(true).open(path) {
        let _ = file.set_modified(now);
    }
}

/// Finds the versions kept in `folder` from their names and headers (the
/// bytes are checked when a delta needs them); a file that is not one is
/// deleted, and so are temporary files a crash left.
fn read_folder(folder: &Path, by_pattern: &mut HashMap<String, Vec<Held>>) {
    let Ok(dir) = fs::read_dir(folder) else {
        return;
    };
    for entry in dir.flatten() {
        let path = entry.path();
        let name = entry.file_name().to_string_lossy().into_owned();
        let found = unhex(&name).and_then(|sha| {
            let meta = entry.metadata().ok()?;
            let pattern = read_pattern(&path)?;
            let len = meta
                .len()
                .checked_sub((VERSION_MAGIC.len() + 2 + pattern.len()) as u64)?;
            Some((
                pattern,
                sha,
                len,
                meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            ))
        });
        match found {
            Some((pattern, sha, len, seen)) => by_pattern.entry(pattern).or_default().push(Held {
                sha,
                len,
                body: None,
                seen,
                current: false,
            }),
            None => {
                let _ = fs::remove_file(&path);
            }
        }
    }
}

/// The pattern in a stored version's header.
fn read_pattern(path: &Path) -> Option<String> {
    use std::io::Read;
    let mut file = fs::File::open(path).ok()?;
    let mut head = [0u8; 6];
    file.read_exact(&mut head).ok()?;
    if &head[..4] != VERSION_MAGIC {
        return None;
    }
    let mut pattern = vec![0u8; u16::from_le_bytes([head[4], head[5]]) as usize];
    file.read_exact(&mut pattern).ok()?;
    String::from_utf8(pattern).ok()
}

fn parse_version(name: &str, data: Vec<u8>) -> Option<(String, Version)> {
    let rest = data.strip_prefix(VERSION_MAGIC)?;
    let len = u16::from_le_bytes(rest.get(..2)?.try_into().ok()?) as usize;
    let pattern = std::str::from_utf8(rest.get(2..2 + len)?).ok()?.to_string();
    let start = VERSION_MAGIC.len() + 2 + len;
    let body = Bytes::from(data).slice(start..);
    let sha = sha256(&body);
    (hex(&sha) == name).then_some((pattern, Version { sha, body }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fingerprints_of_common_bundlers_become_a_star() {
        let cases = [
            ("/assets/app.3f9a1c2b.js", Some("/assets/app.*.js")),
            (
                "/static/js/main.3f9a1c2b.chunk.js",
                Some("/static/js/main.*.chunk.js"),
            ),
            ("/assets/index-BXcFdp5N.js", Some("/assets/index-*.js")),
            ("/assets/index-B_x2-c9A.js", Some("/assets/index-*.js")),
            ("/out/app-5NTVRXJB.js", Some("/out/app-*.js")),
            (
                "/_next/static/chunks/main-0123456789abcdef.js",
                Some("/_next/static/chunks/main-*.js"),
            ),
            (
                "/assets/application-5d41402abc4b2a76b9719d911017c592.css",
                Some("/assets/application-*.css"),
            ),
            ("/main.1f2e3d4c5b6a7980.js", Some("/main.*.js")),
            (
                "/css/main.min.0123456789abcdef0123456789abcdef.css",
                Some("/css/main.min.*.css"),
            ),
            // No fingerprint: the same path next time.
            ("/js/jquery-3.7.1.min.js", Some("/js/jquery-3.7.1.min.js")),
            ("/js/chunk-vendors.js", Some("/js/chunk-vendors.js")),
            (
                "/lib/bootstrap.bundle.min.js",
                Some("/lib/bootstrap.bundle.min.js"),
            ),
            ("/app.js", Some("/app.js")),
            // Characters a pattern would have to escape: left to the config.
            ("/a b.js", None),
            ("/a(1).js", None),
            ("/caf\u{e9}.js", None),
        ];
        for (path, want) in cases {
            assert_eq!(pattern(path).as_deref(), want, "{path}");
        }
    }

    #[test]
    fn offered_kinds() {
        assert!(offered_kind("text/javascript; charset=utf-8"));
        assert!(offered_kind("text/css; charset=utf-8"));
        assert!(offered_kind("application/wasm"));
        assert!(offered_kind("application/json"));
        assert!(!offered_kind("text/html; charset=utf-8"));
        assert!(!offered_kind("image/svg+xml"));
    }

    fn release(n: usize) -> Vec<u8> {
        let mut text = String::new();
        for i in 0..2000 {
            text.push_str(&format!(
                "export function f{i}(x) {{ return x * {} + {i}; }}\n",
                i % 7
            ));
        }
        text.push_str(&format!("export const VERSION = '1.0.{n}';\n"));
        text.into_bytes()
    }

    #[test]
    fn both_deltas_carry_the_header_and_decode_against_the_dictionary() {
        let old = Version {
            body: Bytes::from(release(1)),
            sha: sha256(&release(1)),
        };
        let new = release(2);
        let dcz = encode_delta(Coding::Dcz, &new, &old, true).unwrap();
        assert_eq!(&dcz[..8], &DCZ_MAGIC);
        assert_eq!(&dcz[8..40], &old.sha);
        let mut d = zstd::zstd_safe::DCtx::create();
        d.ref_prefix(&old.body[..]).unwrap();
        let mut out = Vec::with_capacity(new.len());
        d.decompress(&mut out, &dcz[40..]).unwrap();
        assert_eq!(out, new);

        let dcb = encode_delta(Coding::Dcb, &new, &old, true).unwrap();
        assert_eq!(&dcb[..4], &DCB_MAGIC);
        assert_eq!(&dcb[4..36], &old.sha);
        let mut out = Vec::new();
        brotli_decompressor::BrotliDecompressCustomDict(
            &mut &dcb[36..],
            &mut out,
            &mut [0u8; 4096],
            &mut [0u8; 4096],
            old.body.to_vec(),
        )
        .unwrap();
        assert_eq!(out, new);
        let plain = crate::compress::encode(Coding::Br, &new).unwrap();
        assert!(
            dcb.len() * 5 < plain.len(),
            "dcb {} vs br {}",
            dcb.len(),
            plain.len()
        );
    }

    #[test]
    fn without_a_folder_versions_stay_in_memory_within_the_bound() {
        let policy = DictionaryPolicy {
            enabled: true,
            keep_versions: 3,
            keep_bytes: release(1).len() as u64 * 2,
        };
        let store = VersionStore::default();
        store.begin(None);
        let body = |n: usize| Bytes::from(release(n));
        let served = (1..=3)
            .map(|n| (format!("/f{n}.js"), sha256(&body(n)), body(n)))
            .collect();
        store.note(served, &policy);
        store.finish(&policy);
        assert_eq!(store.sources("/f1.js", &[0; 32], 9).len(), 1);
        assert_eq!(store.sources("/f2.js", &[0; 32], 9).len(), 1);
        assert!(
            store.sources("/f3.js", &[0; 32], 9).is_empty(),
            "the third did not fit in the bound"
        );
    }

    #[test]
    fn the_store_keeps_current_and_bounded_earlier_versions_and_survives_a_restart() {
        let scratch = tachyon_testkit::Scratch::new("dictionary");
        let folder = scratch.join("versions");
        let policy = DictionaryPolicy {
            enabled: true,
            keep_versions: 2,
            keep_bytes: 1 << 20,
        };
        let store = VersionStore::default();
        let body = |n: usize| Bytes::from(release(n));
        for n in 1..=4 {
            store.begin(Some(folder.clone()));
            store.note(vec![("/app.js".into(), sha256(&body(n)), body(n))], &policy);
            let kept = store.finish(&policy);
            assert_eq!(kept.versions, (n - 1).min(2), "after release {n}");
        }
        let sources = store.sources("/app.js", &sha256(&body(4)), 9);
        assert_eq!(sources.len(), 2);
        assert_eq!(sources[0].sha, sha256(&body(3)), "most recent first");
        assert_eq!(
            fs::read_dir(&folder).unwrap().count(),
            3,
            "the oldest was deleted"
        );

        let again = VersionStore::default();
        again.begin(Some(folder.clone()));
        let sources = again.sources("/app.js", &sha256(&body(5)), 9);
        assert_eq!(sources.len(), 3, "every stored version read back");
        assert!(sources
            .iter()
            .any(|v| v.sha == sha256(&body(2)) && v.body == body(2)));

        // A damaged version is forgotten when a delta needs it, not used.
        let three = folder.join(hex(&sha256(&body(3))));
        let mut bytes = fs::read(&three).unwrap();
        *bytes.last_mut().unwrap() ^= 1;
        fs::write(&three, bytes).unwrap();
        let again = VersionStore::default();
        again.begin(Some(folder.clone()));
        let sources = again.sources("/app.js", &sha256(&body(5)), 9);
        assert_eq!(sources.len(), 2);
        assert!(!three.exists());
    }
}
