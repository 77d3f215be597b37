//! Building new snapshot generations: on SIGHUP, on changes under a root
//! (inotify through `notify`, debounced), and when the root path is a
//! symlink that gets repointed (the way deploy tools swap releases).
//!
//! Owns when to rebuild, never how to serve: a build runs on this thread,
//! the workers keep answering from the old snapshot meanwhile, and the new
//! one is published with a single atomic swap. A build that fails leaves the
//! old generation in place and says why.

use std::path::PathBuf;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};
use tachyon_server::Site;
use tachyon_snapshot::EncodeCache;

use crate::config::Settings;

/// Quiet period after the last change before rebuilding: a deploy that
/// copies many files triggers one build, not one per file.
const DEBOUNCE: Duration = Duration::from_millis(300);

/// The longest a change waits for a quiet period.
const MAX_DELAY: Duration = Duration::from_secs(2);

/// How often the root path is re-resolved to notice a repointed symlink.
const ROOT_POLL: Duration = Duration::from_secs(1);

/// Rebuilds and publishes; one build at a time.
pub struct Reloader {
    site: Arc<Site>,
    settings: Settings,
    /// Encodings kept from earlier generations, one cache per root.
    caches: Arc<[EncodeCache]>,
    building: Mutex<()>,
}

impl Reloader {
    pub fn new(site: Arc<Site>, settings: Settings, caches: Arc<[EncodeCache]>) -> Arc<Reloader> {
        Arc::new(Reloader {
            site,
            settings,
            caches,
            building: Mutex::new(()),
        })
    }

    /// Builds a new snapshot and swaps it in; on failure the old one stays.
    pub fn reload(&self, why: &str) {
        let _one_at_a_time = self.building.lock().unwrap_or_else(|e| e.into_inner());
        if !self.settings.quiet {
            crate::say(&format!("reloading ({why})"));
        }
        match crate::load_hosts(&self.settings, &self.caches) {
            Ok(hosts) => self.site.publish(hosts),
            Err(err) => crate::warn(&format!(
                "reload ({why}) failed, still serving the previous snapshot: {err:#}"
            )),
        }
    }

    /// Runs `watch` until the process ends, rebuilding on its changes.
    /// Returns at once, after starting the watcher thread.
    pub fn watch(self: &Arc<Self>, watch: Watch) {
        let this = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("tachyon-watch".into())
            .spawn(move || {
                if let Err(err) = this.watch_loop(watch) {
                    crate::warn(&format!("not watching for changes: {err}"));
                }
            });
        if let Err(err) = spawned {
            crate::warn(&format!("not watching for changes: {err}"));
        }
    }

    fn watch_loop(&self, watch: Watch) -> notify::Result<()> {
        let Watch {
            mut watcher,
            rx,
            mut watched,
        } = watch;
        let mut dirty_since: Option<Instant> = None;
        let mut last_poll = Instant::now();
        loop {
            let wait = match dirty_since {
                Some(_) => DEBOUNCE,
                None => ROOT_POLL,
            };
            match rx.recv_timeout(wait) {
                Ok(()) => {
                    let since = *dirty_since.get_or_insert_with(Instant::now);
                    // Keep draining: the build waits for a quiet period, but
                    // a file written non-stop does not postpone it forever.
                    if since.elapsed() < MAX_DELAY {
                        continue;
                    }
                }
                Err(RecvTimeoutError::Timeout) => {}
                Err(RecvTimeoutError::Disconnected) => return Ok(()),
            }
            if dirty_since.take().is_some() {
                self.reload("files changed");
            }
            if last_poll.elapsed() >= ROOT_POLL {
                last_poll = Instant::now();
                let now = resolve_roots(&self.settings);
                if now != watched {
                    for root in &watched {
                        let _ = watcher.unwatch(root);
                    }
                    for root in &now {
                        watcher.watch(root, RecursiveMode::Recursive)?;
                    }
                    watched = now;
                    self.reload("a root now points elsewhere");
                }
            }
        }
    }
}

/// Change notifications for every root, registered before the first load
/// so that nothing written while it runs goes unnoticed.
pub struct Watch {
    watcher: notify::RecommendedWatcher,
    rx: mpsc::Receiver<()>,
    watched: Vec<PathBuf>,
}

impl Watch {
    pub fn start(settings: &Settings) -> notify::Result<Watch> {
        let (tx, rx) = mpsc::channel();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if event.is_ok_and(|e| changes_content(&e.kind)) {
                    let _ = tx.send(());
                }
            })?;
        let watched = resolve_roots(settings);
        for root in &watched {
            watcher.watch(root, RecursiveMode::Recursive)?;
        }
        Ok(Watch {
            watcher,
            rx,
            watched,
        })
    }
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
