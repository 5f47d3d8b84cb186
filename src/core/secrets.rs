//! Values that must never appear in an error text: every `env` value given to a stdio child
//! and every header value, static or returned by the header hook.
//!
//! Our own messages never print them, but text a server sent can echo them (an HTTP body
//! that repeats the request's `Authorization`, a JSON-RPC error message, a line of stderr),
//! so every failure a source reports passes through `redact` first.

use std::sync::RwLock;

/// Shorter values are left alone: a header such as `x-retries: 1` would otherwise blank every
/// `1` of a message ("exited with code 1"), and a value that short is no credential.
const MIN_SECRET_LEN: usize = 4;
/// A hook that rotates its token adds a value per rotation; the oldest are forgotten first.
const MAX_REMEMBERED: usize = 256;
/// A value with a scheme (`Bearer <token>`) has its token part redacted on its own as well,
/// when that part is at least this long: servers echo the token without its scheme.
const MIN_TOKEN_PART_LEN: usize = 8;

pub const REDACTED: &str = "[redacted]";

#[derive(Debug, Default)]
pub struct Secrets {
    /// Longest first, so a value that contains another is replaced whole.
    values: RwLock<Vec<String>>,
}

impl Secrets {
    pub fn new<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let secrets = Self::default();
        for value in values {
            secrets.remember(value);
        }
        secrets
    }

    /// Adds a value (and its token part, for `scheme token` values) to what is redacted.
    pub fn remember(&self, value: &str) {
        let parts = value
            .split_whitespace()
            .filter(|p| p.len() >= MIN_TOKEN_PART_LEN && p.len() < value.len());
        let new: Vec<&str> = std::iter::once(value)
            .chain(parts)
            .filter(|v| v.len() >= MIN_SECRET_LEN)
            .collect();
        if new.is_empty() {
            return;
        }
        let Ok(mut values) = self.values.write() else {
            return;
        };
        for v in new {
            if let Some(at) = values.iter().position(|known| known == v) {
                values.remove(at);
            }
            values.push(v.to_owned());
        }
        // The newest are at the end; forget the oldest past the cap.
        let excess = values.len().saturating_sub(MAX_REMEMBERED);
        values.drain(..excess);
    }

    /// `text` with every remembered value replaced by `[redacted]`.
    pub fn redact(&self, text: &str) -> String {
        let Ok(values) = self.values.read() else {
            return text.to_owned();
        };
        if values.is_empty() {
            return text.to_owned();
        }
        let mut sorted: Vec<&String> = values.iter().collect();
        sorted.sort_by_key(|v| std::cmp::Reverse(v.len()));
        let mut out = text.to_owned();
        for value in sorted {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), REDACTED);
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_values_and_token_parts() {
        let s = Secrets::new(["Bearer s3cr3t-token-value", "env-secret-1"]);
        assert_eq!(
            s.redact("got Bearer s3cr3t-token-value and s3cr3t-token-value, env-secret-1"),
            "got [redacted] and [redacted], [redacted]"
        );
    }

    #[test]
    fn leaves_short_values_and_ordinary_text() {
        let s = Secrets::new(["1", "no"]);
        assert_eq!(s.redact("exited with code 1: no"), "exited with code 1: no");
    }

    #[test]
    fn longest_value_first() {
        let s = Secrets::new(["abcd", "abcdefgh"]);
        assert_eq!(s.redact("abcdefgh abcd"), "[redacted] [redacted]");
    }

    #[test]
    fn forgets_the_oldest_past_the_cap() {
        let s = Secrets::default();
        for i in 0..MAX_REMEMBERED + 10 {
            s.remember(&format!("token-{i:04}"));
        }
        assert_eq!(s.redact("token-0000"), "token-0000");
        assert_eq!(
            s.redact(&format!("token-{:04}", MAX_REMEMBERED + 9)),
            REDACTED
        );
    }
}
