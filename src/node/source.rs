//! The native half of an `McpToolSource`: the validated config and (next) the connection.

use super::convert::to_raw;
use super::errors::{from_napi, refusal};
use crate::core::config::Config;
use napi::bindgen_prelude::{Env, JsValue, Unknown};
use napi_derive::napi;
use std::sync::Arc;

#[napi]
pub struct NativeSource {
    config: Arc<Config>,
    id: String,
}

#[napi]
impl NativeSource {
    /// Validates the config (contract §2) before any I/O; a refusal is a `ConfigError`.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, config: Unknown) -> napi::Result<Self, String> {
        let raw = to_raw(env.raw(), config.raw()).map_err(from_napi)?;
        let config = Config::parse(&raw).map_err(refusal)?;
        Ok(Self {
            id: config.id(),
            config: Arc::new(config),
        })
    }

    #[napi(getter)]
    pub fn id(&self) -> String {
        self.id.clone()
    }

    /// Whether the config was accepted with a drift policy of 'refuse' (read once).
    #[napi(getter)]
    pub fn refuses_drift(&self) -> bool {
        self.config.drift == crate::core::config::Drift::Refuse
    }
}
