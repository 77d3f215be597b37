//! The build stamp of a workspace binary: the last commit that changed its
//! sources and whether they had changes since, read from git when the
//! binary is built, so that `--version` (and every tachyon-bench report
//! that names a build) describes the tree the binary came from, not the
//! tree around it when it runs. Shared by the build scripts of `tachyon`
//! and `tachyon-bench`; it writes nothing but cargo's instructions.
//!
//! Outside a git checkout (a source archive, a container build without
//! git) the stamp is empty and the version is the package's alone.

use std::path::Path;
use std::process::Command;

/// Sets `env` for the crate to `" (sources at <commit>[, modified])"`, or
/// to "" when git cannot tell, for the sources at `paths` (relative to the
/// workspace root), and asks cargo to stamp again when they, the index or
/// the checked-out commit change.
pub fn stamp(env: &str, paths: &[&str]) {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    for path in paths {
        println!("cargo:rerun-if-changed={}", workspace.join(path).display());
    }
    let git = |args: &[&str]| {
        Command::new("git")
            .arg("-C")
            .arg(&workspace)
            // Reads only: a refreshed index would set this script off again.
            .arg("--no-optional-locks")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    if let Some(dir) = git(&["rev-parse", "--absolute-git-dir"]) {
        // A commit or a checkout changes no source file's time, only these.
        println!("cargo:rerun-if-changed={dir}/HEAD");
        println!("cargo:rerun-if-changed={dir}/index");
    }
    let in_paths = |args: &[&str]| {
        let mut all = args.to_vec();
        all.push("--");
        all.extend_from_slice(paths);
        git(&all)
    };
    let text = match (
        in_paths(&["log", "-1", "--format=%h"]),
        in_paths(&["status", "--porcelain"]),
    ) {
        (Some(commit), Some(changes)) if !commit.is_empty() => {
            let dirty = if changes.is_empty() { "" } else { ", modified" };
            format!(" (sources at {commit}{dirty})")
        }
        _ => String::new(),
    };
    println!("cargo:rustc-env={env}={text}");
}
