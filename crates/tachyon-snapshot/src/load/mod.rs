//! Building a snapshot: one pass over the root, at start or on reload, as
//! a pipeline of four stages, each its own module: `walk` (which names the
//! site has, under the visibility policy), `read` (each file's bytes, or
//! its stamp when served from disk), `represent` (its codings and heads)
//! and `tree` (what every path maps to).
//!
//! Owns the load's options, counts and errors. Invariant: a build either
//! publishes a whole snapshot of the tree as it was, or fails and
//! publishes nothing (the previous generation keeps serving).

mod read;
mod represent;
mod tree;
mod walk;

use std::io;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crate::compress::{Compression, EncodeCache};
use crate::dictionary::{DictionaryPolicy, VersionsKept};
use crate::entry::{Body, Entry, Representation};
use crate::rules::{HeaderRule, RedirectRule};
use crate::Snapshot;
use walk::Walked;

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
    /// Compression dictionaries offered and deltas built (RFC 9842).
    pub dictionaries: DictionaryPolicy,
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
            dictionaries: DictionaryPolicy::default(),
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
    /// Per coding (in [`Coding::EVERY`](tachyon_http::encoding::Coding::EVERY) order, the
    /// dictionary deltas last): representations and their bytes.
    pub encoded_files: [usize; 5],
    pub encoded_bytes: [u64; 5],
    /// Encodings built but dropped because the memory budget was spent.
    pub encodings_over_budget: usize,
    /// Encodings a deferred build left to the build after it (none known
    /// in memory or in the cache folder).
    pub variants_pending: usize,
    /// Files offered as compression dictionaries (`Use-As-Dictionary`).
    pub dictionaries_offered: usize,
    /// Earlier versions kept as dictionaries for the next deltas.
    pub versions_kept: VersionsKept,
    /// What the serving policy left out, and why.
    pub skipped: Vec<Skipped>,
    pub elapsed: Duration,
}

impl LoadStats {
    /// Counts one file and its encodings.
    pub(super) fn count(&mut self, file: &Representation) {
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
        let offered = file
            .fields
            .iter()
            .any(|f| matches!(f.name(), tachyon_http::response::Name::UseAsDictionary));
        self.dictionaries_offered += usize::from(offered);
        for d in file.deltas.iter() {
            self.encoded_files[d.coding as usize] += 1;
            self.encoded_bytes[d.coding as usize] += d.entry.len;
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
    tachyon_sys::close_arenas();
    snapshot
}

/// Walk, read, represent, then the tree of paths.
fn load_generation(
    root: &Path,
    options: &LoadOptions,
    progress: &Progress,
    cache: &EncodeCache,
) -> Result<Snapshot, LoadError> {
    let started = Instant::now();
    let root = site_root(root)?;
    let Walked {
        found,
        directories,
        children,
        skipped,
    } = walk::walk(&root, options)?;
    progress.files.store(found.len(), Ordering::Relaxed);
    let changed = Arc::new(AtomicBool::new(false));
    let raws = read::read_all(&root, &found, options, &changed, cache)?;
    if options.dictionaries.enabled {
        cache.begin_versions(&root);
    }
    let represented = represent::represent_all(&found, &raws, options, cache, progress);
    let versions_kept = if options.dictionaries.enabled {
        cache.finish_versions(&options.dictionaries)
    } else {
        VersionsKept::default()
    };
    let mut stats = LoadStats {
        versions_kept,
        directories: directories.len(),
        encodings_over_budget: represented.over_budget,
        variants_pending: represented.pending.len(),
        ..LoadStats::default()
    };
    let keys = found.into_iter().map(|f| f.key);
    let entries = tree::entries(
        keys,
        represented.files,
        directories,
        children,
        options,
        &mut stats,
    );
    let fallback = page(&entries, "fallback", &options.fallback)?;
    let not_found = page(&entries, "not_found_page", &options.not_found_page)?;
    stats.skipped = skipped;
    stats.elapsed = started.elapsed();
    Ok(Snapshot {
        entries,
        root,
        stats,
        fallback,
        not_found,
        changed,
        pending: Mutex::new(represented.pending),
    })
}

/// The root, canonical, which must be a directory.
fn site_root(root: &Path) -> Result<PathBuf, LoadError> {
    let failed = |source| LoadError::Root {
        path: root.to_path_buf(),
        source,
    };
    let root = root.canonicalize().map_err(failed)?;
    if !std::fs::metadata(&root).map_err(failed)?.is_dir() {
        return Err(LoadError::NotADirectory(root));
    }
    Ok(root)
}

/// The file a page option (`fallback`, `not_found_page`) names, which must
/// be in the site.
fn page(
    entries: &tree::Entries,
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

#[cfg(test)]
mod tests {
    use tachyon_http::encoding::Coding;
    use tachyon_testkit::Scratch;

    use super::*;
    use crate::rules::DictionaryRule;

    fn temp_site(files: &[(&str, &[u8])]) -> Scratch {
        let dir = Scratch::new("snapshot");
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
    }

    #[test]
    fn header_rules_turn_dictionaries_off_or_name_their_pattern() {
        let text = "let x = 1;\n".repeat(200);
        let root = temp_site(&[
            ("app.js", text.as_bytes()),
            ("legacy/old.js", text.as_bytes()),
            ("data/words.txt", text.as_bytes()),
        ]);
        let rule = |glob: &str, d: DictionaryRule| {
            HeaderRule::new(glob, None, &[])
                .unwrap()
                .with_dictionary(d)
                .unwrap()
        };
        let options = LoadOptions {
            header_rules: vec![
                rule("legacy/**", DictionaryRule::Off),
                rule("data/*.txt", DictionaryRule::Match("/data/*.txt".into())),
            ],
            ..LoadOptions::default()
        };
        let snap = Snapshot::load(&root, &options).unwrap();
        let offer = |key: &str| {
            file(&snap, key)
                .fields
                .iter()
                .find(|f| f.name().as_str() == "Use-As-Dictionary")
                .map(|f| f.value().to_string())
        };
        assert_eq!(offer("/app.js").as_deref(), Some("match=\"/app.js\""));
        assert_eq!(offer("/legacy/old.js"), None, "turned off by its rule");
        assert_eq!(
            offer("/data/words.txt").as_deref(),
            Some("match=\"/data/*.txt\""),
            "a kind not offered by default, offered by its rule"
        );
        assert_eq!(snap.stats().dictionaries_offered, 2);
    }

    #[test]
    fn missing_root_is_a_clear_error() {
        let err = Snapshot::load(Path::new("/nonexistent/tachyon"), &LoadOptions::default())
            .err()
            .unwrap();
        assert!(err.to_string().contains("/nonexistent/tachyon"), "{err}");
    }
}
