//! A folder of one test's own under the system's temporary folder, emptied
//! when it is made and removed when it is dropped, a panicking test's
//! included. Names carry the test's label, the process id and a counter,
//! so that specs running at once, in one process or several, never share
//! one.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A test's own folder; removed with everything in it on drop.
#[derive(Debug)]
pub struct Scratch {
    path: PathBuf,
}

impl Scratch {
    /// Makes an empty folder labelled `label` (a word naming the test).
    pub fn new(label: &str) -> Scratch {
        static MADE: AtomicUsize = AtomicUsize::new(0);
        let n = MADE.fetch_add(1, Ordering::Relaxed);
        let path =
            std::env::temp_dir().join(format!("tachyon-test-{label}-{}-{n}", std::process::id()));
        // A folder a killed run of the same pid left behind starts empty.
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap_or_else(|e| panic!("making {}: {e}", path.display()));
        Scratch { path }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A scratch is its folder's path wherever one is asked for (`&dir`,
/// `dir.join(..)`).
impl std::ops::Deref for Scratch {
    type Target = Path;

    fn deref(&self) -> &Path {
        &self.path
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.path
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.path);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_scratch_is_its_own_and_gone_after_the_test() {
        let (a, b) = (Scratch::new("spec"), Scratch::new("spec"));
        assert_ne!(a.path(), b.path());
        assert!(a.path().is_dir() && b.path().is_dir());
        std::fs::create_dir_all(a.join("deep/inside")).unwrap();
        std::fs::write(a.join("deep/inside/file"), b"x").unwrap();
        let gone = a.path().to_path_buf();
        drop(a);
        assert!(!gone.exists(), "{} is left", gone.display());
        assert!(b.path().is_dir(), "dropping one leaves the other");
    }

    #[test]
    fn a_panicking_test_leaves_nothing() {
        let kept = std::sync::Mutex::new(PathBuf::new());
        let result = std::panic::catch_unwind(|| {
            let s = Scratch::new("panics");
            *kept.lock().unwrap() = s.path().to_path_buf();
            panic!("the test fails");
        });
        assert!(result.is_err());
        let path = kept.lock().unwrap().clone();
        assert!(!path.as_os_str().is_empty() && !path.exists());
    }
}
