//! streamable HTTP: POST per message, JSON or SSE answers, `Mcp-Session-Id`,
//! a GET stream for server notifications, DELETE on close.
//!
//! Headers come from the config's record or the host's hook, fetched afresh before EVERY wire
//! request, so a rotated token reaches the very next one. Redirects are followed only within
//! the same origin: header values are credentials and must not reach another host.

mod answer;
mod stream;

use super::oauth::{OAuth, Presented, DPOP};
use super::observe::Inbound;
use super::web::{self, describe, read_text};
use super::{Route, Wire, MAX_FRAME_BYTES};
use crate::core::error::Failure;
use crate::core::headers::needs_encoding;
use crate::core::secrets::Secrets;
use crate::core::url::shown_url;
use crate::sync::lock;
use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue, ACCEPT, AUTHORIZATION, CONTENT_TYPE};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::task::JoinSet;

/// Supplies the headers of one wire request.
pub trait HeaderSource: Send + Sync {
    fn headers(&self) -> BoxFuture<'static, Result<Vec<(String, String)>, String>>;
}

pub struct StaticHeaders(pub Vec<(String, String)>);

impl HeaderSource for StaticHeaders {
    fn headers(&self) -> BoxFuture<'static, Result<Vec<(String, String)>, String>> {
        let h = self.0.clone();
        Box::pin(async move { Ok(h) })
    }
}

const SESSION: &str = "mcp-session-id";
const MCP_METHOD: &str = "mcp-method";
const MCP_NAME: &str = "mcp-name";
const PROTOCOL: &str = "mcp-protocol-version";
const LAST_EVENT_ID: &str = "last-event-id";
/// How long a DELETE of the session may take at close.
const DELETE_TIMEOUT: Duration = Duration::from_secs(2);
pub(super) const DEFAULT_RETRY: Duration = Duration::from_secs(1);
/// Redirects followed for one request (all within the origin) before it fails.
const MAX_REDIRECTS: usize = 5;

#[derive(Default)]
struct Opening {
    /// close() began: no session-opening POST is sent from now on.
    closing: bool,
    on_wire: usize,
}

/// One session-opening POST on the wire, from its sending until its session id is recorded.
struct OnWire<'a>(&'a Shared);

impl<'a> OnWire<'a> {
    fn enter(shared: &'a Shared) -> Result<Self, Failure> {
        let mut opening = lock(&shared.opening);
        if opening.closing {
            return Err("mcp: the connection was closed".into());
        }
        opening.on_wire += 1;
        Ok(Self(shared))
    }
}

impl Drop for OnWire<'_> {
    fn drop(&mut self) {
        lock(&self.0.opening).on_wire -= 1;
        self.0.opened.notify_waiters();
    }
}

#[derive(Default)]
struct Session {
    id: Option<String>,
    protocol: Option<String>,
}

struct Shared {
    url: String,
    /// `url` as error texts show it: without the credentials it may carry.
    shown: String,
    /// Taken at shutdown, so pooled keep-alive sockets close with the source, not at GC.
    client: Mutex<Option<reqwest::Client>>,
    headers: Arc<dyn HeaderSource>,
    /// `http.oauth`: the bearer of every request, and what a 401 leads to.
    oauth: Option<Arc<OAuth>>,
    inbound: Inbound,
    secrets: Arc<Secrets>,
    session: Mutex<Session>,
    tasks: Mutex<JoinSet<()>>,
    /// The tasks of the modern requests in flight, by request id: cancelling one closes its
    /// stream, which is how a 2026-07-28 request is cancelled over HTTP.
    streams: Mutex<HashMap<u64, tokio::task::AbortHandle>>,
    /// The POSTs sent before the handshake agreed on a version (the one that may open a
    /// session) that are on the wire. close() waits for their answers (bounded) before it
    /// aborts them: a server that already made the session answers with its id, and only with
    /// the id can the session be deleted.
    opening: Mutex<Opening>,
    opened: tokio::sync::Notify,
    /// Set once the close sequence ran: a second shutdown (close() and a failed handshake
    /// both release the connection) waits for the first instead of racing it to the client.
    shut: tokio::sync::OnceCell<()>,
    runtime: tokio::runtime::Handle,
}

pub struct HttpWire {
    shared: Arc<Shared>,
}

/// `secrets` redacts what the server's bodies echo of the request (its header values).
pub fn open(
    url: &str,
    headers: Arc<dyn HeaderSource>,
    oauth: Option<Arc<OAuth>>,
    inbound: Inbound,
    secrets: Arc<Secrets>,
) -> Result<Arc<HttpWire>, String> {
    // Requests are sent from the JS thread too, which is outside the runtime.
    let runtime = tokio::runtime::Handle::try_current()
        .map_err(|_| "mcp: the HTTP transport needs the async runtime".to_owned())?;
    let shown = shown_url(url);
    let origin =
        reqwest::Url::parse(url).map_err(|e| format!("mcp: invalid url '{shown}': {e}"))?;
    let policy = reqwest::redirect::Policy::custom(move |attempt| {
        let target = attempt.url().origin();
        if target != origin.origin() {
            let shown = target.ascii_serialization();
            attempt.error(format!(
                "refused a redirect to another origin ({shown}): header values are not sent across origins"
            ))
        } else if attempt.previous().len() > MAX_REDIRECTS {
            attempt.error("too many redirects")
        } else {
            attempt.follow()
        }
    });
    let client = web::client(reqwest::Client::builder().redirect(policy))?;
    Ok(Arc::new(HttpWire {
        shared: Arc::new(Shared {
            url: url.to_owned(),
            shown,
            client: Mutex::new(Some(client)),
            headers,
            oauth,
            inbound,
            secrets,
            session: Mutex::new(Session::default()),
            tasks: Mutex::new(JoinSet::new()),
            streams: Mutex::new(HashMap::new()),
            opening: Mutex::new(Opening::default()),
            opened: tokio::sync::Notify::new(),
            shut: tokio::sync::OnceCell::new(),
            runtime,
        }),
    }))
}

impl Shared {
    /// Lets a session-opening POST on the wire be answered (bounded), aborts the connection's
    /// tasks, deletes the session, and lets the pooled sockets go.
    async fn close_sequence(self: Arc<Self>) {
        let deadline = tokio::time::Instant::now() + DELETE_TIMEOUT;
        // A handshake close() overtook: its answer may carry the id of a session the server
        // already made, which would otherwise stay open there. One not sent yet (its headers
        // still being made) is not sent any more.
        lock(&self.opening).closing = true;
        let _ = tokio::time::timeout_at(deadline, async {
            loop {
                let answered = self.opened.notified();
                if lock(&self.opening).on_wire == 0 {
                    break;
                }
                answered.await;
            }
        })
        .await;
        lock(&self.tasks).abort_all();
        let session = lock(&self.session).id.take();
        if let Some(id) = session {
            // The whole DELETE is bounded, its headers included: a refresh or an
            // authorization in flight must not hold close() up.
            let delete = async {
                let (mut headers, _) = self
                    .request_headers("application/json, text/event-stream", "DELETE")
                    .await?;
                if let Ok(v) = HeaderValue::from_str(&id) {
                    headers.insert(SESSION, v);
                }
                let client = self.client()?;
                client
                    .delete(&self.url)
                    .headers(headers)
                    .send()
                    .await
                    .map_err(|e| Failure::from(e.to_string()))
            };
            let _ = tokio::time::timeout_at(deadline, delete).await;
        }
        lock(&self.client).take();
        self.inbound.close("mcp: the connection was closed".into());
    }

    fn client(&self) -> Result<reqwest::Client, String> {
        lock(&self.client)
            .clone()
            .ok_or_else(|| "mcp: the connection was closed".to_owned())
    }

    fn spawn(
        self: &Arc<Self>,
        fut: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> tokio::task::AbortHandle {
        let mut tasks = lock(&self.tasks);
        // Reap finished tasks so a long-lived connection does not accumulate handles.
        while tasks.try_join_next().is_some() {}
        tasks.spawn_on(fut, &self.runtime)
    }

    /// The headers of one `method` request: the host's first, then the protocol's (which win),
    /// and the OAuth credentials (the bearer, or a DPoP-bound token with its proof), which are
    /// returned as well (a 401 is answered for the token it refused, or the nonce it carried).
    async fn request_headers(
        &self,
        accept: &'static str,
        method: &str,
    ) -> Result<(HeaderMap, Option<Presented>), Failure> {
        let mut map = HeaderMap::new();
        for (name, value) in self.headers.headers().await? {
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| format!("mcp: http.headers has an invalid header name '{name}'"))?;
            // Values are secrets: an invalid one is named by its header only.
            let value = HeaderValue::from_str(&value)
                .map_err(|_| format!("mcp: http.headers has an invalid value for '{name}'"))?;
            map.insert(name, value);
        }
        map.insert(ACCEPT, HeaderValue::from_static(accept));
        let mut presented = None;
        if let Some(oauth) = &self.oauth {
            if let Some(p) = oauth.present(method, &self.url).await? {
                let value = HeaderValue::from_str(&p.authorization).map_err(|_| {
                    "mcp: oauth: the access token cannot be sent in a header".to_owned()
                })?;
                map.insert(AUTHORIZATION, value);
                if let Some(proof) = p
                    .proof
                    .as_deref()
                    .and_then(|v| HeaderValue::from_str(v).ok())
                {
                    map.insert(DPOP, proof);
                }
                presented = Some(p);
            }
        }
        let session = lock(&self.session);
        if let Some(id) = session
            .id
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            map.insert(SESSION, id);
        }
        if let Some(p) = session
            .protocol
            .as_deref()
            .and_then(|v| HeaderValue::from_str(v).ok())
        {
            map.insert(PROTOCOL, p);
        }
        drop(session);
        Ok((map, presented))
    }

    /// One POST (with `body`) or GET, sent again after OAuth recovered from a 401 (or a 403
    /// `insufficient_scope`): the server did not process a request it refused so.
    async fn send(
        &self,
        body: Option<&str>,
        accept: &'static str,
        last_id: Option<&str>,
        opening: bool,
        route: Option<&HeaderMap>,
    ) -> Result<reqwest::Response, Failure> {
        let mut recoveries = 0;
        loop {
            let method = if body.is_some() { "POST" } else { "GET" };
            let (mut headers, presented) = self.request_headers(accept, method).await?;
            // The request-metadata headers win over the host's.
            for (name, value) in route.into_iter().flatten() {
                headers.insert(name.clone(), value.clone());
            }
            if let Some(id) = last_id.and_then(|v| HeaderValue::from_str(v).ok()) {
                headers.insert(LAST_EVENT_ID, id);
            }
            let client = self.client()?;
            let request = match body {
                Some(b) => client
                    .post(&self.url)
                    .headers(headers)
                    .header(CONTENT_TYPE, "application/json")
                    .body(b.to_owned()),
                None => client.get(&self.url).headers(headers),
            };
            // A POST that may open a session counts as on the wire from here until its answer's
            // session id is recorded (close() waits for it; see `opening`).
            let on_wire = match opening {
                true => Some(OnWire::enter(self)?),
                false => None,
            };
            let response = request.send().await.map_err(|e| {
                // Past connecting, the request may have reached the server.
                let unsent = e.is_connect() || e.is_builder();
                let message = format!("mcp: {method} {} failed: {}", self.shown, describe(e));
                match unsent {
                    true => Failure::from(message),
                    false => Failure::lost(message),
                }
            })?;
            if let Some(id) = response
                .headers()
                .get(SESSION)
                .and_then(|v| v.to_str().ok())
            {
                lock(&self.session).id = Some(id.to_owned());
            }
            drop(on_wire);
            let Some(oauth) = &self.oauth else {
                return Ok(response);
            };
            match oauth
                .answered(&self.url, &self.shown, response, presented, recoveries)
                .await?
            {
                Some(response) => return Ok(response),
                None => recoveries += 1,
            }
        }
    }

    /// The initialized notification, awaited: any 2xx is acceptance (202 by the spec; the SDK
    /// client takes any success), anything else fails the handshake as it fails the SDK's connect.
    async fn deliver_initialized(&self, body: String) -> Result<(), String> {
        let response = self
            .send(
                Some(&body),
                "application/json, text/event-stream",
                None,
                false,
                None,
            )
            .await
            .map_err(|f| f.message)?;
        let status = response.status();
        if status.is_success() {
            return Ok(());
        }
        let detail = read_text(response, 512, &self.secrets).await;
        Err(format!(
            "mcp: POST {} answered HTTP {status} to notifications/initialized: {detail}",
            self.shown
        ))
    }
}

/// The request-metadata headers of a modern request (made when it is sent, so the route can be
/// borrowed); they win over the host's. A name that is not plain printable ASCII travels in the
/// `=?base64?…?=` form.
fn route_headers(route: &Route<'_>) -> HeaderMap {
    let mut headers = HeaderMap::new();
    headers.insert(PROTOCOL, HeaderValue::from_static(route.version));
    if let Ok(method) = HeaderValue::from_str(route.method) {
        headers.insert(MCP_METHOD, method);
    }
    let encoded = |value: &str| match needs_encoding(value) {
        false => HeaderValue::from_str(value),
        true => HeaderValue::from_str(&format!("=?base64?{}?=", STANDARD.encode(value))),
    };
    if let Some(Ok(name)) = route.name.map(encoded) {
        headers.insert(MCP_NAME, name);
    }
    for (name, value) in &route.params {
        if let (Ok(name), Ok(value)) = (HeaderName::from_bytes(name.as_bytes()), encoded(value)) {
            headers.insert(name, value);
        }
    }
    headers
}

fn content_type(response: &reqwest::Response) -> String {
    response
        .headers()
        .get(CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("")
        .to_ascii_lowercase()
}

/// A JSON body: one message, bounded like every frame.
async fn read_frame(response: reqwest::Response) -> Result<Vec<u8>, String> {
    web::read_body(response, MAX_FRAME_BYTES)
        .await
        .map_err(|why| why.unwrap_or_else(super::frame_limit_refusal))
}

impl Wire for HttpWire {
    fn send(&self, message: String, request_id: Option<u64>) -> Result<(), String> {
        let opening = lock(&self.shared.session).protocol.is_none();
        let post = self.shared.clone().post(message, request_id, opening, None);
        self.shared.spawn(post);
        Ok(())
    }

    /// A modern request opens no session: nothing to wait for at close.
    fn send_routed(
        &self,
        message: String,
        request_id: u64,
        route: Route<'_>,
    ) -> Result<(), String> {
        let post = self.shared.clone().post(
            message,
            Some(request_id),
            false,
            Some(route_headers(&route)),
        );
        let handle = self.shared.spawn(post);
        let mut streams = lock(&self.shared.streams);
        streams.retain(|_, h| !h.is_finished());
        streams.insert(request_id, handle);
        Ok(())
    }

    /// Closes a modern request's stream: the server sees the request cancelled.
    fn close_stream(&self, request_id: u64) -> bool {
        match lock(&self.shared.streams).remove(&request_id) {
            Some(handle) if !handle.is_finished() => {
                handle.abort();
                true
            }
            _ => false,
        }
    }

    /// Every later request carries the agreed version. Resolves once the server accepted the
    /// initialized notification and answered the GET for its notification stream (open, or
    /// refused: a 405 says it has none). Both are awaited because a server sets the session up
    /// while it takes the notification (server-everything registers one more tool then), and
    /// announces later changes only on that stream: a list sent before the notification was
    /// taken can miss a tool, and a `list_changed` sent before the stream is open is lost.
    /// The work runs as a task of the connection, so close() (which aborts the tasks) ends a
    /// handshake waiting here at once; the handshake bounds the wait with the connect budget.
    fn initialized(
        &self,
        protocol_version: &str,
        notification: String,
    ) -> BoxFuture<'static, Result<(), String>> {
        lock(&self.shared.session).protocol = Some(protocol_version.to_owned());
        let shared = self.shared.clone();
        let (done, delivered) = tokio::sync::oneshot::channel();
        self.shared.spawn(async move {
            if let Err(e) = shared.deliver_initialized(notification).await {
                let _ = done.send(Err(e));
                return;
            }
            let stream = shared.open_stream(None).await;
            let _ = done.send(Ok(()));
            if let Some(response) = stream {
                shared.listen(response).await;
            }
        });
        Box::pin(async move {
            delivered
                .await
                .unwrap_or_else(|_| Err("mcp: the connection was closed".to_owned()))
        })
    }

    fn session_id(&self) -> Option<String> {
        let id = lock(&self.shared.session).id.clone()?;
        Some(self.shared.secrets.redact(&id))
    }

    fn shutdown(&self) -> BoxFuture<'static, ()> {
        let shared = self.shared.clone();
        Box::pin(async move {
            let once = shared.clone();
            once.shut.get_or_init(|| shared.close_sequence()).await;
        })
    }
}
