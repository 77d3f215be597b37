//! Peers built from source: nginx mainline and h2o master, from the
//! archives in `../shared/peers-src/` beside the checkout (or
//! `TACHYON_PEERS_SRC`), built once by `tachyon-bench setup` and cached
//! under `$XDG_CACHE_HOME/tachyon-bench/peers` (else `~/.cache/…`).
//!
//! Owns: finding the archive, building and installing it, and saying
//! where the binary is and how it was configured. Does not own: how the
//! peer is run (`peers`). Invariant: a cached build is used only when its
//! `built.txt` names the archive and flags it was built from, so a new
//! archive or flag is never served by an old binary.

use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{bail, Context};

/// A server built from a source archive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Source {
    NginxMainline,
    H2oMaster,
}

impl Source {
    /// The archive's file name in the sources folder.
    pub fn archive(self) -> &'static str {
        match self {
            Source::NginxMainline => "nginx-1.31.4.tar.gz",
            Source::H2oMaster => "h2o-edd7a12.tar.gz",
        }
    }

    fn unpacked(self) -> &'static str {
        self.archive().trim_end_matches(".tar.gz")
    }

    /// How it is configured, as the report shows it.
    pub fn flags(self) -> &'static str {
        match self {
            Source::NginxMainline => {
                "auto/configure --with-http_ssl_module --with-http_v2_module --with-http_v3_module --with-threads --with-http_gzip_static_module"
            }
            Source::H2oMaster => "cmake -DWITH_MRUBY=OFF -DCMAKE_BUILD_TYPE=Release && make h2o",
        }
    }

    /// The installed binary, relative to the install folder.
    fn binary_in(self) -> &'static str {
        match self {
            Source::NginxMainline => "sbin/nginx",
            Source::H2oMaster => "bin/h2o",
        }
    }

    /// The binary, if it was built from this archive with these flags.
    pub fn binary(self) -> Option<PathBuf> {
        let dir = install_dir(self);
        let stamp = std::fs::read_to_string(dir.join("built.txt")).ok()?;
        let binary = dir.join(self.binary_in());
        (stamp == self.stamp() && binary.is_file()).then_some(binary)
    }

    /// What `built.txt` holds: the archive and the flags.
    fn stamp(self) -> String {
        format!("{}\n{}\n", self.archive(), self.flags())
    }

    /// The nginx build's own `mime.types` (Debian's sits in /etc/nginx).
    pub fn conf_dir(self) -> PathBuf {
        install_dir(self).join("conf")
    }

    /// Builds and installs it unless a build of this archive is cached.
    pub fn ensure_built(self) -> anyhow::Result<PathBuf> {
        if let Some(binary) = self.binary() {
            return Ok(binary);
        }
        let archive = sources_dir().join(self.archive());
        if !archive.is_file() {
            bail!(
                "{} not found: the peers' sources are in ../shared/peers-src beside the checkout, or set TACHYON_PEERS_SRC",
                archive.display()
            );
        }
        let install = install_dir(self);
        let work = install.with_extension("build");
        let _ = std::fs::remove_dir_all(&work);
        let _ = std::fs::remove_dir_all(&install);
        std::fs::create_dir_all(&work)?;
        println!(
            "building {} from {} (a few minutes on 2 cores)",
            self.unpacked(),
            archive.display()
        );
        run(Command::new("tar")
            .arg("xzf")
            .arg(&archive)
            .arg("-C")
            .arg(&work))?;
        let tree = work.join(self.unpacked());
        match self {
            Source::NginxMainline => build_nginx(&tree, &install)?,
            Source::H2oMaster => build_h2o(&tree, &install)?,
        }
        std::fs::write(install.join("built.txt"), self.stamp())?;
        let _ = std::fs::remove_dir_all(&work);
        self.binary()
            .with_context(|| format!("{} built but its binary is missing", self.unpacked()))
    }
}

fn build_nginx(tree: &Path, install: &Path) -> anyhow::Result<()> {
    let configure = if tree.join("configure").is_file() {
        "./configure"
    } else {
        "auto/configure"
    };
    run(Command::new(configure)
        .current_dir(tree)
        .arg(format!("--prefix={}", install.display()))
        .args([
            "--with-http_ssl_module",
            "--with-http_v2_module",
            "--with-http_v3_module",
            "--with-threads",
            // Debian's nginx has it, and the tuned config uses it.
            "--with-http_gzip_static_module",
        ]))?;
    run(Command::new("make").current_dir(tree).arg(jobs()))?;
    run(Command::new("make").current_dir(tree).arg("install"))
}

fn build_h2o(tree: &Path, install: &Path) -> anyhow::Result<()> {
    let build = tree.join("build");
    std::fs::create_dir_all(&build)?;
    run(Command::new("cmake").current_dir(&build).args([
        "..",
        "-DWITH_MRUBY=OFF",
        "-DCMAKE_BUILD_TYPE=Release",
    ]))?;
    run(Command::new("make")
        .current_dir(&build)
        .arg(jobs())
        .arg("h2o"))?;
    let bin = install.join("bin");
    std::fs::create_dir_all(&bin)?;
    std::fs::copy(build.join("h2o"), bin.join("h2o"))?;
    Ok(())
}

fn jobs() -> String {
    let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
    format!("-j{cores}")
}

fn run(command: &mut Command) -> anyhow::Result<()> {
    let shown = format!("{command:?}");
    let out = command
        .output()
        .with_context(|| format!("running {shown}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().rev().take(15).collect();
        bail!(
            "{shown} failed ({}):\n{}",
            out.status,
            tail.into_iter().rev().collect::<Vec<_>>().join("\n")
        );
    }
    Ok(())
}

/// Where the archives are: `TACHYON_PEERS_SRC`, else `../shared/peers-src`
/// beside the checkout.
pub fn sources_dir() -> PathBuf {
    std::env::var_os("TACHYON_PEERS_SRC")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared/peers-src"))
}

/// tachyon-bench's folder in the user's cache: `$XDG_CACHE_HOME/tachyon-bench`,
/// else `~/.cache/tachyon-bench`.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(|| PathBuf::from("/tmp"))
        .join("tachyon-bench")
}

/// Where a build is installed.
fn install_dir(source: Source) -> PathBuf {
    cache_dir().join("peers").join(source.unpacked())
}
