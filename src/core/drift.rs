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
    /// Under `refuse`: the fingerprint of the first import since `close()`. Every later
    /// import must match it, announced or not (a reconnect's sweep, a lost subscription's).
    first: std::sync::Mutex<Option<[u8; 32]>>,
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
    /// An import was made whose tools have `fingerprint` (`admit::fingerprint`). Under
    /// `refuse` the first one since `close()` is the toolset the source hands out until the
    /// next `close()`: one that differs poisons the source, whether or not the server
    /// announced the change (a server that changes its tools and says nothing, then drops
    /// the connection, must not get the new list in by the reconnect's sweep). False when it
    /// poisoned.
    pub fn imported(&self, fingerprint: [u8; 32]) -> bool {
        if !self.refuse {
            return true;
        }
        let mut first = crate::sync::lock(&self.first);
        match *first {
            None => {
                *first = Some(fingerprint);
                true
            }
            Some(known) if known == fingerprint => true,
            Some(_) => {
                self.poisoned.store(true, Ordering::SeqCst);
                false
            }
        }
    }

    /// Whether imports are held to the first (`drift: 'refuse'`).
    pub fn refuses(&self) -> bool {
        self.refuse
    }

    /// `close()` lifts the poison; the generation keeps counting so old snapshots stay stale.
    pub fn reset(&self) {
        *crate::sync::lock(&self.first) = None;
        self.poisoned.store(false, Ordering::SeqCst);
        self.generation.fetch_add(1, Ordering::SeqCst);
    }
}
