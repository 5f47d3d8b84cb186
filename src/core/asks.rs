//! What a server may ask the client back in the middle of a call (an elicitation, a model
//! completion, the roots), as the host's config offers it: the capabilities the client
//! declares, the checks a server's request passes before a host hook sees it, and the checks a
//! hook's answer passes before the server does. The same rules hold for a 2025 server's own
//! request and for a 2026 `input_required` result's `inputRequests`; the orchestration that
//! calls the hooks is `source/asks.rs`.
//!
//! Nothing here is offered unless the host set its key: with none set the client declares no
//! capability and answers as it always did.

use super::config::asks::check_root;
pub use super::config::asks::{Asks, Elicit, Roots, Sample};
use super::url::trusted_scheme;
use super::validate::{Compiled, Use};
use serde_json::{json, Map, Value};

/// A request the client will not pass on, as the JSON-RPC error a 2025 server gets for it.
#[derive(Debug, Clone, PartialEq)]
pub struct Refused {
    pub code: i64,
    pub message: String,
}

impl Refused {
    fn new(code: i64, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
        }
    }
}

/// What one admitted request asks of the host.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ask {
    ElicitForm,
    ElicitUrl,
    Sample,
    Roots,
}

impl Ask {
    /// The host hook that answers it, as the config names it.
    pub fn hook(self) -> &'static str {
        match self {
            Ask::ElicitForm | Ask::ElicitUrl => "elicit",
            Ask::Sample => "sample",
            Ask::Roots => "roots",
        }
    }

    /// What the server gets when the hook failed or ran out of time (`timed_out`), if the
    /// method has a polite answer for it: an elicitation is declined (the hook said no by
    /// failing) or cancelled (nobody answered); the others have none and get an error.
    pub fn fallback(self, timed_out: bool) -> Option<Value> {
        match self {
            Ask::ElicitForm | Ask::ElicitUrl => Some(json!({
                "action": if timed_out { "cancel" } else { "decline" }
            })),
            Ask::Sample | Ask::Roots => None,
        }
    }
}

const METHOD_NOT_FOUND: i64 = -32601;
const INVALID_PARAMS: i64 = -32602;
const INTERNAL: i64 = -32603;

impl Asks {
    /// Whether any key was set: only then is anything declared or answered.
    pub fn offered(&self) -> bool {
        self.elicit.is_some()
            || self.sample.is_some()
            || self.roots.is_some()
            || self.tasks
            || self.logs.is_some()
    }

    /// The client capabilities, as JSON text (`{}` when nothing is offered: the opening stays
    /// byte for byte what it was); each era declares them its own way (`client::era`).
    pub fn capabilities(&self) -> String {
        let mut out = Map::new();
        if let Some(e) = &self.elicit {
            let mut modes = Map::new();
            if e.form {
                modes.insert("form".into(), json!({}));
            }
            if e.url {
                modes.insert("url".into(), json!({}));
            }
            out.insert("elicitation".into(), Value::Object(modes));
        }
        if let Some(s) = &self.sample {
            out.insert(
                "sampling".into(),
                match s.tools {
                    true => json!({ "tools": {} }),
                    false => json!({}),
                },
            );
        }
        if self.roots.is_some() {
            out.insert("roots".into(), json!({}));
        }
        Value::Object(out).to_string()
    }

    /// Admits a server's request before any hook sees it.
    pub fn admit(&self, method: &str, params: &Value) -> std::result::Result<Ask, Refused> {
        let not_found = || Refused::new(METHOD_NOT_FOUND, format!("Method not found: {method}"));
        match method {
            "elicitation/create" => {
                let elicit = self.elicit.as_ref().ok_or_else(not_found)?;
                admit_elicitation(elicit, params)
            }
            "sampling/createMessage" => {
                let sample = self.sample.as_ref().ok_or_else(not_found)?;
                admit_sampling(sample, params).map(|_| Ask::Sample)
            }
            "roots/list" => self
                .roots
                .as_ref()
                .map(|_| Ask::Roots)
                .ok_or_else(not_found),
            _ => Err(not_found()),
        }
    }

    /// The fixed roots list's answer, when `roots` is a list.
    pub fn fixed_roots(&self) -> Option<Value> {
        match &self.roots {
            Some(Roots::List(roots)) => Some(json!({ "roots": roots })),
            _ => None,
        }
    }

    /// Checks a hook's answer to an admitted request and makes the result the server gets.
    /// The message never quotes what the hook returned (a person's or a model's words).
    pub fn answer(
        &self,
        ask: Ask,
        params: &Value,
        answer: Value,
    ) -> std::result::Result<Value, Refused> {
        match ask {
            Ask::ElicitForm | Ask::ElicitUrl => elicitation_answer(ask, params, answer),
            Ask::Sample => sampling_answer(answer),
            Ask::Roots => roots_answer(answer),
        }
    }
}

/// The params a hook is handed for an admitted request: a URL-mode elicitation's URL in the
/// form that was checked (parsed and written again: host lowercased, default port, dot
/// segments and percent-encoding resolved), never the server's own spelling of it, which a
/// hook or a person could read differently than the check did.
pub fn for_the_hook(ask: Ask, mut params: Value) -> Value {
    if ask == Ask::ElicitUrl {
        let checked = params
            .get("url")
            .and_then(Value::as_str)
            .and_then(|u| url::Url::parse(u).ok())
            .map(String::from);
        if let (Some(checked), Some(slot)) = (checked, params.get_mut("url")) {
            *slot = Value::String(checked);
        }
    }
    params
}

fn admit_elicitation(elicit: &Elicit, params: &Value) -> std::result::Result<Ask, Refused> {
    let invalid = |why: &str| Refused::new(INVALID_PARAMS, format!("mcp: {why}"));
    if !params.get("message").is_some_and(Value::is_string) {
        return Err(invalid("the elicitation has no message"));
    }
    match params.get("mode").and_then(Value::as_str).unwrap_or("form") {
        "form" => {
            if !elicit.form {
                return Err(invalid("this client does not offer form elicitation"));
            }
            let schema = params.get("requestedSchema");
            let is_object_schema = schema
                .and_then(Value::as_object)
                .is_some_and(|s| s.get("type") == Some(&json!("object")));
            if !is_object_schema {
                return Err(invalid(
                    "the elicitation's requestedSchema is not an object schema",
                ));
            }
            Ok(Ask::ElicitForm)
        }
        "url" => {
            if !elicit.url {
                return Err(invalid("this client does not offer URL elicitation"));
            }
            let url = params.get("url").and_then(Value::as_str).unwrap_or("");
            // A URL a person may be sent to: `https:`, or `http:` on this machine.
            if !url::Url::parse(url).is_ok_and(|u| trusted_scheme(&u)) {
                return Err(invalid(
                    "the elicitation URL is not https (or http on a loopback host)",
                ));
            }
            Ok(Ask::ElicitUrl)
        }
        _ => Err(invalid("the elicitation mode is not 'form' or 'url'")),
    }
}

fn admit_sampling(sample: &Sample, params: &Value) -> std::result::Result<(), Refused> {
    let invalid = |why: String| Refused::new(INVALID_PARAMS, format!("mcp: {why}"));
    let max_tokens = params.get("maxTokens").and_then(Value::as_f64);
    if !max_tokens.is_some_and(|n| n >= 1.0 && n.fract() == 0.0) {
        return Err(invalid(
            "the sampling request has no maxTokens (a positive integer)".into(),
        ));
    }
    let Some(messages) = params.get("messages").and_then(Value::as_array) else {
        return Err(invalid("the sampling request has no messages".into()));
    };
    if messages.len() as u64 > sample.max_messages {
        return Err(invalid(format!(
            "the sampling request has {} messages, more than the {} this client takes (sample.maxMessages)",
            messages.len(),
            sample.max_messages
        )));
    }
    let bytes = params.to_string().len() as u64;
    if bytes > sample.max_bytes {
        return Err(invalid(format!(
            "the sampling request is {bytes} bytes, more than the {} this client takes (sample.maxBytes)",
            sample.max_bytes
        )));
    }
    if params.get("tools").is_some() && !sample.tools {
        return Err(invalid(
            "this client does not offer sampling with tools".into(),
        ));
    }
    Ok(())
}

fn elicitation_answer(
    ask: Ask,
    params: &Value,
    answer: Value,
) -> std::result::Result<Value, Refused> {
    let bad = |why: &str| Refused::new(INTERNAL, format!("mcp: the elicit hook's answer {why}"));
    let Value::Object(mut answer) = answer else {
        return Err(bad("is not an object"));
    };
    let action = match answer.get("action").and_then(Value::as_str) {
        Some(a @ ("accept" | "decline" | "cancel")) => a.to_owned(),
        _ => return Err(bad("has no action 'accept', 'decline' or 'cancel'")),
    };
    if action != "accept" || ask == Ask::ElicitUrl {
        return Ok(json!({ "action": action }));
    }
    let mut content = match answer.remove("content") {
        None | Some(Value::Null) => Map::new(),
        Some(Value::Object(c)) => c,
        Some(_) => return Err(bad("has content that is not an object")),
    };
    let schema = params
        .get("requestedSchema")
        .cloned()
        .unwrap_or(Value::Null);
    // The defaults of the requested schema fill what the answer left out: a person who
    // accepted a form with a prefilled field accepted its value.
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (name, property) in properties {
            if let Some(default) = property.get("default") {
                if !content.contains_key(name) {
                    content.insert(name.clone(), default.clone());
                }
            }
        }
    }
    let content = Value::Object(content);
    let validator = Compiled::with_text(&schema, schema.to_string(), Use::Output);
    let issues = validator.issue_locations(&content);
    if !issues.is_empty() {
        return Err(bad(&format!(
            "does not match the requested schema ({})",
            issues.join("; ")
        )));
    }
    Ok(json!({ "action": "accept", "content": content }))
}

fn sampling_answer(answer: Value) -> std::result::Result<Value, Refused> {
    let bad = |why: &str| Refused::new(INTERNAL, format!("mcp: the sample hook's answer {why}"));
    let Some(object) = answer.as_object() else {
        return Err(bad("is not an object"));
    };
    if object.get("role") != Some(&json!("assistant")) {
        return Err(bad("has no role 'assistant'"));
    }
    if !object
        .get("content")
        .is_some_and(|c| c.is_object() || c.is_array())
    {
        return Err(bad("has no content"));
    }
    if !object.get("model").is_some_and(Value::is_string) {
        return Err(bad("names no model"));
    }
    Ok(answer)
}

fn roots_answer(answer: Value) -> std::result::Result<Value, Refused> {
    let list = match answer {
        Value::Array(list) => list,
        Value::Object(mut o) => match o.remove("roots") {
            Some(Value::Array(list)) => list,
            _ => {
                return Err(Refused::new(
                    INTERNAL,
                    "mcp: the roots hook's answer has no roots list",
                ))
            }
        },
        _ => {
            return Err(Refused::new(
                INTERNAL,
                "mcp: the roots hook's answer is not a list of roots",
            ))
        }
    };
    for root in &list {
        if let Err(why) = check_root(root) {
            return Err(Refused::new(
                INTERNAL,
                format!("mcp: the roots hook's answer: {why}"),
            ));
        }
    }
    Ok(json!({ "roots": list }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::config::asks::parse;
    use crate::core::raw::Raw;

    fn object(members: Vec<(&str, Raw)>) -> Raw {
        Raw::Object(
            members
                .into_iter()
                .map(|(k, v)| (k.to_owned(), v))
                .collect(),
        )
    }

    fn offer() -> Asks {
        Asks {
            elicit: Some(Elicit {
                form: true,
                url: true,
            }),
            sample: Some(Sample {
                tools: false,
                max_messages: 2,
                max_bytes: 4096,
            }),
            roots: Some(Roots::Hook),
            max_rounds: 10,
            tasks: false,
            logs: None,
            outside_calls: false,
        }
    }

    #[test]
    fn nothing_set_offers_nothing_and_declares_nothing() {
        let asks = parse(&object(vec![])).unwrap();
        assert!(!asks.offered());
        assert_eq!(asks.capabilities(), "{}");
        let refused = asks.admit("elicitation/create", &json!({})).unwrap_err();
        assert_eq!(refused.code, -32601);
        assert_eq!(refused.message, "Method not found: elicitation/create");
    }

    #[test]
    fn declares_exactly_what_the_keys_offer() {
        let asks = parse(&object(vec![("elicit", Raw::Function)])).unwrap();
        assert_eq!(asks.capabilities(), r#"{"elicitation":{"form":{}}}"#);
        let asks = parse(&object(vec![
            (
                "elicit",
                object(vec![
                    ("handler", Raw::Function),
                    ("url", Raw::Bool(true)),
                    ("form", Raw::Bool(false)),
                ]),
            ),
            (
                "sample",
                object(vec![("handler", Raw::Function), ("tools", Raw::Bool(true))]),
            ),
            (
                "roots",
                Raw::Array(vec![object(vec![("uri", Raw::String("file:///w".into()))])]),
            ),
        ]))
        .unwrap();
        assert_eq!(
            asks.capabilities(),
            r#"{"elicitation":{"url":{}},"sampling":{"tools":{}},"roots":{}}"#
        );
        assert_eq!(
            asks.fixed_roots(),
            Some(json!({"roots": [{"uri": "file:///w"}]}))
        );
    }

    #[test]
    fn refuses_ill_typed_keys() {
        for (config, message) in [
            (object(vec![("elicit", Raw::Bool(true))]), "mcp: elicit must be a function or { handler, form?, url? }, got true"),
            (object(vec![("elicit", object(vec![]))]), "mcp: elicit.handler must be a function"),
            (
                object(vec![("elicit", object(vec![("handler", Raw::Function), ("form", Raw::Bool(false))]))]),
                "mcp: elicit offers neither form nor url mode; set one, or leave elicit out",
            ),
            (
                object(vec![("sample", object(vec![("handler", Raw::Function), ("maxBytes", Raw::Number(0.5))]))]),
                "mcp: sample.maxBytes must be a positive integer, got 0.5",
            ),
            (
                object(vec![("sample", object(vec![("handler", Raw::Function), ("model", Raw::String("x".into()))]))]),
                "mcp: unknown config key 'sample.model'; the keys are handler, tools, maxMessages, maxBytes",
            ),
            (
                object(vec![("roots", Raw::Array(vec![object(vec![("uri", Raw::String("https://x".into()))])]))]),
                "mcp: roots: a root's uri must be a file:// URI",
            ),
            (object(vec![("maxInputRounds", Raw::Number(0.0))]), "mcp: maxInputRounds must be an integer from 1 to 1000, got 0"),
        ] {
            assert_eq!(parse(&config).unwrap_err().message, message);
        }
    }

    #[test]
    fn a_url_elicitation_reaches_the_hook_only_with_a_safe_url() {
        let asks = offer();
        for url in [
            "https://example.com/x",
            "http://127.0.0.1:9/cb",
            "http://localhost/",
            "http://[::1]/",
        ] {
            let params = json!({"mode": "url", "message": "m", "url": url, "elicitationId": "e"});
            assert_eq!(
                asks.admit("elicitation/create", &params),
                Ok(Ask::ElicitUrl),
                "{url}"
            );
        }
        for url in [
            "http://example.com/",
            "javascript:alert(1)",
            "file:///etc/passwd",
            "",
            "http://127.0.0.1.evil.com/",
        ] {
            let params = json!({"mode": "url", "message": "m", "url": url});
            let refused = asks.admit("elicitation/create", &params).unwrap_err();
            assert_eq!(refused.code, -32602, "{url}");
        }
    }

    #[test]
    fn a_hook_is_handed_the_url_that_was_checked() {
        let params = json!({"mode": "url", "message": "m", "url": "HTTPS://Example.COM:443/a/../b?q=%7e#f", "elicitationId": "e"});
        let handed = for_the_hook(Ask::ElicitUrl, params);
        assert_eq!(handed["url"], "https://example.com/b?q=%7e#f");
        let form = json!({"message": "m", "url": "HTTPS://X"});
        assert_eq!(for_the_hook(Ask::ElicitForm, form.clone()), form);
    }

    #[test]
    fn sampling_is_bounded() {
        let asks = offer();
        let ok = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "hi"}}], "maxTokens": 10});
        assert_eq!(asks.admit("sampling/createMessage", &ok), Ok(Ask::Sample));
        let no_max = json!({"messages": []});
        assert!(asks
            .admit("sampling/createMessage", &no_max)
            .unwrap_err()
            .message
            .contains("maxTokens"));
        let many = json!({"messages": [{}, {}, {}], "maxTokens": 1});
        assert!(asks
            .admit("sampling/createMessage", &many)
            .unwrap_err()
            .message
            .contains("sample.maxMessages"));
        let big = json!({"messages": [{"role": "user", "content": {"type": "text", "text": "x".repeat(5000)}}], "maxTokens": 1});
        assert!(asks
            .admit("sampling/createMessage", &big)
            .unwrap_err()
            .message
            .contains("sample.maxBytes"));
        let tools = json!({"messages": [], "maxTokens": 1, "tools": []});
        assert!(asks
            .admit("sampling/createMessage", &tools)
            .unwrap_err()
            .message
            .contains("with tools"));
    }

    #[test]
    fn an_accepted_form_gets_the_schema_defaults_and_is_held_to_the_schema() {
        let asks = offer();
        let params = json!({"message": "m", "requestedSchema": {"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "email": {"type": "string", "format": "email"}
        }, "required": ["email"]}});
        let ask = asks.admit("elicitation/create", &params).unwrap();
        let answered = asks
            .answer(
                ask,
                &params,
                json!({"action": "accept", "content": {"email": "a@b.co", "age": 41}}),
            )
            .unwrap();
        assert_eq!(
            answered,
            json!({"action": "accept", "content": {"email": "a@b.co", "age": 41, "name": "John Doe"}})
        );
        // A value against the schema is refused, and the refusal never quotes it.
        let refused = asks
            .answer(
                ask,
                &params,
                json!({"action": "accept", "content": {"email": "secret-words", "age": "x"}}),
            )
            .unwrap_err();
        assert!(
            refused
                .message
                .starts_with("mcp: the elicit hook's answer does not match the requested schema"),
            "{}",
            refused.message
        );
        assert!(
            !refused.message.contains("secret-words"),
            "{}",
            refused.message
        );
        assert!(
            refused.message.contains("/email") && refused.message.contains("/age"),
            "{}",
            refused.message
        );
        // Declining drops whatever content came with it.
        let declined = asks
            .answer(
                ask,
                &params,
                json!({"action": "decline", "content": {"x": 1}}),
            )
            .unwrap();
        assert_eq!(declined, json!({"action": "decline"}));
        assert!(asks
            .answer(ask, &params, json!({"action": "maybe"}))
            .is_err());
    }

    #[test]
    fn sampling_and_roots_answers_are_checked() {
        let asks = offer();
        let good =
            json!({"role": "assistant", "content": {"type": "text", "text": "ok"}, "model": "m"});
        assert_eq!(
            asks.answer(Ask::Sample, &Value::Null, good.clone()),
            Ok(good)
        );
        assert!(asks
            .answer(
                Ask::Sample,
                &Value::Null,
                json!({"role": "user", "content": {}, "model": "m"})
            )
            .is_err());
        assert_eq!(
            asks.answer(Ask::Roots, &Value::Null, json!([{"uri": "file:///a"}])),
            Ok(json!({"roots": [{"uri": "file:///a"}]}))
        );
        assert!(asks
            .answer(Ask::Roots, &Value::Null, json!([{"uri": "/a"}]))
            .is_err());
    }
}
