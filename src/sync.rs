//! The one way this crate takes a `std::sync::Mutex`.

use std::sync::{Mutex, MutexGuard};

/// Locks `m`, tolerating poison. A lock is poisoned when a thread panicked while holding it;
/// every panic here is caught before it reaches Node, and each guarded value is left whole at
/// every point a panic could occur (tables, caches, buffers updated by single operations), so
/// refusing the lock for ever would only turn one failed operation into a dead source.
pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}
