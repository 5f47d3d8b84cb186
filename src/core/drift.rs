//! List drift: a `notifications/tools/list_changed` makes the cached tool list stale (a
//! generation counter every snapshot is checked against), and under `drift: 'refuse'` poisons
//! the source until `close()`. The transport layer calls `list_changed` as it reads the
//! notification, before any later message from the same server is processed.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// What one source knows about list drift; shared by every connection it makes.
#[derive(Debug, Default)]
pub struct Drift {
    generation: AtomicU64,
    poisoned: AtomicBool,
    refuse: bool,
}

impl Drift {
    pub fn new(refuse: bool) -> Self {
        Self {
            refuse,
            ..Default::default()
        }
    }
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::SeqCst)
    }
    pub fn poisoned(&self) -> bool {
        self.poisoned.load(Ordering::SeqCst)
    }
    pub fn list_changed(&self) {
        if self.refuse {
            self.poisoned.store(true, Ordering::SeqCst);
        }
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
    /// The cached list may be stale (a modern connection's list-change subscription ended,
    /// so a notification may have been lost): invalidated, but no change is known, so the
    /// drift policy does not poison.
    pub fn stale(&self) {
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
    /// `close()` lifts the poison; the generation keeps counting so old snapshots stay stale.
    pub fn reset(&self) {
        self.poisoned.store(false, Ordering::SeqCst);
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
}
