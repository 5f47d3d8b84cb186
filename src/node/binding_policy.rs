//! The rules the JS side must apply the same way as the core, exported so `lib/` asks for them
//! instead of keeping its own copies: the tool-name rule `resolveToolset` applies to every entry
//! and its refusal, the kinds of entry in a batch of completions, the code that marks a typed
//! refusal, the defaults the regulated posture reports, and the words of the refusals the JS side
//! makes itself before a call reaches the core (its signal aborted, input `JSON.stringify` cannot
//! write).

use super::jsthread::completions;
use crate::core::admit;
use napi_derive::napi;

/// Whether `name` is a name the engine can carry (`core::admit::valid_name`, what admission
/// applies to every final name): what `resolveToolset` checks for tools of any origin.
#[napi(js_name = "validToolName")]
pub fn valid_tool_name(name: String) -> bool {
    admit::valid_name(&name)
}

/// The tool-name rule as refusals quote it; the tests below hold it to `admit::valid_name`.
#[napi]
pub const TOOL_NAME_PATTERN: &str = admit::TOOL_NAME_PATTERN;

/// `resolveToolset`'s refusal of a name outside the rule: admission's words for it (without the
/// `mcp: ` of a source's own refusal, since the entry may come from anywhere), and the way out.
#[napi(js_name = "toolNameRefusal")]
pub fn tool_name_refusal(name: String) -> String {
    format!(
        "{}; namespace it with the source prefix option",
        admit::name_refusal(&name)
    )
}

/// `drift` when the config leaves it out, as the regulated posture reports it (read live from
/// the host's config on the JS side); the crate's tests hold it to what `Config::parse` takes.
#[napi]
pub const DRIFT_DEFAULT: &str = "rekey";

/// What a call ends with when its caller's signal aborts it. The JS side settles the call at
/// once (before the native cancel lands, whose outcome is then dropped), and refuses a call
/// whose signal aborted before it started: in the core's words for a cancelled call.
#[napi(js_name = "abortedMessage")]
pub fn aborted_message(tool: String) -> String {
    crate::core::error::aborted(&tool)
}

/// The refusal of input that `JSON.stringify` cannot write (a BigInt, a cycle), made on the JS
/// side with its reason: in the core's words for input that is not JSON (`Source::start_call`).
#[napi(js_name = "inputNotJsonMessage")]
pub fn input_not_json_message(tool: String, reason: String) -> String {
    crate::core::error::input_not_json(&tool, &reason)
}

/// The code of a typed refusal crossing into JS (`errors::CONFIG_CODE`): the JS side rebuilds
/// an error with it as the host's `ConfigError`.
#[napi]
pub const CONFIG_CODE: &str = super::errors::CONFIG_CODE;

/// The code of an OAuth failure crossing into JS (`errors::OAUTH_CODE`), with its `kind` and
/// `error`: the JS side rebuilds it as an `OAuthError`.
#[napi]
pub const OAUTH_CODE: &str = super::errors::OAUTH_CODE;

/// A stdio reader paused by the feeder (a runtime thread has a backlog of a huge message's
/// bytes) reads on once `fedBacklog` falls under this many bytes.
#[napi]
pub const FEED_RESUME_BYTES: u32 = crate::transport::stdout::RESUME_BYTES as u32;

/// The code of a server's JSON-RPC error answer to the opening or a list crossing into JS
/// (`errors::SERVER_CODE`), with its `rpcCode`, `data` (JSON text) and `stderr`: the JS side
/// rebuilds it as the SDK client's `McpError`.
#[napi]
pub const SERVER_CODE: &str = super::errors::SERVER_CODE;

/// The code of a replayed request the cassette had no answer for (`errors::CASSETTE_CODE`),
/// with its `tool` and `pointer`: the JS side rebuilds it as a `CassetteError`.
#[napi]
pub const CASSETTE_CODE: &str = super::errors::CASSETTE_CODE;

/// A batch from `takeCompletions()` is `[[id, kind, value], ...]`, its kinds written as one
/// digit each (`completions`): as the JS side reads them after `JSON.parse`.
const fn kind_number(kind: char) -> u32 {
    kind as u32 - '0' as u32
}

/// A progress notification of a call still in flight; the value is its params.
#[napi]
pub const COMPLETION_PROGRESS: u32 = kind_number(completions::PROGRESS);
/// A call's result; the value is what `execute` resolves with.
#[napi]
pub const COMPLETION_RESULT: u32 = kind_number(completions::RESULT);
/// A call's failure; the value is the message `execute` rejects with, or an object with it
/// (an OAuth failure's `kind` and `error`, a server answer's `code` and `data`).
#[napi]
pub const COMPLETION_FAILURE: u32 = kind_number(completions::FAILURE);
/// The `error.type` of the failure that follows for the same call; the value is a string.
#[napi]
pub const COMPLETION_ERROR_TYPE: u32 = kind_number(completions::ERROR_TYPE);

/// A server's text as the CLI shows it to a person (`core::shown`): controls, escape
/// sequences, hidden and bidirectional characters written as `<U+XXXX>`; line ends kept when
/// `lines` is set.
#[napi(js_name = "shownText")]
pub fn shown_text(text: String, lines: bool) -> String {
    crate::core::shown::for_a_person(&text, lines, usize::MAX)
}

#[cfg(test)]
mod tests {
    use super::super::jsthread::Completions;
    use super::*;
    use crate::core::config::Config;
    use crate::core::raw::Raw;
    use serde_json::{json, Value};

    /// Reads `TOOL_NAME_PATTERN` (a character class and a length range) as a matcher, so the
    /// text is checked against the rule, not against a second copy of it.
    fn pattern_matches(name: &str) -> bool {
        let (class, range) = TOOL_NAME_PATTERN
            .strip_prefix("^[")
            .and_then(|p| p.strip_suffix("}$"))
            .and_then(|p| p.split_once("]{"))
            .expect("a pattern of the form ^[class]{min,max}$");
        let (min, max) = range.split_once(',').unwrap();
        let (min, max): (usize, usize) = (min.parse().unwrap(), max.parse().unwrap());
        let class: Vec<char> = class.chars().collect();
        let mut ranges = Vec::new();
        let mut i = 0;
        while i < class.len() {
            // `x-y` is a range; a `-` with nothing after it is itself.
            let (from, to, width) = match class.get(i + 1..i + 3) {
                Some(['-', to]) => (class[i], *to, 3),
                _ => (class[i], class[i], 1),
            };
            ranges.push(from..=to);
            i += width;
        }
        let allowed = |c: char| ranges.iter().any(|r| r.contains(&c));
        (min..=max).contains(&name.chars().count()) && name.chars().all(allowed)
    }

    #[test]
    fn the_pattern_text_is_the_rule() {
        let long = "a".repeat(64);
        let too_long = "a".repeat(65);
        let names = [
            "a",
            "A_b-9",
            "_",
            "-",
            &long,
            "",
            &too_long,
            "has space",
            "dot.ted",
            "é",
            "a/b",
            "a\n",
            "[",
            "]",
            "^",
            "$",
            "{",
            ",",
        ];
        for name in names {
            assert_eq!(
                valid_tool_name(name.into()),
                admit::valid_name(name),
                "{name:?}"
            );
            assert_eq!(pattern_matches(name), admit::valid_name(name), "{name:?}");
        }
    }

    /// Admission's refusal of a tool named `has space`.
    fn admission_refusal() -> String {
        let config = Config::parse(&Raw::Object(vec![
            ("transport".into(), Raw::String("stdio".into())),
            ("command".into(), Raw::String("node".into())),
        ]))
        .unwrap();
        let wire =
            json!({"name": "has space", "description": "d", "inputSchema": {"type": "object"}});
        admit::admit(&config, vec![wire]).unwrap_err().message
    }

    #[test]
    fn admission_refuses_with_the_same_pattern_text() {
        let refusal = admission_refusal();
        assert!(
            refusal.ends_with(&format!("must match {TOOL_NAME_PATTERN}")),
            "{refusal}"
        );
    }

    #[test]
    fn the_toolset_refusal_is_admissions_with_the_way_out() {
        let toolset = tool_name_refusal("has space".into());
        assert_eq!(
            format!("mcp: {toolset}"),
            format!(
                "{}; namespace it with the source prefix option",
                admission_refusal()
            )
        );
    }

    #[test]
    fn the_drift_default_is_what_a_config_without_drift_parses_as() {
        let parse = |drift: Option<&str>| {
            let mut members = vec![
                ("transport".into(), Raw::String("stdio".into())),
                ("command".into(), Raw::String("node".into())),
            ];
            if let Some(drift) = drift {
                members.push(("drift".into(), Raw::String(drift.into())));
            }
            Config::parse(&Raw::Object(members)).unwrap().drift
        };
        assert_eq!(parse(None), parse(Some(DRIFT_DEFAULT)));
        // The field is read: the other policy parses otherwise.
        assert_ne!(parse(None), parse(Some("refuse")));
    }

    #[test]
    fn kinds_are_the_numbers_a_batch_carries() {
        let batch = Completions::new(|| {});
        batch.push_progress(1, "{}");
        batch.push(1, Ok("null".into()));
        batch.push_error_type(2, "timeout");
        batch.push(2, Err("no".into()));
        let parsed: Value = serde_json::from_str(&batch.take_with(str::to_owned).unwrap()).unwrap();
        let kinds: Vec<u64> = parsed
            .as_array()
            .unwrap()
            .iter()
            .map(|entry| entry[1].as_u64().unwrap())
            .collect();
        let expected = [
            COMPLETION_PROGRESS,
            COMPLETION_RESULT,
            COMPLETION_ERROR_TYPE,
            COMPLETION_FAILURE,
        ];
        assert_eq!(kinds, expected.map(u64::from));
    }
}
