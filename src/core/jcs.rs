//! JSON Canonicalization Scheme (RFC 8785), written the way the engine's JavaScript writes it.
//!
//! Two details decide bit-exactness: members are ordered by UTF-16 code units (not UTF-8 bytes,
//! which differ above U+FFFF), and numbers use ECMAScript `Number.prototype.toString` (via
//! `ryu-js`), so `1e21` is `1e+21` and `-0` is `0`.

use serde_json::{Map, Number, Value};
use std::cmp::Ordering;

/// The JCS text of `value`.
pub fn serialize(value: &Value) -> String {
    let mut out = String::with_capacity(128);
    write_value(&mut out, value);
    out
}

/// How object members are written: sorted (JCS) or as they stand (`JSON.stringify`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyOrder {
    Sorted,
    Wire,
}

pub fn write_value(out: &mut String, value: &Value) {
    write_json(out, value, KeyOrder::Sorted)
}

/// JSON text with JavaScript's escaping and number formatting, members in `order`.
pub fn write_json(out: &mut String, value: &Value, order: KeyOrder) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(true) => out.push_str("true"),
        Value::Bool(false) => out.push_str("false"),
        Value::Number(n) => write_number(out, n),
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_json(out, item, order);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map, order),
    }
}

fn write_object(out: &mut String, map: &Map<String, Value>, order: KeyOrder) {
    let members: Vec<(&String, &Value)> = map.iter().collect();
    let write = |out: &mut String, _: &str, value: &Value| write_json(out, value, order);
    match order {
        KeyOrder::Sorted => write_members(out, members, write),
        KeyOrder::Wire => write_members_as_given(out, members, write),
    }
}

/// An object with its members in JCS order (UTF-16 code units of the keys); `value` writes
/// each member's value, given its key.
pub fn write_members<K: AsRef<str>>(
    out: &mut String,
    mut members: Vec<(K, &Value)>,
    value: impl FnMut(&mut String, &str, &Value),
) {
    members.sort_by(|a, b| cmp_utf16(a.0.as_ref(), b.0.as_ref()));
    write_members_as_given(out, members, value);
}

fn write_members_as_given<K: AsRef<str>>(
    out: &mut String,
    members: Vec<(K, &Value)>,
    mut value: impl FnMut(&mut String, &str, &Value),
) {
    out.push('{');
    for (i, (key, v)) in members.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, key.as_ref());
        out.push(':');
        value(out, key.as_ref(), v);
    }
    out.push('}');
}

/// Orders two strings by their UTF-16 code units, as JavaScript's default sort does.
pub fn cmp_utf16(a: &str, b: &str) -> Ordering {
    // UTF-8 byte order equals code point order, which equals UTF-16 order unless a supplementary
    // character meets one in U+E000..=U+FFFF; only then is the slower comparison needed.
    if a.is_ascii() || b.is_ascii() {
        return a.as_bytes().cmp(b.as_bytes());
    }
    a.encode_utf16().cmp(b.encode_utf16())
}

/// ECMAScript `Number.prototype.toString` of the number's double value.
pub fn write_number(out: &mut String, n: &Number) {
    let f = n.as_f64().unwrap_or(0.0);
    write_f64(out, f);
}

pub fn write_f64(out: &mut String, f: f64) {
    if f == 0.0 {
        // Covers -0, which JavaScript prints as "0".
        out.push('0');
        return;
    }
    let mut buf = ryu_js::Buffer::new();
    out.push_str(buf.format(f));
}

/// ECMAScript `Number.prototype.toString`, as a String.
pub fn format_f64(f: f64) -> String {
    let mut s = String::new();
    write_f64(&mut s, f);
    s
}

/// A string literal escaped exactly as `JSON.stringify` escapes it.
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    let bytes = s.as_bytes();
    let mut start = 0;
    for (i, &b) in bytes.iter().enumerate() {
        let escape: Option<&str> = match b {
            b'"' => Some("\\\""),
            b'\\' => Some("\\\\"),
            b'\n' => Some("\\n"),
            b'\r' => Some("\\r"),
            b'\t' => Some("\\t"),
            0x08 => Some("\\b"),
            0x0c => Some("\\f"),
            0x00..=0x1f => None,
            _ => continue,
        };
        out.push_str(&s[start..i]);
        match escape {
            Some(e) => out.push_str(e),
            None => {
                const HEX: &[u8; 16] = b"0123456789abcdef";
                out.push_str("\\u00");
                out.push(HEX[(b >> 4) as usize] as char);
                out.push(HEX[(b & 0xf) as usize] as char);
            }
        }
        start = i + 1;
    }
    out.push_str(&s[start..]);
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_follow_ecmascript() {
        let cases = [
            (0.0, "0"),
            (-0.0, "0"),
            (1e21, "1e+21"),
            (1e-7, "1e-7"),
            (1e-6, "0.000001"),
            (4.5, "4.5"),
            (100.0, "100"),
            (5e-324, "5e-324"),
            (-9007199254740991.0, "-9007199254740991"),
            (123456789012345680000.0, "123456789012345680000"),
        ];
        for (f, want) in cases {
            assert_eq!(format_f64(f), want, "{f:e}");
        }
    }

    #[test]
    fn strings_escape_like_json_stringify() {
        let mut out = String::new();
        write_string(
            &mut out,
            "\u{0}\u{7}\u{8}\t\n\u{b}\u{c}\r\u{1f}\u{7f}\u{2028}\"\\/",
        );
        assert_eq!(
            out,
            "\"\\u0000\\u0007\\b\\t\\n\\u000b\\f\\r\\u001f\u{7f}\u{2028}\\\"\\\\/\""
        );
    }

    #[test]
    fn keys_sort_by_utf16_code_units() {
        // U+FF61 sorts after U+1F600 in UTF-16 (0xFF61 > 0xD83D) but before it by code point.
        let v = json!({"\u{1F600}": 1, "\u{FF61}": 2, "a": 3});
        assert_eq!(serialize(&v), "{\"a\":3,\"\u{1F600}\":1,\"\u{FF61}\":2}");
    }

    #[test]
    fn nested_structures_have_no_whitespace() {
        let v = json!({"b": [1, {"d": true, "c": null}], "a": {"z": [], "y": {}}});
        assert_eq!(
            serialize(&v),
            "{\"a\":{\"y\":{},\"z\":[]},\"b\":[1,{\"c\":null,\"d\":true}]}"
        );
    }
}
