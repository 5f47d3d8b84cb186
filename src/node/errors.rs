//! Errors crossing into JS carry a `code` the JS wrapper maps to classes: `RULVAR_CONFIG`
//! becomes the host's `ConfigError`, `RULVAR_OAUTH` (with `kind` and `error`) an `OAuthError`;
//! an error without one stays a plain `Error`.

use crate::core::error::OAuthFailure;
use crate::core::ConfigError;
use crate::source::SourceError;
use napi::bindgen_prelude::{Env, Unknown};
use napi::{sys, Error};

pub const CONFIG_CODE: &str = "RULVAR_CONFIG";
pub const OAUTH_CODE: &str = "RULVAR_OAUTH";

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
        SourceError::Refused(c) => js_error(env, &c.message, Some(CONFIG_CODE), None),
        SourceError::Failed(m) => js_error(env, &m, None, None),
        SourceError::OAuth(kind, m) => js_error(env, &m, Some(OAUTH_CODE), Some(&kind)),
        SourceError::Host(e) => e,
    }
}

fn js_error(
    env: &Env,
    message: &str,
    code: Option<&str>,
    oauth: Option<&OAuthFailure>,
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
            unsafe { sys::napi_create_error(raw, code, msg, &mut out) },
            "error creation",
        )?;
        if let Some(oauth) = oauth {
            let kind = super::js::create_string(raw, oauth.kind())?;
            super::js::set_member(raw, out, "kind", kind)?;
            if let Some(error) = oauth.error() {
                let error = super::js::create_string(raw, error)?;
                super::js::set_member(raw, out, "error", error)?;
            }
        }
        Ok(out)
    };
    match build() {
        Ok(value) => napi::Error::from(unsafe { Unknown::from_raw_unchecked(raw, value) }),
        Err(e) => e,
    }
}
