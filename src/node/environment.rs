//! What belongs to one Node environment (the main thread's, or a worker's): the stdio
//! children its sources started, killed when the environment is torn down without `close()`.

use crate::transport::process::Children;
use napi::sys;
use std::cell::RefCell;
use std::sync::Arc;

thread_local! {
    /// The environment of this JS thread (the main thread's, or a worker's) and its children.
    /// Keyed by the environment, so an embedder that makes a new one on the same thread after
    /// the first was torn down gets a fresh set with its own cleanup hook.
    static CHILDREN: RefCell<Option<(usize, Arc<Children>)>> = const { RefCell::new(None) };
}

/// The children of the environment `env`; the first call for it registers the cleanup hook
/// that kills them when the environment is torn down without `close()`. A worker's exit so
/// ends only the children its own sources started.
pub(super) fn environment_children(env: sys::napi_env) -> Arc<Children> {
    /// SAFETY (of its callers): Node calls it once, on the environment's thread as it is torn
    /// down, with the `data` it was registered with below, an `Arc<Children>` leaked for it.
    unsafe extern "C" fn cleanup(data: *mut std::ffi::c_void) {
        // SAFETY: `data` is the `Arc` leaked below, taken back exactly once.
        let children = unsafe { Arc::from_raw(data as *const Children) };
        children.kill_all();
    }
    CHILDREN.with(|slot| {
        let mut slot = slot.borrow_mut();
        match &*slot {
            Some((owner, children)) if *owner == env as usize => children.clone(),
            _ => {
                let children = Children::new();
                let data = Arc::into_raw(children.clone()) as *mut std::ffi::c_void;
                // SAFETY: `env` is the live env of the call this runs in (the constructor of a
                // source), on its thread. `data` is a strong count leaked for this registration
                // alone, and Node calls the hook once per registration: each count is taken back
                // once. A pointer to a live, leaked `Arc` is never another registration's, so no
                // `(cleanup, data)` pair is registered twice (which Node refuses by aborting).
                unsafe { sys::napi_add_env_cleanup_hook(env, Some(cleanup), data) };
                *slot = Some((env as usize, children.clone()));
                children
            }
        }
    })
}
