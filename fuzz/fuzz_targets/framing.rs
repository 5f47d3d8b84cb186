#![no_main]
//! Server bytes through both framings: SSE events and newline-delimited JSON frames.

use libfuzzer_sys::fuzz_target;
use rulvar_mcp_native::transport::sse::SseParser;
use rulvar_mcp_native::core::drift::Drift;
use rulvar_mcp_native::transport::observe::Inbound;
use std::sync::Arc;

fuzz_target!(|data: &[u8]| {
    let mut parser = SseParser::default();
    let _ = parser.feed(data);
    let (inbound, _rx) = Inbound::new(Arc::new(Drift::new(false)));
    for line in data.split(|&b| b == b'\n') {
        inbound.push_text(line);
    }
});
