//! Building the variants of a site that was served before they existed.
//!
//! Owns the order variants are built in and when the ones built so far are
//! swapped in; not how a variant is encoded (the snapshot crate) nor how a
//! generation is built and published (the [`Reloader`]). Invariant: every
//! publication is a whole generation built by the reloader, so a
//! representation appears with its own ETag, length and `Vary` at once, and
//! the last publication is a full build that leaves nothing pending.

use std::cmp::Reverse;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tachyon_http::encoding::Coding;
use tachyon_snapshot::PendingVariant;

use crate::reload::Reloader;

/// Variants built between two checks of the clock.
const CHUNK: usize = 32;

/// The first publication's delay; each next one waits twice as long, up to
/// [`MAX_INTERVAL`]. A publication rebuilds the generation from the files
/// (0.2 s of a core for 10,000 files / 200 MiB), so a fixed short interval
/// would spend a core on rebuilds; a fixed long one would keep clients
/// waiting for variants that are ready.
const FIRST_INTERVAL: Duration = Duration::from_secs(1);
const MAX_INTERVAL: Duration = Duration::from_secs(8);

/// Builds `jobs` on low-priority threads (nice 10, so the workers keep the
/// cores they need), swapping in what is built at growing intervals and
/// whenever a coding is done for every file, then a last full build.
/// Returns at once; the reloader builds only known variants until then.
pub fn compress(reloader: Arc<Reloader>, jobs: Vec<(usize, PendingVariant)>) {
    reloader.set_compressing(true);
    let pool = rayon::ThreadPoolBuilder::new()
        .thread_name(|i| format!("tachyon-compress-{i}"))
        .start_handler(|_| {
            // Linux applies PRIO_PROCESS to the calling thread alone.
            let _ = rustix::process::setpriority_process(None, 10);
        })
        .build();
    let worker = Arc::clone(&reloader);
    let spawned = std::thread::Builder::new()
        .name("tachyon-compress".into())
        .spawn(move || {
            let work = || {
                build_in_order(&worker, jobs);
                worker.set_compressing(false);
                worker.reload("variants built in the background");
            };
            match pool {
                Ok(pool) => pool.install(work),
                Err(_) => work(),
            }
        });
    if let Err(err) = spawned {
        reloader.set_compressing(false);
        crate::warn(&format!("not compressing in the background: {err}"));
    }
}

/// Fastest win first: every file's gzip (tens of MB/s at level 9) before
/// any zstd-19 or brotli-11 (a few MB/s and about 1 MB/s per core), so
/// every client that accepts a coding gets a compressed answer within
/// seconds; the denser codings then replace it for the clients that prefer
/// them. Within a coding, the largest files first: the most bytes saved
/// per response.
/// The dictionary deltas come last: they help only the clients that hold
/// an earlier version, and zstd's before brotli's (faster to build).
fn rank(coding: Coding) -> u8 {
    match coding {
        Coding::Gzip => 0,
        Coding::Zstd => 1,
        Coding::Br => 2,
        Coding::Dcz => 3,
        Coding::Dcb => 4,
    }
}

fn build_in_order(reloader: &Reloader, mut jobs: Vec<(usize, PendingVariant)>) {
    use rayon::prelude::*;
    jobs.sort_by_key(|(_, job)| (rank(job.coding()), Reverse(job.len())));
    let mut progress = Progress::of(&jobs);
    let mut interval = FIRST_INTERVAL;
    let mut last = Instant::now();
    let tiers = jobs.chunk_by(|(_, a), (_, b)| a.coding() == b.coding());
    for chunk in tiers.flat_map(|tier| tier.chunks(CHUNK)) {
        chunk
            .par_iter()
            .for_each(|(root, job)| job.build(reloader.cache(*root)));
        // A chunk holds one coding's variants, so the chunk that completes
        // a coding is the one after which it is done.
        let coding = chunk[0].1.coding() as usize;
        progress.built[coding] += chunk.len();
        let coding_finished = progress.built[coding] == progress.total[coding];
        let done: usize = progress.built.iter().sum();
        if done < jobs.len() && (coding_finished || last.elapsed() >= interval) {
            reloader.publish_known(&progress.describe());
            last = Instant::now();
            interval = (interval * 2).min(MAX_INTERVAL);
        }
    }
}

/// Variants built and to build, per coding (indexed by `Coding as usize`,
/// which is [`Coding::EVERY`] order).
struct Progress {
    built: [usize; Coding::EVERY.len()],
    total: [usize; Coding::EVERY.len()],
}

impl Progress {
    fn of(jobs: &[(usize, PendingVariant)]) -> Progress {
        let mut total = [0; Coding::EVERY.len()];
        for (_, job) in jobs {
            total[job.coding() as usize] += 1;
        }
        Progress {
            built: [0; Coding::EVERY.len()],
            total,
        }
    }

    /// "gzip 5500 of 5500, zstd 64 of 5500, br 0 of 5500", in build order.
    fn describe(&self) -> String {
        let mut order = Coding::EVERY;
        order.sort_by_key(|&c| rank(c));
        order
            .iter()
            .filter(|&&c| self.total[c as usize] > 0)
            .map(|&c| {
                let i = c as usize;
                format!("{} {} of {}", c.token(), self.built[i], self.total[i])
            })
            .collect::<Vec<_>>()
            .join(", ")
    }
}
