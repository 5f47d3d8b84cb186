//! The hook protocol between a source and lib/hooks.js: which hooks there are (`Hook`, a
//! string enum the generated types carry, so lib/ is checked against the same list), what the
//! JS side hands over for one source (`SourceHooks`), and those hooks grouped by what they
//! serve (`Hooks`).

use super::jsthread::{JsHook, Port};
use napi::bindgen_prelude::{FunctionRef, Unknown};
use napi_derive::napi;
use std::sync::Arc;

/// A hook a source may have, called through the port. Each but `wake`, `toServer`, `listed`,
/// `pipe` and `trace`'s end resolves with text.
#[napi(string_enum = "camelCase")]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Hook {
    /// Finished calls are waiting in a batch; every source has it.
    Wake,
    /// `http.headers` as a function.
    Headers,
    /// The in-process bridge (lib/inprocess.js): connects the host's server to a fresh
    /// transport...
    Attach,
    /// ...hands it a message...
    ToServer,
    /// ...and detaches it, so the same server object can connect again.
    Detach,
    /// `http.oauth.authorize`: `{ url, reason }` to a redirect URL.
    OauthAuthorize,
    /// `http.oauth.store.load`: the stored value as JSON text.
    OauthLoad,
    /// `http.oauth.store.save`: `{ key, value }`.
    OauthSave,
    /// `http.oauth.assertion` or `tokenExchange.subjectToken` as a function, by name.
    OauthCredential,
    /// What a server asks back: `elicit`, `sample` and `roots` (lib/asks.js).
    Ask,
    /// The request tracer (lib/telemetry.js), set only while tracing.
    Trace,
    /// A big import's ToolDefs, page by page (lib/source.js).
    Listed,
    /// A stdio child's stdout, for Node to read (lib/pipe.js).
    Pipe,
}

/// The JS side's callbacks for one source (lib/hooks.js makes them): each is called through the
/// port (`NativePort`) as `(key, which)`, `which` its index in `hooks`.
#[napi(object, object_to_js = false)]
pub struct SourceHooks {
    /// The source's key in the port's registry.
    pub key: u32,
    /// The hooks the source has, in the order the port numbers them.
    pub hooks: Vec<Hook>,
    /// The in-process bridge's delivery on the JS thread, in a microtask (called directly, not
    /// through the port).
    #[napi(ts_type = "(text: string) => unknown")]
    pub to_server_soon: Option<FunctionRef<String, Unknown<'static>>>,
    /// `lock` given as the parsed object: its JSON text (a path is read here instead).
    pub lock_text: Option<String>,
}

/// One source's hooks, grouped by what they serve.
pub(super) struct Hooks {
    /// Finished calls are waiting in a batch.
    pub(super) wake: JsHook,
    pub(super) http: HttpHooks,
    pub(super) inprocess: InProcessHooks,
    /// What a server asks back.
    pub(super) ask: Option<JsHook>,
    /// The request tracer, while tracing.
    pub(super) trace: Option<JsHook>,
    /// A big import's ToolDefs, page by page.
    pub(super) listed: Option<JsHook>,
    /// stdio: the child's stdout, where Node reads it.
    pub(super) pipe: Option<JsHook>,
}

/// streamable-http: `http.headers` as a function, and `http.oauth`'s callbacks.
#[derive(Default)]
pub(super) struct HttpHooks {
    pub(super) headers: Option<JsHook>,
    pub(super) oauth_authorize: Option<JsHook>,
    pub(super) oauth_load: Option<JsHook>,
    pub(super) oauth_save: Option<JsHook>,
    pub(super) oauth_credential: Option<JsHook>,
}

/// inprocess: the bridge to the host's server object.
#[derive(Default)]
pub(super) struct InProcessHooks {
    pub(super) attach: Option<JsHook>,
    pub(super) to_server: Option<JsHook>,
    pub(super) detach: Option<JsHook>,
    pub(super) soon: Option<FunctionRef<String, Unknown<'static>>>,
}

impl SourceHooks {
    /// The hooks, each called through `port`, grouped; and the lock text. A source without
    /// `wake` is refused: finished calls reach the JS side only through it.
    pub(super) fn grouped(self, port: &Arc<Port>) -> napi::Result<(Hooks, Option<String>), String> {
        let (mut wake, mut http, mut ask, mut trace, mut listed, mut pipe) = Default::default();
        let mut inprocess = InProcessHooks {
            soon: self.to_server_soon,
            ..Default::default()
        };
        for (which, hook) in self.hooks.iter().enumerate() {
            let HttpHooks {
                headers,
                oauth_authorize,
                oauth_load,
                oauth_save,
                oauth_credential,
            } = &mut http;
            let slot: &mut Option<JsHook> = match hook {
                Hook::Wake => &mut wake,
                Hook::Headers => headers,
                Hook::Attach => &mut inprocess.attach,
                Hook::ToServer => &mut inprocess.to_server,
                Hook::Detach => &mut inprocess.detach,
                Hook::OauthAuthorize => oauth_authorize,
                Hook::OauthLoad => oauth_load,
                Hook::OauthSave => oauth_save,
                Hook::OauthCredential => oauth_credential,
                Hook::Ask => &mut ask,
                Hook::Trace => &mut trace,
                Hook::Listed => &mut listed,
                Hook::Pipe => &mut pipe,
            };
            // The first of a name, as the port would find it.
            slot.get_or_insert_with(|| JsHook::new(port, self.key, which as u32));
        }
        let Some(wake) = wake else {
            return Err(napi::Error::new(
                "GenericFailure".to_owned(),
                "mcp: a source's hooks must have 'wake'",
            ));
        };
        let hooks = Hooks {
            wake,
            http,
            inprocess,
            ask,
            trace,
            listed,
            pipe,
        };
        Ok((hooks, self.lock_text))
    }
}
