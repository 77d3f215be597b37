//! The TCP congestion control a run's servers are under. Every server,
//! tachyon and the floor included, takes the system's
//! (`net.ipv4.tcp_congestion_control`): peers cannot choose theirs, and a
//! pacing one (BBR) moved a peer's cost per 10 MiB response by 5× against
//! cubic where tachyon's own connections were cubic either way
//! (bench/results/congestion-all-cubic-2026-12-02). `run --congestion`
//! sets the system's for the run and puts the previous one back when the
//! run ends, interrupted or not.
//!
//! A run killed outright (SIGKILL, a crash) cannot put it back, so the
//! value to put back is also written to a note in tachyon-bench's cache
//! while the run holds the setting: the next run with `--congestion` puts
//! back the note's value, not the one the killed run left, and a run
//! without it says what was left.
//!
//! Owns that setting alone; the machine facts record what the run was
//! under. Invariant: a [`ForTheRun`] that was made is put back on drop.

use std::path::{Path, PathBuf};

use anyhow::Context;

/// The system's congestion control.
pub const SYSCTL: &str = "/proc/sys/net/ipv4/tcp_congestion_control";

/// The system's congestion control, set for one run.
#[derive(Debug)]
pub struct ForTheRun {
    path: PathBuf,
    previous: String,
    /// Holds `previous` while the run lasts (see the module's note).
    note: PathBuf,
}

/// Where a run that changed the setting notes the value to put back.
fn note_path() -> PathBuf {
    crate::sources::cache_dir().join("congestion-to-put-back")
}

/// The value a run that did not end noted, if one did.
fn left_by_a_killed_run(note: &Path) -> Option<String> {
    let value = std::fs::read_to_string(note).ok()?;
    let value = value.trim();
    (!value.is_empty()).then(|| value.to_string())
}

/// For a run without `--congestion`: a warning when a run killed before
/// it ended left the system's congestion control changed.
pub fn left_changed() -> Option<String> {
    let before = left_by_a_killed_run(&note_path())?;
    let now = std::fs::read_to_string(SYSCTL).ok()?;
    let now = now.trim();
    (now != before).then(|| {
        format!(
            "the system's TCP congestion control is {now}, left by a run that was killed \
             (it was {before}): sysctl -w net.ipv4.tcp_congestion_control={before}"
        )
    })
}

impl ForTheRun {
    /// Sets the system's congestion control to `name` (needs root; the
    /// kernel loads the algorithm's module when it is not loaded yet).
    pub fn set(name: &str) -> anyhow::Result<ForTheRun> {
        Self::set_at(Path::new(SYSCTL), &note_path(), name)
    }

    fn set_at(path: &Path, note: &Path, name: &str) -> anyhow::Result<ForTheRun> {
        anyhow::ensure!(
            !name.is_empty()
                && name
                    .bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'),
            "--congestion {name:?} is not a congestion control's name (e.g. cubic, reno, bbr)"
        );
        let now = std::fs::read_to_string(path)
            .with_context(|| format!("--congestion: reading {}", path.display()))?
            .trim()
            .to_string();
        let previous = match left_by_a_killed_run(note) {
            Some(before) if before != now => {
                eprintln!("a run that was killed left the TCP congestion control {now}; {before} is put back when this one ends");
                before
            }
            _ => now,
        };
        std::fs::write(path, name).with_context(|| {
            format!(
                "--congestion {name}: writing {} (needs root; the name must be one the kernel has, \
                 see /proc/sys/net/ipv4/tcp_available_congestion_control)",
                path.display()
            )
        })?;
        if let Some(folder) = note.parent() {
            let _ = std::fs::create_dir_all(folder);
        }
        if let Err(e) = std::fs::write(note, &previous) {
            eprintln!(
                "could not note {previous} in {} ({e}): a killed run would leave {name}",
                note.display()
            );
        }
        if previous != name {
            eprintln!("TCP congestion control {name} for this run (was {previous}; put back when it ends)");
        }
        Ok(ForTheRun {
            path: path.to_path_buf(),
            previous,
            note: note.to_path_buf(),
        })
    }
}

impl Drop for ForTheRun {
    fn drop(&mut self) {
        match std::fs::write(&self.path, &self.previous) {
            Ok(()) => {
                let _ = std::fs::remove_file(&self.note);
            }
            Err(e) => eprintln!(
                "could not put the TCP congestion control back to {} ({e}): \
                 sysctl -w net.ipv4.tcp_congestion_control={}",
                self.previous, self.previous
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use tachyon_testkit::Scratch;

    use super::*;

    /// A stand-in for the sysctl in a folder of the test's own (removed
    /// with the folder).
    fn sysctl_file(value: &str) -> (Scratch, PathBuf) {
        let dir = Scratch::new("congestion");
        let path = dir.join("tcp_congestion_control");
        std::fs::write(&path, value).unwrap();
        (dir, path)
    }

    /// The note beside the stand-in.
    fn note(sysctl: &Path) -> PathBuf {
        sysctl.with_file_name("note")
    }

    #[test]
    fn a_congestion_control_set_for_the_run_is_put_back_when_it_ends() {
        let (_dir, path) = sysctl_file("bbr\n");
        let run = ForTheRun::set_at(&path, &note(&path), "cubic").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "cubic");
        drop(run);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "bbr");
    }

    #[test]
    fn the_run_after_a_killed_one_puts_back_what_was_there_before_both() {
        let (_dir, path) = sysctl_file("bbr\n");
        let killed = ForTheRun::set_at(&path, &note(&path), "cubic").unwrap();
        assert_eq!(std::fs::read_to_string(note(&path)).unwrap(), "bbr");
        // SIGKILL: no drop, the system left at cubic.
        std::mem::forget(killed);
        let next = ForTheRun::set_at(&path, &note(&path), "reno").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "reno");
        drop(next);
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "bbr");
        assert!(!note(&path).exists(), "the note outlived a run that ended");
    }

    #[test]
    fn a_name_that_is_not_an_algorithms_is_refused_before_anything_is_written() {
        let (_dir, path) = sysctl_file("bbr\n");
        for bad in ["", "cubic\nreno", "../cubic", "Cubic"] {
            let e = ForTheRun::set_at(&path, &note(&path), bad)
                .unwrap_err()
                .to_string();
            assert!(e.contains("is not a congestion control's name"), "{e}");
        }
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "bbr\n");
    }

    #[test]
    fn a_system_without_the_setting_is_named_in_the_error() {
        let (_dir, path) = sysctl_file("bbr\n");
        // A folder where the file should be: reading it fails as a missing
        // sysctl would.
        let dir = path.parent().unwrap();
        let e = ForTheRun::set_at(dir, &note(&path), "cubic")
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("--congestion: reading"), "{e}");
    }
}
