//! Loading the site to serve: the first generation (served before its
//! variants are built when the site is large), every later one built the
//! same way (`load_generation`, which reloads call), the progress and
//! summary lines, and `--check`, which loads without serving.

use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use anyhow::Context;
use tachyon::config::Settings;
use tachyon_server::{Endpoint, Generation};
use tachyon_snapshot::{EncodeCache, LoadOptions, PendingVariant, Progress, Snapshot};

use crate::certs::Tls;
use crate::messages::say;

/// Every root must be a directory before anything is watched or loaded
/// (the loader says the same later; the watcher would first retry a
/// missing root as if it might come back).
pub(crate) fn check_roots(settings: &Settings) -> anyhow::Result<()> {
    let is_dir = |root: &Path| -> anyhow::Result<()> {
        let meta = std::fs::metadata(root)
            .with_context(|| format!("cannot open document root {}", root.display()))?;
        anyhow::ensure!(
            meta.is_dir(),
            "document root {} is not a directory",
            root.display()
        );
        Ok(())
    };
    is_dir(&settings.root)?;
    for host in &settings.hosts {
        is_dir(&host.root).with_context(|| format!("virtual host {}", host.names.join(", ")))?;
    }
    Ok(())
}

/// `--check`: everything `run` reads or binds before serving is read or
/// tried (the site's files, the certificates, each address: a port taken
/// by another program is an error), nothing is compressed and nothing is
/// kept bound.
pub(crate) fn check(settings: &Settings, endpoints: &[Endpoint]) -> anyhow::Result<()> {
    check_roots(settings)?;
    tachyon_server::check_addresses(endpoints)?;
    let caches: Vec<EncodeCache> = (0..=settings.hosts.len())
        .map(|_| EncodeCache::default())
        .collect();
    let mut quick = settings.deferring_variants();
    quick.quiet = true;
    let generation = load_generation(&quick, &caches)?;
    if let Some(tls) = &settings.tls {
        Tls::start(tls, settings.acme.as_ref(), true)?.config(settings)?;
    }
    if let Some(user) = &settings.user {
        crate::privileges::lookup_user(user)?;
    }
    if let Some(acme) = &settings.acme {
        say(&crate::acme::describe(acme));
        if let Some(missing) = challenge_listener_missing(settings, acme.challenge) {
            crate::warn(&missing);
        }
    }
    let files: usize = std::iter::once(generation.default_snapshot())
        .chain(generation.virtual_snapshots())
        .map(|s| s.stats().files)
        .sum();
    say(&format!(
        "ok: {files} files under {} root(s), {} address(es) free to listen on{}",
        1 + settings.hosts.len(),
        endpoints.len(),
        if settings.tls.is_some() {
            ", certificates valid"
        } else {
            ""
        }
    ));
    Ok(())
}

/// Where a public CA connects to validate: port 443 for TLS-ALPN-01, a
/// plain listener on port 80 for HTTP-01 (RFC 8737 §3, RFC 8555 §8.3).
fn challenge_listener_missing(
    settings: &Settings,
    challenge: tachyon::config::Challenge,
) -> Option<String> {
    use tachyon::config::Challenge;
    let (port, addresses, kind) = match challenge {
        Challenge::TlsAlpn01 => (
            443,
            settings
                .tls
                .as_ref()
                .map(|t| t.listen.clone())
                .unwrap_or_default(),
            "HTTPS",
        ),
        Challenge::Http01 => (80, settings.listen.clone(), "plain"),
    };
    if addresses.iter().any(|a| a.port() == port) {
        return None;
    }
    Some(format!(
        "acme: a CA validates {} on port {port}, and no {kind} address listens on it: \
         forward that port here (or use a test CA that connects elsewhere)",
        challenge.name()
    ))
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
pub(crate) fn first_generation(
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

fn summarize(snapshot: &Snapshot) {
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
    if s.dictionaries_offered > 0 {
        let deltas: Vec<String> = tachyon_http::encoding::Coding::DELTAS
            .iter()
            .map(|&c| {
                let i = c as usize;
                format!(
                    "{} {} ({:.1} KiB)",
                    c.token(),
                    s.encoded_files[i],
                    s.encoded_bytes[i] as f64 / 1024.0
                )
            })
            .collect();
        say(&format!(
            "dictionaries: {} files offered ({:.1} MiB kept for the next deploy), {} earlier versions kept ({:.1} MiB), deltas {}",
            s.dictionaries_offered,
            mib(s.versions_kept.current_bytes),
            s.versions_kept.versions,
            mib(s.versions_kept.bytes),
            deltas.join(", ")
        ));
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
