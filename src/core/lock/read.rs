//! Reading a lock's text at `mcp()`: its version, source, config and era at once, the text
//! kept for its entries (`pinned`), which are read later on a thread of the source's.

use super::pinned::{self, ToolsText};
use super::{refusal, shown, Lock, Result, LOCK_VERSION};
use serde_json::value::RawValue;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::{Mutex, OnceLock};

/// Parses a lock's JSON text; `origin` names it in a refusal (the file, or "the lock object").
/// The text is kept, not copied: its `tools` member is read later (`Lock::pinned`).
pub fn parse(text: impl Into<String>, origin: &str) -> Result<Lock> {
    let text: String = text.into();
    let bad = |what: String| refusal(origin, what);
    let top: BTreeMap<String, &RawValue> = match serde_json::from_str(&text) {
        Ok(top) => top,
        Err(e) => {
            // Not an object, or not JSON: say which.
            return Err(bad(match serde_json::from_str::<Value>(&text) {
                Ok(_) => "not a JSON object".into(),
                Err(_) => format!("not JSON ({e})"),
            }));
        }
    };
    let member = |key: &str| {
        top.get(key)
            .and_then(|raw| serde_json::from_str::<Value>(raw.get()).ok())
    };
    let version = member("lockVersion");
    if version.as_ref().and_then(Value::as_u64) != Some(LOCK_VERSION) {
        return Err(bad(format!(
            "'lockVersion' must be {LOCK_VERSION}, got {}",
            shown(version.as_ref())
        )));
    }
    let object = |key: &str| match member(key) {
        Some(v @ Value::Object(_)) => Ok(v),
        other => Err(bad(format!(
            "'{key}' must be an object, got {}",
            shown(other.as_ref())
        ))),
    };
    let source = object("source")?;
    let config = object("config")?;
    let tools = match top.get("tools") {
        Some(raw) if raw.get().starts_with('[') => *raw,
        _ => {
            return Err(bad(format!(
                "'tools' must be an array, got {}",
                shown(member("tools").as_ref())
            )))
        }
    };
    let era = match member("era") {
        None => None,
        Some(Value::String(era)) => Some(era),
        other => {
            return Err(bad(format!(
                "'era' must be a string, got {}",
                shown(other.as_ref())
            )))
        }
    };
    let at = pinned::span(&text, tools);
    Ok(Lock {
        source,
        config,
        era,
        origin: origin.to_owned(),
        raw: Mutex::new(Some(ToolsText::new(text, at))),
        pinned: OnceLock::new(),
    })
}
