//! How a server's text is shown to a person (a terminal, a refusal's lines): every character
//! that would not show as itself is written as `<U+XXXX>`. A terminal obeys escape sequences (an
//! OSC 8 link shows one URL and opens another; cursor moves erase what was printed), and
//! invisible or bidirectional characters make text read differently than it is.

/// Characters that render as nothing or reorder what is shown: zero-width ones, bidirectional
/// controls, invisible operators, the byte-order mark, the soft hyphen, Unicode tags (which can
/// spell a whole hidden ASCII message), and variation selectors.
pub fn hidden(c: char) -> bool {
    matches!(c,
        '\u{00AD}' | '\u{034F}' | '\u{061C}' | '\u{115F}' | '\u{1160}' | '\u{17B4}' | '\u{17B5}'
        | '\u{180B}'..='\u{180F}'
        | '\u{200B}'..='\u{200F}'
        | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}'
        | '\u{3164}' | '\u{FEFF}' | '\u{FFA0}'
        | '\u{FE00}'..='\u{FE0F}'
        | '\u{1D173}'..='\u{1D17A}'
        | '\u{E0000}'..='\u{E0FFF}')
}

/// `text` as a person may be shown it: controls (C0, DEL, C1), hidden and bidirectional
/// characters written as `<U+XXXX>`; line ends kept when `lines` is set. At most `max` chars
/// of `text` are shown, then `…`.
pub fn for_a_person(text: &str, lines: bool, max: usize) -> String {
    let mut out = String::with_capacity(text.len().min(max.saturating_mul(4)));
    for (i, c) in text.chars().enumerate() {
        if i == max {
            out.push('…');
            break;
        }
        if lines && c == '\n' {
            out.push(c);
        } else if hidden(c) || c.is_control() {
            out.push_str(&format!("<U+{:04X}>", c as u32));
        } else {
            out.push(c);
        }
    }
    out
}

/// How much of a server's value reaches the host's log (`ctx.log`): each string's chars, each
/// container's members, and the depth.
const LOGGED_CHARS: usize = 1024;
const LOGGED_MEMBERS: usize = 64;
const LOGGED_DEPTH: usize = 8;

/// A value a server sent that reaches the host as it is (a log message's data, a progress
/// message, a task's status message): every string with the source's secrets redacted
/// (`redact`, before it is clipped, so no part of one shows), then shown as to a person (line
/// ends kept); strings, containers and depth bounded. One rule for all of it.
pub fn server_value(
    value: &serde_json::Value,
    redact: &dyn Fn(&str) -> String,
) -> serde_json::Value {
    use serde_json::Value;
    fn walk(v: &Value, redact: &dyn Fn(&str) -> String, depth: usize) -> Value {
        match v {
            Value::String(s) => Value::String(for_a_person(&redact(s), true, LOGGED_CHARS)),
            Value::Array(items) if depth < LOGGED_DEPTH => {
                let mut out: Vec<Value> = items
                    .iter()
                    .take(LOGGED_MEMBERS)
                    .map(|i| walk(i, redact, depth + 1))
                    .collect();
                if items.len() > LOGGED_MEMBERS {
                    out.push(Value::String(format!(
                        "… {} more",
                        items.len() - LOGGED_MEMBERS
                    )));
                }
                Value::Array(out)
            }
            Value::Object(members) if depth < LOGGED_DEPTH => {
                let mut out = serde_json::Map::new();
                for (k, m) in members.iter().take(LOGGED_MEMBERS) {
                    out.insert(
                        for_a_person(&redact(k), false, LOGGED_CHARS),
                        walk(m, redact, depth + 1),
                    );
                }
                if members.len() > LOGGED_MEMBERS {
                    out.insert("…".into(), Value::from(members.len() - LOGGED_MEMBERS));
                }
                Value::Object(out)
            }
            Value::Array(_) | Value::Object(_) => Value::String("…".into()),
            other => other.clone(),
        }
    }
    walk(value, redact, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_servers_value_is_redacted_shown_and_bounded() {
        let redact = |s: &str| s.replace("s3cret", "[redacted]");
        let value = serde_json::json!({
            "data": "token s3cret\u{1b}[2J\nnext line",
            "big": "x".repeat(5000),
            "list": (0..100).collect::<Vec<u32>>(),
            "deep": [[[[[[[[[["bottom"]]]]]]]]]],
            "n": 5,
        });
        let shown = server_value(&value, &redact);
        assert_eq!(shown["data"], "token [redacted]<U+001B>[2J\nnext line");
        assert_eq!(
            shown["big"].as_str().unwrap().chars().count(),
            LOGGED_CHARS + 1
        );
        assert_eq!(shown["list"].as_array().unwrap().len(), LOGGED_MEMBERS + 1);
        assert_eq!(shown["n"], 5);
        assert!(!shown.to_string().contains("bottom"));
    }

    #[test]
    fn escapes_bidi_and_invisible_characters_are_made_visible() {
        let osc8 = "\u{1b}]8;;https://evil.example/\u{7}https://github.com/login\u{1b}]8;;\u{7}";
        assert_eq!(
            for_a_person(osc8, false, usize::MAX),
            "<U+001B>]8;;https://evil.example/<U+0007>https://github.com/login<U+001B>]8;;<U+0007>"
        );
        assert_eq!(
            for_a_person("a\u{202e}b\u{200b}\u{7f}\u{9b}c", false, 9),
            "a<U+202E>b<U+200B><U+007F><U+009B>c"
        );
        assert_eq!(for_a_person("one\ntwo\r", true, 100), "one\ntwo<U+000D>");
        assert_eq!(for_a_person("one\ntwo", false, 100), "one<U+000A>two");
        assert_eq!(for_a_person("abcdef", false, 3), "abc…");
    }
}
