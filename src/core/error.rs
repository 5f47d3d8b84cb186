//! The one error type of the pure core: a typed refusal.
//!
//! Every refusal the contract names (config checks, discovery bounds, canonicalization) is a
//! `ConfigError` on the JS side; the node layer maps this type to the host's class. Runtime
//! failures of a tool call are a different thing and never use this type.

use std::fmt;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub message: String,
    /// What sets this refusal apart from the others, for a host that tells them apart (the
    /// CLI's exit code): `connect_timeout` for a connect that timed out, which is refused as
    /// the original refuses it, typed, though it is no fault of the config.
    pub kind: Option<&'static str>,
}

impl ConfigError {
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            kind: None,
        }
    }

    /// A connect that ran out of `connectMs`.
    pub fn connect_timeout(message: String) -> Self {
        Self {
            message,
            kind: Some("connect_timeout"),
        }
    }
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for ConfigError {}

pub type Result<T> = std::result::Result<T, ConfigError>;

/// `message` followed by what is known of why the server failed (a stdio child's last stderr
/// lines), when anything is.
pub fn with_diagnostics(message: String, diagnostics: Option<String>) -> String {
    match diagnostics {
        Some(tail) => format!("{message}; its stderr ended with:\n{tail}"),
        None => message,
    }
}

/// An OAuth failure a host can act on, told apart by its kind rather than by its message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OAuthFailure {
    /// A new authorization is needed and `http.oauth.authorize` is not set.
    AuthorizationRequired,
    /// The authorization server refused a request: its RFC 6749 `error` code (cleaned by
    /// `oauth::error_code`), when it sent one. Never its description.
    Refused(Option<String>),
    /// The server still answered `insufficient_scope` after the last step-up authorization.
    StepUpExhausted,
    /// The server still refused the token after the last authorization.
    AuthorizationExhausted,
    /// What the server, its resource metadata or its authorization server handed over failed a
    /// trust check (an issuer that is not where its metadata was found, a URL that is not
    /// https, metadata on another origin, an authorization server other than the pinned one or
    /// the one the configured credentials are bound to): nothing was sent to it.
    Untrusted,
}

impl OAuthFailure {
    /// The `kind` the host's error carries.
    pub fn kind(&self) -> &'static str {
        match self {
            OAuthFailure::AuthorizationRequired => "authorization_required",
            OAuthFailure::Refused(_) => "refused",
            OAuthFailure::StepUpExhausted => "step_up_exhausted",
            OAuthFailure::AuthorizationExhausted => "authorization_exhausted",
            OAuthFailure::Untrusted => "untrusted",
        }
    }

    /// The authorization server's error code, for a refusal.
    pub fn error(&self) -> Option<&str> {
        match self {
            OAuthFailure::Refused(code) => code.as_deref(),
            _ => None,
        }
    }
}

/// A server's JSON-RPC error answer, beside the failure's message (`MCP error <code>:
/// <message>`, the words the MCP SDK's client gives it): the JS side makes of it what that
/// client throws, an `McpError` with `code` and `data`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerError {
    /// The server's code (a JS safe integer: `client::error::RpcError::answered`).
    pub code: i64,
    /// The JSON text of the server's `data`, redacted and bounded; `None` when it sent none
    /// (or one over the bound).
    pub data: Option<String>,
    /// A stdio child's last stderr lines, when the answer ended the opening: where the
    /// original's message has none of this, it travels beside the message.
    pub stderr: Option<String>,
}

/// A runtime failure (a plain `Error` on the JS side), an OAuth one when `oauth` says which,
/// or a server's JSON-RPC error answer when `server` holds it.
#[derive(Debug, Clone, PartialEq)]
pub struct Failure {
    pub message: String,
    pub oauth: Option<OAuthFailure>,
    /// The request went out and its answer was lost with the connection or stream that was to
    /// carry it: the server may have acted on it (a re-issue may repeat it).
    pub lost: bool,
    /// Boxed: a failure travels by value through every call's path, and is rarely this one.
    pub server: Option<Box<ServerError>>,
    /// A replayed source had no recorded answer for the request (a `CassetteError`).
    pub replay: Option<Box<crate::core::cassette::Miss>>,
}

impl Failure {
    pub fn oauth(kind: OAuthFailure, message: String) -> Self {
        Self {
            message,
            oauth: Some(kind),
            lost: false,
            server: None,
            replay: None,
        }
    }

    /// A failure whose request may have reached the server (`lost`).
    pub fn lost(message: String) -> Self {
        Self {
            message,
            oauth: None,
            lost: true,
            server: None,
            replay: None,
        }
    }

    /// A server's JSON-RPC error answer, `message` worded as the SDK's client words it.
    pub fn server(message: String, server: ServerError) -> Self {
        Self {
            message,
            oauth: None,
            lost: false,
            server: Some(Box::new(server)),
            replay: None,
        }
    }

    /// A replayed request the cassette has no answer for; its message is the whole story.
    pub fn replay_miss(miss: crate::core::cassette::Miss) -> Self {
        Self {
            message: miss.message.clone(),
            oauth: None,
            lost: false,
            server: None,
            replay: Some(Box::new(miss)),
        }
    }

    /// Prefixes where it happened (`context`), unless it is a server's answer, whose message
    /// stays the SDK client's word for word: the host (and, for a call, the model) sees what
    /// the original showed; where it happened then travels beside it (the JS side's
    /// properties).
    pub fn in_context(self, context: impl FnOnce(String) -> String) -> Self {
        if self.server.is_some() || self.replay.is_some() {
            return self;
        }
        self.map_message(context)
    }

    /// The same failure with its message rewritten (a prefix naming where it happened).
    pub fn map_message(self, f: impl FnOnce(String) -> String) -> Self {
        Self {
            message: f(self.message),
            oauth: self.oauth,
            lost: self.lost,
            server: self.server,
            replay: self.replay,
        }
    }
}

impl From<String> for Failure {
    fn from(message: String) -> Self {
        Self {
            message,
            oauth: None,
            lost: false,
            server: None,
            replay: None,
        }
    }
}

impl From<&str> for Failure {
    fn from(message: &str) -> Self {
        message.to_owned().into()
    }
}

/// What a call ends with when its caller gave up on it (its signal aborted, or the source
/// cancelled it): the same words wherever the call was (on the wire, between rounds, polling
/// a task) and on the JS side, which settles an aborted call at once.
pub fn aborted(tool: &str) -> String {
    format!("mcp: tool '{tool}' was aborted")
}

/// What a call ends with at its deadline (`timeouts.callMs`), wherever it was.
pub fn timed_out(tool: &str, call_ms: f64) -> String {
    format!(
        "mcp: tool '{tool}' timed out after {}ms (timeouts.callMs)",
        super::jcs::format_f64(call_ms)
    )
}

/// A call's failure that is not the server's own answer (a transport's, a mapping's), naming
/// the tool before what went wrong.
pub fn call_failed(tool: &str, why: &str) -> String {
    format!("mcp: tool '{tool}' failed: {why}")
}

/// The refusal of a call's input that is not JSON, with why (the parser's words, or those of
/// `JSON.stringify` on the JS side).
pub fn input_not_json(tool: &str, reason: &dyn fmt::Display) -> String {
    format!("mcp: the input of tool '{tool}' is not JSON: {reason}")
}
