#![no_main]
//! Any JSON a server could send as a schema: canonicalization refuses or succeeds, never panics.

use libfuzzer_sys::fuzz_target;
use rulvar_mcp_native::core::{canonical, jcs};

fuzz_target!(|data: &[u8]| {
    if let Ok(schema) = serde_json::from_slice::<serde_json::Value>(data) {
        if let Ok(out) = canonical::canonicalize(&schema) {
            let _ = jcs::serialize(&out);
        }
    }
});
