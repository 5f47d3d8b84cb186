//! What belongs to one Node environment (the main thread's, or a worker's): the stdio
//! children its sources started, killed when the environment is torn down without `close()`.

use crate::transport::process::Children;
use napi::sys;
use std::sync::Arc;

thread_local! {
    /// This thread's Node environment's children (one environment per JS thread: the main
    /// thread's, or a worker's).
    static CHILDREN: std::cell::OnceCell<Arc<Children>> = const { std::cell::OnceCell::new() };
}

/// The children of the environment `env`; the first call registers the cleanup hook that kills
/// them when the environment is torn down without `close()`. A worker's exit so ends only the
/// children its own sources started.
pub(super) fn environment_children(env: sys::napi_env) -> Arc<Children> {
    unsafe extern "C" fn cleanup(data: *mut std::ffi::c_void) {
        // SAFETY: `data` is the `Arc` leaked below, taken back exactly once.
        let children = unsafe { Arc::from_raw(data as *const Children) };
        children.kill_all();
    }
    CHILDREN.with(|cell| {
        cell.get_or_init(|| {
            let children = Children::new();
            let data = Arc::into_raw(children.clone()) as *mut std::ffi::c_void;
            unsafe { sys::napi_add_env_cleanup_hook(env, Some(cleanup), data) };
            children
        })
        .clone()
    })
}
