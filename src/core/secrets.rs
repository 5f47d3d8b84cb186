//! Values that must never appear in an error text: every `env` value given to a stdio child
//! and every header value, static or returned by the header hook.
//!
//! Our own messages never print them, but text a server sent can echo them (an HTTP body
//! that repeats the request's `Authorization`, a JSON-RPC error message, a line of stderr),
//! so every failure a source reports passes through `redact` first. Text that is kept only in
//! part (an HTTP body's head, stderr's tail) is redacted before it is cut, and a secret that
//! the read itself cut off is redacted by the part of it that was read (`redact_bytes`).

use std::sync::RwLock;

/// Shorter values are left alone: a header such as `x-retries: 1` would otherwise blank every
/// `1` of a message ("exited with code 1"), and a value that short is no credential.
const MIN_SECRET_LEN: usize = 4;
/// A hook that rotates its token adds a value per rotation, and OAuth a token per refresh;
/// the oldest of those are forgotten first. The config's own values are never forgotten:
/// they are in force for the source's whole life, however many tokens churn past them.
const MAX_REMEMBERED: usize = 256;
/// A value with a scheme (`Bearer <token>`) has its token part redacted on its own as well,
/// when that part is at least this long: servers echo the token without its scheme.
const MIN_TOKEN_PART_LEN: usize = 8;

pub const REDACTED: &str = "[redacted]";

/// Which end of a text the read cut off (it was read in part), if any.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Cut {
    Neither,
    /// Only the head was read: a secret may begin in the last bytes.
    End,
    /// Only the tail was kept: a secret may end in the first bytes.
    Start,
}

#[derive(Debug, Default)]
pub struct Secrets {
    /// The config's values (and their token parts): never evicted.
    pinned: Vec<String>,
    /// Values in force by the job they hold (`remember_current`): OAuth's access and refresh
    /// token and client secret. Kept until that job gets a new value, however many values
    /// are learned meanwhile; the one replaced joins `values`.
    current: RwLock<Vec<(String, String)>>,
    /// Values learned later (hook headers, superseded tokens, codes), newest last, capped.
    /// A hook's headers in use are the newest: the hook runs before every request.
    values: RwLock<Vec<String>>,
}

/// `value` and its token part (for `scheme token` values), each long enough to redact.
fn parts(value: &str) -> Vec<&str> {
    let tokens = value
        .split_whitespace()
        .filter(|p| p.len() >= MIN_TOKEN_PART_LEN && p.len() < value.len());
    std::iter::once(value)
        .chain(tokens)
        .filter(|v| v.len() >= MIN_SECRET_LEN)
        .collect()
}

impl Secrets {
    /// The config's values, pinned: later values never push them out.
    pub fn new<'a>(values: impl IntoIterator<Item = &'a str>) -> Self {
        let mut pinned: Vec<String> = Vec::new();
        for v in values.into_iter().flat_map(parts) {
            if !pinned.iter().any(|p| p == v) {
                pinned.push(v.to_owned());
            }
        }
        Self {
            pinned,
            current: RwLock::default(),
            values: RwLock::default(),
        }
    }

    /// `value` is what `job` (`"access_token"`, ...) holds now: redacted until the job is
    /// given another, which supersedes it (it is then remembered as any other value).
    pub fn remember_current(&self, job: &str, value: &str) {
        let replaced = {
            let Ok(mut current) = self.current.write() else {
                return;
            };
            match current.iter_mut().find(|(j, _)| j == job) {
                Some((_, held)) if held == value => return,
                Some((_, held)) => Some(std::mem::replace(held, value.to_owned())),
                None => {
                    current.push((job.to_owned(), value.to_owned()));
                    None
                }
            }
        };
        if let Some(old) = replaced {
            self.remember(&old);
        }
    }

    /// Adds a value (and its token part, for `scheme token` values) to what is redacted.
    pub fn remember(&self, value: &str) {
        let new: Vec<&str> = parts(value)
            .into_iter()
            .filter(|v| !self.pinned.iter().any(|p| p == v))
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
        // The newest are at the end; forget the oldest past the cap (superseded tokens: a
        // token still in use is remembered again each time it is sent).
        let excess = values.len().saturating_sub(MAX_REMEMBERED);
        values.drain(..excess);
    }

    /// Every value, longest first, so a value that contains another is replaced whole.
    fn all(&self) -> Vec<String> {
        let mut all = self.pinned.clone();
        if let Ok(current) = self.current.read() {
            all.extend(
                current
                    .iter()
                    .flat_map(|(_, v)| parts(v))
                    .map(str::to_owned),
            );
        }
        if let Ok(values) = self.values.read() {
            all.extend(values.iter().cloned());
        }
        all.sort_by_key(|v| std::cmp::Reverse(v.len()));
        all
    }

    /// `text` with every remembered value replaced by `[redacted]`.
    pub fn redact(&self, text: &str) -> String {
        let mut out = text.to_owned();
        for value in self.all() {
            if out.contains(value.as_str()) {
                out = out.replace(value.as_str(), REDACTED);
            }
        }
        out
    }

    /// Every string of `value`, keys included, redacted in place. Redacting its JSON text
    /// instead would miss a secret that JSON escapes (one with a `"` or `\` in it). The depth
    /// is bounded by the parser's (128).
    pub fn redact_value(&self, value: &mut serde_json::Value) {
        use serde_json::Value;
        match value {
            Value::String(s) => *s = self.redact(s),
            Value::Array(items) => items.iter_mut().for_each(|v| self.redact_value(v)),
            Value::Object(members) => {
                let taken = std::mem::take(members);
                for (key, mut v) in taken {
                    self.redact_value(&mut v);
                    members.insert(self.redact(&key), v);
                }
            }
            _ => {}
        }
    }

    /// `raw` as text (lossy UTF-8) with every byte of a remembered value replaced: each run of
    /// such bytes becomes one `[redacted]`. Occurrences may overlap. Where the read cut `raw`
    /// (`cut`), the longest part of a value that the cut left there is redacted too: the
    /// start of one that `raw` ends with, or the end of one it starts with. Done on bytes, so
    /// a cut inside a multi-byte character cannot hide a value's part behind a U+FFFD. The
    /// caller cuts the result to its size afterwards, never before.
    pub(crate) fn redact_bytes(&self, raw: &[u8], cut: Cut) -> String {
        let mut hidden = vec![false; raw.len()];
        for value in self.all() {
            let v = value.as_bytes();
            for at in find_all(raw, v) {
                hidden[at..at + v.len()].fill(true);
            }
            let part = (1..v.len()).rev().find(|&k| match cut {
                Cut::End => raw.ends_with(&v[..k]),
                Cut::Start => raw.starts_with(&v[v.len() - k..]),
                Cut::Neither => false,
            });
            if let Some(k) = part {
                match cut {
                    Cut::End => hidden[raw.len() - k..].fill(true),
                    _ => hidden[..k].fill(true),
                }
            }
        }
        let mut out = String::with_capacity(raw.len());
        let mut start = 0;
        while start < raw.len() {
            let end = (start..raw.len())
                .find(|&i| hidden[i] != hidden[start])
                .unwrap_or(raw.len());
            if hidden[start] {
                out.push_str(REDACTED);
            } else {
                out.push_str(&String::from_utf8_lossy(&raw[start..end]));
            }
            start = end;
        }
        out
    }
}

/// Every position where `needle` starts in `hay`, overlapping ones included.
fn find_all<'a>(hay: &'a [u8], needle: &'a [u8]) -> impl Iterator<Item = usize> + 'a {
    hay.windows(needle.len().max(1))
        .enumerate()
        .filter(move |(_, w)| !needle.is_empty() && *w == needle)
        .map(|(at, _)| at)
}

/// The first `max` bytes of `text` at most, cut back to a character boundary.
pub(crate) fn head(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The last `max` bytes of `text` at most, cut forward to a character boundary.
pub(crate) fn tail(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut start = text.len() - max;
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
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

    #[test]
    fn configured_values_outlive_any_churn() {
        let s = Secrets::new(["Bearer config-header-token", "env-secret-value"]);
        for i in 0..10 * MAX_REMEMBERED {
            s.remember(&format!("rotated-token-{i:05}"));
        }
        assert_eq!(
            s.redact("Bearer config-header-token, config-header-token, env-secret-value"),
            "[redacted], [redacted], [redacted]"
        );
        // Only the superseded ones were forgotten, the newest kept.
        assert_eq!(s.redact("rotated-token-00000"), "rotated-token-00000");
        assert_eq!(
            s.redact(&format!("rotated-token-{:05}", 10 * MAX_REMEMBERED - 1)),
            REDACTED
        );
        // Remembering a configured value again neither duplicates nor unpins it.
        s.remember("env-secret-value");
        assert_eq!(s.redact("env-secret-value"), REDACTED);
    }

    #[test]
    fn a_value_the_read_cut_is_redacted_by_its_part() {
        let s = Secrets::new(["sk-0123456789abcdef"]);
        // Read in part at its end: the value's start ends the text.
        assert_eq!(
            s.redact_bytes(b"denied for sk-0123", Cut::End),
            "denied for [redacted]"
        );
        // Kept in part at its start: the value's end starts the text.
        assert_eq!(
            s.redact_bytes(b"89abcdef was refused", Cut::Start),
            "[redacted] was refused"
        );
        // Uncut text is not guessed at: a prefix at the end is ordinary text then.
        assert_eq!(s.redact_bytes(b"see sk-", Cut::Neither), "see sk-");
        assert_eq!(
            s.redact_bytes(b"a sk-0123456789abcdef b", Cut::Neither),
            "a [redacted] b"
        );
    }

    #[test]
    fn overlapping_values_are_redacted_whole() {
        let s = Secrets::new(["abcdef-1", "ef-1-ghij"]);
        assert_eq!(
            s.redact_bytes(b"x abcdef-1-ghij y", Cut::Neither),
            "x [redacted] y"
        );
        let periodic = Secrets::new(["aaaa"]);
        assert_eq!(periodic.redact_bytes(b"aaaaa", Cut::Neither), REDACTED);
    }

    #[test]
    fn a_cut_inside_a_character_hides_no_part() {
        let s = Secrets::new(["pässwörd-secret"]);
        let raw = "pässwörd-secret".as_bytes();
        // Cut one byte into 'ö' (two bytes): what remains starts mid-character.
        let from = "pässw".len() + 1;
        assert_eq!(s.redact_bytes(&raw[from..], Cut::Start), REDACTED);
        assert_eq!(s.redact_bytes(&raw[..from], Cut::End), REDACTED);
    }

    #[test]
    fn head_and_tail_cut_at_character_boundaries() {
        assert_eq!(head("aé", 2), "a");
        assert_eq!(tail("éa", 2), "a");
        assert_eq!(head("abc", 5), "abc");
    }

    #[test]
    fn a_current_token_outlives_churn_until_it_is_superseded() {
        let s = Secrets::default();
        s.remember_current("refresh_token", "refresh-token-one");
        for i in 0..2 * MAX_REMEMBERED {
            s.remember(&format!("hook-header-{i:04}"));
        }
        assert_eq!(s.redact("refresh-token-one"), REDACTED);
        // Superseded: remembered as any value, so still redacted until churn pushes it out.
        s.remember_current("refresh_token", "refresh-token-two");
        assert_eq!(
            s.redact("refresh-token-one refresh-token-two"),
            "[redacted] [redacted]"
        );
        for i in 0..2 * MAX_REMEMBERED {
            s.remember(&format!("hook-header-{i:04}-again"));
        }
        assert_eq!(s.redact("refresh-token-one"), "refresh-token-one");
        assert_eq!(s.redact("refresh-token-two"), REDACTED);
    }
}
