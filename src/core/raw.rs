//! A JavaScript value as the config checks see it: what `typeof` and `String(v)` would say.
//!
//! The node layer builds it from the host's config object; the core decides on it without
//! knowing about JS, so `cargo test` can drive every config message.

use super::jcs::format_f64;

#[derive(Debug, Clone, PartialEq)]
pub enum Raw {
    Undefined,
    Null,
    Bool(bool),
    Number(f64),
    String(String),
    Array(Vec<Raw>),
    /// A plain object's own enumerable string-keyed members, in property order.
    Object(Vec<(String, Raw)>),
    /// A callable.
    Function,
    /// Anything else (symbol, bigint, an object too deep to look into), with its `String(v)`.
    Other(String),
}

impl Raw {
    pub fn is_absent(&self) -> bool {
        matches!(self, Raw::Undefined)
    }

    /// Member `key` of an object; `Undefined` when absent or not an object.
    pub fn get(&self, key: &str) -> &Raw {
        match self {
            Raw::Object(members) => members
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v)
                .unwrap_or(&Raw::Undefined),
            _ => &Raw::Undefined,
        }
    }

    /// `String(value)` as JavaScript computes it for the values a config can hold.
    pub fn display(&self) -> String {
        match self {
            Raw::Undefined => "undefined".into(),
            Raw::Null => "null".into(),
            Raw::Bool(b) => b.to_string(),
            Raw::Number(n) => format_f64(*n),
            Raw::String(s) => s.clone(),
            Raw::Array(items) => items
                .iter()
                .map(|i| match i {
                    Raw::Undefined | Raw::Null => String::new(),
                    other => other.display(),
                })
                .collect::<Vec<_>>()
                .join(","),
            Raw::Object(_) => "[object Object]".into(),
            Raw::Function => "function".into(),
            Raw::Other(s) => s.clone(),
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        match self {
            Raw::String(s) => Some(s),
            _ => None,
        }
    }
}

/// Shorthands for building host values in tests.
#[cfg(test)]
pub(crate) mod test_values {
    use super::Raw;

    /// An object of `members`, in order.
    pub(crate) fn obj(members: &[(&str, Raw)]) -> Raw {
        Raw::Object(
            members
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        )
    }

    /// A string.
    pub(crate) fn s(v: &str) -> Raw {
        Raw::String(v.into())
    }
}
