//! `tachyon-bench build`: how long tachyon takes to build its snapshot of a
//! large site, and what the snapshot costs in memory.
//!
//! Generates a mixed site (pages, scripts, styles, data and images, the
//! proportions of a documentation or shop site), starts the release
//! `tachyon` on it several times with and without compression, and times
//! each start until it prints its URL (it serves from then on) and, when
//! it builds its variants in the background, until they are all swapped
//! in. Owns nothing the suites use; figures come only from these runs.

use std::io::{BufRead, BufReader, Lines};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Instant;

use anyhow::{bail, Context};

use crate::proc;
use crate::site::XorShift;

/// Files by kind: (extension, share of files in per mille, mean size, text?).
const KINDS: [(&str, u32, usize, bool); 7] = [
    ("html", 300, 12 * 1024, true),
    ("js", 100, 30 * 1024, true),
    ("css", 50, 10 * 1024, true),
    ("json", 50, 8 * 1024, true),
    ("svg", 50, 4 * 1024, true),
    ("jpg", 300, 0, false),
    ("webp", 150, 0, false),
];

pub struct BuildOptions {
    pub files: usize,
    pub bytes: u64,
    pub rounds: u32,
    pub out: std::path::PathBuf,
}

pub fn build(opts: &BuildOptions) -> anyhow::Result<()> {
    let root = opts.out.join("site");
    let (files, bytes) = generate(&root, opts.files, opts.bytes)?;
    let tachyon = crate::peers::tachyon_bin()?;
    if !tachyon.is_file() {
        bail!(
            "{} not found: cargo build --release -p tachyon",
            tachyon.display()
        );
    }
    println!(
        "site: {files} files, {:.1} MiB, in {}",
        bytes as f64 / 1_048_576.0,
        root.display()
    );
    println!();
    println!("| compression | round | ready after | gzip for every file after | every variant served after | reload (SIGHUP, one file edited) | RSS when ready | peak RSS | tachyon's summary |");
    println!("|---|---|---|---|---|---|---|---|---|");
    let mut rows = Vec::new();
    let cache = opts.out.join("cache");
    for round in 1..=opts.rounds {
        for mode in [Mode::NoCache, Mode::ColdCache, Mode::WarmCache, Mode::Off] {
            if mode == Mode::ColdCache && cache.exists() {
                std::fs::remove_dir_all(&cache)?;
            }
            let start = start_once(&tachyon, &root, mode, &cache)?;
            println!(
                "| {} | {round} | {:.2} s | {} | {} | {:.2} s | {:.0} MiB | {:.0} MiB | {}; {} |",
                mode.label(),
                start.ready_s,
                start
                    .gzip_s
                    .or(start.variants_s)
                    .map_or("at once".into(), |s| format!("{s:.2} s")),
                start
                    .variants_s
                    .map_or("at once".into(), |s| format!("{s:.2} s")),
                start.reload_s,
                start.rss as f64 / 1_048_576.0,
                start.peak_rss as f64 / 1_048_576.0,
                start.loaded,
                start.compressed
            );
            rows.push(serde_json::json!({
                "round": round,
                "compression": mode != Mode::Off,
                "mode": mode.label(),
                "ready_s": start.ready_s,
                "gzip_s": start.gzip_s,
                "variants_s": start.variants_s,
                "reload_s": start.reload_s,
                "rss_bytes": start.rss,
                "peak_rss_bytes": start.peak_rss,
                "loaded_line": start.loaded,
                "compressed_line": start.compressed,
            }));
        }
    }
    let json = serde_json::json!({
        "site": { "files": files, "bytes": bytes },
        "machine": crate::machine::machine_facts(),
        "command": crate::invocation(),
        "rows": rows,
    });
    let path = opts.out.join("build.json");
    std::fs::write(&path, serde_json::to_vec_pretty(&json)?)?;
    println!("\nresults: {}", path.display());
    Ok(())
}

/// How a start compresses, and what it finds in the cache folder.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Variants built, none kept (`--cache-dir off`).
    NoCache,
    /// Variants built into an empty cache folder.
    ColdCache,
    /// The start after `ColdCache`, with the folder it filled.
    WarmCache,
    /// `--no-compress`.
    Off,
}

impl Mode {
    fn label(self) -> &'static str {
        match self {
            Mode::NoCache => "br, zstd, gzip; no cache folder",
            Mode::ColdCache => "br, zstd, gzip; empty cache folder",
            Mode::WarmCache => "br, zstd, gzip; the cache folder filled by the start before",
            Mode::Off => "off",
        }
    }
}

struct Start {
    ready_s: f64,
    /// When the variants were built after serving began: until every
    /// file's gzip was swapped in (they come first), and until all were.
    gzip_s: Option<f64>,
    variants_s: Option<f64>,
    /// From SIGHUP, after editing one page, to the new generation's summary.
    reload_s: f64,
    rss: u64,
    peak_rss: u64,
    loaded: String,
    compressed: String,
}

/// Starts tachyon, waits for its URL line, samples memory, stops it
/// (whatever happened while watching it).
fn start_once(tachyon: &Path, root: &Path, mode: Mode, cache: &Path) -> anyhow::Result<Start> {
    let mut command = Command::new(tachyon);
    command
        .arg(root)
        .args(["--listen", "127.0.0.1:0", "--no-watch"])
        .stdout(Stdio::piped())
        .stderr(Stdio::null());
    match mode {
        Mode::Off => {
            command.args(["--no-compress", "--cache-dir", "off"]);
        }
        Mode::NoCache => {
            command.args(["--cache-dir", "off"]);
        }
        Mode::ColdCache | Mode::WarmCache => {
            command.arg("--cache-dir").arg(cache);
        }
    }
    let started = Instant::now();
    let mut child = command.spawn().context("starting tachyon")?;
    let start = watch(&mut child, root, started);
    let _ = child.kill();
    let _ = child.wait();
    start
}

/// tachyon's start-up lines, from its launch to the first "serving".
struct Serving {
    /// Seconds to "serving" (none: it exited first).
    ready_s: Option<f64>,
    loaded: String,
    compressed: String,
    /// It serves before compressing: the variants come later.
    later: bool,
}

/// Follows a started tachyon through start-up, the background variants
/// and one reload.
fn watch(child: &mut Child, root: &Path, started: Instant) -> anyhow::Result<Start> {
    let pid = child.id();
    let stdout = child.stdout.take().context("tachyon's stdout")?;
    let mut lines = BufReader::new(stdout).lines();
    let mut serving = until_serving(&mut lines, started)?;
    let rss = proc::rss_bytes(pid);
    let (mut gzip_s, mut variants_s) = (None, None);
    if serving.later {
        for line in lines.by_ref() {
            let line = line?;
            if gzip_s.is_none() && gzip_done(&line) {
                gzip_s = Some(started.elapsed().as_secs_f64());
            }
            if let Some(rest) = line.strip_prefix("compressed: ") {
                serving.compressed = rest.to_string();
            } else if line.starts_with("reloaded (") {
                variants_s = Some(started.elapsed().as_secs_f64());
                break;
            }
        }
    }
    let peak_rss = proc::status_bytes(pid, "VmHWM:").unwrap_or(0);
    let Some(ready_s) = serving.ready_s else {
        bail!("tachyon exited before serving {}", root.display());
    };
    Ok(Start {
        ready_s,
        gzip_s,
        variants_s,
        reload_s: reload_after_edit(root, pid, &mut lines)?,
        rss,
        peak_rss,
        loaded: serving.loaded,
        compressed: serving.compressed,
    })
}

/// Reads start-up lines up to "serving" (or the end of output).
fn until_serving(lines: &mut Lines<impl BufRead>, started: Instant) -> anyhow::Result<Serving> {
    let mut serving = Serving {
        ready_s: None,
        loaded: String::new(),
        compressed: String::from("–"),
        later: false,
    };
    for line in lines {
        let line = line?;
        if let Some(rest) = line.strip_prefix("loaded ") {
            serving.loaded = rest.to_string();
        } else if let Some(rest) = line.strip_prefix("compressed: ") {
            serving.compressed = rest.to_string();
        } else if line.starts_with("serving before compressing") {
            serving.later = true;
        } else if line.starts_with("serving ") {
            serving.ready_s = Some(started.elapsed().as_secs_f64());
            break;
        }
    }
    Ok(serving)
}

/// A deploy that changes one page: edit it, then SIGHUP; seconds to the
/// new generation's summary (NaN if none came).
fn reload_after_edit(
    root: &Path,
    pid: u32,
    lines: &mut Lines<impl BufRead>,
) -> anyhow::Result<f64> {
    let page = root.join("d000/html00000.html");
    let mut text = std::fs::read(&page)?;
    text.extend_from_slice(b"\n<!-- edited -->\n");
    std::fs::write(&page, text)?;
    let hup = Instant::now();
    let pid = rustix::process::Pid::from_raw(pid as i32).context("no such process")?;
    rustix::process::kill_process(pid, rustix::process::Signal::HUP)?;
    for line in lines {
        if line?.starts_with("loaded ") {
            return Ok(hup.elapsed().as_secs_f64());
        }
    }
    Ok(f64::NAN)
}

/// Whether a line says every file's gzip variant is served:
/// "variants swapped in (gzip 5500 of 5500, zstd 0 of 5500, …)".
fn gzip_done(line: &str) -> bool {
    let Some(rest) = line.strip_prefix("variants swapped in (gzip ") else {
        return false;
    };
    let mut counts = rest.split([' ', ',']);
    let (built, of, total) = (counts.next(), counts.next(), counts.next());
    of == Some("of") && built.is_some() && built == total
}

/// Writes `files` files totalling about `bytes` under `root`, 100 per
/// directory; images take whatever the text files leave. Deterministic.
fn generate(root: &Path, files: usize, bytes: u64) -> anyhow::Result<(usize, u64)> {
    if root.exists() {
        std::fs::remove_dir_all(root)?;
    }
    let counts: Vec<usize> = KINDS.iter().map(|k| files * k.1 as usize / 1000).collect();
    let text_bytes: u64 = KINDS
        .iter()
        .zip(&counts)
        .filter(|(k, _)| k.3)
        .map(|(k, n)| (k.2 * n) as u64)
        .sum();
    let image_files: usize = KINDS
        .iter()
        .zip(&counts)
        .filter(|(k, _)| !k.3)
        .map(|(_, n)| n)
        .sum();
    let image_mean = (bytes.saturating_sub(text_bytes) / image_files.max(1) as u64) as usize;
    let mut rng = XorShift(0x005E_ED0F_5173);
    let (mut written, mut total) = (0usize, 0u64);
    for (kind, count) in KINDS.iter().zip(&counts) {
        let (ext, _, mean, text) = *kind;
        let mean = if text { mean } else { image_mean };
        for i in 0..*count {
            // Sizes spread from half to one and a half times the mean.
            let len = mean / 2 + (i * 7919) % mean.max(1);
            let dir = root.join(format!("d{:03}", written / 100));
            std::fs::create_dir_all(&dir)?;
            let body = if text {
                crate::site::javascript(&mut rng, len)
            } else {
                rng.bytes(len)
            };
            std::fs::write(dir.join(format!("{ext}{i:05}.{ext}")), &body)?;
            written += 1;
            total += body.len() as u64;
        }
    }
    Ok((written, total))
}

#[cfg(test)]
mod tests {
    use super::gzip_done;

    #[test]
    fn gzip_is_done_when_every_file_has_it() {
        assert!(gzip_done(
            "variants swapped in (gzip 5500 of 5500, zstd 0 of 5500, br 0 of 5500): generation 2"
        ));
        assert!(!gzip_done(
            "variants swapped in (gzip 640 of 5500, zstd 0 of 5500, br 0 of 5500): generation 2"
        ));
        assert!(!gzip_done(
            "reloaded (variants built in the background): generation 9"
        ));
    }
}
