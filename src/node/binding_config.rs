//! `NativeConfig`: the host's config as the core checked it. lib/source.js makes one before it
//! reads any key of the config to pick hooks, so a config the core refuses is refused with the
//! core's typed error (the first failed check, in the core's order) and nothing of it is read
//! on the JS side first; `NativeSource` is then made from it, without checking it again.

use super::convert::to_raw;
use super::errors::{from_napi, refusal};
use crate::core::config::{Config, Transport};
use napi::bindgen_prelude::{Env, JsValue, Unknown};
use napi_derive::napi;
use std::sync::Arc;

/// A host config the core accepted (every check of `core::config`, before any I/O).
#[napi]
pub struct NativeConfig {
    pub(super) config: Arc<Config>,
}

#[napi]
impl NativeConfig {
    /// Checks the config; the first failed check is a `ConfigError`.
    #[napi(constructor, catch_unwind)]
    pub fn new(env: Env, config: Unknown) -> napi::Result<Self, String> {
        let raw = to_raw(env.raw(), config.raw()).map_err(from_napi)?;
        let config = Config::parse(&raw).map_err(refusal)?;
        Ok(Self {
            config: Arc::new(config),
        })
    }

    /// The transport the config names, as the config names it: what decides which hooks the
    /// JS side makes.
    #[napi(getter, ts_return_type = "'stdio' | 'streamable-http' | 'inprocess'")]
    pub fn transport(&self) -> &'static str {
        transport_word(&self.config.transport)
    }

    /// The digest of the stdio server's `sandbox` policy, if it has one: each of its ToolDefs
    /// carries it (non-enumerable), and `toolsetAuthorityHash` hashes it with the tool's
    /// authority, so a looser confinement is another authority.
    #[napi(getter)]
    pub fn sandbox_digest(&self) -> Option<String> {
        match &self.config.transport {
            Transport::Stdio {
                sandbox: Some(sandbox),
                ..
            } => Some(sandbox.digest()),
            _ => None,
        }
    }
}

/// The config's word for a transport (the tests below hold each to what parses as it).
fn transport_word(transport: &Transport) -> &'static str {
    match transport {
        Transport::Stdio { .. } => "stdio",
        Transport::Http { .. } => "streamable-http",
        Transport::InProcess => "inprocess",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::raw::Raw;

    #[test]
    fn each_transport_word_is_the_one_that_parses_as_it() {
        let s = |v: &str| Raw::String(v.into());
        let configs = [
            vec![("transport", s("stdio")), ("command", s("node"))],
            vec![
                ("transport", s("streamable-http")),
                ("url", s("http://127.0.0.1:1/mcp")),
            ],
            vec![
                ("transport", s("inprocess")),
                (
                    "server",
                    Raw::Object(vec![("connect".into(), Raw::Function)]),
                ),
            ],
        ];
        for members in configs {
            let word = members[0].1.clone();
            let raw = Raw::Object(members.into_iter().map(|(k, v)| (k.into(), v)).collect());
            let config = Config::parse(&raw).unwrap();
            assert_eq!(Raw::String(transport_word(&config.transport).into()), word);
        }
    }
}
