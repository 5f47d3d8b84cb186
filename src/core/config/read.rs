//! The vocabulary every config key is read with: one wording per kind of refusal (a wrong
//! type, an unknown key, a missing or forbidden key, a choice of literals), so a key of any
//! part of the config is refused the same way.

use crate::core::error::{ConfigError, Result};
use crate::core::raw::Raw;

pub(crate) fn refuse(message: String) -> ConfigError {
    ConfigError::new(message)
}

pub(crate) fn positive_integer(key: &str, value: &Raw) -> Result<Option<u64>> {
    match value {
        Raw::Undefined => Ok(None),
        Raw::Number(n) if n.is_finite() && *n > 0.0 && n.fract() == 0.0 => Ok(Some(*n as u64)),
        other => Err(refuse(format!(
            "mcp: '{key}' must be a positive integer, got {}",
            other.display()
        ))),
    }
}

/// Refuses a member of the config object `parent` (a dotted path) that is not one of `known`:
/// a typo would otherwise leave a setting silently unset.
pub(crate) fn only_known_keys(
    parent: &str,
    members: &[(String, Raw)],
    known: &[&str],
) -> Result<()> {
    for (key, value) in members {
        if !value.is_absent() && !known.contains(&key.as_str()) {
            return Err(refuse(format!(
                "mcp: unknown config key '{parent}.{key}'; the keys are {}",
                known
                    .iter()
                    .map(|k| format!("{parent}.{k}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        }
    }
    Ok(())
}

/// One member of a header record as the host gave it.
pub(crate) enum HeaderValue<'a> {
    /// `undefined` or `null`: no such header.
    Absent,
    Text(&'a str),
    /// Anything else, which no header can carry.
    Other,
}

/// The one rule for a record of header values, the config's static one and every record the
/// header hook returns alike: string values are headers, absent or null ones are left out,
/// anything else refuses the record. `Err` names the offending header (never its value).
pub(crate) fn header_record<'a>(
    members: impl IntoIterator<Item = (&'a str, HeaderValue<'a>)>,
) -> std::result::Result<Vec<(String, String)>, String> {
    let mut out = Vec::new();
    for (name, value) in members {
        match value {
            HeaderValue::Absent => {}
            HeaderValue::Text(v) => out.push((name.to_owned(), v.to_owned())),
            HeaderValue::Other => return Err(name.to_owned()),
        }
    }
    Ok(out)
}

pub(crate) fn require(raw: &Raw, transport: &str, key: &str) -> Result<()> {
    let missing = match raw.get(key) {
        Raw::Undefined | Raw::Null => true,
        Raw::String(s) => s.is_empty(),
        _ => false,
    };
    if missing {
        return Err(refuse(format!(
            "mcp: the {transport} transport requires '{key}'"
        )));
    }
    Ok(())
}

pub(crate) fn forbid(raw: &Raw, transport: &str, keys: &[&str]) -> Result<()> {
    for key in keys {
        if !raw.get(key).is_absent() {
            return Err(refuse(format!(
                "mcp: '{key}' is not a config key of the '{transport}' transport (exactly the keys matching the chosen transport)"
            )));
        }
    }
    Ok(())
}

pub(crate) fn non_empty_string(raw: &Raw, key: &str) -> Result<String> {
    match raw.get(key) {
        Raw::String(s) if !s.is_empty() => Ok(s.clone()),
        other => Err(refuse(format!(
            "mcp: '{key}' must be a non-empty string, got {}",
            other.display()
        ))),
    }
}

pub(crate) fn optional_string(raw: &Raw, key: &str) -> Result<Option<String>> {
    match raw.get(key) {
        Raw::Undefined => Ok(None),
        Raw::String(s) => Ok(Some(s.clone())),
        other => Err(refuse(format!(
            "mcp: '{key}' must be a string, got {}",
            other.display()
        ))),
    }
}

pub(crate) fn optional_string_list(raw: &Raw, key: &str) -> Result<Option<Vec<String>>> {
    match raw.get(key) {
        Raw::Undefined => Ok(None),
        Raw::Array(items) => items
            .iter()
            .enumerate()
            .map(|(i, item)| match item {
                Raw::String(s) => Ok(s.clone()),
                other => Err(refuse(format!(
                    "mcp: '{key}' must be an array of strings; element {i} is {}",
                    describe_type(other)
                ))),
            })
            .collect::<Result<Vec<_>>>()
            .map(Some),
        other => Err(refuse(format!(
            "mcp: '{key}' must be an array of strings, got {}",
            describe_type(other)
        ))),
    }
}

pub(crate) fn describe_type(value: &Raw) -> String {
    match value {
        Raw::String(s) => format!("the string '{s}'"),
        Raw::Array(_) => "an array".into(),
        Raw::Object(_) => "an object".into(),
        Raw::Function => "a function".into(),
        other => other.display(),
    }
}

/// A key whose value is one of a few string literals, `default` when absent; anything else is
/// refused as `mcp: '<key>' must be 'a', 'b' or 'c', got '<value>'`.
pub(crate) fn literal<T: Copy>(
    value: &Raw,
    key: &str,
    choices: &[(&str, T)],
    default: T,
) -> Result<T> {
    if let Raw::Undefined = value {
        return Ok(default);
    }
    if let Raw::String(s) = value {
        if let Some((_, v)) = choices.iter().find(|(name, _)| name == s) {
            return Ok(*v);
        }
    }
    let names: Vec<String> = choices.iter().map(|(n, _)| format!("'{n}'")).collect();
    let listed = match names.split_last() {
        Some((last, [])) => last.clone(),
        Some((last, rest)) => format!("{} or {last}", rest.join(", ")),
        None => String::new(),
    };
    Err(refuse(format!(
        "mcp: '{key}' must be {listed}, got '{}'",
        value.display()
    )))
}

pub(crate) fn hook_object(value: &Raw, key: &str, known: &[&str]) -> Result<()> {
    if !matches!(value.get("handler"), Raw::Function) {
        return Err(refuse(format!("mcp: {key}.handler must be a function")));
    }
    if let Raw::Object(members) = value {
        for (name, v) in members {
            if !v.is_absent() && !known.contains(&name.as_str()) {
                return Err(refuse(format!(
                    "mcp: unknown config key '{key}.{name}'; the keys are {}",
                    known.join(", ")
                )));
            }
        }
    }
    Ok(())
}

pub(crate) fn flag(value: &Raw, key: &str, name: &str, default: bool) -> Result<bool> {
    boolean(value.get(name), &format!("{key}.{name}"), default)
}

/// A boolean at `path` (as the refusal names it), `default` when absent.
pub(crate) fn boolean(value: &Raw, path: &str, default: bool) -> Result<bool> {
    match value {
        Raw::Undefined => Ok(default),
        Raw::Bool(b) => Ok(*b),
        other => Err(refuse(format!(
            "mcp: {path} must be a boolean, got {}",
            describe_type(other)
        ))),
    }
}

pub(crate) fn count(value: &Raw, key: &str, name: &str) -> Result<Option<u64>> {
    match value.get(name) {
        Raw::Undefined => Ok(None),
        Raw::Number(n) if *n >= 1.0 && n.fract() == 0.0 && *n <= 9_007_199_254_740_991.0 => {
            Ok(Some(*n as u64))
        }
        other => Err(refuse(format!(
            "mcp: {key}.{name} must be a positive integer, got {}",
            other.display()
        ))),
    }
}
