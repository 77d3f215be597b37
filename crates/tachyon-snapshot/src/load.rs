//! Building a snapshot: one walk of the root, at start or on reload.
//!
//! Owns the serving policy for the filesystem: which names are visible
//! (dotfiles are not, except `/.well-known/`, RFC 8615), which symlinks are
//! followed (only those whose target is inside the root, unless allowed), how
//! much body data is held in memory, and what each directory maps to.

use std::collections::{HashMap, HashSet};
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use rayon::prelude::*;
use tachyon_http::conditional::{format_date, seconds};
use tachyon_http::encoding::Coding;
use tachyon_http::response::COMMON_HEADERS;
use tachyon_http::Status;

use crate::compress::{self, Compression, EncodeCache};
use crate::entry::{Body, Encoded, Entry, FileEntry};
use crate::listing::{self, Child};
use crate::mime;
use crate::rules::{HeaderRule, RedirectRule};
use crate::Snapshot;

/// What to load, how much memory it may use, and the site's rules.
#[derive(Debug, Clone)]
pub struct LoadOptions {
    /// Total bytes of bodies held in memory; files beyond it are served from disk.
    pub max_memory: u64,
    /// Files larger than this are always served from disk with sendfile,
    /// where the kernel copies page-cache pages instead of our heap.
    pub max_file_in_memory: u64,
    /// Index file names tried in order for `/dir/`.
    pub index_files: Vec<String>,
    /// Serve names starting with a dot.
    pub serve_dotfiles: bool,
    /// Follow symlinks whose target is outside the root.
    pub follow_outside_symlinks: bool,
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
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_memory: 512 * 1024 * 1024,
            max_file_in_memory: 4 * 1024 * 1024,
            index_files: vec!["index.html".into(), "index.htm".into()],
            serve_dotfiles: false,
            follow_outside_symlinks: false,
            compression: Compression::default(),
            header_rules: Vec::new(),
            listing: false,
            clean_urls: false,
            fallback: None,
            not_found_page: None,
            redirects: Vec::new(),
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
    /// Per coding (in [`Coding::ALL`] order): representations and their bytes.
    pub encoded_files: [usize; 3],
    pub encoded_bytes: [u64; 3],
    /// Entries skipped (dotfiles, outside symlinks, unreadable files).
    pub skipped: usize,
    pub elapsed: Duration,
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

/// Why a snapshot could not be built.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error("cannot open document root {path}: {source}")]
    Root { path: PathBuf, source: io::Error },
    #[error("document root {0} is not a directory")]
    NotADirectory(PathBuf),
    #[error("walking {path}: {source}")]
    Walk { path: PathBuf, source: io::Error },
    #[error("{key} = {path:?}: no such file in the document root")]
    MissingPage { key: &'static str, path: String },
}

/// A regular file found by the walk.
struct Found {
    path: PathBuf,
    key: Vec<u8>,
    len: u64,
    modified: u64,
    in_memory: bool,
}

/// A representation's bytes before its head is built.
struct Raw {
    body: Body,
    len: u64,
    hash: u64,
}

/// What every representation of one resource shares.
struct Meta {
    modified: u64,
    content_type: String,
    /// Cache-Control, then configured header lines, each ending in CRLF.
    fields: Vec<u8>,
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
    let mut stats = LoadStats::default();
    let mut found: Vec<Found> = Vec::new();
    let mut directories: Vec<Vec<u8>> = Vec::new();
    let mut children: HashMap<Vec<u8>, Vec<Child>> = HashMap::new();
    let mut budget = options.max_memory;

    let pruned = std::cell::Cell::new(0usize);
    // Pruning here, not in the loop, stops the walk from descending into a
    // hidden directory or a symlinked directory that leaves the root.
    let walker = walkdir::WalkDir::new(&root)
        .follow_links(true)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let allowed = e.depth() == 0
                || ((options.serve_dotfiles || visible(e.file_name().as_bytes()))
                    && (options.follow_outside_symlinks
                        || !e.path_is_symlink()
                        || inside(&root, e.path())));
            if !allowed {
                pruned.set(pruned.get() + 1);
            }
            allowed
        });
    for item in walker {
        let Ok(item) = item else {
            // A symlink loop or an unreadable subdirectory: skip it, serve the rest.
            stats.skipped += 1;
            continue;
        };
        let path = item.path();
        let key = site_key(&root, path);
        let is_dir = item.file_type().is_dir();
        if !is_dir && !item.file_type().is_file() {
            continue; // sockets, fifos, devices are never served
        }
        let Ok(metadata) = item.metadata() else {
            stats.skipped += 1;
            continue;
        };
        let modified = seconds(metadata.modified().unwrap_or(SystemTime::UNIX_EPOCH));
        if item.depth() > 0 {
            if let Some(parent) = path.parent() {
                children
                    .entry(site_key(&root, parent))
                    .or_default()
                    .push(Child {
                        name: item.file_name().to_string_lossy().into_owned(),
                        is_dir,
                        size: metadata.len(),
                        modified,
                    });
            }
        }
        if is_dir {
            stats.directories += 1;
            directories.push(key);
            continue;
        }
        let len = metadata.len();
        // The budget is handed out in walk order, before the parallel read.
        let in_memory = len <= options.max_file_in_memory && len <= budget;
        if in_memory {
            budget -= len;
        }
        found.push(Found {
            path: path.to_path_buf(),
            key,
            len,
            modified,
            in_memory,
        });
    }

    // Reading, hashing and compressing are independent per file: spread them
    // over the cores (brotli at quality 11 dominates the load time).
    let keys: HashSet<&[u8]> = found.iter().map(|f| f.key.as_slice()).collect();
    progress.files.store(found.len(), Ordering::Relaxed);
    let loaded: Vec<io::Result<FileEntry>> = found
        .par_iter()
        .map(|f| {
            let file = load_file(f, &keys, options, cache);
            progress.done.fetch_add(1, Ordering::Relaxed);
            file
        })
        .collect();

    let mut entries: HashMap<Box<[u8]>, Entry, _> = HashMap::default();
    for (f, result) in found.iter().zip(loaded) {
        let Ok(file) = result else {
            stats.skipped += 1;
            continue;
        };
        stats.files += 1;
        match &file.body {
            Body::Memory(b) => stats.bytes_in_memory += b.len() as u64,
            Body::Disk(_) => {
                stats.files_on_disk += 1;
                stats.bytes_on_disk += file.len;
            }
        }
        for e in file.encoded.iter() {
            let i = Coding::ALL.iter().position(|c| *c == e.coding).unwrap_or(0);
            stats.encoded_files[i] += 1;
            stats.encoded_bytes[i] += e.entry.len;
        }
        entries.insert(
            f.key.clone().into_boxed_slice(),
            Entry::File(Arc::new(file)),
        );
    }

    for dir in directories {
        // `/dir/` serves the first index file (or a listing); `/dir` redirects to `/dir/`.
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
            let kids = children.remove(&dir).unwrap_or_default();
            let listing = listing_entry(&slash, &kids, options);
            entries.insert(slash.clone().into_boxed_slice(), listing);
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

    if options.clean_urls {
        // `/about` → `about.html`, unless a file or directory is `/about`.
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
    for rule in &options.redirects {
        entries.insert(
            rule.from.clone().into_boxed_slice(),
            Entry::Redirect {
                status: rule.status,
                location: rule.to.clone().into_boxed_slice(),
            },
        );
    }
    let page = |key: &'static str, path: &Option<String>| match path {
        None => Ok(None),
        Some(p) => match entries.get(p.as_bytes()) {
            Some(Entry::File(f)) => Ok(Some(Arc::clone(f))),
            _ => Err(LoadError::MissingPage {
                key,
                path: p.clone(),
            }),
        },
    };
    let fallback = page("fallback", &options.fallback)?;
    let not_found = page("not_found_page", &options.not_found_page)?;

    stats.skipped += pruned.get();
    stats.elapsed = started.elapsed();
    Ok(Snapshot {
        entries,
        root,
        stats,
        fallback,
        not_found,
    })
}

fn visible(name: &[u8]) -> bool {
    !name.starts_with(b".") || name == b".well-known"
}

/// Whether the real location of `path` is inside `root` (both canonical).
fn inside(root: &Path, path: &Path) -> bool {
    path.canonicalize().is_ok_and(|real| real.starts_with(root))
}

/// `/` + the path relative to the root, `/`-separated, as raw bytes.
fn site_key(root: &Path, path: &Path) -> Vec<u8> {
    let relative = path.strip_prefix(root).unwrap_or(Path::new(""));
    let mut key = vec![b'/'];
    key.extend_from_slice(relative.as_os_str().as_bytes());
    key
}

/// Reads one file (and its precompressed siblings), builds its codings and
/// its heads.
fn load_file(
    f: &Found,
    keys: &HashSet<&[u8]>,
    options: &LoadOptions,
    cache: &EncodeCache,
) -> io::Result<FileEntry> {
    let identity = read(&f.path, f.len, f.in_memory)?;
    let content_type = mime::content_type(&f.path);
    let site_path = String::from_utf8_lossy(&f.key);
    let meta = meta(&site_path, &f.path, content_type, f.modified, options);
    let mut encoded = Vec::new();
    for coding in Coding::ALL {
        let mut sibling = f.key.clone();
        sibling.extend_from_slice(coding.suffix().as_bytes());
        if keys.contains(sibling.as_slice()) {
            // A precompressed sibling wins over building one (nginx's
            // gzip_static): the site owner chose its settings.
            let mut path = f.path.clone().into_os_string();
            path.push(coding.suffix());
            let path = PathBuf::from(path);
            let len = std::fs::metadata(&path)?.len();
            encoded.push((coding, read(&path, len, f.in_memory)?));
            continue;
        }
        if let (Body::Memory(data), true) = (
            &identity.body,
            worth_encoding(&meta, options, coding, f.len),
        ) {
            if let Some(bytes) = cache.encode(coding, data, identity.hash) {
                encoded.push((coding, raw_bytes(bytes)));
            }
        }
    }
    Ok(assemble(identity, encoded, &meta))
}

fn worth_encoding(meta: &Meta, options: &LoadOptions, coding: Coding, len: u64) -> bool {
    options.compression.codings.contains(&coding)
        && len >= options.compression.min_size
        && compress::compressible(&meta.content_type)
}

/// The Cache-Control and configured headers for a site path.
fn meta(
    site_path: &str,
    path: &Path,
    content_type: String,
    modified: u64,
    options: &LoadOptions,
) -> Meta {
    let mut cache_control = mime::cache_control(path, &content_type).to_string();
    let mut extra = Vec::new();
    for rule in options.header_rules.iter().filter(|r| r.matches(site_path)) {
        if let Some(value) = rule.cache_control() {
            cache_control = value.to_string();
        }
        extra.extend_from_slice(rule.lines());
    }
    let mut fields = Vec::with_capacity(64 + extra.len());
    fields.extend_from_slice(b"Cache-Control: ");
    fields.extend_from_slice(cache_control.as_bytes());
    fields.extend_from_slice(b"\r\n");
    fields.extend_from_slice(&extra);
    Meta {
        modified,
        content_type,
        fields,
    }
}

fn read(path: &Path, len: u64, in_memory: bool) -> io::Result<Raw> {
    let mut file = File::open(path)?;
    if in_memory {
        let mut data = Vec::with_capacity(len as usize);
        file.read_to_end(&mut data)?;
        if data.len() as u64 != len {
            return Err(io::Error::other("file changed while reading"));
        }
        return Ok(raw(data));
    }
    let mut hasher = xxhash_rust::xxh3::Xxh3::new();
    let mut chunk = vec![0u8; 256 * 1024];
    let mut read = 0u64;
    loop {
        let n = file.read(&mut chunk)?;
        if n == 0 {
            break;
        }
        hasher.update(&chunk[..n]);
        read += n as u64;
    }
    if read != len {
        return Err(io::Error::other("file changed while reading"));
    }
    Ok(Raw {
        body: Body::Disk(file),
        len,
        hash: hasher.digest(),
    })
}

fn raw(data: Vec<u8>) -> Raw {
    raw_bytes(Bytes::from(data))
}

fn raw_bytes(data: Bytes) -> Raw {
    Raw {
        len: data.len() as u64,
        hash: xxhash_rust::xxh3::xxh3_64(&data),
        body: Body::Memory(data),
    }
}

/// Builds every representation's heads; all carry `Vary` when there is a
/// choice (RFC 9110 §12.5.5), including identity and 304s.
fn assemble(identity: Raw, encoded: Vec<(Coding, Raw)>, meta: &Meta) -> FileEntry {
    let vary = !encoded.is_empty();
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
) -> FileEntry {
    // Each coding's tag differs even if two hashes collided: the suffix
    // names the coding, as nginx and Apache do for their variants.
    let etag = match coding {
        None => format!("\"{:016x}\"", raw.hash),
        Some(c) => format!("\"{:016x}-{}\"", raw.hash, c.token()),
    }
    .into_bytes()
    .into_boxed_slice();
    let mut fields = Vec::with_capacity(256);
    fields.extend_from_slice(COMMON_HEADERS);
    fields.extend_from_slice(b"ETag: ");
    fields.extend_from_slice(&etag);
    fields.extend_from_slice(b"\r\nLast-Modified: ");
    fields.extend_from_slice(format_date(meta.modified).as_bytes());
    fields.extend_from_slice(b"\r\n");
    fields.extend_from_slice(&meta.fields);
    if vary {
        fields.extend_from_slice(b"Vary: Accept-Encoding\r\n");
    }
    fields.extend_from_slice(b"Accept-Ranges: bytes\r\n");
    let encoding_field: &'static [u8] = match coding {
        None => b"",
        Some(Coding::Br) => b"Content-Encoding: br\r\n",
        Some(Coding::Zstd) => b"Content-Encoding: zstd\r\n",
        Some(Coding::Gzip) => b"Content-Encoding: gzip\r\n",
    };

    let mut head = Vec::with_capacity(fields.len() + 128);
    head.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
    head.extend_from_slice(&fields);
    head.extend_from_slice(b"Content-Type: ");
    head.extend_from_slice(meta.content_type.as_bytes());
    head.extend_from_slice(b"\r\n");
    head.extend_from_slice(encoding_field);
    head.extend_from_slice(b"Content-Length: ");
    head.extend_from_slice(raw.len.to_string().as_bytes());
    head.extend_from_slice(b"\r\n");

    FileEntry {
        body: raw.body,
        len: raw.len,
        etag,
        last_modified: meta.modified,
        content_type: meta.content_type.clone().into_boxed_str(),
        validator_fields: fields.into_boxed_slice(),
        encoding_field,
        head_200: head.into_boxed_slice(),
        encoded: encoded.into_boxed_slice(),
    }
}

/// The listing page and JSON for a directory without an index file.
fn listing_entry(slash: &[u8], children: &[Child], options: &LoadOptions) -> Entry {
    let site_path = String::from_utf8_lossy(slash);
    let modified = children.iter().map(|c| c.modified).max().unwrap_or(0);
    let page = |body: String, content_type: &str| {
        let mut meta = meta(
            &site_path,
            Path::new(""),
            content_type.to_string(),
            modified,
            options,
        );
        // A listing changes whenever the directory does, and its HTML and
        // JSON forms share the path.
        meta.fields = b"Cache-Control: no-cache\r\nVary: Accept\r\n".to_vec();
        let data = body.into_bytes();
        let len = data.len() as u64;
        let mut encoded = Vec::new();
        for coding in Coding::ALL {
            if worth_encoding(&meta, options, coding, len) {
                if let Some(bytes) = compress::encode(coding, &data) {
                    encoded.push((coding, raw(bytes)));
                }
            }
        }
        Arc::new(assemble(raw(data), encoded, &meta))
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

    fn file<'a>(snapshot: &'a Snapshot, key: &str) -> &'a FileEntry {
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
    fn symlinks_leaving_the_root_are_not_followed() {
        let outside = temp_site(&[("secret.txt", b"no")]);
        let root = temp_site(&[("ok.txt", b"yes")]);
        std::os::unix::fs::symlink(outside.join("secret.txt"), root.join("leak.txt")).unwrap();
        std::os::unix::fs::symlink(&outside, root.join("leakdir")).unwrap();
        std::os::unix::fs::symlink(root.join("ok.txt"), root.join("alias.txt")).unwrap();
        let snap = Snapshot::load(&root, &LoadOptions::default()).unwrap();
        assert!(snap.lookup(b"/leak.txt").is_none());
        assert!(snap.lookup(b"/leakdir/secret.txt").is_none());
        assert_eq!(file(&snap, "/alias.txt").memory().unwrap().as_ref(), b"yes");
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
        let head = String::from_utf8(file(&snap, "/small").head_200.to_vec()).unwrap();
        assert!(head.starts_with("HTTP/1.1 200 OK\r\n") && head.contains("Content-Length: 10\r\n"));
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
