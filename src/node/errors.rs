//! Errors crossing into JS carry a `code` the JS wrapper maps to classes: `RULVAR_CONFIG`
//! becomes the host's `ConfigError` (with a `kind` for the refusals the JS side tells apart),
//! `RULVAR_OAUTH` (with `kind` and `error`) an `OAuthError`, `RULVAR_SERVER` (with `rpcCode`,
//! the JSON text of `data` and `stderr`) the SDK client's `McpError`, `RULVAR_CASSETTE` (with
//! `tool` and `pointer`) a `CassetteError`; an error without one
//! stays a plain `Error`.

use crate::core::error::ServerError;
use crate::core::ConfigError;
use crate::source::SourceError;
use napi::bindgen_prelude::{Env, Unknown};
use napi::{sys, Error};

pub const CONFIG_CODE: &str = "RULVAR_CONFIG";
pub const OAUTH_CODE: &str = "RULVAR_OAUTH";
pub const SERVER_CODE: &str = "RULVAR_SERVER";
pub const CASSETTE_CODE: &str = "RULVAR_CASSETTE";

pub type JsError = Error<String>;

pub fn refusal(e: ConfigError) -> JsError {
    Error::new(CONFIG_CODE.to_owned(), e.message)
}

/// Keeps the status text, so a pending JS exception (`PendingException`) is not thrown twice.
pub fn from_napi(e: Error) -> JsError {
    Error::new(e.status.as_ref().to_owned(), e.reason.clone())
}

/// Builds the JS error for a failure: a refusal carries `code: 'RULVAR_CONFIG'` for the JS
/// wrapper; a host error object is handed back as it was thrown.
pub fn to_js_error(env: &Env, e: SourceError<napi::Error>) -> napi::Error {
    match e {
        SourceError::Refused(c) => {
            let kind = c.kind.map(Member::Text);
            js_error(env, &c.message, Some(CONFIG_CODE), &[("kind", kind)])
        }
        SourceError::Failed(m) => js_error(env, &m, None, &[]),
        SourceError::OAuth(failure, m) => {
            let kind = Some(Member::Text(failure.kind()));
            let error = failure.error().map(Member::Text);
            js_error(
                env,
                &m,
                Some(OAUTH_CODE),
                &[("kind", kind), ("error", error)],
            )
        }
        SourceError::Server(m, server) => server_error(env, &m, &server),
        SourceError::Cassette(miss) => {
            let members = [
                ("tool", miss.tool.as_deref().map(Member::Text)),
                ("pointer", miss.pointer.as_deref().map(Member::Text)),
            ];
            js_error(env, &miss.message, Some(CASSETTE_CODE), &members)
        }
        SourceError::Host(e) => e,
    }
}

/// A server's error answer to the opening or a list: its code and the rest beside the message,
/// for lib/errors.js to rebuild as the SDK client's `McpError`.
fn server_error(env: &Env, message: &str, server: &ServerError) -> napi::Error {
    let members = [
        ("rpcCode", Some(Member::Number(server.code as f64))),
        ("data", server.data.as_deref().map(Member::Text)),
        ("stderr", server.stderr.as_deref().map(Member::Text)),
    ];
    js_error(env, message, Some(SERVER_CODE), &members)
}

/// A member of an error made here, set when present.
enum Member<'a> {
    Text(&'a str),
    Number(f64),
}

fn js_error(
    env: &Env,
    message: &str,
    code: Option<&str>,
    members: &[(&str, Option<Member>)],
) -> napi::Error {
    let raw = env.raw();
    let build = || -> napi::Result<sys::napi_value> {
        let msg = super::js::create_string(raw, message)?;
        let code = match code {
            Some(c) => super::js::create_string(raw, c)?,
            None => std::ptr::null_mut(),
        };
        let mut out = std::ptr::null_mut();
        super::js::check(
            raw,
            // SAFETY: `raw` is the live env of the call this runs in, on its thread; `msg` a
            // string and `code` a string or null (no code), both just made on it; `out` a local.
            unsafe { sys::napi_create_error(raw, code, msg, &mut out) },
            "error creation",
        )?;
        for (key, member) in members {
            let value = match member {
                Some(Member::Text(text)) => super::js::create_string(raw, text)?,
                Some(Member::Number(n)) => super::js::create_number(raw, *n)?,
                None => continue,
            };
            super::js::set_member(raw, out, key, value)?;
        }
        Ok(out)
    };
    match build() {
        // SAFETY: `value` is the error object just made on `env`, the env of the call this runs
        // in; napi-rs keeps a reference to it inside the error until it is thrown there.
        Ok(value) => napi::Error::from(unsafe { Unknown::from_raw_unchecked(raw, value) }),
        Err(e) => e,
    }
}
