//! Whether a JSON text reads as the same value in V8's `JSON.parse` as in serde_json.
//!
//! A structured result whose output is checked on the JS side (`lib/outputcheck.js`) is handed
//! on without being parsed here: the JS side validates the value `JSON.parse` gave it, and asks
//! the native validator again whenever it does not accept (`source::call::recheck`). That is
//! exact only for a text both parsers read alike. Given a text serde_json has already scanned
//! as valid JSON (the reply's envelope), two things tell them apart:
//!
//! - numbers: serde_json refuses one past f64's range (`1e400`, or 400 digits) where V8 reads
//!   `Infinity`, and holds an integer of up to 20 digits exactly where V8 rounds it past 2^53
//!   (what `maximum`, `enum` and `const` compare). A number with an exponent, or with more than
//!   15 digits before its point, is not plain; every other number is below 10^15, an integer
//!   that is exact in both, or a fraction both round the same way (serde_json is built with
//!   `float_roundtrip`).
//! - strings: serde_json refuses an escaped surrogate that is not paired, which V8 keeps. A
//!   text with any escaped surrogate, paired or not, is not plain (servers escape non-ASCII
//!   rarely; such a text takes the native path, which decides).
//!
//! A text that is not plain takes the native path as every result did before.

/// Digits an integer part may have and stay below 10^15 (under 2^53).
const MAX_INTEGER_DIGITS: usize = 15;

/// Whether `text` (valid JSON, as serde_json scanned it) holds no number and no string that
/// V8 and serde_json read differently.
///
/// This runs on the JS thread for every structured result, so most texts are told plain by a
/// pre-scan (`suspects`) that looks at a window of bytes at a time, written so the compiler
/// turns it into vector code, and never tracks whether a byte is inside a string: a number with
/// an exponent has a digit right before its `e`, an integer part past 15 digits holds 8 digits
/// on the 8-byte grid from the text's start, and an escape is a backslash. A text with none of
/// the three is plain. Escapes are then judged exactly by a walk over the backslashes (every
/// one of them is in a string, and an escape is a backslash with the byte after it, so the
/// walk steps over both); a text suspect of its numbers (a hex digest in a string is, too)
/// takes `exact`, the scan that tracks strings.
pub(crate) fn plain(text: &str) -> bool {
    let bytes = text.as_bytes();
    let seen = suspects(bytes);
    if seen & NUMBER != 0 {
        return exact(bytes);
    }
    seen & ESCAPE == 0 || !escapes_any_surrogate(bytes)
}

/// `suspects`' window: wide enough for the compiler's vector code, a multiple of 8 (the grid).
const WINDOW: usize = 32;
/// `suspects` saw a digit before an `e` or `E`, or 8 digits on the grid.
const NUMBER: u8 = 1;
/// `suspects` saw a backslash.
const ESCAPE: u8 = 2;

/// What of `NUMBER` and `ESCAPE` the text holds, stopping at the first `NUMBER`.
fn suspects(bytes: &[u8]) -> u8 {
    let mut seen = 0;
    let mut i = 0;
    while i + WINDOW < bytes.len() {
        seen |= window(window_at(bytes, i), window_at(bytes, i + 1));
        if seen & NUMBER != 0 {
            return seen;
        }
        i += WINDOW;
    }
    // The last window padded with spaces, which are none of the three.
    let mut padded = [b' '; WINDOW + 1];
    padded[..bytes.len() - i].copy_from_slice(&bytes[i..]);
    seen | window(window_at(&padded, 0), window_at(&padded, 1))
}

fn window_at(bytes: &[u8], i: usize) -> &[u8; WINDOW] {
    bytes[i..i + WINDOW].try_into().expect("a whole window")
}

/// The flags of the window `here`, `next` being the same bytes one further on. No branch in
/// the loop: it compiles to vector compares.
#[inline(always)]
fn window(here: &[u8; WINDOW], next: &[u8; WINDOW]) -> u8 {
    let mut digits = [0u8; WINDOW];
    let mut exponent = false;
    let mut escape = false;
    for k in 0..WINDOW {
        let digit = here[k].wrapping_sub(b'0') < 10;
        digits[k] = digit as u8;
        exponent |= digit & (next[k] | 0x20 == b'e');
        escape |= here[k] == b'\\';
    }
    let mut long = false;
    for block in digits.chunks_exact(8) {
        long |= block == [1; 8];
    }
    (if exponent || long { NUMBER } else { 0 }) | (if escape { ESCAPE } else { 0 })
}

/// Whether some escape in the text is `\u` followed by D800-DFFF.
fn escapes_any_surrogate(bytes: &[u8]) -> bool {
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'\\', &bytes[i..]) {
        let at = i + at;
        if bytes.get(at + 1) == Some(&b'u')
            && bytes.get(at + 2..at + 4).is_some_and(escapes_surrogate)
        {
            return true;
        }
        i = at + 2;
        if i >= bytes.len() {
            break;
        }
    }
    false
}

/// `plain`, tracking strings: every number's digits and exponent, every string's escapes.
fn exact(bytes: &[u8]) -> bool {
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'"' => match string_end(bytes, i + 1) {
                Some(end) => i = end,
                None => return false,
            },
            b'-' | b'0'..=b'9' => match number_end(bytes, i) {
                Some(end) => i = end,
                None => return false,
            },
            _ => i += 1,
        }
    }
    true
}

/// The index just past the string whose contents start at `i`, or `None` when it escapes a
/// surrogate (or is cut short, which a scanned text never is).
fn string_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    loop {
        i += memchr::memchr2(b'"', b'\\', &bytes[i..])?;
        if bytes[i] == b'"' {
            return Some(i + 1);
        }
        // An escape: `\u` followed by D800-DFFF is a surrogate.
        if bytes.get(i + 1) == Some(&b'u') && escapes_surrogate(bytes.get(i + 2..i + 4)?) {
            return None;
        }
        i += 2;
    }
}

fn escapes_surrogate(hex: &[u8]) -> bool {
    matches!(hex[0], b'd' | b'D') && matches!(hex[1], b'8'..=b'9' | b'a'..=b'f' | b'A'..=b'F')
}

/// The index just past the number starting at `i`, or `None` when it is not plain.
fn number_end(bytes: &[u8], mut i: usize) -> Option<usize> {
    if bytes[i] == b'-' {
        i += 1;
    }
    let digits = bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    if digits > MAX_INTEGER_DIGITS {
        return None;
    }
    i += digits;
    if bytes.get(i) == Some(&b'.') {
        i += 1;
        i += bytes[i..].iter().take_while(|b| b.is_ascii_digit()).count();
    }
    match bytes.get(i) {
        Some(b'e' | b'E') => None,
        _ => Some(i),
    }
}

#[cfg(test)]
mod tests {
    use super::plain;

    #[test]
    fn ordinary_json_is_plain() {
        for text in [
            r#"{"items":[{"id":0,"name":"item-0","ok":true},{"id":-12,"x":null}]}"#,
            r#"{"n":999999999999999,"f":0.30000000000000004,"neg":-0.5,"z":-0}"#,
            r#"{"s":"a \"quoted\" \\ \n \u00e9 \u20ac \uE000 \uFFFF","1e5":"-99999999999999999"}"#,
            r#"[1,2.5,"x"]"#,
            "\"é😀\"",
            "0",
        ] {
            assert!(plain(text), "{text}");
        }
    }

    #[test]
    fn numbers_and_strings_the_parsers_read_apart_are_not() {
        for text in [
            r#"{"n":1e400}"#,
            r#"{"n":1E2}"#,
            r#"{"n":2.5e-3}"#,
            r#"{"n":9007199254740993}"#,
            r#"{"n":-1000000000000000}"#,
            r#"[1,1234567890123456.5]"#,
            r#"{"s":"\ud800"}"#,
            r#"{"s":"\uDBFF\uDFFF"}"#,
            r#"{"\udc00":1}"#,
        ] {
            assert!(!plain(text), "{text}");
        }
    }

    mod agreement {
        use super::super::{exact, plain};
        use proptest::prelude::*;

        /// A JSON text of numbers and strings of every kind, at every offset from the 8-byte
        /// grid: digits before an `e`, long digit runs and escapes, inside strings and out.
        fn texts() -> impl Strategy<Value = String> {
            let number = "-?(0|[1-9][0-9]{0,24})(\\.[0-9]{1,20})?([eE][-+]?[0-9]{1,4})?";
            let piece = prop_oneof![
                "[a-zA-Z0-9 .:,\\[-]{0,40}",
                "[0-9eE]{1,24}",
                // Reads as a surrogate's escape only to a walk that loses its step.
                "u[dD][89abAB][0-9a-f]{2}",
                Just("\\\\".to_owned()),
                Just("\\\"".to_owned()),
                Just("\\n".to_owned()),
                "[0-9a-fA-F]{4}".prop_map(|hex| format!("\\u{hex}")),
            ];
            let string =
                prop::collection::vec(piece, 0..6).prop_map(|p| format!("\"{}\"", p.concat()));
            let item = prop_oneof![number.prop_map(|n| n.to_string()), string];
            (" {0,9}", prop::collection::vec(item, 0..24))
                .prop_map(|(pad, items)| format!("{pad}[{}]", items.join(",")))
        }

        proptest! {
            #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

            /// The pre-scan never changes the answer: `plain` is `exact` on every text.
            #[test]
            fn the_prescan_answers_as_the_exact_scan(text in texts()) {
                prop_assert!(serde_json::from_str::<serde::de::IgnoredAny>(&text).is_ok() || text.contains("\\u"), "{}", text);
                prop_assert_eq!(plain(&text), exact(text.as_bytes()), "{}", text);
            }

            /// What `plain` passes, serde_json reads, and reads as a number V8 holds exactly:
            /// finite, and an integer only below 2^53 (numbers of every length and exponent,
            /// strings with every kind of `\u` escape).
            #[test]
            fn what_plain_passes_both_parsers_read_alike(
                number in "-?(0|[1-9][0-9]{0,24})(\\.[0-9]{1,20})?([eE][-+]?[0-9]{1,4})?",
                escape in "[0-9a-fA-F]{4}",
            ) {
                let text = format!("[{number},\"\\u{escape}\"]");
                if plain(&text) {
                    let value: serde_json::Value = serde_json::from_str(&text)
                        .map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
                    let n = &value[0];
                    let exact = match (n.as_u64(), n.as_i64(), n.as_f64()) {
                        (Some(u), _, _) => u < 1 << 53,
                        (_, Some(i), _) => i.unsigned_abs() < 1 << 53,
                        (_, _, Some(f)) => f.is_finite(),
                        _ => false,
                    };
                    prop_assert!(exact, "{}", text);
                }
            }
        }
    }
}
