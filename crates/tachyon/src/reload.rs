//! Building new snapshot generations: on SIGHUP, on changes under the root
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
use tachyon_snapshot::Snapshot;

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
    building: Mutex<()>,
}

impl Reloader {
    pub fn new(site: Arc<Site>, settings: Settings) -> Arc<Reloader> {
        Arc::new(Reloader {
            site,
            settings,
            building: Mutex::new(()),
        })
    }

    /// Builds a new snapshot and swaps it in; on failure the old one stays.
    pub fn reload(&self, why: &str) {
        let _one_at_a_time = self.building.lock().unwrap_or_else(|e| e.into_inner());
        match Snapshot::load(&self.settings.root, &self.settings.load) {
            Ok(snapshot) => {
                if !self.settings.quiet {
                    crate::say(&format!("reloading ({why})"));
                    crate::summarize(&snapshot);
                }
                self.site.publish(snapshot);
            }
            Err(err) => crate::warn(&format!(
                "reload ({why}) failed, still serving the previous snapshot: {err}"
            )),
        }
    }

    /// Watches the root until the process ends. Returns at once, after
    /// starting the watcher thread; a watcher that cannot start is reported
    /// and SIGHUP keeps working.
    pub fn watch(self: &Arc<Self>) {
        let this = Arc::clone(self);
        let spawned = std::thread::Builder::new()
            .name("tachyon-watch".into())
            .spawn(move || {
                if let Err(err) = this.watch_loop() {
                    crate::warn(&format!("not watching for changes: {err}"));
                }
            });
        if let Err(err) = spawned {
            crate::warn(&format!("not watching for changes: {err}"));
        }
    }

    fn watch_loop(&self) -> notify::Result<()> {
        let (tx, rx) = mpsc::channel();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                if event.is_ok_and(|e| changes_content(&e.kind)) {
                    let _ = tx.send(());
                }
            })?;
        let mut watched = self.resolve_root();
        watcher.watch(&watched, RecursiveMode::Recursive)?;
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
                let now = self.resolve_root();
                if now != watched {
                    let _ = watcher.unwatch(&watched);
                    watcher.watch(&now, RecursiveMode::Recursive)?;
                    watched = now;
                    self.reload("the root now points elsewhere");
                }
            }
        }
    }

    fn resolve_root(&self) -> PathBuf {
        self.settings
            .root
            .canonicalize()
            .unwrap_or_else(|_| self.settings.root.clone())
    }
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
