//! Building a snapshot: one walk of the root, at start or on reload.
//!
//! Owns the serving policy for the filesystem: which names are visible
//! (dotfiles are not, except `/.well-known/`, RFC 8615), which symlinks are
//! followed (only those whose target is inside the root, unless allowed), how
//! much body data is held in memory, and what each directory maps to.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use bytes::Bytes;
use tachyon_http::conditional::{format_date, seconds};
use tachyon_http::response::COMMON_HEADERS;

use crate::entry::{Body, Entry, FileEntry};
use crate::mime;
use crate::Snapshot;

/// What to load and how much memory it may use.
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
}

impl Default for LoadOptions {
    fn default() -> Self {
        LoadOptions {
            max_memory: 512 * 1024 * 1024,
            max_file_in_memory: 4 * 1024 * 1024,
            index_files: vec!["index.html".into(), "index.htm".into()],
            serve_dotfiles: false,
            follow_outside_symlinks: false,
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
    /// Entries skipped (dotfiles, outside symlinks, unreadable files).
    pub skipped: usize,
    pub elapsed: Duration,
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
}

pub(crate) fn load(root: &Path, options: &LoadOptions) -> Result<Snapshot, LoadError> {
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
    let mut entries: HashMap<Box<[u8]>, Entry, _> = HashMap::default();
    let mut directories: Vec<Vec<u8>> = Vec::new();
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
        let item = match item {
            Ok(item) => item,
            Err(_) => {
                // A symlink loop or an unreadable subdirectory: skip it, serve the rest.
                stats.skipped += 1;
                continue;
            }
        };
        let path = item.path();
        let key = site_key(&root, path);
        if item.file_type().is_dir() {
            stats.directories += 1;
            directories.push(key);
            continue;
        }
        if !item.file_type().is_file() {
            continue; // sockets, fifos, devices are never served
        }
        match load_file(path, &mut budget, options) {
            Ok(file) => {
                stats.files += 1;
                match &file.body {
                    Body::Memory(b) => stats.bytes_in_memory += b.len() as u64,
                    Body::Disk(_) => {
                        stats.files_on_disk += 1;
                        stats.bytes_on_disk += file.len;
                    }
                }
                entries.insert(key.into_boxed_slice(), Entry::File(Arc::new(file)));
            }
            Err(_) => stats.skipped += 1,
        }
    }

    for dir in directories {
        // `/dir/` serves the first index file; `/dir` redirects to `/dir/`.
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
        }
        if dir != b"/" {
            let location = percent_encode_path(&slash).into_boxed_slice();
            entries.insert(dir.into_boxed_slice(), Entry::Redirect { location });
        }
    }
    stats.skipped += pruned.get();
    stats.elapsed = started.elapsed();
    Ok(Snapshot {
        entries,
        root,
        stats,
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

fn load_file(path: &Path, budget: &mut u64, options: &LoadOptions) -> io::Result<FileEntry> {
    let mut file = File::open(path)?;
    let meta = file.metadata()?;
    let len = meta.len();
    let modified = seconds(meta.modified().unwrap_or(SystemTime::UNIX_EPOCH));
    let in_memory = len <= options.max_file_in_memory && len <= *budget;
    let (body, hash) = if in_memory {
        let mut data = Vec::with_capacity(len as usize);
        file.read_to_end(&mut data)?;
        if data.len() as u64 != len {
            return Err(io::Error::other("file changed while reading"));
        }
        *budget -= len;
        let hash = xxhash_rust::xxh3::xxh3_64(&data);
        (Body::Memory(Bytes::from(data)), hash)
    } else {
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
        (Body::Disk(file), hasher.digest())
    };
    let etag = format!("\"{hash:016x}\"").into_bytes().into_boxed_slice();
    let content_type = mime::content_type(path);
    let cache_control = mime::cache_control(path, &content_type);

    let mut fields = Vec::with_capacity(256);
    fields.extend_from_slice(COMMON_HEADERS);
    fields.extend_from_slice(b"ETag: ");
    fields.extend_from_slice(&etag);
    fields.extend_from_slice(b"\r\nLast-Modified: ");
    fields.extend_from_slice(format_date(modified).as_bytes());
    fields.extend_from_slice(b"\r\nCache-Control: ");
    fields.extend_from_slice(cache_control.as_bytes());
    fields.extend_from_slice(b"\r\nAccept-Ranges: bytes\r\n");

    let mut head = Vec::with_capacity(fields.len() + 96);
    head.extend_from_slice(b"HTTP/1.1 200 OK\r\n");
    head.extend_from_slice(&fields);
    head.extend_from_slice(b"Content-Type: ");
    head.extend_from_slice(content_type.as_bytes());
    head.extend_from_slice(b"\r\nContent-Length: ");
    head.extend_from_slice(len.to_string().as_bytes());
    head.extend_from_slice(b"\r\n");

    Ok(FileEntry {
        body,
        len,
        etag,
        last_modified: modified,
        content_type: content_type.into_boxed_str(),
        validator_fields: fields.into_boxed_slice(),
        head_200: head.into_boxed_slice(),
    })
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
            Some(Entry::Redirect { location }) => assert_eq!(&**location, b"/a%20b/"),
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
