//! `nativeMemory`: the addon's own memory, as its allocator accounts for it, for the
//! benchmarks' soak (bench/soak.mjs) to tell apart from V8's heap and the rest of RSS.

use napi::Env;
use napi_derive::napi;

/// `{ committedBytes, liveBytes, externalBytes, snapshots, returns, hooksAwaited }` as JSON
/// text: what the allocator holds from the system, of it what is live (`null` unless the addon
/// was built with the `alloc-count` feature), the native memory V8 counts as kept by JS objects
/// (what addons, this one among them, told it: V8's own figure, `null` if it would not say),
/// how many imports' snapshots are alive (each holds its tools until the last ToolDef built
/// from it is collected), how many times a thread handed the allocator's freed memory back to
/// the system, and how many host hooks' answers are awaited.
#[napi(js_name = "nativeMemory", catch_unwind)]
pub fn native_memory(env: Env) -> String {
    let memory = crate::allocator::memory();
    serde_json::json!({
        "committedBytes": memory.committed,
        "liveBytes": memory.live,
        "externalBytes": env.adjust_external_memory(0).ok(),
        "snapshots": crate::source::alive(),
        "returns": crate::allocator::returns(),
        "hooksAwaited": super::jsthread::hooks_awaited(),
    })
    .to_string()
}
