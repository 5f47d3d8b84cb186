//! What adopting the official Rust SDK's client would cost per call: `rmcp`'s client (the
//! default handshake, `tools/list`, then `tools/call` of `echo`) against the benchmark's fast
//! stdio server, N calls at concurrency c, measured as `bench/case.mjs` measures the addon.
//! `bench/rmcp.mjs` builds it in release and runs it beside the addon and the Rust floor.
//!
//! `rmcp_client <server.mjs> <calls> <concurrency>` prints one JSON line: `callsPerSec`, `p50`
//! (ms) and `cpuUsPerCall` (this process's CPU, every thread, per call).

use rmcp::model::CallToolRequestParams;
use rmcp::ServiceExt;
use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// This process's CPU time so far, every thread: the first field of each thread's
/// `schedstat` is its time on a CPU in nanoseconds.
fn cpu() -> Duration {
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return Duration::ZERO;
    };
    let ns: u64 = tasks
        .flatten()
        .filter_map(|t| std::fs::read_to_string(t.path().join("schedstat")).ok())
        .filter_map(|s| s.split_whitespace().next()?.parse::<u64>().ok())
        .sum();
    Duration::from_nanos(ns)
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let (server, calls, concurrency) = match &args[1..] {
        [server, calls, concurrency] => (server.clone(), calls.parse()?, concurrency.parse()?),
        _ => return Err("usage: rmcp_client <server.mjs> <calls> <concurrency>".into()),
    };
    let mut child = tokio::process::Command::new("node")
        .arg(&server)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()?;
    let (stdout, stdin) = (child.stdout.take().unwrap(), child.stdin.take().unwrap());
    let client = Arc::new(().serve((stdout, stdin)).await?);
    let tools = client.list_all_tools().await?;
    if !tools.iter().any(|t| t.name == "echo") {
        return Err("the server lists no echo tool".into());
    }
    let arguments = serde_json::json!({ "text": "hello" });
    let arguments = arguments.as_object().cloned().unwrap_or_default();
    let run = |n: usize, c: usize| {
        let client = client.clone();
        let arguments = arguments.clone();
        async move {
            let next = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let mut lanes = tokio::task::JoinSet::new();
            for _ in 0..c {
                let (client, arguments, next) = (client.clone(), arguments.clone(), next.clone());
                lanes.spawn(async move {
                    let mut times = Vec::new();
                    while next.fetch_add(1, std::sync::atomic::Ordering::Relaxed) < n {
                        let started = Instant::now();
                        let params =
                            CallToolRequestParams::new("echo").with_arguments(arguments.clone());
                        let result = client.call_tool(params).await.expect("a tools/call");
                        assert_ne!(result.is_error, Some(true));
                        times.push(started.elapsed());
                    }
                    times
                });
            }
            let mut all = Vec::with_capacity(n);
            while let Some(times) = lanes.join_next().await {
                all.extend(times.expect("a lane"));
            }
            all
        }
    };
    // Warm-up, as case.mjs does.
    run(200, 8).await;
    let (cpu0, started) = (cpu(), Instant::now());
    let mut times = run(calls, concurrency).await;
    let (wall, used) = (started.elapsed(), cpu() - cpu0);
    times.sort();
    let p50 = times[times.len() / 2].as_secs_f64() * 1000.0;
    println!(
        "{}",
        serde_json::json!({
            "callsPerSec": calls as f64 / wall.as_secs_f64(),
            "p50": p50,
            "cpuUsPerCall": used.as_secs_f64() * 1e6 / calls as f64,
        })
    );
    drop(client);
    let _ = child.kill().await;
    Ok(())
}
