//! A test server built with the official Rust SDK (`rmcp`), so the suite checks the addon against
//! a server that shares no code with it or with the TypeScript SDK. `cargo test` builds it;
//! `__test__/interop.test.ts` runs it.
//!
//! `rmcp_server` (or `rmcp_server stdio`) serves stdio; `rmcp_server http` serves streamable HTTP
//! on 127.0.0.1 at an ephemeral port and prints `listening on http://127.0.0.1:<port>/mcp` on
//! stderr once it accepts connections.
//!
//! Tools: `echo` (text), `add` (with an output schema and structured content), `fail` (an
//! `isError` result), and `add_tool`, which adds a tool to the list and announces it with
//! `notifications/tools/list_changed`, at once or `delay_ms` later (outside any request, so over
//! HTTP it can only travel on the session's GET stream).

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, ErrorData,
    Implementation, JsonObject, ListToolsResult, PaginatedRequestParams, ServerCapabilities,
    ServerConfig, Tool,
};
use rmcp::service::{RequestContext, RoleServer};
use rmcp::{ServerHandler, ServiceExt};
use serde_json::{json, Value};
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

/// One per session (one per process over stdio): the tools added by `add_tool` belong to it.
#[derive(Clone, Default)]
struct TestServer {
    added: Arc<Mutex<Vec<String>>>,
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

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        let mut tools = fixed_tools();
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
                tokio::spawn(async move {
                    tokio::time::sleep(Duration::from_millis(delay)).await;
                    added.lock().unwrap().push(name);
                    let _ = peer.notify_tool_list_changed().await;
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

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    match std::env::args().nth(1).as_deref() {
        None | Some("stdio") => {
            let running = TestServer::default()
                .serve(rmcp::transport::stdio())
                .await?;
            running.waiting().await?;
            Ok(())
        }
        Some("http") => serve_http().await,
        Some(other) => Err(format!("unknown mode '{other}': stdio or http").into()),
    }
}

/// Streamable HTTP with sessions, one `TestServer` per session, on loopback only.
async fn serve_http() -> Result<(), Box<dyn std::error::Error>> {
    use hyper_util::rt::TokioIo;
    use hyper_util::service::TowerToHyperService;
    use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
    use rmcp::transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
    };

    let service = StreamableHttpService::new(
        || Ok(TestServer::default()),
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
