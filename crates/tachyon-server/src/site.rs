//! The snapshot currently served, swappable as a whole.
//!
//! A reload publishes a new snapshot with one atomic store; each worker
//! notices the bumped generation at the top of its loop and takes the new
//! `Arc`. A request is answered from exactly one snapshot, and responses
//! still being sent keep the entries they reference alive.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use arc_swap::ArcSwap;
use tachyon_snapshot::Snapshot;

/// The shared, swappable current snapshot.
pub struct Site {
    current: ArcSwap<Snapshot>,
    generation: AtomicU64,
}

impl Site {
    /// A site serving `snapshot` as generation 1.
    pub fn new(snapshot: Snapshot) -> Site {
        Site {
            current: ArcSwap::from_pointee(snapshot),
            generation: AtomicU64::new(1),
        }
    }

    /// Publishes a new snapshot; requests parsed after this see only it.
    pub fn publish(&self, snapshot: Snapshot) {
        self.current.store(Arc::new(snapshot));
        self.generation.fetch_add(1, Ordering::Release);
    }

    /// The generation number; cheap enough to read once per loop turn.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    /// The current snapshot.
    pub fn snapshot(&self) -> Arc<Snapshot> {
        self.current.load_full()
    }
}
