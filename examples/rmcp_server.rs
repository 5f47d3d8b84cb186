//! A test server built with the official Rust SDK (`rmcp`), so the suite checks the addon against
//! a server that shares no code with it or with the TypeScript SDK. `cargo test` builds it;
//! `__test__/interop.test.ts` and `__test__/rmcp-modern.test.ts` run it.
//!
//! `rmcp_server` (or `rmcp_server stdio`) serves stdio; `rmcp_server http` serves streamable HTTP
//! on 127.0.0.1 at an ephemeral port and prints `listening on http://127.0.0.1:<port>/mcp` on
//! stderr once it accepts connections.
//!
//! Tools: `echo` (text), `add` (with an output schema and structured content), `fail` (an
//! `isError` result), and `add_tool`, which adds a tool to the list and announces it with
//! `notifications/tools/list_changed`, at once or `delay_ms` later (outside any request, so over
//! HTTP it can only travel on the session's GET stream).
//!
//! A second argument picks the protocol era: `legacy` (the default, what the lines above
//! describe) or `modern` (`rmcp_server stdio modern`, `rmcp_server http modern`). A modern
//! server supports 2026-07-28 only: it answers `server/discover`, and refuses `initialize`
//! (rmcp then ends a stdio connection, see `serve_stdio`). Beside the four tools above it has
//! two that ask the client back through Multi Round-Trip Requests: `confirm` (an elicitation)
//! and `brief` (a sampling request and the roots, in one round). Each answers its first call
//! with `resultType: "input_required"`, `inputRequests` and a `requestState`; the retry must
//! bring the `inputResponses` and the `requestState` exactly as issued (the state is a handle
//! to what the server kept, good for one retry), and its result says what was answered. There
//! `add_tool` announces the change on each open `subscriptions/listen` stream, which is the
//! only way a 2026-07-28 server sends it.
//!
//! With `RMCP_STARTS=<file>` in its environment, each start of the server appends its pid to
//! that file.

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, InputRequest, InputRequests, InputRequiredResult, JsonObject, ListToolsResult,
    PaginatedRequestParams, ProtocolVersion, ServerCapabilities, ServerConfig, SubscriptionFilter,
    Tool,
};
use rmcp::service::{RequestContext, RoleServer, SubscriptionContext, SubscriptionSink};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{json, Value};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

fn object(value: Value) -> Arc<JsonObject> {
    match value {
        Value::Object(map) => Arc::new(map),
        _ => unreachable!("schemas here are objects"),
    }
}

fn fixed_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "echo",
            "Echo text.",
            object(json!({
                "type": "object",
                "properties": { "text": { "type": "string" } },
                "required": ["text"]
            })),
        ),
        Tool::new(
            "add",
            "Add two numbers.",
            object(json!({
                "type": "object",
                "properties": { "a": { "type": "number" }, "b": { "type": "number" } },
                "required": ["a", "b"]
            })),
        )
        .with_raw_output_schema(object(json!({
            "type": "object",
            "properties": { "sum": { "type": "number" } },
            "required": ["sum"]
        }))),
        Tool::new("fail", "Always fails.", object(json!({ "type": "object" }))),
        Tool::new(
            "add_tool",
            "Add a tool named `name` and announce it with tools/list_changed, after `delay_ms`.",
            object(json!({
                "type": "object",
                "properties": {
                    "name": { "type": "string" },
                    "delay_ms": { "type": "integer", "minimum": 0 }
                },
                "required": ["name"]
            })),
        ),
    ]
}

/// The tools only the modern server has.
fn asking_tools() -> Vec<Tool> {
    vec![
        Tool::new(
            "confirm",
            "Ask the person to approve `action` (an elicitation), then say what they answered.",
            object(json!({
                "type": "object",
                "properties": { "action": { "type": "string" } },
                "required": ["action"]
            })),
        ),
        Tool::new(
            "brief",
            "Ask the client's model to summarize `topic` (sampling) and for its roots.",
            object(json!({
                "type": "object",
                "properties": { "topic": { "type": "string" } },
                "required": ["topic"]
            })),
        ),
    ]
}

/// An input request as the 2026-07-28 schema writes it; rmcp's own types check the shape.
fn input_request(request: Value) -> InputRequest {
    serde_json::from_value(request).expect("a well-formed input request")
}

/// A modern server's state, shared by every handler it makes: over HTTP a 2026-07-28 request
/// belongs to no session, so the retry of a call may reach another `TestServer` than its first
/// round did.
#[derive(Default)]
struct Modern {
    /// The `requestState`s issued and not yet redeemed: each names its tool and arguments.
    issued: Mutex<HashMap<String, (String, JsonObject)>>,
    /// How many states were issued, for fresh names.
    count: Mutex<u64>,
    /// The open `subscriptions/listen` streams (each knows the id of its request).
    listeners: Mutex<Vec<SubscriptionSink>>,
}

/// One per session (one per process over stdio): the tools added by `add_tool` belong to it.
/// A modern server (`modern` set) has one for all its handlers (see `Modern`).
#[derive(Clone, Default)]
struct TestServer {
    added: Arc<Mutex<Vec<String>>>,
    modern: Option<Arc<Modern>>,
}

fn text(result: String) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(result)]).into()
}

impl ServerHandler for TestServer {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(
            ServerCapabilities::builder()
                .enable_tools()
                .enable_tool_list_changed()
                .build(),
        )
        .with_server_info(Implementation::new("rmcp-test-server", "1.0.0"))
    }

    fn supported_protocol_versions(&self) -> Cow<'static, [ProtocolVersion]> {
        match self.modern {
            // 2026-07-28 only: `initialize` is refused, since no version left has it.
            Some(_) => Cow::Owned(vec![ProtocolVersion::V_2026_07_28]),
            // Today's answer, unchanged: every version rmcp knows (the addon's `initialize`
            // comes first, so it is spoken to in 2025-11-25).
            None => Cow::Borrowed(ProtocolVersion::KNOWN_VERSIONS),
        }
    }

    fn accepted_subscription_filter(
        &self,
        _requested: &SubscriptionFilter,
    ) -> Option<SubscriptionFilter> {
        // rmcp intersects this with what was requested and what `get_info` declares.
        self.modern
            .as_ref()
            .map(|_| SubscriptionFilter::builder().tools_list_changed().build())
    }

    async fn listen(&self, context: SubscriptionContext) -> Result<(), ErrorData> {
        let Some(modern) = &self.modern else {
            return Ok(());
        };
        let id = context.sink().id().clone();
        modern
            .listeners
            .lock()
            .unwrap()
            .push(context.sink().clone());
        context.cancelled().await;
        modern.listeners.lock().unwrap().retain(|s| s.id() != &id);
        Ok(())
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = fixed_tools();
        if self.modern.is_some() {
            tools.extend(asking_tools());
        }
        for name in self.added.lock().unwrap().iter() {
            tools.push(Tool::new(
                name.clone(),
                "Added at run time.",
                object(json!({ "type": "object" })),
            ));
        }
        Ok(ListToolsResult::with_all_items(tools))
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        if let (Some(modern), "confirm" | "brief") = (&self.modern, request.name.as_ref()) {
            return modern.ask(request);
        }
        let args = request.arguments.unwrap_or_default();
        let number = |key: &str| {
            args.get(key)
                .and_then(Value::as_f64)
                .ok_or_else(|| ErrorData::invalid_params(format!("'{key}' must be a number"), None))
        };
        match request.name.as_ref() {
            "echo" => {
                let said = args.get("text").and_then(Value::as_str).unwrap_or_default();
                Ok(text(said.to_owned()))
            }
            "add" => {
                let sum = number("a")? + number("b")?;
                let mut result = CallToolResult::structured(json!({ "sum": sum }));
                result.content = vec![ContentBlock::text(format!("{sum}"))];
                Ok(result.into())
            }
            "fail" => Ok(CallToolResult::error(vec![ContentBlock::text("it broke")]).into()),
            "add_tool" => {
                let Some(name) = args.get("name").and_then(Value::as_str) else {
                    return Err(ErrorData::invalid_params("'name' must be a string", None));
                };
                let delay = args.get("delay_ms").and_then(Value::as_u64).unwrap_or(0);
                let (added, name, peer) = (self.added.clone(), name.to_owned(), context.peer);
                let answer = format!("{name} will be added");
                let modern = self.modern.clone();
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    added.lock().unwrap().push(name);
                    match modern {
                        // 2026-07-28: only on the subscription streams (rmcp adds each one's
                        // subscription id).
                        Some(modern) => {
                            let sinks = modern.listeners.lock().unwrap().clone();
                            for sink in sinks {
                                let _ = sink.notify_tool_list_changed().await;
                            }
                        }
                        None => {
                            let _ = peer.notify_tool_list_changed().await;
                        }
                    }
                });
                Ok(text(answer))
            }
            other => {
                let added = self.added.lock().unwrap().iter().any(|n| n == other);
                if added {
                    Ok(text(format!("{other} ran")))
                } else {
                    Err(ErrorData::invalid_params(
                        format!("no tool '{other}'"),
                        None,
                    ))
                }
            }
        }
    }
}

impl Modern {
    /// `confirm` and `brief`: the first round asks, the retry answers.
    fn ask(&self, request: CallToolRequestParams) -> Result<CallToolResponse, ErrorData> {
        let tool = request.name.to_string();
        let args = request.arguments.unwrap_or_default();
        let Some(state) = request.request_state else {
            if request.input_responses.is_some() {
                return Err(ErrorData::invalid_params(
                    "inputResponses came without the requestState",
                    None,
                ));
            }
            return Ok(self.first_round(&tool, args)?.into());
        };
        // The state must be one this server issued, for this tool and these arguments, and
        // not redeemed yet: a client that altered it, or sent it twice, is refused.
        let issued = self.issued.lock().unwrap().remove(&state);
        match issued {
            Some((t, a)) if t == tool && a == args => {}
            _ => {
                return Err(ErrorData::invalid_params(
                    format!("requestState '{state}' is not one this server issued for this call"),
                    None,
                ))
            }
        }
        let responses = request.input_responses.unwrap_or_default();
        let answer = |key: &str| {
            responses.get(key).cloned().ok_or_else(|| {
                ErrorData::invalid_params(format!("inputResponses has no '{key}'"), None)
            })
        };
        let said = match tool.as_str() {
            "confirm" => {
                let approval = answer("approval")?;
                json!({
                    "tool": "confirm",
                    "action": args.get("action"),
                    "answer": approval.get("action"),
                    "content": approval.get("content"),
                    "requestState": state,
                })
            }
            _ => {
                let summary = answer("summary")?;
                let roots = answer("workspace")?;
                let uris: Vec<&Value> = roots
                    .get("roots")
                    .and_then(Value::as_array)
                    .map(|r| r.iter().filter_map(|r| r.get("uri")).collect())
                    .unwrap_or_default();
                json!({
                    "tool": "brief",
                    "model": summary.get("model"),
                    "said": summary.pointer("/content/text"),
                    "roots": uris,
                    "requestState": state,
                })
            }
        };
        Ok(text(said.to_string()))
    }

    fn first_round(&self, tool: &str, args: JsonObject) -> Result<InputRequiredResult, ErrorData> {
        let string = |key: &str| {
            args.get(key)
                .and_then(Value::as_str)
                .map(str::to_owned)
                .ok_or_else(|| ErrorData::invalid_params(format!("'{key}' must be a string"), None))
        };
        let mut requests = InputRequests::new();
        if tool == "confirm" {
            let action = string("action")?;
            requests.insert(
                "approval".into(),
                input_request(json!({
                    "method": "elicitation/create",
                    "params": {
                        "mode": "form",
                        "message": format!("Approve {action}?"),
                        "requestedSchema": {
                            "type": "object",
                            "properties": { "approve": { "type": "boolean" } },
                            "required": ["approve"]
                        }
                    }
                })),
            );
        } else {
            let topic = string("topic")?;
            requests.insert(
                "summary".into(),
                input_request(json!({
                    "method": "sampling/createMessage",
                    "params": {
                        "messages": [{
                            "role": "user",
                            "content": { "type": "text", "text": format!("Summarize {topic}.") }
                        }],
                        "maxTokens": 64
                    }
                })),
            );
            requests.insert(
                "workspace".into(),
                input_request(json!({ "method": "roots/list" })),
            );
        }
        let state = {
            let mut count = self.count.lock().unwrap();
            *count += 1;
            format!("{tool}-round-1-of-call-{count}")
        };
        self.issued
            .lock()
            .unwrap()
            .insert(state.clone(), (tool.to_owned(), args));
        Ok(InputRequiredResult::new(Some(requests), Some(state)))
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // With RMCP_STARTS set, each start of the server adds a line to that file: a test counts
    // the processes a client started.
    if let Some(path) = std::env::var_os("RMCP_STARTS") {
        use std::io::Write;
        let mut file = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)?;
        writeln!(file, "{}", std::process::id())?;
    }
    let mut args = std::env::args().skip(1);
    let transport = args.next();
    let server = match args.next().as_deref() {
        None | Some("legacy") => TestServer::default(),
        Some("modern") => TestServer {
            modern: Some(Arc::default()),
            ..TestServer::default()
        },
        Some(other) => return Err(format!("unknown era '{other}': legacy or modern").into()),
    };
    match transport.as_deref() {
        None | Some("stdio") => serve_stdio(server).await,
        Some("http") => serve_http(server).await,
        Some(other) => Err(format!("unknown mode '{other}': stdio or http").into()),
    }
}

/// One connection, then the process ends. A modern server that refused `initialize` ends here
/// too: rmcp's `serve` answers the refusal and returns `InitializeFailed`, with the transport
/// gone, so a client that opens with `initialize` has to start the server again to ask
/// `server/discover`.
async fn serve_stdio(server: TestServer) -> Result<(), Box<dyn std::error::Error>> {
    let running = server.serve(rmcp::transport::stdio()).await?;
    running.waiting().await?;
    Ok(())
}

/// Streamable HTTP, on loopback only: with sessions, one `TestServer` per session; a modern
/// server has no sessions, and one state for all its handlers.
async fn serve_http(server: TestServer) -> Result<(), Box<dyn std::error::Error>> {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };

    let service = StreamableHttpService::new(
        move || {
            Ok(match server.modern {
                // No session on 2026-07-28: the tools added are the server's.
                Some(_) => server.clone(),
                None => TestServer::default(),
            })
        },
        Arc::new(LocalSessionManager::default()),
        StreamableHttpServerConfig::default(),
    );
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    eprintln!("listening on http://{}/mcp", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        let service = TowerToHyperService::new(service.clone());
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}
