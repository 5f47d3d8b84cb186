//! The Rust floor of the benchmark: the simplest, fastest JSON-RPC client this machine allows,
//! against the same servers as the Node clients. No SDK, no validation, a name and a call per
//! tool, like bench/raw-client.mjs, but without a JS thread in the way: it shows what the
//! server and the machine allow any client.
//!
//! `rulvar-bench-floor '<json spec>'` starts the server itself (`command`, `args`, `env`), does
//! the handshake, lists every page of tools, warms up with `warmCalls` calls at
//! `warmConcurrency` (bench/warmup.mjs decides them, for every client alike), then makes
//! `calls` calls of `tool` with `input` at `concurrency` and prints one JSON line in
//! bench/case.mjs's shape: `callsPerSec`, `p50`, `p99` (ms), `cpuUsPerCall` (this process,
//! user + system), and, from the server's /proc entry (Linux),
//! `serverBusy` (the share of the wall time the server's main thread was on a CPU),
//! `serverDemand` (on a CPU or waiting for one: the share of the time it had work) and
//! `serverCpuUsPerCall` (all of the server's threads).
//!
//! `kind: "stdio"`: newline-delimited JSON over the child's stdin and stdout; lines are read in
//! place from one buffer, a line split across reads is moved to its front once. `kind: "http"`:
//! the child prints its URL on stdout; one keep-alive HTTP/1.1 connection per call in flight
//! (at most `concurrency`), the session id of a stateful server sent back, a reply read as JSON
//! or as the `data:` line of an event stream.

use std::borrow::Cow;
use std::collections::HashMap;
use std::hint::black_box;
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper::header::{HeaderValue, ACCEPT, CONTENT_TYPE, HOST};
use hyper_util::rt::TokioIo;
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdin, Command};
use tokio::sync::{oneshot, Notify};

type Error = Box<dyn std::error::Error + Send + Sync>;
type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Deserialize)]
#[serde(rename_all = "lowercase")]
enum Kind {
    Stdio,
    Http,
}

#[derive(Deserialize)]
struct Spec {
    kind: Kind,
    command: String,
    #[serde(default)]
    args: Vec<String>,
    /// The child's whole environment (as bench/case.mjs hands it to the Node clients).
    #[serde(default)]
    env: HashMap<String, String>,
    calls: usize,
    concurrency: usize,
    /// The warm-up before the clock starts (bench/warmup.mjs): its calls and their concurrency.
    #[serde(rename = "warmCalls")]
    warm_calls: usize,
    #[serde(rename = "warmConcurrency")]
    warm_concurrency: usize,
    #[serde(default = "echo")]
    tool: String,
    #[serde(default = "hello")]
    input: Value,
    /// 0: a current-thread runtime (the default, and the fastest on 2 cores); n: n workers.
    #[serde(default)]
    threads: usize,
}

fn echo() -> String {
    "echo".into()
}

fn hello() -> Value {
    serde_json::json!({ "text": "hello" })
}

#[derive(Serialize)]
struct Request<'a, P> {
    jsonrpc: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<u64>,
    method: &'a str,
    params: P,
}

#[derive(Serialize)]
struct CallParams<'a> {
    name: &'a str,
    arguments: &'a Value,
}

/// A reply's envelope, its result or error left as text for the caller to read.
#[derive(Deserialize)]
struct Envelope<'a> {
    id: Option<u64>,
    #[serde(borrow)]
    result: Option<&'a RawValue>,
    #[serde(borrow)]
    error: Option<&'a RawValue>,
}

type Reply = Result<Box<RawValue>, String>;

fn reply_of(envelope: &Envelope<'_>) -> Reply {
    match (envelope.result, envelope.error) {
        (Some(result), _) => Ok(result.to_owned()),
        (None, Some(error)) => Err(error.get().to_owned()),
        (None, None) => Err("a reply with neither result nor error".into()),
    }
}

#[derive(Deserialize)]
struct ToolsPage {
    tools: Vec<ListedTool>,
    #[serde(rename = "nextCursor")]
    next_cursor: Option<String>,
}

#[derive(Deserialize)]
struct ListedTool {
    name: String,
    #[serde(rename = "inputSchema")]
    #[allow(dead_code)] // Kept, as the Node floor keeps `parameters`.
    input_schema: Box<RawValue>,
}

#[derive(Deserialize)]
struct CallResult<'a> {
    #[serde(borrow, default)]
    content: Vec<Content<'a>>,
    #[serde(rename = "structuredContent")]
    structured: Option<Value>,
}

#[derive(Deserialize)]
struct Content<'a> {
    #[serde(borrow)]
    text: Option<Cow<'a, str>>,
}

/// What a call hands back, as the Node floor's `execute` does: the structured content, or the
/// text blocks joined.
enum Output {
    Structured(#[allow(dead_code)] Value),
    Text(String),
}

// ---------------------------------------------------------------------------------------------
// stdio

/// What is to be written to the child's stdin. A request is serialized into one buffer and
/// goes straight to the pipe from the caller (one `write`, as the Node floor's does) when
/// nothing is queued ahead of it; what the pipe does not take waits for the writer task, with
/// everything asked for meanwhile. (Always queueing, so that the writer task writes what a turn
/// of the runtime asked for at once, was slower in A/B runs on the 2-core machine at
/// concurrency 16 and 128: the server waited for the batch instead of starting on its first
/// request.)
struct Outbox {
    queued: Mutex<Queued>,
    wake: Notify,
    #[cfg(unix)]
    fd: std::os::fd::RawFd,
}

struct Queued {
    bytes: Vec<u8>,
    /// The writer task holds bytes taken from `bytes` it has not written yet.
    writing: bool,
    /// The writer task has stopped (the pipe broke) and closed the pipe.
    closed: bool,
}

/// Writes what the pipe takes now without waiting; how many bytes.
#[cfg(unix)]
fn write_now(outbox: &Outbox, bytes: &[u8]) -> usize {
    // SAFETY: `fd` is the child's stdin, a non-blocking pipe the writer task keeps open until
    // it sets `closed`, which the caller checked under the same lock it holds.
    let n = unsafe { libc::write(outbox.fd, bytes.as_ptr().cast(), bytes.len()) };
    usize::try_from(n).unwrap_or(0)
}

#[cfg(not(unix))]
fn write_now(_: &Outbox, _: &[u8]) -> usize {
    0
}

type Pending = Arc<Mutex<HashMap<u64, oneshot::Sender<Reply>>>>;

struct StdioRpc {
    next_id: AtomicU64,
    pending: Pending,
    outbox: Arc<Outbox>,
}

impl StdioRpc {
    fn start(child: &mut Child) -> Self {
        let stdin = child.stdin.take().expect("stdin is piped");
        let stdout = child.stdout.take().expect("stdout is piped");
        let pending = Arc::new(Mutex::new(HashMap::new()));
        let outbox = Arc::new(Outbox {
            queued: Mutex::new(Queued {
                bytes: Vec::with_capacity(1 << 16),
                writing: false,
                closed: false,
            }),
            wake: Notify::new(),
            #[cfg(unix)]
            fd: std::os::fd::AsRawFd::as_raw_fd(&stdin),
        });
        tokio::spawn(write_loop(stdin, outbox.clone()));
        tokio::spawn(read_loop(stdout, pending.clone()));
        Self {
            next_id: AtomicU64::new(0),
            pending,
            outbox,
        }
    }

    fn send<P: Serialize>(&self, request: &Request<'_, P>) -> Result<()> {
        let mut queued = self.outbox.queued.lock().unwrap();
        if queued.closed {
            return Err("the server's stdin is closed".into());
        }
        let nothing_ahead = queued.bytes.is_empty();
        serde_json::to_writer(&mut queued.bytes, request)?;
        queued.bytes.push(b'\n');
        if nothing_ahead && !queued.writing {
            let written = write_now(&self.outbox, &queued.bytes);
            if written == queued.bytes.len() {
                queued.bytes.clear();
                return Ok(());
            }
            queued.bytes.drain(..written);
        }
        drop(queued);
        if nothing_ahead {
            self.outbox.wake.notify_one();
        }
        Ok(())
    }

    async fn request<P: Serialize>(&self, method: &str, params: P) -> Result<Box<RawValue>> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let (tx, rx) = oneshot::channel();
        self.pending.lock().unwrap().insert(id, tx);
        self.send(&Request {
            jsonrpc: "2.0",
            id: Some(id),
            method,
            params,
        })?;
        Ok(rx.await.map_err(|_| "the server closed its stdout")??)
    }

    fn notify<P: Serialize>(&self, method: &str, params: P) -> Result<()> {
        self.send(&Request {
            jsonrpc: "2.0",
            id: None,
            method,
            params,
        })
    }
}

async fn write_loop(mut stdin: ChildStdin, outbox: Arc<Outbox>) {
    let mut spare = Vec::with_capacity(1 << 16);
    loop {
        outbox.wake.notified().await;
        {
            let mut queued = outbox.queued.lock().unwrap();
            std::mem::swap(&mut spare, &mut queued.bytes);
            queued.writing = !spare.is_empty();
        }
        if spare.is_empty() {
            continue;
        }
        let written = stdin.write_all(&spare).await;
        let mut queued = outbox.queued.lock().unwrap();
        queued.writing = false;
        if written.is_err() {
            queued.closed = true;
            return;
        }
        drop(queued);
        spare.clear();
    }
}

/// Reads the server's replies and hands each to its waiter, until the stream ends or carries a
/// line that is not JSON-RPC (the waiters left then see their senders dropped).
async fn read_loop(mut stdout: impl AsyncRead + Unpin, pending: Pending) {
    let mut buf = vec![0u8; 1 << 16];
    let (mut start, mut end) = (0, 0);
    'read: loop {
        // Every whole line in the buffer, read where it lies.
        while let Some(i) = memchr::memchr(b'\n', &buf[start..end]) {
            let line = &buf[start..start + i];
            start += i + 1;
            let Ok(envelope) = serde_json::from_slice::<Envelope<'_>>(line) else {
                eprintln!(
                    "floor: a line that is not a JSON-RPC message: {}",
                    String::from_utf8_lossy(line)
                );
                break 'read;
            };
            let Some(id) = envelope.id else { continue };
            let waiter = pending.lock().unwrap().remove(&id);
            if let Some(waiter) = waiter {
                let _ = waiter.send(reply_of(&envelope));
            }
        }
        // What is left of a line goes to the front, once; the buffer grows only for a line
        // longer than itself.
        if start > 0 {
            buf.copy_within(start..end, 0);
            end -= start;
            start = 0;
        }
        if end == buf.len() {
            buf.resize(buf.len() * 2, 0);
        }
        match stdout.read(&mut buf[end..]).await {
            Ok(0) | Err(_) => break,
            Ok(n) => end += n,
        }
    }
    // The waiters left see their senders dropped: "the server closed its stdout".
    pending.lock().unwrap().clear();
}

// ---------------------------------------------------------------------------------------------
// HTTP

struct HttpRpc {
    addr: String,
    authority: HeaderValue,
    path: String,
    session: Mutex<Option<HeaderValue>>,
    /// Idle keep-alive connections; a request takes one or opens one, and puts it back.
    idle: Mutex<Vec<SendRequest<Full<Bytes>>>>,
    next_id: AtomicU64,
}

impl HttpRpc {
    fn new(url: &str) -> Result<Self> {
        let rest = url
            .strip_prefix("http://")
            .ok_or_else(|| format!("not an http:// URL: {url}"))?;
        let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
        let path = if path.is_empty() { "/" } else { path };
        Ok(Self {
            addr: authority.to_owned(),
            authority: HeaderValue::from_str(authority)?,
            path: path.to_owned(),
            session: Mutex::new(None),
            idle: Mutex::new(Vec::new()),
            next_id: AtomicU64::new(0),
        })
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>> {
        let tcp = TcpStream::connect(&self.addr).await?;
        tcp.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(tcp)).await?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }

    async fn post<P: Serialize>(&self, request: &Request<'_, P>) -> Result<Option<Reply>> {
        let body = Bytes::from(serde_json::to_vec(request)?);
        let idle = self.idle.lock().unwrap().pop();
        // An idle connection the server has closed meanwhile is dropped for a new one.
        let mut conn = match idle {
            Some(mut conn) => match conn.ready().await {
                Ok(()) => conn,
                Err(_) => self.connect().await?,
            },
            None => self.connect().await?,
        };
        let mut req = hyper::Request::post(self.path.as_str())
            .header(HOST, self.authority.clone())
            .header(CONTENT_TYPE, "application/json")
            .header(ACCEPT, "application/json, text/event-stream");
        if let Some(session) = self.session.lock().unwrap().clone() {
            req = req.header("mcp-session-id", session);
        }
        let response = conn.send_request(req.body(Full::new(body))?).await?;
        if let Some(session) = response.headers().get("mcp-session-id") {
            *self.session.lock().unwrap() = Some(session.clone());
        }
        let status = response.status();
        let stream = response
            .headers()
            .get(CONTENT_TYPE)
            .is_some_and(|t| t.as_bytes().starts_with(b"text/event-stream"));
        let text = response.into_body().collect().await?.to_bytes();
        self.idle.lock().unwrap().push(conn);
        if request.id.is_none() {
            return Ok(None);
        }
        let json = if stream {
            text.split(|&b| b == b'\n')
                .find_map(|line| line.strip_prefix(b"data: "))
                .ok_or("an event stream without data")?
        } else {
            &text[..]
        };
        let envelope: Envelope<'_> = serde_json::from_slice(json)
            .map_err(|e| format!("HTTP {status}: {e}: {}", String::from_utf8_lossy(json)))?;
        Ok(Some(reply_of(&envelope)))
    }

    async fn request<P: Serialize>(&self, method: &str, params: P) -> Result<Box<RawValue>> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let reply = self
            .post(&Request {
                jsonrpc: "2.0",
                id: Some(id),
                method,
                params,
            })
            .await?;
        Ok(reply.ok_or("no reply")??)
    }

    async fn notify<P: Serialize>(&self, method: &str, params: P) -> Result<()> {
        self.post(&Request {
            jsonrpc: "2.0",
            id: None,
            method,
            params,
        })
        .await?;
        Ok(())
    }
}

// ---------------------------------------------------------------------------------------------
// The source: handshake, tools, calls

enum Rpc {
    Stdio(StdioRpc),
    Http(HttpRpc),
}

impl Rpc {
    async fn request<P: Serialize>(&self, method: &str, params: P) -> Result<Box<RawValue>> {
        match self {
            Rpc::Stdio(rpc) => rpc.request(method, params).await,
            Rpc::Http(rpc) => rpc.request(method, params).await,
        }
    }

    async fn notify<P: Serialize>(&self, method: &str, params: P) -> Result<()> {
        match self {
            Rpc::Stdio(rpc) => rpc.notify(method, params),
            Rpc::Http(rpc) => rpc.notify(method, params).await,
        }
    }

    async fn tools(&self) -> Result<Vec<ListedTool>> {
        let init = serde_json::json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": { "name": "floor", "version": "1" },
        });
        self.request("initialize", init).await?;
        self.notify("notifications/initialized", serde_json::json!({}))
            .await?;
        let mut tools = Vec::new();
        let mut cursor: Option<String> = None;
        loop {
            let params = match &cursor {
                None => serde_json::json!({}),
                Some(cursor) => serde_json::json!({ "cursor": cursor }),
            };
            let page: ToolsPage =
                serde_json::from_str(self.request("tools/list", params).await?.get())?;
            tools.extend(page.tools);
            cursor = page.next_cursor;
            if cursor.is_none() {
                return Ok(tools);
            }
        }
    }

    async fn call(&self, name: &str, input: &Value) -> Result<Output> {
        let raw = self
            .request(
                "tools/call",
                CallParams {
                    name,
                    arguments: input,
                },
            )
            .await?;
        let result: CallResult<'_> = serde_json::from_str(raw.get())?;
        Ok(match result.structured {
            Some(value) => Output::Structured(value),
            None => Output::Text(
                result
                    .content
                    .iter()
                    .filter_map(|c| c.text.as_deref())
                    .collect(),
            ),
        })
    }
}

/// `total` calls with `concurrency` in flight; every call's latency in ms.
async fn calls(
    rpc: &Arc<Rpc>,
    name: &Arc<str>,
    input: &Arc<Value>,
    total: usize,
    concurrency: usize,
) -> Result<Vec<f64>> {
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..concurrency)
        .map(|_| {
            let (rpc, name, input, next) = (rpc.clone(), name.clone(), input.clone(), next.clone());
            tokio::spawn(async move {
                let mut latencies = Vec::with_capacity(total / concurrency + 1);
                while next.fetch_add(1, Ordering::Relaxed) < total {
                    let t0 = Instant::now();
                    black_box(rpc.call(&name, &input).await?);
                    latencies.push(t0.elapsed().as_secs_f64() * 1000.0);
                }
                Ok::<_, Error>(latencies)
            })
        })
        .collect();
    let mut all = Vec::with_capacity(total);
    for worker in workers {
        all.extend(worker.await??);
    }
    Ok(all)
}

// ---------------------------------------------------------------------------------------------
// CPU

/// This process's CPU time (user + system, every thread) in µs.
#[cfg(unix)]
fn own_cpu_us() -> f64 {
    // SAFETY: getrusage only writes the struct it is handed.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let us = |t: libc::timeval| t.tv_sec as f64 * 1e6 + t.tv_usec as f64;
    us(usage.ru_utime) + us(usage.ru_stime)
}

#[cfg(not(unix))]
fn own_cpu_us() -> f64 {
    f64::NAN
}

/// The server's scheduler times from /proc (Linux), in ns.
#[derive(Clone, Copy)]
struct ServerTimes {
    /// Its main thread on a CPU.
    main_on_cpu: u64,
    /// Its main thread runnable but waiting for a CPU.
    main_waiting: u64,
    /// All its threads on a CPU.
    all_on_cpu: u64,
}

fn server_times(pid: u32) -> Option<ServerTimes> {
    let schedstat = |task: &str| -> Option<(u64, u64)> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/task/{task}/schedstat")).ok()?;
        let mut fields = stat.split_whitespace().map(|f| f.parse().ok());
        Some((fields.next()??, fields.next()??))
    };
    let (main_on_cpu, main_waiting) = schedstat(&pid.to_string())?;
    let mut all_on_cpu = 0;
    for task in std::fs::read_dir(format!("/proc/{pid}/task")).ok()? {
        let task = task
            .ok()
            .and_then(|t| schedstat(&t.file_name().to_string_lossy()));
        all_on_cpu += task.map_or(0, |(on_cpu, _)| on_cpu);
    }
    Some(ServerTimes {
        main_on_cpu,
        main_waiting,
        all_on_cpu,
    })
}

// ---------------------------------------------------------------------------------------------

async fn run(spec: Spec) -> Result<serde_json::Map<String, Value>> {
    let mut command = Command::new(&spec.command);
    command
        .args(&spec.args)
        .env_clear()
        .envs(&spec.env)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .kill_on_drop(true);
    if matches!(spec.kind, Kind::Http) {
        command.stdin(Stdio::null());
    }
    let mut child = command
        .spawn()
        .map_err(|e| format!("spawning {}: {e}", spec.command))?;
    let pid = child.id().ok_or("the server exited at once")?;
    // The HTTP server's stdout stays open (and unread) past its URL line.
    let mut _stdout = None;
    let rpc = Arc::new(match spec.kind {
        Kind::Stdio => Rpc::Stdio(StdioRpc::start(&mut child)),
        Kind::Http => {
            let mut lines = BufReader::new(child.stdout.take().expect("stdout is piped"));
            let mut url = String::new();
            lines.read_line(&mut url).await?;
            _stdout = Some(lines);
            Rpc::Http(HttpRpc::new(url.trim())?)
        }
    });

    let tools = rpc.tools().await?;
    let tool = tools
        .iter()
        .find(|t| t.name == spec.tool)
        .ok_or_else(|| format!("no tool {:?} among {}", spec.tool, tools.len()))?;
    let name: Arc<str> = tool.name.as_str().into();
    let input = Arc::new(spec.input);
    // A check that the calls do what they should, once, outside the measurement.
    if let (Output::Text(text), Some(expected)) = (
        rpc.call(&name, &input).await?,
        input.get("text").and_then(Value::as_str),
    ) {
        if text != expected {
            return Err(format!("{} answered {text:?} to {expected:?}", spec.tool).into());
        }
    }
    calls(&rpc, &name, &input, spec.warm_calls, spec.warm_concurrency).await?;

    let server0 = server_times(pid);
    let cpu0 = own_cpu_us();
    let t0 = Instant::now();
    let mut latencies = calls(&rpc, &name, &input, spec.calls, spec.concurrency).await?;
    let wall = t0.elapsed();
    let cpu = own_cpu_us() - cpu0;
    let server1 = server_times(pid);

    latencies.sort_by(f64::total_cmp);
    let at = |q: f64| latencies[(latencies.len() as f64 * q) as usize];
    let mut out = serde_json::Map::new();
    let mut put = |k: &str, v: f64| {
        if let Some(n) = serde_json::Number::from_f64(v) {
            out.insert(k.into(), Value::Number(n));
        }
    };
    put("callsPerSec", spec.calls as f64 / wall.as_secs_f64());
    put("p50", at(0.5));
    put("p99", at(0.99));
    put("cpuUsPerCall", cpu / spec.calls as f64);
    if let (Some(s0), Some(s1)) = (server0, server1) {
        let wall_ns = wall.as_nanos() as f64;
        let on_cpu = (s1.main_on_cpu - s0.main_on_cpu) as f64;
        let waiting = (s1.main_waiting - s0.main_waiting) as f64;
        put("serverBusy", on_cpu / wall_ns);
        put("serverDemand", (on_cpu + waiting) / wall_ns);
        let all = (s1.all_on_cpu - s0.all_on_cpu) as f64;
        put("serverCpuUsPerCall", all / 1000.0 / spec.calls as f64);
    }
    child.start_kill()?;
    let _ = tokio::time::timeout(Duration::from_secs(5), child.wait()).await;
    Ok(out)
}

fn main() {
    let Some(arg) = std::env::args().nth(1) else {
        eprintln!("usage: rulvar-bench-floor '<json spec>' (bench/floor.mjs says which)");
        std::process::exit(2);
    };
    let spec: Spec = match serde_json::from_str(&arg) {
        Ok(spec) => spec,
        Err(e) => {
            eprintln!("floor: the spec: {e}");
            std::process::exit(2);
        }
    };
    let runtime = match spec.threads {
        0 => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build(),
        n => tokio::runtime::Builder::new_multi_thread()
            .worker_threads(n)
            .enable_all()
            .build(),
    }
    .expect("a tokio runtime");
    match runtime.block_on(run(spec)) {
        Ok(out) => println!("{}", Value::Object(out)),
        Err(e) => {
            eprintln!("floor: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
    }

    fn waiters(
        pending: &Pending,
        ids: impl Iterator<Item = u64>,
    ) -> Vec<(u64, oneshot::Receiver<Reply>)> {
        ids.map(|id| {
            let (tx, rx) = oneshot::channel();
            pending.lock().unwrap().insert(id, tx);
            (id, rx)
        })
        .collect()
    }

    #[test]
    fn replies_split_anywhere_reach_their_waiters() {
        runtime().block_on(async {
            let pending = Pending::default();
            let waiting = waiters(&pending, 1..=40);
            let (mut server, client) = tokio::io::duplex(64);
            let reader = tokio::spawn(read_loop(client, pending.clone()));
            // Out of order, a notification among them, written in pieces of 1 to 7 bytes.
            let mut text = String::from(
                "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n",
            );
            for id in (1..=40).rev() {
                text += &format!(
                    "{{\"jsonrpc\":\"2.0\",\"id\":{id},\"result\":{{\"n\":\"é{id}\"}}}}\n"
                );
            }
            let bytes = text.as_bytes();
            let mut at = 0;
            for piece in (1..=7).cycle() {
                if at == bytes.len() {
                    break;
                }
                let end = (at + piece).min(bytes.len());
                server.write_all(&bytes[at..end]).await.unwrap();
                at = end;
            }
            for (id, rx) in waiting {
                let result = rx.await.unwrap().unwrap();
                assert_eq!(result.get(), format!("{{\"n\":\"é{id}\"}}"));
            }
            assert!(pending.lock().unwrap().is_empty());
            drop(server);
            reader.await.unwrap();
        });
    }

    #[test]
    fn a_line_longer_than_the_buffer_arrives_whole() {
        runtime().block_on(async {
            let pending = Pending::default();
            let waiting = waiters(&pending, 1..=2);
            let (mut server, client) = tokio::io::duplex(1 << 12);
            let reader = tokio::spawn(read_loop(client, pending.clone()));
            let long = "x".repeat(300_000);
            let text = format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"{long}\"}}\n{{\"jsonrpc\":\"2.0\",\"id\":2,\"error\":{{\"code\":1}}}}\n"
            );
            server.write_all(text.as_bytes()).await.unwrap();
            let mut waiting = waiting.into_iter();
            let (_, first) = waiting.next().unwrap();
            assert_eq!(first.await.unwrap().unwrap().get(), format!("\"{long}\""));
            let (_, second) = waiting.next().unwrap();
            assert_eq!(second.await.unwrap().unwrap_err(), "{\"code\":1}");
            drop(server);
            reader.await.unwrap();
        });
    }

    #[test]
    fn the_waiters_left_fail_when_the_stream_ends() {
        runtime().block_on(async {
            let pending = Pending::default();
            let mut waiting = waiters(&pending, 1..=1);
            let (server, client) = tokio::io::duplex(64);
            drop(server);
            read_loop(client, pending.clone()).await;
            assert!(waiting.pop().unwrap().1.await.is_err());
        });
    }
}
