//! Errors crossing into JS carry a `code` the JS wrapper maps to classes: `RULVAR_CONFIG`
//! becomes the host's `ConfigError`; an error without it stays a plain `Error`.

use crate::core::ConfigError;
use napi::Error;

pub const CONFIG_CODE: &str = "RULVAR_CONFIG";

pub type JsError = Error<String>;

pub fn refusal(e: ConfigError) -> JsError {
    Error::new(CONFIG_CODE.to_owned(), e.message)
}

/// Keeps the status text, so a pending JS exception (`PendingException`) is not thrown twice.
pub fn from_napi(e: Error) -> JsError {
    Error::new(e.status.as_ref().to_owned(), e.reason.clone())
}
