//! The `tachyon` binary: parse the CLI and config into settings, load the
//! snapshot, bind, run, and handle signals. Wiring only: every decision about
//! HTTP lives in the library crates.

mod activation;
mod background;
mod certs;
mod reload;
mod sandbox;
mod upgrade;

use std::path::Path;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use clap::Parser;
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR1, SIGUSR2};
use tachyon_http::response::{Field, Name};
use tachyon_server::access::LogWriter;
use tachyon_server::admin::{Admin, Reloads};
use tachyon_server::stats::Board;
use tachyon_server::{Endpoint, Generation, Https, ListenOptions, Live, Observe, Scheme, Shutdown};
use tachyon_snapshot::{CacheDir, EncodeCache, LoadOptions, PendingVariant, Progress, Snapshot};

use crate::certs::Tls;
use crate::reload::{Reloader, Watch};
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
        return match healthcheck(addr) {
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
    JSON_MESSAGES.store(settings.log.json, Ordering::Relaxed);
    if args.check {
        return match check(&settings) {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                warn(&format!("{err:#}"));
                ExitCode::FAILURE
            }
        };
    }
    match run(settings) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            warn(&format!("{err:#}"));
            ExitCode::FAILURE
        }
    }
}

fn run(mut settings: Settings) -> anyhow::Result<()> {
    // Looked up before the sandbox, which keeps /etc/passwd out of reach.
    let user = settings.user.as_deref().map(lookup_user).transpose()?;
    // Made before the sandbox, which may then only use it.
    let cache_dir = settings.cache_dir.as_ref().and_then(|dir| {
        CacheDir::open(dir, settings.cache_max_size)
            .map_err(|e| warn(&format!("not keeping variants in {}: {e}", dir.display())))
            .ok()
            .map(Arc::new)
    });
    if settings.sandbox {
        // First, while this is the only thread (see the module's doc).
        match sandbox::confine(&settings).context("sandbox (--no-sandbox turns it off)")? {
            sandbox::Confinement::Full => {}
            sandbox::Confinement::Partial => {
                warn("sandbox: this kernel's Landlock enforces only part of the rules")
            }
            sandbox::Confinement::None => {
                warn("sandbox: this kernel has no Landlock; the process is not confined")
            }
        }
    }
    // Before anything is printed: a SIGHUP sent as soon as the URL shows
    // must reload, not end the process (its default action). Signals that
    // arrive while the site loads wait in the iterator.
    let mut signals =
        signal_hook::iterator::Signals::new([SIGTERM, SIGINT, SIGHUP, SIGUSR1, SIGUSR2])
            .context("installing signal handlers")?;
    // Before loading: a disk-served file kept open holds a descriptor.
    let fd_limit = tachyon_server::raise_fd_limit();
    // An eighth of the descriptors for kept-open files, shared by the roots:
    // with two generations alive during a reload, three quarters are left
    // for connections (`connection_cap` reserves twice what is open).
    let keep_open =
        usize::try_from(fd_limit / 8).unwrap_or(usize::MAX) / (1 + settings.hosts.len());
    settings.load.keep_open = keep_open;
    for host in &mut settings.hosts {
        host.load.keep_open = keep_open;
    }
    // Pipes for frozen bodies (two descriptors each) a sixteenth, and at
    // most 256: a user's pipes share 64 MiB of pipe pages by default
    // (`pipe-user-pages-soft`), 256 KiB each.
    tachyon_server::limit_pipes(
        usize::try_from(fd_limit / 16)
            .unwrap_or(usize::MAX)
            .min(256),
    );
    // Watching starts before loading, so an edit made during the load
    // triggers a rebuild instead of being missed.
    let watch = match settings.watch.then(|| Watch::start(&settings)) {
        Some(Err(err)) => {
            warn(&format!(
                "not watching for changes (SIGHUP still reloads): {err}"
            ));
            None
        }
        Some(Ok(watch)) => Some(watch),
        None => None,
    };
    // One encoding cache per root, kept across reloads.
    let caches: Arc<[EncodeCache]> = (0..=settings.hosts.len())
        .map(|_| {
            cache_dir
                .clone()
                .map_or_else(EncodeCache::default, EncodeCache::with_disk)
        })
        .collect();
    let tls = match &settings.tls {
        Some(tls) => Some(Arc::new(Tls::start(tls, settings.quiet)?)),
        None => None,
    };
    let (mut generation, pending) = first_generation(&settings, &caches)?;
    if let Some(tls) = &tls {
        generation = generation.with_tls(tls.config(&settings)?);
    }
    let listen = ListenOptions {
        backlog: 4096,
        loopback_congestion: settings.loopback_congestion.clone(),
    };
    let inherited = activation::inherited()?;
    let (listeners, inherited_admin) = match inherited {
        Some(handed) => {
            if settings.tls.is_none() && handed.sockets.iter().any(|(_, s)| *s == Scheme::Https) {
                anyhow::bail!(
                    "systemd handed over an https socket, but no certificate is configured (tls.cert and tls.key)"
                );
            }
            let listeners =
                tachyon_server::adopt_listeners(handed.sockets, settings.threads, &listen)?;
            (listeners, handed.admin)
        }
        None => (
            tachyon_server::bind_listeners(&endpoints(&settings), settings.threads, &listen)?,
            None,
        ),
    };
    for refusal in &listeners.refused {
        warn(refusal);
    }
    let https = https_policy(&settings, &listeners.local);
    let requested = settings.limits.max_connections;
    settings.limits.max_connections =
        tachyon_server::connection_cap(requested, fd_limit, settings.threads);
    if settings.limits.max_connections < requested && !settings.quiet {
        say(&format!(
            "at most {} connections: the open-file limit is {fd_limit} (raise it with ulimit -n)",
            settings.limits.max_connections
        ));
    }
    let root = generation.default_snapshot().root().display().to_string();
    if !settings.quiet {
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
                say(&format!("serving {root} on {}", url_line(*endpoint)));
            }
        }
        for host in &settings.hosts {
            say(&format!(
                "serving {} for Host {}",
                host.root.display(),
                host.names.join(", ")
            ));
        }
    }
    let live = Arc::new(Live::new(generation));
    let shutdown = Shutdown::new().context("creating the shutdown eventfd")?;
    let log = match &settings.log.access {
        Some(target) => Some(LogWriter::start(target.clone(), settings.log.format)?),
        None => None,
    };
    let reloads = Arc::new(Reloads::default());
    let admin_listener = match (inherited_admin, settings.admin) {
        (Some(listener), _) => Some(listener),
        (None, Some(addr)) => Some(
            std::net::TcpListener::bind(addr)
                .with_context(|| format!("admin: listening on {addr}"))?,
        ),
        (None, None) => None,
    };
    let handover = match upgrade::Handover::new(&listeners, admin_listener.as_ref()) {
        Ok(handover) => Some(Arc::new(handover)),
        Err(e) => {
            warn(&format!("binary upgrades (SIGUSR2) are off: {e:#}"));
            None
        }
    };
    let board = admin_listener
        .as_ref()
        .map(|_| Board::new(settings.threads));
    if let (Some(listener), Some(board)) = (admin_listener, &board) {
        let bound = listener.local_addr()?;
        let admin = Admin {
            board: Arc::clone(board),
            live: Arc::clone(&live),
            shutdown: Arc::clone(&shutdown),
            reloads: Arc::clone(&reloads),
        };
        tachyon_server::admin::serve(listener, admin).context("starting the admin listener")?;
        if !settings.quiet {
            say(&format!(
                "admin on http://{bound}/ (/metrics, /healthz, /readyz, /status)"
            ));
        }
    }
    // Every socket is bound and the access log is open: root is no longer needed.
    if let Some(user) = user {
        become_user(user)?;
    }
    let observe = Observe {
        board,
        log: log.as_ref().map(LogWriter::sink),
    };
    let server = {
        let (live, limits, shutdown) = (
            Arc::clone(&live),
            settings.limits.clone(),
            Arc::clone(&shutdown),
        );
        std::thread::Builder::new()
            .name("tachyon-server".into())
            .spawn(move || tachyon_server::run(listeners, live, limits, https, shutdown, observe))
            .context("starting the server thread")?
    };
    let signal_handle = signals.handle();
    let quiet = settings.quiet;
    let reopen = log.as_ref().map(LogWriter::reopener);
    let reloader = Reloader::new(live, settings, caches, tls, reloads);
    // Before the watcher starts: a change while the variants are built in
    // the background must not build them a second time.
    if !pending.is_empty() {
        background::compress(Arc::clone(&reloader), pending);
    }
    reloader.watch(watch);
    // Listeners are open and workers serve: the process we replace, or
    // else systemd's Type=notify, waits for this.
    if !upgrade::tell_predecessor() {
        notify(&[sd_notify::NotifyState::Ready]);
    }
    let upgrading = Arc::new(AtomicBool::new(false));
    let signal_thread = std::thread::spawn(move || {
        for signal in signals.forever() {
            match signal {
                SIGHUP => reloader.reload("SIGHUP"),
                SIGUSR1 => {
                    if let Some(reopen) = &reopen {
                        reopen.reopen();
                    }
                }
                SIGUSR2 => start_upgrade(handover.as_ref(), &shutdown, &upgrading, quiet),
                _ => {
                    if let Some(handover) = &handover {
                        handover.abandon();
                    }
                    notify(&[sd_notify::NotifyState::Stopping]);
                    if !quiet {
                        warn("stopping: finishing responses in flight");
                    }
                    shutdown.trigger();
                    return;
                }
            }
        }
    });
    let result = server
        .join()
        .map_err(|_| anyhow::anyhow!("the server thread panicked"))?;
    signal_handle.close();
    let _ = signal_thread.join();
    // The workers are gone and flushed: write what they handed over.
    if let Some(log) = log {
        log.finish();
    }
    result.context("serving")
}

/// `--healthcheck ADDR`: `GET /readyz` on the admin listener, bounded to
/// two seconds; ready only on a 200.
fn healthcheck(addr: &str) -> anyhow::Result<()> {
    use std::io::{Read, Write};
    use std::net::ToSocketAddrs;
    let addr = addr
        .to_socket_addrs()
        .with_context(|| format!("{addr:?} is not an address"))?
        .next()
        .ok_or_else(|| anyhow::anyhow!("{addr:?} resolves to nothing"))?;
    let within = Duration::from_secs(2);
    let mut stream = std::net::TcpStream::connect_timeout(&addr, within)
        .with_context(|| format!("connecting to {addr}"))?;
    stream.set_read_timeout(Some(within))?;
    stream.set_write_timeout(Some(within))?;
    stream.write_all(b"GET /readyz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")?;
    let mut head = [0u8; 16];
    let mut got = 0;
    while got < head.len() {
        match stream.read(&mut head[got..])? {
            0 => break,
            n => got += n,
        }
    }
    let line = String::from_utf8_lossy(&head[..got]);
    if line.starts_with("HTTP/1.1 200") {
        Ok(())
    } else {
        anyhow::bail!("{addr} answered {:?}", line.lines().next().unwrap_or(""))
    }
}

/// SIGUSR2: starts the binary at our path on our sockets, from a thread of
/// its own (SIGTERM must still be heard meanwhile); once it serves, this
/// process drains. One upgrade at a time, none while draining.
fn start_upgrade(
    handover: Option<&Arc<upgrade::Handover>>,
    shutdown: &Arc<Shutdown>,
    upgrading: &Arc<AtomicBool>,
    quiet: bool,
) {
    let Some(handover) = handover else {
        warn("upgrade: not possible in this process (see the start-up message)");
        return;
    };
    if shutdown.is_stopping() || upgrading.swap(true, Ordering::SeqCst) {
        warn("upgrade: already upgrading or stopping; SIGUSR2 ignored");
        return;
    }
    let (handover, shutdown, upgrading) = (
        Arc::clone(handover),
        Arc::clone(shutdown),
        Arc::clone(upgrading),
    );
    std::thread::spawn(move || {
        match handover.start_successor(UPGRADE_READY_WITHIN) {
            Ok(pid) => {
                if !quiet {
                    say(&format!(
                        "upgrade: process {pid} is serving; process {} stops accepting and drains",
                        std::process::id()
                    ));
                }
                // We are still the unit's main process: systemd takes this
                // from us and then follows the successor.
                notify(&[sd_notify::NotifyState::MainPid(pid)]);
                shutdown.hand_over();
            }
            Err(e) => {
                warn(&format!("upgrade failed, still serving: {e:#}"));
                upgrading.store(false, Ordering::SeqCst);
            }
        }
    });
}

/// How long a successor may take to load its site and start serving.
const UPGRADE_READY_WITHIN: Duration = Duration::from_secs(60);

/// Switches the whole process (every thread: glibc's setuid reaches them
/// all) to `name` and its primary group, dropping supplementary groups.
/// Called once the listeners (admin included) are bound and the access
/// log is open, so a privileged port needs root only until then. Files opened before (the access log, kept-open disk
/// bodies) stay open; what is read later (reloads, renewed certificates,
/// a reopened log) must be readable by that user.
fn become_user(user: nix::unistd::User) -> anyhow::Result<()> {
    use nix::unistd::{setgid, setgroups, setuid, Uid};
    let name = &user.name;
    if Uid::effective() == user.uid {
        return Ok(());
    }
    if !Uid::effective().is_root() {
        anyhow::bail!("user: switching to {name:?} needs root");
    }
    setgroups(&[user.gid]).context("user: dropping supplementary groups")?;
    setgid(user.gid).context("user: setgid")?;
    setuid(user.uid).context("user: setuid")?;
    Ok(())
}

fn lookup_user(name: &str) -> anyhow::Result<nix::unistd::User> {
    nix::unistd::User::from_name(name)
        .with_context(|| format!("user: looking up {name:?}"))?
        .ok_or_else(|| anyhow::anyhow!("user: there is no user {name:?}"))
}

/// `--check`: everything `run` reads before serving (the site's files,
/// the certificates) is read, nothing is bound or compressed.
fn check(settings: &Settings) -> anyhow::Result<()> {
    let caches: Vec<EncodeCache> = (0..=settings.hosts.len())
        .map(|_| EncodeCache::default())
        .collect();
    let mut quick = settings.deferring_variants();
    quick.quiet = true;
    let generation = load_generation(&quick, &caches)?;
    if let Some(tls) = &settings.tls {
        Tls::start(tls, true)?.config(settings)?;
    }
    if let Some(user) = &settings.user {
        lookup_user(user)?;
    }
    let files: usize = std::iter::once(generation.default_snapshot())
        .chain(generation.virtual_snapshots())
        .map(|s| s.stats().files)
        .sum();
    say(&format!(
        "ok: {files} files under {} root(s){}",
        1 + settings.hosts.len(),
        if settings.tls.is_some() {
            ", certificates valid"
        } else {
            ""
        }
    ));
    Ok(())
}

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
fn https_policy(settings: &Settings, bound: &[Endpoint]) -> Https {
    let Some(tls) = &settings.tls else {
        return Https::default();
    };
    let first_https = bound.iter().find(|e| e.scheme == Scheme::Https);
    Https {
        redirect_port: first_https
            .filter(|_| tls.redirect_https)
            .map(|e| e.addr.port()),
        fields: tls
            .hsts
            .and_then(|age| {
                let value = format!("max-age={}", age.as_secs());
                Field::new(Name::StrictTransportSecurity, &value)
            })
            .into_iter()
            .collect(),
    }
}

/// A site holding more than this in memory is served before its variants
/// are built: building brotli-11 and zstd-19 for the 10,000-file, 200 MiB
/// site took 76 s, reading and hashing it 0.26 s. Below it, building them
/// first costs well under a second and a client never sees a site without
/// its variants.
const COMPRESS_BEFORE_SERVING_MAX: u64 = 8 << 20;

/// The generation to start serving: identity bodies (and precompressed
/// siblings) at once, with the built variants too when the site is small;
/// and the variants still to be built (in the background), with the index
/// of the root each belongs to.
fn first_generation(
    settings: &Settings,
    caches: &[EncodeCache],
) -> anyhow::Result<(Generation, Vec<(usize, PendingVariant)>)> {
    let compresses = !settings.load.compression.codings.is_empty()
        || settings
            .hosts
            .iter()
            .any(|h| !h.load.compression.codings.is_empty());
    if !compresses {
        return Ok((load_generation(settings, caches)?, Vec::new()));
    }
    let mut quick = settings.deferring_variants();
    quick.quiet = true;
    let identity = load_generation(&quick, caches)?;
    let snapshots =
        || std::iter::once(identity.default_snapshot()).chain(identity.virtual_snapshots());
    let pending: usize = snapshots().map(|s| s.stats().variants_pending).sum();
    if pending == 0 {
        // Every variant was known (the cache folder, after a restart).
        if !settings.quiet {
            snapshots().for_each(summarize);
        }
        return Ok((identity, Vec::new()));
    }
    let in_memory: u64 = snapshots().map(|s| s.stats().bytes_in_memory).sum();
    if in_memory <= COMPRESS_BEFORE_SERVING_MAX {
        return Ok((load_generation(settings, caches)?, Vec::new()));
    }
    if !settings.quiet {
        snapshots().for_each(summarize);
        say(&format!(
            "serving before compressing: {:.1} MiB to compress in the background; gzip first, the variants are swapped in as they are built",
            in_memory as f64 / 1_048_576.0
        ));
    }
    let pending = snapshots()
        .enumerate()
        .flat_map(|(root, s)| s.take_pending().into_iter().map(move |p| (root, p)))
        .collect();
    Ok((identity, pending))
}

/// Builds one generation: the default site, then each virtual host, with
/// `caches[0]` for the default root and `caches[i + 1]` for host `i`.
pub(crate) fn load_generation(
    settings: &Settings,
    caches: &[EncodeCache],
) -> anyhow::Result<Generation> {
    let default = load_site(&settings.root, &settings.load, settings.quiet, &caches[0])?;
    let mut hosts = Generation::single(default);
    for (host, cache) in settings.hosts.iter().zip(&caches[1..]) {
        let snapshot = load_site(&host.root, &host.load, settings.quiet, cache)
            .with_context(|| format!("virtual host {}", host.names.join(", ")))?;
        hosts = hosts.with_host(&host.names, snapshot);
    }
    Ok(hosts)
}

/// Loads one root, printing a progress line every second when the build
/// takes longer than one (compressing a large site does), then the summary.
fn load_site(
    root: &Path,
    options: &LoadOptions,
    quiet: bool,
    cache: &EncodeCache,
) -> anyhow::Result<Snapshot> {
    let progress = Progress::default();
    let finished = AtomicBool::new(false);
    let snapshot = std::thread::scope(|scope| {
        if !quiet {
            scope.spawn(|| report_progress(root, &progress, &finished));
        }
        let snapshot = Snapshot::load_with(root, options, &progress, cache);
        finished.store(true, Ordering::Release);
        snapshot
    })?;
    if !quiet {
        summarize(&snapshot);
    }
    Ok(snapshot)
}

fn report_progress(root: &Path, progress: &Progress, finished: &AtomicBool) {
    let started = Instant::now();
    let mut next = Duration::from_secs(1);
    while !finished.load(Ordering::Acquire) {
        std::thread::sleep(Duration::from_millis(50));
        if started.elapsed() >= next {
            next += Duration::from_secs(1);
            let files = progress.files.load(Ordering::Relaxed);
            let done = progress.done.load(Ordering::Relaxed);
            match (done * 100).checked_div(files) {
                None => say(&format!("loading {}: walking the tree", root.display())),
                Some(percent) => say(&format!(
                    "loading {}: {done} of {files} files ({percent}%), {} s",
                    root.display(),
                    started.elapsed().as_secs()
                )),
            }
        }
    }
}

pub(crate) fn summarize(snapshot: &Snapshot) {
    let s = snapshot.stats();
    let mib = |bytes: u64| bytes as f64 / 1_048_576.0;
    let encoded: Vec<String> = tachyon_http::encoding::Coding::ALL
        .iter()
        .enumerate()
        .filter(|(i, _)| s.encoded_files[*i] > 0)
        .map(|(i, c)| {
            format!(
                "{} {} files {:.1} MiB",
                c.token(),
                s.encoded_files[i],
                mib(s.encoded_bytes[i])
            )
        })
        .collect();
    let reopened = match s.files_reopened {
        0 => String::new(),
        n => format!(", {n} of them opened for each response past the descriptors kept open"),
    };
    say(&format!(
        "loaded {} files: {:.1} MiB in memory, {} served from disk ({:.1} MiB{reopened}), {} skipped, in {} ms",
        s.files,
        mib(s.bytes_in_memory),
        s.files_on_disk,
        mib(s.bytes_on_disk),
        s.skipped.len(),
        s.elapsed.as_millis()
    ));
    for line in skipped_lines(&s.skipped) {
        say(&line);
    }
    if !encoded.is_empty() {
        say(&format!("compressed: {}", encoded.join(", ")));
    }
}

/// One line per kind of skipped path: how many, the first few, and the
/// option that would serve them, so a page that breaks for a missing file
/// does not leave its owner guessing.
fn skipped_lines(skipped: &[tachyon_snapshot::Skipped]) -> Vec<String> {
    const SHOWN: usize = 3;
    let mut reasons: Vec<_> = skipped.iter().map(|s| s.reason).collect();
    reasons.sort();
    reasons.dedup();
    reasons
        .into_iter()
        .map(|reason| {
            let paths: Vec<_> = skipped.iter().filter(|s| s.reason == reason).collect();
            let mut names: Vec<String> = paths
                .iter()
                .take(SHOWN)
                .map(|s| s.path.display().to_string())
                .collect();
            if paths.len() > SHOWN {
                names.push(format!("and {} more", paths.len() - SHOWN));
            }
            let hint = reason
                .option()
                .map_or(String::new(), |o| format!(" (served with {o})"));
            format!(
                "skipped {} {}{hint}: {}",
                paths.len(),
                reason.describe(),
                names.join(", ")
            )
        })
        .collect()
}

/// Tells systemd (`NOTIFY_SOCKET`, set for `Type=notify` units) where the
/// server is; nothing happens without it.
pub(crate) fn notify(states: &[sd_notify::NotifyState<'_>]) {
    let _ = sd_notify::notify(false, states);
}

/// `--log-json`: the server's own messages as JSON lines.
static JSON_MESSAGES: AtomicBool = AtomicBool::new(false);

/// A message as one JSON object: `{"ts":…,"level":…,"msg":…}`.
fn json_message(level: &str, line: &str) -> String {
    let ts = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap_or_default()
        .as_secs_f64();
    serde_json::json!({ "ts": ts, "level": level, "msg": line }).to_string()
}

/// Prints a line to stdout, ignoring a closed or full pipe: a server must not
/// die because whoever started it stopped reading (println! would panic).
pub(crate) fn say(line: &str) {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    if JSON_MESSAGES.load(Ordering::Relaxed) {
        let _ = writeln!(out, "{}", json_message("info", line));
    } else {
        let _ = writeln!(out, "{line}");
    }
    let _ = out.flush();
}

/// `http://127.0.0.1:8080/`, or for a wildcard address the loopback URL to
/// open plus a note that every interface listens.
fn url_line(Endpoint { addr, scheme }: Endpoint) -> String {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let scheme = match scheme {
        Scheme::Http => "http",
        Scheme::Https => "https",
    };
    let open = match addr.ip() {
        IpAddr::V4(ip) if ip.is_unspecified() => (IpAddr::V4(Ipv4Addr::LOCALHOST), true),
        IpAddr::V6(ip) if ip.is_unspecified() => (IpAddr::V6(Ipv6Addr::LOCALHOST), true),
        ip => (ip, false),
    };
    let shown = std::net::SocketAddr::new(open.0, addr.port());
    if open.1 {
        format!("{scheme}://{shown}/ (listening on {addr}, all interfaces)")
    } else {
        format!("{scheme}://{shown}/")
    }
}

/// Like `say`, on stderr, prefixed with the program name.
pub(crate) fn warn(line: &str) {
    use std::io::Write;
    if JSON_MESSAGES.load(Ordering::Relaxed) {
        let _ = writeln!(std::io::stderr().lock(), "{}", json_message("warn", line));
    } else {
        let _ = writeln!(std::io::stderr().lock(), "tachyon: {line}");
    }
}
