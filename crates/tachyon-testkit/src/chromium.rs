//! Headless Chromium as the specs and the benchmark run it: which binary,
//! and the flags that make a quiet, throwaway browser of it.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian's headless shell first, then a full Chromium.
pub fn binary() -> Option<PathBuf> {
    ["chromium-headless-shell", "chromium", "chromium-browser"]
        .iter()
        .flat_map(|name| ["/usr/bin", "/usr/local/bin"].map(|dir| Path::new(dir).join(name)))
        .find(|path| path.exists())
}

/// `browser` headless, trusting any certificate, with no first-run work,
/// no background traffic and a profile of its own in `profile`.
pub fn headless(browser: &Path, profile: &Path) -> Command {
    let mut command = Command::new(browser);
    command
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--ignore-certificate-errors",
            "--no-first-run",
            "--disable-background-networking",
            "--disable-component-update",
            "--disable-sync",
        ])
        .arg(format!("--user-data-dir={}", profile.display()));
    command
}
