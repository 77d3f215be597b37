//! The thread that starts successors (binary upgrades), started before the
//! sandbox confines the process: Landlock confines the thread that asks
//! and every thread and process it starts afterwards, never a thread that
//! already runs. A successor started from here begins unconfined and
//! confines itself to the filesystem as it is then, which is what a root
//! deleted and made again, or a root symlink repointed, needs: the new
//! directory is an inode the old rules do not cover.
//!
//! Owns only the running of jobs, one at a time, in order; what a job does
//! is its caller's (`upgrade::Handover`). What it gives up of the sandbox:
//! this one thread is not confined. It opens no file, runs nothing but the
//! jobs handed to it (an upgrade's fork and exec), and waits otherwise; the
//! sandbox guards against a serving thread being led to read what it must
//! not (a path handling bug), which this thread never does.

use std::sync::mpsc;
use std::sync::Mutex;

type Job = Box<dyn FnOnce() + Send>;

/// Hands jobs to the unconfined thread.
pub struct Launcher {
    jobs: Mutex<mpsc::Sender<Job>>,
}

impl Launcher {
    /// Starts the thread; call it before the sandbox.
    pub fn start() -> std::io::Result<Launcher> {
        let (tx, rx) = mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("tachyon-launcher".into())
            .spawn(move || {
                for job in rx {
                    job();
                }
            })?;
        Ok(Launcher {
            jobs: Mutex::new(tx),
        })
    }

    /// Runs `job` on the unconfined thread, after any job before it;
    /// returns at once.
    pub fn run(&self, job: impl FnOnce() + Send + 'static) {
        let jobs = self.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if jobs.send(Box::new(job)).is_err() {
            crate::warn("the launcher thread is gone; nothing can be started");
        }
    }
}
