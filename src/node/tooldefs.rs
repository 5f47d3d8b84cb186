//! The admitted tools as the JSON text the JS side turns into ToolDef objects.
//!
//! One `JSON.parse` of this text is far cheaper than building thousands of schema objects
//! through N-API, and it yields plain objects and arrays, the only values the engine's canonical
//! JSON serializer accepts.

use crate::core::admit::ToolSpec;
use crate::core::jcs::write_string;

pub fn tools_json(tools: &[ToolSpec]) -> String {
    let mut out = String::with_capacity(tools.len() * 256);
    write_tools(&mut out, tools);
    out
}

/// `[sweep, start, tools]`: tools `start..` of sweep `sweep`, as they were admitted.
pub fn listed_json(sweep: u64, start: usize, tools: &[ToolSpec]) -> String {
    let mut out = String::with_capacity(tools.len() * 256 + 32);
    out.push('[');
    out.push_str(&sweep.to_string());
    out.push(',');
    out.push_str(&start.to_string());
    out.push(',');
    write_tools(&mut out, tools);
    out.push(']');
    out
}

fn write_tools(out: &mut String, tools: &[ToolSpec]) {
    out.push('[');
    for (i, tool) in tools.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str("{\"name\":");
        write_string(out, &tool.name);
        // The name the server knows it by, when the config renamed it (tracing names it so).
        if tool.original != tool.name {
            out.push_str(",\"original\":");
            write_string(out, &tool.original);
        }
        out.push_str(",\"description\":");
        write_string(out, &tool.description);
        out.push_str(",\"parameters\":");
        out.push_str(tool.input.json());
        out.push_str(",\"needsApproval\":");
        out.push_str(if tool.needs_approval { "true" } else { "false" });
        if let Some(risk) = &tool.risk {
            out.push_str(",\"risk\":");
            write_string(out, risk);
        }
        out.push('}');
    }
    out.push(']');
}

/// Why tool `tool`'s input or output runs without a validator, as JSON text `{ input?, output? }`,
/// or `None` when both have one. Asking compiles what has not been compiled yet.
pub fn unvalidated_json(tool: &ToolSpec) -> Option<String> {
    let reasons = [
        ("input", tool.input.unvalidated()),
        ("output", tool.output.as_ref().and_then(|o| o.unvalidated())),
    ];
    let mut out = String::new();
    for (key, reason) in reasons {
        if let Some(reason) = reason {
            out.push(if out.is_empty() { '{' } else { ',' });
            write_string(&mut out, key);
            out.push(':');
            write_string(&mut out, reason);
        }
    }
    (!out.is_empty()).then(|| out + "}")
}
