//! The `tachyon` binary: parse the CLI and config into settings, then run
//! the server's start-up as named phases (confine, bind, load, announce,
//! admin, workers, signals). Wiring only: every decision about HTTP lives
//! in the library crates.

mod acme;
mod activation;
mod background;
mod certs;
mod healthcheck;
mod launcher;
mod messages;
mod privileges;
mod reload;
mod sandbox;
mod startup;
mod upgrade;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use clap::Parser;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2};
use signal_hook::iterator::Signals;
use tachyon_http::response::{Field, Name};
use tachyon_server::access::LogWriter;
use tachyon_server::acme::{CertificateBoard, Challenges};
use tachyon_server::admin::{Admin, Reloads};
use tachyon_server::{
    Endpoint, Generation, Https, ListenOptions, Listeners, Live, Observe, Scheme, Shutdown,
};
use tachyon_snapshot::{CacheDir, EncodeCache, PendingVariant};

use crate::certs::Tls;
pub(crate) use crate::messages::{notify, say, warn};
use crate::reload::{Reloader, Watch};
pub(crate) use crate::startup::load_generation;
use tachyon::cli;
use tachyon::config::Settings;

fn main() -> ExitCode {
    let args = cli::Args::parse();
    if let Some(what) = args.generate {
        return match cli::generate(what, &mut std::io::stdout().lock()) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("tachyon: --generate: {err}");
                ExitCode::FAILURE
            }
        };
    }
    if let Some(addr) = &args.healthcheck {
        return match healthcheck::healthcheck(addr) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                eprintln!("tachyon: not ready: {err:#}");
                ExitCode::FAILURE
            }
        };
    }
    let settings = match Settings::from_args(&args) {
        Ok(settings) => settings,
        Err(err) => {
            eprintln!("tachyon: {err:#}");
            return ExitCode::from(if args.check { 1 } else { 2 });
        }
    };
    if args.print_config {
        print!("{}", settings.to_toml());
        return ExitCode::SUCCESS;
    }
    messages::JSON_MESSAGES.store(settings.log.json, Ordering::Relaxed);
    let result = match args.check {
        true => startup::check(&settings, &endpoints(&settings)),
        false => run(settings),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            warn(&format!("{err:#}"));
            ExitCode::FAILURE
        }
    }
}

/// Serves until a signal stops it: each phase below in this order, for
/// the reasons its comment gives.
fn run(mut settings: Settings) -> anyhow::Result<()> {
    let unconfined = Unconfined::prepare(&settings)?;
    confine(&settings)?;
    // Before anything is printed: a SIGHUP sent as soon as the URL shows
    // must reload, not end the process (its default action). Signals that
    // arrive while the site loads wait in the iterator.
    let signals = Signals::new([SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2])
        .context("installing signal handlers")?;
    let fd_limit = share_descriptors(&mut settings);
    // Before loading: a port already taken is said at once, before any
    // memory is spent on the site.
    let (listeners, inherited_admin) = bind(&settings)?;
    // Before watching: a root that is missing or a file is an error, not a
    // watch retried.
    startup::check_roots(&settings)?;
    // Watching starts before loading, so an edit made during the load
    // triggers a rebuild instead of being missed.
    let watch = watch(&settings);
    let site = Site::load(&settings, unconfined.cache_dir)?;
    let challenges = site.tls.as_ref().and_then(|tls| tls.challenges());
    let https = https_policy(&settings, &listeners, challenges.clone());
    cap_connections(&mut settings, fd_limit);
    announce(&settings, &site.generation, &listeners);
    let live = Arc::new(Live::new(site.generation));
    let shutdown = Shutdown::new().context("creating the shutdown eventfd")?;
    let log = match &settings.log.access {
        Some(target) => Some(LogWriter::start(target.clone(), settings.log.format)?),
        None => None,
    };
    let reloads = Arc::new(Reloads::default());
    let certificates = settings
        .acme
        .as_ref()
        .map(|_| Arc::new(CertificateBoard::default()));
    let admin = |board| Admin {
        version: cli::VERSION,
        board,
        live: Arc::clone(&live),
        shutdown: Arc::clone(&shutdown),
        reloads: Arc::clone(&reloads),
        certificates: certificates.clone(),
    };
    let (handover, board) = open_admin(&settings, inherited_admin, &listeners, admin)?;
    // Every socket is bound and the access log is open: root is no longer needed.
    if let Some(user) = unconfined.user {
        privileges::become_user(user)?;
    }
    let observe = Observe {
        board,
        log: log.as_ref().map(LogWriter::sink),
    };
    let server = start_workers(listeners, &live, &settings, https, &shutdown, observe)?;
    let upgrades = Upgrades {
        handover: Arc::new(std::sync::Mutex::new(handover)),
        shutdown: Arc::clone(&shutdown),
        launcher: unconfined.launcher,
        upgrading: Arc::new(AtomicBool::new(false)),
        quiet: settings.quiet,
    };
    let sandboxed = settings.sandbox;
    let acme_settings = settings.acme.clone();
    let reloader = Reloader::new(live, settings, site.caches, site.tls, reloads);
    let reloader = start_reloading(reloader, sandboxed, &upgrades, site.pending, watch);
    // Serving already: names with a stored certificate answer at once,
    // the others once their order succeeds.
    if let (Some(acme), Some(challenges), Some(board)) = (acme_settings, challenges, certificates) {
        let reloader = Arc::clone(&reloader);
        let issued = Box::new(move || reloader.reload("a certificate was issued"));
        acme::start(acme, challenges, board, issued);
    }
    // Listeners are open and workers serve: the process we replace, or
    // else systemd's Type=notify, waits for this.
    if !upgrade::tell_predecessor() {
        notify(&[sd_notify::NotifyState::Ready]);
    }
    let reopen = log.as_ref().map(LogWriter::reopener);
    let reactions = Reactions {
        reloader,
        reopen,
        upgrades,
    };
    let result = reactions.until_stopped(server, signals);
    // The workers are gone and flushed: write what they handed over.
    if let Some(log) = log {
        log.finish();
    }
    result
}

/// What is made before the sandbox, which would keep it out of reach.
struct Unconfined {
    /// Looked up now: the sandbox keeps /etc/passwd out of reach.
    user: Option<nix::unistd::User>,
    /// Made now: the sandbox lets the process use it, not create it.
    cache_dir: Option<Arc<CacheDir>>,
    /// Started now: successors start from this thread, unconfined.
    launcher: Arc<launcher::Launcher>,
}

impl Unconfined {
    fn prepare(settings: &Settings) -> anyhow::Result<Unconfined> {
        let user = settings
            .user
            .as_deref()
            .map(privileges::lookup_user)
            .transpose()?;
        if let Some(acme) = &settings.acme {
            // The sandbox's rule on the ACME folder needs it to exist, and
            // the user the process becomes must own it.
            let store = acme::store::Store::open(acme).context("acme.dir")?;
            if let Some(user) = &user {
                store.give_to(user.uid, user.gid).context("acme.dir")?;
            }
        }
        Ok(Unconfined {
            user,
            cache_dir: open_cache_dir(settings),
            launcher: Arc::new(
                launcher::Launcher::start().context("starting the launcher thread")?,
            ),
        })
    }
}

/// The first generation and what serves it.
struct Site {
    /// One encoding cache per root, kept across reloads.
    caches: Arc<[EncodeCache]>,
    tls: Option<Arc<Tls>>,
    generation: Generation,
    /// Variants left to build in the background.
    pending: Vec<(usize, PendingVariant)>,
}

impl Site {
    fn load(settings: &Settings, cache_dir: Option<Arc<CacheDir>>) -> anyhow::Result<Site> {
        let caches: Arc<[EncodeCache]> = (0..=settings.hosts.len())
            .map(|_| {
                cache_dir
                    .clone()
                    .map_or_else(EncodeCache::default, EncodeCache::with_disk)
            })
            .collect();
        let tls = match &settings.tls {
            Some(tls) => Some(Arc::new(Tls::start(
                tls,
                settings.acme.as_ref(),
                settings.quiet,
            )?)),
            None => None,
        };
        let (mut generation, pending) = startup::first_generation(settings, &caches)?;
        if let Some(tls) = &tls {
            generation = generation.with_tls(tls.config(settings)?);
        }
        Ok(Site {
            caches,
            tls,
            generation,
            pending,
        })
    }
}

/// The stats the workers publish and the admin listener reads.
type Board = Arc<tachyon_server::stats::Board>;

/// The admin listener (inherited, or bound now) and its thread, and the
/// handover a binary upgrade passes on; the stats board exists only when
/// the admin listener does.
fn open_admin(
    settings: &Settings,
    inherited: Option<std::net::TcpListener>,
    listeners: &Listeners,
    admin: impl FnOnce(Board) -> Admin,
) -> anyhow::Result<(Option<Arc<upgrade::Handover>>, Option<Board>)> {
    let listener = match (inherited, settings.admin) {
        (Some(listener), _) => Some(listener),
        (None, Some(addr)) => Some(
            std::net::TcpListener::bind(addr)
                .with_context(|| format!("admin: listening on {addr}"))?,
        ),
        (None, None) => None,
    };
    let handover = match upgrade::Handover::new(listeners, listener.as_ref()) {
        Ok(handover) => Some(Arc::new(handover)),
        Err(e) => {
            warn(&format!("binary upgrades (SIGUSR2) are off: {e:#}"));
            None
        }
    };
    let Some(listener) = listener else {
        return Ok((handover, None));
    };
    let board = tachyon_server::stats::Board::new(settings.threads);
    start_admin(listener, admin(Arc::clone(&board)), settings.quiet)?;
    Ok((handover, Some(board)))
}

/// Starts what reloads the site: the background build of pending
/// variants, the watcher, and (under a sandbox) the successor for a root
/// made again.
fn start_reloading(
    reloader: Arc<Reloader>,
    sandboxed: bool,
    upgrades: &Upgrades,
    pending: Vec<(usize, PendingVariant)>,
    watch: Option<Watch>,
) -> Arc<Reloader> {
    if sandboxed {
        // A root that is a new directory is outside this process's rules:
        // a successor confines itself to it.
        let upgrades = upgrades.clone();
        reloader.on_new_root(Box::new(move |why| upgrades.start(why)));
    }
    // Before the watcher starts: a change while the variants are built in
    // the background must not build them a second time.
    if !pending.is_empty() {
        background::compress(Arc::clone(&reloader), pending);
    }
    reloader.watch(watch);
    reloader
}

/// The cache folder for built variants, if one is configured and usable.
fn open_cache_dir(settings: &Settings) -> Option<Arc<CacheDir>> {
    let dir = settings.cache_dir.as_ref()?;
    CacheDir::open(dir, settings.cache_max_size)
        .map_err(|e| warn(&format!("not keeping variants in {}: {e}", dir.display())))
        .ok()
        .map(Arc::new)
}

/// The sandbox, first, while this is the only thread (see `sandbox`).
fn confine(settings: &Settings) -> anyhow::Result<()> {
    if !settings.sandbox {
        return Ok(());
    }
    match sandbox::confine(settings).context("sandbox (--no-sandbox turns it off)")? {
        sandbox::Confinement::Full => {}
        sandbox::Confinement::Partial => {
            warn("sandbox: this kernel's Landlock enforces only part of the rules")
        }
        sandbox::Confinement::None => {
            warn("sandbox: this kernel has no Landlock; the process is not confined")
        }
    }
    Ok(())
}

/// Raises the open-file limit and shares it out: an eighth for disk-served
/// files kept open (shared by the roots: with two generations alive during
/// a reload, three quarters are left for connections, as `connection_cap`
/// reserves twice what is open), a sixteenth for the pipes of frozen
/// bodies. Returns the limit.
fn share_descriptors(settings: &mut Settings) -> u64 {
    let fd_limit = tachyon_sys::raise_fd_limit();
    let keep_open =
        usize::try_from(fd_limit / 8).unwrap_or(usize::MAX) / (1 + settings.hosts.len());
    settings.load.keep_open = keep_open;
    for host in &mut settings.hosts {
        host.load.keep_open = keep_open;
    }
    // Two descriptors a pipe, and at most 256: a user's pipes share 64 MiB
    // of pipe pages by default (`pipe-user-pages-soft`), 256 KiB each.
    tachyon_server::limit_pipes(
        usize::try_from(fd_limit / 16)
            .unwrap_or(usize::MAX)
            .min(256),
    );
    fd_limit
}

/// The listening sockets: handed over (systemd's socket activation, or the
/// process this one upgrades), else bound here; and the admin listener
/// when it was handed over too.
fn bind(settings: &Settings) -> anyhow::Result<(Listeners, Option<std::net::TcpListener>)> {
    let listen = ListenOptions {
        backlog: 4096,
        loopback_congestion: settings.loopback_congestion.clone(),
        quic: settings.limits.h3.is_some() && settings.tls.is_some(),
        by_cpu: settings.cpu_affinity,
    };
    // A predecessor's sockets first: its successor runs in its environment,
    // which may also hold systemd's.
    let handed = match upgrade::inherited()? {
        Some(handed) => Some(handed),
        None => activation::inherited()?,
    };
    let (listeners, admin) = match handed {
        Some(inherited) => {
            let handed = inherited.handed;
            if settings.tls.is_none() && handed.listeners.iter().any(|(_, s)| *s == Scheme::Https) {
                anyhow::bail!(
                    "systemd handed over an https socket, but no certificate is configured (tls.cert and tls.key)"
                );
            }
            let listeners = tachyon_server::adopt_listeners(handed, settings.threads, &listen)?;
            (listeners, inherited.admin)
        }
        None => (
            tachyon_server::bind_listeners(&endpoints(settings), settings.threads, &listen)?,
            None,
        ),
    };
    for refusal in &listeners.refused {
        warn(refusal);
    }
    Ok((listeners, admin))
}

/// The watcher of the roots, or none (`--no-watch`, or it could not start:
/// SIGHUP still reloads).
fn watch(settings: &Settings) -> Option<Watch> {
    if !settings.watch {
        return None;
    }
    Watch::start(settings)
        .map_err(|err| {
            warn(&format!(
                "not watching for changes (SIGHUP still reloads): {err}"
            ))
        })
        .ok()
}

/// Lowers `max_connections` to what the descriptors allow, and says so.
fn cap_connections(settings: &mut Settings, fd_limit: u64) {
    let requested = settings.limits.max_connections;
    settings.limits.max_connections =
        tachyon_server::connection_cap(requested, fd_limit, settings.threads);
    if settings.limits.max_connections < requested && !settings.quiet {
        say(&format!(
            "at most {} connections: the open-file limit is {fd_limit} (raise it with ulimit -n)",
            settings.limits.max_connections
        ));
    }
}

/// The lines a person starting the server reads: what is served, where.
fn announce(settings: &Settings, generation: &Generation, listeners: &Listeners) {
    if settings.quiet {
        return;
    }
    let root = generation.default_snapshot().root().display().to_string();
    if settings.listing_by_default {
        say(&format!(
            "no index file in {root}: listing it (pass a directory to serve, or --config with listing = false)"
        ));
    }
    // Sockets handed over by a predecessor come one per worker it had.
    let mut shown = Vec::new();
    for endpoint in &listeners.local {
        if !shown.contains(&endpoint.addr) {
            shown.push(endpoint.addr);
            say(&format!(
                "serving {root} on {}",
                messages::url_line(*endpoint)
            ));
        }
    }
    for addr in &listeners.quic_local {
        say(&format!("HTTP/3 on UDP {addr}"));
    }
    for host in &settings.hosts {
        say(&format!(
            "serving {} for Host {}",
            host.root.display(),
            host.names.join(", ")
        ));
    }
}

/// The admin listener (`/metrics`, `/healthz`, `/readyz`, `/status`).
fn start_admin(listener: std::net::TcpListener, admin: Admin, quiet: bool) -> anyhow::Result<()> {
    let bound = listener.local_addr()?;
    tachyon_server::admin::serve(listener, admin).context("starting the admin listener")?;
    if !quiet {
        say(&format!(
            "admin on http://{bound}/ (/metrics, /healthz, /readyz, /status)"
        ));
    }
    Ok(())
}

type ServerThread = std::thread::JoinHandle<std::io::Result<()>>;

/// The workers, on a thread of their own that returns once they drained.
fn start_workers(
    listeners: Listeners,
    live: &Arc<Live>,
    settings: &Settings,
    https: Https,
    shutdown: &Arc<Shutdown>,
    observe: Observe,
) -> anyhow::Result<ServerThread> {
    let (live, limits, shutdown) = (
        Arc::clone(live),
        settings.limits.clone(),
        Arc::clone(shutdown),
    );
    std::thread::Builder::new()
        .name("tachyon-server".into())
        .spawn(move || tachyon_server::run(listeners, live, limits, https, shutdown, observe))
        .context("starting the server thread")
}

/// What the signals do, once the server runs.
struct Reactions {
    reloader: Arc<Reloader>,
    reopen: Option<tachyon_server::access::Reopen>,
    upgrades: Upgrades,
}

impl Reactions {
    /// Reacts to signals until the server thread ends (after a stopping
    /// signal has drained it), then stops listening for them.
    fn until_stopped(self, server: ServerThread, signals: Signals) -> anyhow::Result<()> {
        let signal_handle = signals.handle();
        let signal_thread = std::thread::spawn(move || self.handle(signals));
        let result = server
            .join()
            .map_err(|_| anyhow::anyhow!("the server thread panicked"))?;
        signal_handle.close();
        let _ = signal_thread.join();
        result.context("serving")
    }

    /// SIGHUP reloads, SIGUSR1 reopens the access log, SIGUSR2 upgrades
    /// the binary; SIGTERM and SIGINT drain and stop.
    fn handle(self, mut signals: Signals) {
        for signal in signals.forever() {
            match signal {
                SIGHUP => self.reloader.reload_on_signal(),
                SIGUSR1 => {
                    if let Some(reopen) = &self.reopen {
                        reopen.reopen();
                    }
                }
                SIGUSR2 => self.upgrades.start("SIGUSR2"),
                _ => {
                    // Our copies of the listening sockets close with it,
                    // so that the kernel stops queueing new clients.
                    if let Some(handover) = self.upgrades.take_handover() {
                        handover.abandon();
                    }
                    notify(&[sd_notify::NotifyState::Stopping]);
                    if !self.upgrades.quiet {
                        warn("stopping: finishing responses in flight");
                    }
                    self.upgrades.shutdown.trigger();
                    return;
                }
            }
        }
    }
}

/// Starting the binary at our path on our sockets: on SIGUSR2, and when a
/// root is a new directory under the sandbox.
#[derive(Clone)]
struct Upgrades {
    /// Taken (and its sockets closed) when the process stops.
    handover: Arc<std::sync::Mutex<Option<Arc<upgrade::Handover>>>>,
    shutdown: Arc<Shutdown>,
    /// Successors start from this unconfined thread (see `launcher`).
    launcher: Arc<launcher::Launcher>,
    upgrading: Arc<AtomicBool>,
    quiet: bool,
}

impl Upgrades {
    /// Starts a successor on the launcher's thread (SIGTERM must still be
    /// heard meanwhile); once it serves, this process drains. One upgrade
    /// at a time, none while draining.
    fn take_handover(&self) -> Option<Arc<upgrade::Handover>> {
        self.handover
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .take()
    }

    fn start(&self, why: &str) {
        let handover = self
            .handover
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let Some(handover) = handover else {
            warn(&format!(
                "upgrade ({why}): not possible in this process (see the start-up message)"
            ));
            return;
        };
        if self.shutdown.is_stopping() || self.upgrading.swap(true, Ordering::SeqCst) {
            warn(&format!(
                "upgrade ({why}): already upgrading or stopping; not started"
            ));
            return;
        }
        if !self.quiet {
            say(&format!("upgrade ({why}): starting a successor"));
        }
        let (shutdown, upgrading, quiet) = (
            Arc::clone(&self.shutdown),
            Arc::clone(&self.upgrading),
            self.quiet,
        );
        self.launcher
            .run(move || match handover.start_successor(UPGRADE_READY_WITHIN) {
                Ok(pid) => {
                    if !quiet {
                        say(&format!(
                            "upgrade: process {pid} is serving; process {} stops accepting and drains",
                            std::process::id()
                        ));
                    }
                    // We are still the unit's main process: systemd takes
                    // this from us and then follows the successor.
                    notify(&[sd_notify::NotifyState::MainPid(pid)]);
                    shutdown.hand_over();
                }
                Err(e) => {
                    warn(&format!("upgrade failed, still serving: {e:#}"));
                    upgrading.store(false, Ordering::SeqCst);
                }
            });
    }
}

/// How long a successor may take to load its site and start serving.
const UPGRADE_READY_WITHIN: Duration = Duration::from_secs(60);

/// Every address to listen on: the plain ones, then HTTPS.
fn endpoints(settings: &Settings) -> Vec<Endpoint> {
    let plain = settings.listen.iter().map(|&addr| Endpoint {
        addr,
        scheme: Scheme::Http,
    });
    let secure = settings.tls.iter().flat_map(|tls| {
        tls.listen.iter().map(|&addr| Endpoint {
            addr,
            scheme: Scheme::Https,
        })
    });
    plain.chain(secure).collect()
}

/// How plain and HTTPS connections differ: the redirect target's port
/// (the first HTTPS address's) and `Strict-Transport-Security`.
fn https_policy(
    settings: &Settings,
    listeners: &Listeners,
    challenges: Option<Arc<Challenges>>,
) -> Https {
    let Some(tls) = &settings.tls else {
        return Https::default();
    };
    let first_https = listeners.local.iter().find(|e| e.scheme == Scheme::Https);
    let hsts = tls.hsts.and_then(|age| {
        let value = format!("max-age={}", age.as_secs());
        Field::new(Name::StrictTransportSecurity, &value)
    });
    // Browsers move to HTTP/3 once a response says where it is (RFC 7838).
    let alt_svc = listeners.quic_local.first().and_then(|addr| {
        let value = format!("h3=\":{}\"; ma=86400", addr.port());
        Field::new(Name::Custom("Alt-Svc".into()), &value)
    });
    Https {
        redirect_port: first_https
            .filter(|_| tls.redirect_https)
            .map(|e| e.addr.port()),
        fields: hsts.into_iter().chain(alt_svc).collect(),
        challenges,
    }
}
