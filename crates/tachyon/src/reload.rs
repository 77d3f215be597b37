//! Building new snapshot generations: on SIGHUP, on changes under a root
//! (inotify through `notify`, debounced), and when the root path is a
//! symlink that gets repointed (the way deploy tools swap releases).
//!
//! Owns when to rebuild, never how to serve: a build runs on this thread,
//! the workers keep answering from the old snapshot meanwhile, and the new
//! one is published with a single atomic swap. A build that fails leaves the
//! old generation in place and says why.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tachyon_server::admin::Reloads;

use notify::{RecursiveMode, Watcher};
use tachyon_server::Live;
use tachyon_snapshot::EncodeCache;

use tachyon::config::Settings;

use crate::certs::{self, Tls};

/// Quiet period after the last change before rebuilding: a deploy that
/// copies many files triggers one build, not one per file.
const DEBOUNCE: Duration = Duration::from_millis(300);

/// The longest a change waits for a quiet period.
const MAX_DELAY: Duration = Duration::from_secs(2);

/// How often the root path is re-resolved to notice a repointed symlink.
const ROOT_POLL: Duration = Duration::from_secs(1);

/// Rebuilds and publishes; one build at a time.
pub struct Reloader {
    live: Arc<Live>,
    settings: Settings,
    /// Encodings kept from earlier generations, one cache per root.
    caches: Arc<[EncodeCache]>,
    /// HTTPS: certificates are read again with every generation.
    tls: Option<Arc<Tls>>,
    /// Every attempt's outcome, for `/metrics` and `/status`.
    reloads: Arc<Reloads>,
    /// While the background build of a site's variants runs, builds take
    /// the variants already known and leave the rest to it (compressing
    /// them here too would do its work twice, on a thread not niced).
    compressing: AtomicBool,
    building: Mutex<()>,
    /// What to do, instead of a reload, when a root is a new directory
    /// (deleted and made again, or its symlink repointed): under the
    /// sandbox the new one is outside this process's rules, and a
    /// successor that confines itself to it takes over.
    new_root: Mutex<Option<NewRoot>>,
    /// The certificate files' stamps as the last build read them: the
    /// poll reloads when they differ, and a reload asked for by the ACME
    /// client (which wrote them) is not made twice.
    cert_stamps: Mutex<Vec<certs::Stamp>>,
}

/// See [`Reloader::on_new_root`].
pub type NewRoot = Box<dyn Fn(&str) + Send>;

impl Reloader {
    pub fn new(
        live: Arc<Live>,
        settings: Settings,
        caches: Arc<[EncodeCache]>,
        tls: Option<Arc<Tls>>,
        reloads: Arc<Reloads>,
    ) -> Arc<Reloader> {
        // What the first generation read.
        let cert_stamps = Mutex::new(certs::stamps(&settings));
        Arc::new(Reloader {
            cert_stamps,
            live,
            settings,
            caches,
            tls,
            reloads,
            compressing: AtomicBool::new(false),
            building: Mutex::new(()),
            new_root: Mutex::new(None),
        })
    }

    /// Calls `then` instead of reloading when a root becomes a new
    /// directory (see `new_root`).
    pub fn on_new_root(&self, then: NewRoot) {
        *self.new_root.lock().unwrap_or_else(|e| e.into_inner()) = Some(then);
    }

    /// The encoding cache of root `i` (0 the default site's, then each
    /// virtual host's).
    pub fn cache(&self, i: usize) -> &EncodeCache {
        &self.caches[i]
    }

    /// Whether the variants are being built in the background.
    pub fn set_compressing(&self, on: bool) {
        self.compressing.store(on, Ordering::Release);
    }

    /// Publishes a generation with every variant built so far, quietly but
    /// for one line naming `progress`; the variants still pending are left
    /// to the background build. A failure is logged and changes nothing.
    pub fn publish_known(&self, progress: &str) {
        let _one_at_a_time = self.building.lock().unwrap_or_else(|e| e.into_inner());
        let mut settings = self.settings.deferring_variants();
        settings.quiet = true;
        match self.swap(&settings) {
            Ok(()) => {
                if !self.settings.quiet {
                    crate::say(&format!(
                        "variants swapped in ({progress}): generation {}",
                        self.live.number()
                    ));
                }
            }
            Err(err) => crate::warn(&format!(
                "swapping in the variants built so far failed, still serving the previous snapshot: {err:#}"
            )),
        }
    }

    /// Builds a generation from the files as they are now and publishes
    /// it; the outcome is counted either way. The certificates are read
    /// again. A generation that leaves variants pending (deferred settings)
    /// drops its list: the background build has its own.
    fn swap(&self, settings: &Settings) -> anyhow::Result<()> {
        let built = crate::load_generation(settings, &self.caches).map(|mut generation| {
            for snapshot in
                std::iter::once(generation.default_snapshot()).chain(generation.virtual_snapshots())
            {
                drop(snapshot.take_pending());
            }
            if let Some(config) = self.tls.as_deref().and_then(|tls| self.certificates(tls)) {
                generation = generation.with_tls(config);
            }
            generation
        });
        match built {
            Ok(generation) => {
                self.live.publish(generation);
                self.reloads.succeeded();
                Ok(())
            }
            Err(err) => {
                self.reloads.failed(&format!("{err:#}"));
                Err(err)
            }
        }
    }

    /// Builds a new snapshot and swaps it in; on failure the old one stays.
    /// Either way one line says so (operators and the specs wait on it).
    /// While the variants are built in the background, it takes only the
    /// known ones.
    pub fn reload(&self, why: &str) {
        let _one_at_a_time = self.building.lock().unwrap_or_else(|e| e.into_inner());
        // Type=notify-reload units wait for READY=1 after this.
        let mut reloading = vec![sd_notify::NotifyState::Reloading];
        reloading.extend(sd_notify::NotifyState::monotonic_usec_now().ok());
        crate::notify(&reloading);
        if !self.settings.quiet {
            crate::say(&format!("reloading ({why})"));
        }
        let deferred;
        let settings = if self.compressing.load(Ordering::Acquire) {
            deferred = self.settings.deferring_variants();
            &deferred
        } else {
            &self.settings
        };
        match self.swap(settings) {
            Ok(()) => {
                if !self.settings.quiet {
                    crate::say(&format!(
                        "reloaded ({why}): generation {}",
                        self.live.number()
                    ));
                }
            }
            Err(err) => {
                let denied = err.chain().any(|e| {
                    e.downcast_ref::<std::io::Error>()
                        .is_some_and(|e| e.kind() == std::io::ErrorKind::PermissionDenied)
                });
                let hint = if denied && self.settings.sandbox {
                    " (the sandbox lets tachyon read only its roots and the symlink targets \
                     they had at start: a link added since that leads elsewhere is served \
                     after a restart or an upgrade, SIGUSR2, or with --no-sandbox)"
                } else {
                    ""
                };
                crate::warn(&format!(
                    "reload ({why}) failed, still serving the previous snapshot: {err:#}{hint}"
                ))
            }
        }
        crate::notify(&[sd_notify::NotifyState::Ready]);
    }

    /// SIGHUP: a reload, unless a root now resolves to another directory
    /// than the generation being served (a deploy that repointed the
    /// root's symlink, noticed here even with `--no-watch`): then the same
    /// as the watcher's answer to it (under the sandbox, a successor).
    pub fn reload_on_signal(&self) {
        let hosts = self.live.current();
        let served: Vec<PathBuf> = std::iter::once(hosts.default_snapshot())
            .chain(hosts.virtual_snapshots())
            .map(|s| s.root().to_path_buf())
            .collect();
        drop(hosts);
        let repointed = resolve_roots(&self.settings) != served;
        let new_root = self.new_root.lock().unwrap_or_else(|e| e.into_inner());
        match (repointed, new_root.as_ref()) {
            (true, Some(then)) => then("SIGHUP, a root symlink repointed"),
            _ => {
                drop(new_root);
                self.reload("SIGHUP");
            }
        }
    }

    /// The certificates read again; when one cannot be used, the previous
    /// generation's, with a line that says which file and why.
    fn certificates(&self, tls: &Tls) -> Option<Arc<rustls::ServerConfig>> {
        *self.cert_stamps.lock().unwrap_or_else(|e| e.into_inner()) = certs::stamps(&self.settings);
        match tls.config(&self.settings) {
            Ok(config) => Some(config),
            Err(err) => {
                crate::warn(&format!("keeping the previous certificates: {err:#}"));
                self.live.current().tls().cloned()
            }
        }
    }

    /// Starts the thread that rebuilds on changes (when `watch` is given)
    /// and when a send finds a disk-served file changed since load. Returns
    /// at once.
    pub fn watch(self: &Arc<Self>, watch: Option<Watch>) {
        let this = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("tachyon-watch".into())
            .spawn(move || this.watch_loop(watch));
        if let Err(err) = spawned {
            crate::warn(&format!("not watching for changes: {err}"));
        }
    }

    /// Never returns while the process runs: a watch that fails is logged
    /// and set up again at the next poll, so reloading cannot silently stop.
    fn watch_loop(&self, mut watch: Option<Watch>) {
        let mut dirty_since: Option<Instant> = None;
        let mut last_poll = Instant::now();
        loop {
            let wait = match dirty_since {
                Some(_) => DEBOUNCE,
                None => ROOT_POLL,
            };
            let event = match &watch {
                Some(w) => w.rx.recv_timeout(wait),
                None => {
                    std::thread::sleep(wait);
                    Err(RecvTimeoutError::Timeout)
                }
            };
            match event {
                Ok(()) => {
                    let since = *dirty_since.get_or_insert_with(Instant::now);
                    // Keep draining: the build waits for a quiet period, but
                    // a file written non-stop does not postpone it forever.
                    if since.elapsed() < MAX_DELAY {
                        continue;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => {
                    crate::warn("the file watcher stopped; setting it up again");
                    watch = Watch::start(&self.settings).ok();
                }
            }
            if dirty_since.take().is_some() {
                self.reload("files changed");
            }
            if last_poll.elapsed() < ROOT_POLL {
                continue;
            }
            last_poll = Instant::now();
            let hosts = self.live.current();
            let stale = std::iter::once(hosts.default_snapshot())
                .chain(hosts.virtual_snapshots())
                .any(|s| s.has_changed_files());
            if stale {
                self.reload("a disk-served file changed since it was loaded");
            }
            // Certificates usually live outside the roots: polled, not watched.
            let stamps = certs::stamps(&self.settings);
            let read = self
                .cert_stamps
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clone();
            if stamps != read {
                self.reload("a certificate file changed");
            }
            let change = watch.as_mut().and_then(|w| w.refresh(&self.settings));
            match change {
                Some(RootChange::Replaced(why)) => {
                    let new_root = self.new_root.lock().unwrap_or_else(|e| e.into_inner());
                    match new_root.as_ref() {
                        Some(then) => then(why),
                        None => self.reload(why),
                    }
                }
                Some(RootChange::Watched) => self.reload("a root could be watched again"),
                None => {}
            }
        }
    }
}

/// Change notifications for every root, registered before the first load
/// so that nothing written while it runs goes unnoticed.
pub struct Watch {
    watcher: notify::RecommendedWatcher,
    rx: mpsc::Receiver<()>,
    /// Each root as resolved, with the identity of the directory watched
    /// (`None` while it could not be watched).
    watched: Vec<(PathBuf, Option<RootId>)>,
    /// The last watch error, so each is logged once, not every second.
    failing: Option<String>,
    /// Each root's identity when last seen, kept while a root is missing:
    /// the one it comes back with tells a directory made again.
    known: Vec<Option<RootId>>,
}

/// Device and inode of a root directory: a root deleted and recreated at
/// the same path is a new directory, and its inotify watch died with the
/// old one.
type RootId = (u64, u64);

/// What [`Watch::refresh`] found of the roots.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RootChange {
    /// A root is another directory now: recreated, or its symlink
    /// repointed (the reason).
    Replaced(&'static str),
    /// A root that could not be watched can be again, unchanged.
    Watched,
}

impl Watch {
    pub fn start(settings: &Settings) -> notify::Result<Watch> {
        let (tx, rx) = mpsc::channel();
        let watcher = notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
            if event.is_ok_and(|e| changes_content(&e.kind)) {
                let _ = tx.send(());
            }
        })?;
        let mut watch = Watch {
            watcher,
            rx,
            watched: Vec::new(),
            failing: None,
            known: Vec::new(),
        };
        watch.refresh(settings);
        if let Some(err) = &watch.failing {
            return Err(notify::Error::generic(err));
        }
        Ok(watch)
    }

    /// Re-resolves every root and (re)establishes the watches that moved,
    /// were recreated or failed before. Returns what changed, if anything.
    fn refresh(&mut self, settings: &Settings) -> Option<RootChange> {
        let now: Vec<(PathBuf, Option<RootId>)> = resolve_roots(settings)
            .into_iter()
            .map(|root| {
                let id = root_id(&root);
                (root, id)
            })
            .collect();
        if now == self.watched && self.failing.is_none() {
            return None;
        }
        let first = self.watched.is_empty();
        let changed = now != self.watched;
        self.known.resize(now.len(), None);
        let mut ids_changed = false;
        for ((_, id), known) in now.iter().zip(&mut self.known) {
            if let Some(id) = id {
                ids_changed |= known.is_some_and(|k| k != *id);
                *known = Some(*id);
            }
        }
        let moved = now
            .iter()
            .map(|(p, _)| p)
            .ne(self.watched.iter().map(|(p, _)| p));
        for (root, _) in &self.watched {
            let _ = self.watcher.unwatch(root);
        }
        let mut failing = None;
        let mut watched = Vec::with_capacity(now.len());
        for (root, id) in now {
            let id = match id.map(|_| self.watcher.watch(&root, RecursiveMode::Recursive)) {
                Some(Ok(())) => id,
                Some(Err(err)) => {
                    failing = Some(format!("cannot watch {}: {err}", root.display()));
                    None
                }
                None => {
                    failing = Some(format!("cannot watch {}: it is missing", root.display()));
                    None
                }
            };
            watched.push((root, id));
        }
        if failing != self.failing {
            match &failing {
                Some(err) if !first => crate::warn(&format!("{err}; retrying every second")),
                Some(_) => {}
                None if self.failing.is_some() => crate::warn("watching for changes again"),
                None => {}
            }
        }
        self.failing = failing;
        self.watched = watched;
        // While a root is missing the old generation keeps serving; the
        // rebuild comes when it is back.
        if first || !changed || self.failing.is_some() {
            None
        } else if moved {
            Some(RootChange::Replaced("a root now points elsewhere"))
        } else if ids_changed {
            Some(RootChange::Replaced("a root was made again"))
        } else {
            Some(RootChange::Watched)
        }
    }
}

fn root_id(root: &std::path::Path) -> Option<RootId> {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata(root)
        .ok()
        .filter(|m| m.is_dir())
        .map(|m| (m.dev(), m.ino()))
}

/// Every root (the default site's, then the virtual hosts'), resolved.
fn resolve_roots(settings: &Settings) -> Vec<PathBuf> {
    std::iter::once(&settings.root)
        .chain(settings.hosts.iter().map(|host| &host.root))
        .map(|root| root.canonicalize().unwrap_or_else(|_| root.clone()))
        .collect()
}

/// Events that can change what is served; reads (ours included) are not.
fn changes_content(kind: &notify::EventKind) -> bool {
    use notify::event::{AccessKind, AccessMode, EventKind};
    matches!(
        kind,
        EventKind::Create(_)
            | EventKind::Modify(_)
            | EventKind::Remove(_)
            | EventKind::Access(AccessKind::Close(AccessMode::Write))
    )
}
