//! The build stamp of a workspace binary: the last commit that changed its
//! sources and whether they had changes since, read from git when the
//! binary is built, so that `--version` (and every tachyon-bench report
//! that names a build) describes the tree the binary came from, not the
//! tree around it when it runs. Shared by the build scripts of `tachyon`
//! and `tachyon-bench`, and by the spec that checks the stamp; it writes
//! nothing but cargo's instructions.
//!
//! Outside a git checkout (a source archive, a container build without
//! git) the stamp is empty and the version is the package's alone.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The server's sources, relative to the workspace root: every crate it is
/// built from, and the locked dependencies.
pub const TACHYON: &[&str] = &[
    "crates/tachyon",
    "crates/tachyon-http",
    "crates/tachyon-server",
    "crates/tachyon-snapshot",
    "crates/tachyon-sys",
    "Cargo.lock",
];

/// The floor server's: the one file of tachyon-bench it is.
pub const FLOOR: &[&str] = &["crates/tachyon-bench/src/floor.rs"];

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn git(args: &[&str]) -> Option<String> {
    Command::new("git")
        .arg("-C")
        .arg(workspace())
        // Reads only: a refreshed index would set the build script off again.
        .arg("--no-optional-locks")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// `" (sources at <commit>[, modified])"` for the sources at `paths` as
/// the checkout holds them now, or "" when git cannot tell.
pub fn describe(paths: &[&str]) -> String {
    let in_paths = |args: &[&str]| {
        let mut all = args.to_vec();
        all.push("--");
        all.extend_from_slice(paths);
        git(&all)
    };
    match (
        in_paths(&["log", "-1", "--format=%h"]),
        in_paths(&["status", "--porcelain"]),
    ) {
        (Some(commit), Some(changes)) if !commit.is_empty() => {
            let dirty = if changes.is_empty() { "" } else { ", modified" };
            format!(" (sources at {commit}{dirty})")
        }
        _ => String::new(),
    }
}

/// Sets `env` for the crate being built to [`describe`]'s text, and asks
/// cargo to stamp again when the sources, the index or the checked-out
/// commit change.
pub fn stamp(env: &str, paths: &[&str]) {
    for path in paths {
        println!(
            "cargo:rerun-if-changed={}",
            workspace().join(path).display()
        );
    }
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        // A commit or a checkout changes no source file's time, only these.
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
    }
    println!("cargo:rustc-env={env}={}", describe(paths));
}
