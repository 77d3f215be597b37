//! `tachyon-bench setup`: installs the load generators and peer servers from
//! Debian's packages, builds nginx mainline and h2o master from the source
//! archives (`sources`), optionally builds oha and static-web-server from
//! crates.io, then prints what is installed. Idempotent: installed packages
//! and cached builds are skipped.

use std::path::Path;
use std::process::Command;

use anyhow::{bail, Context};

use crate::peers::{which, Peer};

/// Debian packages and the program each provides.
const PACKAGES: [(&str, &str); 17] = [
    ("wrk", "wrk"),
    ("apache2-utils", "ab"),
    ("nghttp2-client", "h2load"),
    ("nginx", "nginx"),
    ("lighttpd", "lighttpd"),
    // lighttpd's TLS module is its own package (the `tls` suite needs it).
    ("lighttpd-mod-openssl", "/usr/lib/lighttpd/mod_openssl.so"),
    ("h2o", "h2o"),
    ("caddy", "caddy"),
    ("apache2", "apache2"),
    ("curl", "curl"),
    // lighttpd's compression (the real-site suites configure it as its
    // users do).
    ("lighttpd-mod-deflate", "/usr/lib/lighttpd/mod_deflate.so"),
    // The real-site suites: Debian's Python documentation, and the browser
    // whose request headers they send.
    ("python3-doc", "/usr/share/doc/python3/html/index.html"),
    ("chromium-headless-shell", "chromium-headless-shell"),
    // What nginx mainline and h2o master are built with.
    ("libssl-dev", "/usr/include/openssl/ssl.h"),
    ("libpcre2-dev", "/usr/include/pcre2.h"),
    ("zlib1g-dev", "/usr/include/zlib.h"),
    ("cmake", "cmake"),
];

pub fn setup(with_sws: bool, with_oha: bool) -> anyhow::Result<()> {
    let missing: Vec<&str> = PACKAGES
        .iter()
        .filter(|(_, program)| which(program).is_none())
        .map(|(p, _)| *p)
        .collect();
    if !missing.is_empty() {
        println!("installing: {}", missing.join(" "));
        let apt = |args: &[&str]| -> anyhow::Result<()> {
            let status = Command::new("apt-get")
                .args(args)
                .env("DEBIAN_FRONTEND", "noninteractive")
                .status()
                .context("running apt-get")?;
            if !status.success() {
                bail!(
                    "apt-get {} failed ({status}); are you root?",
                    args.join(" ")
                );
            }
            Ok(())
        };
        apt(&["update", "-qq"])?;
        let mut args = vec!["install", "-y", "-qq", "--no-install-recommends"];
        args.extend(&missing);
        apt(&args)?;
        // Debian starts the packaged daemons on :80; the benchmark starts its own.
        for service in ["nginx", "lighttpd", "h2o", "apache2"] {
            let _ = Command::new("service").args([service, "stop"]).output();
        }
    }
    for (wanted, program, krate) in [
        (with_oha, "oha", "oha"),
        (with_sws, "static-web-server", "static-web-server"),
    ] {
        if wanted && which(program).is_none() {
            println!("cargo install {krate} (this compiles it; a few minutes on 2 cores)");
            let status = Command::new("cargo")
                .args(["install", "--locked", krate])
                .status()
                .context("running cargo install")?;
            if !status.success() {
                bail!("cargo install {krate} failed");
            }
        }
    }
    for (tool, version) in tool_versions() {
        println!("{tool:>18}  {version}");
    }
    for peer in Peer::ALL.into_iter().filter(|p| p.source().is_some()) {
        if let Err(e) = peer.source().map(|s| s.ensure_built()).transpose() {
            println!("{}: not built: {e:#}", peer.name());
        }
    }
    for peer in Peer::ALL {
        if peer.is_external() {
            println!("{:>18}  {}", peer.name(), version_of(peer));
        }
    }
    Ok(())
}

/// Versions of the load generators (missing ones say so).
pub fn tool_versions() -> Vec<(String, String)> {
    [
        ("wrk", &["-v"][..]),
        ("ab", &["-V"]),
        ("h2load", &["--version"]),
        ("oha", &["--version"]),
    ]
    .iter()
    .map(|(tool, args)| {
        let version = match which(tool) {
            Some(path) => first_line(&path, args),
            None => "not installed".into(),
        };
        (tool.to_string(), version)
    })
    .collect()
}

/// The version line of a peer server.
pub fn version_of(peer: Peer) -> String {
    if peer == Peer::TachyonBaseline {
        return baseline_label();
    }
    let Some(args) = peer.version_args() else {
        return workspace_build(peer);
    };
    let Some(executable) = peer.executable() else {
        return "not installed".into();
    };
    let line = first_line(&executable, args);
    match peer.source() {
        Some(source) => format!(
            "{line} (built from {}: {})",
            source.archive(),
            source.flags()
        ),
        None => line,
    }
}

/// A workspace server's version as its build stamped it (the last commit
/// that changed its sources, and whether they had changes since: see
/// `build/sources_stamp.rs`): what `run --resume` compares so that cells of
/// one run are never measured with two builds of the same server. Read
/// from the binary, not from the checkout, which may have moved on since
/// the build.
fn workspace_build(peer: Peer) -> String {
    if peer == Peer::Floor {
        // The floor is this binary.
        return concat!(env!("CARGO_PKG_VERSION"), env!("FLOOR_SOURCES")).to_string();
    }
    let tachyon = crate::peers::tachyon_bin().unwrap_or_default();
    if !tachyon.is_file() {
        return format!("not built ({} is missing)", tachyon.display());
    }
    let line = first_line(&tachyon, &["--version"]);
    line.strip_prefix("tachyon ").unwrap_or(&line).to_string()
}

/// The baseline is another build whose sources this checkout may not
/// hold: it is named by its file, so that a resumed run refuses a rebuilt
/// one (the workspace's commit, which earlier reports showed, said nothing
/// about it).
fn baseline_label() -> String {
    let Ok(path) = crate::peers::baseline_bin() else {
        return "not set (TACHYON_BASELINE)".into();
    };
    let stamp = std::fs::metadata(&path).ok().map(|m| {
        let modified = m
            .modified()
            .ok()
            .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
            .map_or(0, |d| d.as_secs());
        (m.len(), modified)
    });
    match stamp {
        Some((len, modified)) => format!(
            "{} (TACHYON_BASELINE={}, {len} bytes, modified {})",
            env!("CARGO_PKG_VERSION"),
            path.display(),
            httpdate::fmt_http_date(
                std::time::UNIX_EPOCH + std::time::Duration::from_secs(modified)
            )
        ),
        None => format!("TACHYON_BASELINE={}", path.display()),
    }
}

fn first_line(path: &Path, args: &[&str]) -> String {
    match Command::new(path).args(args).output() {
        Ok(out) => {
            let text = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            text.lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("")
                .trim()
                .to_string()
        }
        Err(e) => format!("unknown ({e})"),
    }
}
