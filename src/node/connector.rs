//! How a source connects from Node: the stdio child, the HTTP client (with the host's header
//! hook), or the host's in-process server object through the JS bridge.

use super::hooks::{never_settles, HeaderHook, JsAskHook, JsListed};
use super::jsthread::{Executor, HandOver, JsHook, TidyOnDrop};
use super::oauth::NodeOAuthHost;
use super::pipe::{JsPipe, Pipes};
use super::source_hooks::{Hooks, HttpHooks, InProcessHooks};
use super::tracing::JsTracer;
use crate::client::trace::Tracer;
use crate::core::config::{Config, Headers, Transport};
use crate::core::error::ConfigError;
use crate::core::sandbox::Sandbox;
use crate::core::secrets::Secrets;
use crate::source::{AskHook, Connector, Listed, SourceError};
use crate::transport::cassette::{Decided, Tape};
use crate::transport::http::{self, HeaderSource, StaticHeaders};
use crate::transport::inprocess::InProcessWire;
use crate::transport::oauth::OAuth;
use crate::transport::observe::Inbound;
use crate::transport::process::{sandbox, Children};
use crate::transport::stdio::{self, StdioSpec};
use crate::transport::stdout::ReadOn;
use crate::transport::Wire;
use futures::future::BoxFuture;
use std::sync::{Arc, Mutex};

/// The in-process attachment: `attach()` connects the host's server to a fresh JS transport.
pub(super) struct InProcess {
    pub(super) attach: JsHook,
    /// `toServer`, `detach` and the JS thread's direct hand-over.
    pub(super) bridge: Arc<HandOver>,
    /// Where the deliverer pushes the server's messages; replaced per connection.
    pub(super) inbound: Arc<Mutex<Option<Inbound>>>,
    /// Its environment's executor, on whose JS thread the connection's own task runs too.
    pub(super) executor: Arc<Executor>,
}

pub(super) struct NodeConnector {
    pub(super) config: Arc<Config>,
    pub(super) headers: Option<Arc<dyn HeaderSource>>,
    /// `http.oauth`: one per source, so its tokens outlive a connection.
    pub(super) oauth: Option<Arc<OAuth>>,
    pub(super) inprocess: Option<InProcess>,
    /// The stdio children of the Node environment that made this source.
    pub(super) children: Arc<Children>,
    pub(super) secrets: Arc<Secrets>,
    /// `elicit`, `sample` and `roots` (as a function), behind one callback.
    pub(super) ask: Option<Arc<dyn AskHook>>,
    /// The JS side's request tracer, when the host traces (lib/telemetry.js).
    pub(super) tracer: Option<Arc<JsTracer>>,
    /// Where a big import's ToolDefs go page by page (not for an in-process server, which
    /// lists on the JS thread itself: parsing there between its pages gains nothing).
    pub(super) listed: Option<Arc<dyn Listed>>,
    /// Who reads a stdio child's stdout when Node's loop can (`node::pipe`).
    pub(super) read_on: Option<Arc<dyn ReadOn>>,
    /// What the system could not enforce of the `sandbox` (with `onUnsupported: 'warn'`),
    /// until the JS side tells the host, once (`sandboxWarning()`).
    pub(super) unenforced: Mutex<Option<String>>,
    pub(super) warned: std::sync::atomic::AtomicBool,
    /// `cassette`: the exchange recorded to a file, or replayed from one.
    pub(super) tape: Option<Tape>,
    /// The source's wrapper and each of its imports' snapshots hold the connector: when it
    /// goes, the source's memory has gone, and the JS thread hands it back.
    _tidy: TidyOnDrop,
}

impl NodeConnector {
    /// The connector of `config`, from the hooks the JS side picked for its source; `Err`:
    /// `http.oauth`'s settings refused.
    pub(super) fn new(
        config: &Arc<Config>,
        hooks: Hooks,
        children: Arc<Children>,
        secrets: &Arc<Secrets>,
        pipes: &Arc<Pipes>,
        executor: &Arc<Executor>,
    ) -> napi::Result<Self, String> {
        let in_process = config.transport == Transport::InProcess;
        Ok(Self {
            headers: header_source(config, hooks.http.headers.clone(), secrets),
            oauth: oauth(config, hooks.http, secrets)?,
            inprocess: in_process
                .then(|| InProcess::of(hooks.inprocess, executor))
                .flatten(),
            children,
            ask: hooks
                .ask
                .map(|h| Arc::new(JsAskHook(h)) as Arc<dyn AskHook>),
            tracer: hooks.trace.map(|hook| Arc::new(JsTracer::new(hook))),
            listed: hooks
                .listed
                .filter(|_| !in_process)
                .map(|hook| Arc::new(JsListed(hook)) as Arc<dyn Listed>),
            read_on: hooks.pipe.map(|hook| {
                Arc::new(JsPipe {
                    hook,
                    pipes: pipes.clone(),
                }) as Arc<dyn ReadOn>
            }),
            unenforced: Mutex::new(None),
            warned: Default::default(),
            tape: config
                .cassette
                .clone()
                .map(|c| Tape::new(c, config.protocol, secrets.clone())),
            secrets: secrets.clone(),
            config: config.clone(),
            _tidy: TidyOnDrop::new(executor.port()),
        })
    }

    /// The stdio server's confinement, built for this spawn, and the policy in a line; `Err`:
    /// the refusal.
    fn confine(
        &self,
        policy: &Sandbox,
        command: &str,
        env: &[(String, String)],
        cwd: &Option<String>,
    ) -> Result<(sandbox::Confinement, String), String> {
        let program = crate::transport::process::program(command, env, cwd.as_deref());
        let prepared = sandbox::prepare(policy, &program)?;
        if let Some(what) = prepared.unenforced {
            if !self.warned.swap(true, std::sync::atomic::Ordering::Relaxed) {
                *crate::sync::lock(&self.unenforced) =
                    Some(format!("mcp: '{}': {what}", self.config.id()));
            }
        }
        Ok((prepared.confinement, policy.describe()))
    }

    /// The wire of the configured transport.
    fn open_wire(
        &self,
        inbound: Inbound,
    ) -> BoxFuture<'static, Result<Arc<dyn Wire>, SourceError<napi::Error>>> {
        match &self.config.transport {
            Transport::Stdio {
                command,
                args,
                env,
                cwd,
                stderr,
                sandbox,
            } => {
                // Built here, before the spawn: a policy the system cannot enforce refuses the
                // connect, typed.
                let sandbox = match sandbox
                    .as_ref()
                    .map(|policy| self.confine(policy, command, env, cwd))
                {
                    None => None,
                    Some(Ok(confined)) => Some(confined),
                    Some(Err(refused)) => {
                        return Box::pin(async move {
                            Err(SourceError::Refused(ConfigError::new(refused)))
                        })
                    }
                };
                let spec = StdioSpec {
                    command: command.clone(),
                    args: args.clone(),
                    env: env.clone(),
                    cwd: cwd.clone(),
                    stderr: *stderr,
                    children: self.children.clone(),
                    secrets: self.secrets.clone(),
                    read_on: self.read_on.clone(),
                    sandbox,
                };
                let result = stdio::spawn(spec, inbound).map(|w| w as Arc<dyn Wire>);
                Box::pin(async move { result.map_err(SourceError::Failed) })
            }
            Transport::Http { url, .. } => {
                let headers = self
                    .headers
                    .clone()
                    .unwrap_or_else(|| Arc::new(StaticHeaders(Vec::new())));
                let result = http::open(
                    url,
                    headers,
                    self.oauth.clone(),
                    inbound,
                    self.secrets.clone(),
                )
                .map(|w| w as Arc<dyn Wire>);
                Box::pin(async move { result.map_err(SourceError::Failed) })
            }
            Transport::InProcess => self.attach(inbound),
        }
    }

    /// The in-process wire: the host's server attached to a fresh JS transport.
    fn attach(
        &self,
        inbound: Inbound,
    ) -> BoxFuture<'static, Result<Arc<dyn Wire>, SourceError<napi::Error>>> {
        let Some(hooks) = &self.inprocess else {
            return Box::pin(async {
                Err(SourceError::Failed(
                    "mcp: the in-process bridge is missing".into(),
                ))
            });
        };
        if let Ok(mut slot) = hooks.inbound.lock() {
            *slot = Some(inbound);
        }
        let attach = hooks.attach.clone();
        let bridge = hooks.bridge.clone();
        Box::pin(async move {
            // The very error the server's connect() threw is handed back untouched. A
            // connect() whose promise was collected unsettled never ends: the connect
            // timeout does (it is not the host's error, and napi's words are no answer).
            match attach.settled(String::new()).await {
                Ok(_) => {}
                Err(e) if never_settles(&e) => std::future::pending::<()>().await,
                Err(e) => return Err(SourceError::Host(e)),
            }
            Ok(InProcessWire::new(bridge) as Arc<dyn Wire>)
        })
    }

    /// The sandbox warning not yet told, taken (`onUnsupported: 'warn'`).
    pub(super) fn take_warning(&self) -> Option<String> {
        crate::sync::lock(&self.unenforced).take()
    }
}

impl Connector for NodeConnector {
    /// An in-process server's `connect` may throw: its very error goes back to the host.
    type HostError = napi::Error;

    /// With a cassette: the wire it replays, or the real one recorded.
    fn open(
        &self,
        inbound: Inbound,
    ) -> BoxFuture<'static, Result<Arc<dyn Wire>, SourceError<napi::Error>>> {
        let Some(tape) = &self.tape else {
            return self.open_wire(inbound);
        };
        match tape.decide() {
            Err(refused) => {
                Box::pin(async move { Err(SourceError::Refused(ConfigError::new(refused))) })
            }
            Ok(Decided::Replay(player)) => {
                let wire = player.connect(inbound);
                Box::pin(async move { Ok(wire) })
            }
            Ok(Decided::Record(recorder)) => {
                let (tapped, conn) = recorder.tap(&inbound);
                let opened = self.open_wire(tapped);
                Box::pin(async move { Ok(recorder.wrap(opened.await?, conn)) })
            }
        }
    }

    fn issuer(&self) -> Option<String> {
        self.oauth.as_ref().and_then(|o| o.issuer())
    }

    fn ask_hook(&self) -> Option<Arc<dyn AskHook>> {
        self.ask.clone()
    }

    fn tracer(&self) -> Option<Arc<dyn Tracer>> {
        self.tracer.clone().map(|t| t as Arc<dyn Tracer>)
    }

    fn listed(&self) -> Option<Arc<dyn Listed>> {
        self.listed.clone()
    }

    /// An in-process connection's futures are polled on the JS thread (`jsthread`): its deadline
    /// timer too, so a request sent there wakes no thread of the runtime.
    fn spawn(&self, task: BoxFuture<'static, ()>) {
        match &self.inprocess {
            Some(hooks) => hooks.executor.spawn_detached(task),
            None => {
                tokio::spawn(task);
            }
        }
    }

    /// An in-process server left half-connected would refuse the next connect.
    fn abandon(&self) -> BoxFuture<'static, ()> {
        match &self.inprocess {
            Some(hooks) => crate::transport::inprocess::Bridge::detach(hooks.bridge.as_ref()),
            None => Box::pin(async {}),
        }
    }
}

impl InProcess {
    /// The attachment, when the JS side handed over the whole bridge.
    fn of(hooks: InProcessHooks, executor: &Arc<Executor>) -> Option<Self> {
        let InProcessHooks {
            attach: Some(attach),
            to_server: Some(to_server),
            detach: Some(detach),
            soon: Some(soon),
        } = hooks
        else {
            return None;
        };
        Some(Self {
            attach,
            bridge: Arc::new(HandOver {
                to_server,
                detach,
                soon,
            }),
            inbound: Arc::new(Mutex::new(None)),
            executor: executor.clone(),
        })
    }
}

/// `http.headers`: the record, or the host's function behind its hook (every value it returns
/// a secret).
fn header_source(
    config: &Config,
    hook: Option<JsHook>,
    secrets: &Arc<Secrets>,
) -> Option<Arc<dyn HeaderSource>> {
    match &config.transport {
        Transport::Http {
            headers: Headers::Static(h),
            ..
        } => Some(Arc::new(StaticHeaders(h.clone()))),
        Transport::Http {
            headers: Headers::Hook,
            ..
        } => hook.map(|hook| {
            Arc::new(HeaderHook {
                hook,
                secrets: secrets.clone(),
            }) as Arc<dyn HeaderSource>
        }),
        _ => None,
    }
}

/// `http.oauth`: one flow per source, so its tokens outlive a connection.
fn oauth(
    config: &Config,
    hooks: HttpHooks,
    secrets: &Arc<Secrets>,
) -> napi::Result<Option<Arc<OAuth>>, String> {
    let Transport::Http {
        url,
        oauth: Some(settings),
        ..
    } = &config.transport
    else {
        return Ok(None);
    };
    let host = Arc::new(NodeOAuthHost {
        authorize: hooks.oauth_authorize,
        load: hooks.oauth_load,
        save: hooks.oauth_save,
        credential: hooks.oauth_credential,
        secrets: secrets.clone(),
    });
    OAuth::new((**settings).clone(), url, host, secrets.clone())
        .map(Some)
        .map_err(|e| napi::Error::new("GenericFailure".to_owned(), e.message))
}
