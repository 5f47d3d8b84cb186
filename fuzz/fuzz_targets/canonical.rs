#![no_main]
//! Any JSON a server could send as a schema: canonicalization refuses or succeeds, never panics,
//! and where the streaming path vouches for a schema it writes exactly the full walk's text.

use libfuzzer_sys::fuzz_target;
use rulvar_mcp_native::core::{canonical, jcs};

fuzz_target!(|data: &[u8]| {
    if let Ok(schema) = serde_json::from_slice::<serde_json::Value>(data) {
        let built = canonical::canonicalize(&schema);
        if canonical::certainly_canonical(&schema) {
            let mut streamed = String::new();
            canonical::write_canonical_jcs(&mut streamed, &schema);
            let built = built.as_ref().expect("vouched for, so it canonicalizes");
            assert_eq!(streamed, jcs::serialize(built));
        }
        if let Ok(out) = built {
            let _ = jcs::serialize(&out);
        }
    }
});
