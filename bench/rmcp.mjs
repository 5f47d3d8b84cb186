// What adopting the official Rust SDK's client would cost per call: rmcp's client
// (examples/rmcp_client.rs) beside the addon and the Rust floor, on the fast stdio server at
// concurrency 16 and 128, fresh processes, medians. The addon's own 2026 layer was written
// instead of adopting rmcp's client (docs/differences.md says why); this is the per-call CPU
// side of that choice.
//
// `node bench/rmcp.mjs` builds the example in release (`cargo build --release --example
// rmcp_client`, honouring CARGO_TARGET_DIR) and prints the rows as RESULTS.md has them.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { rustFloor } from './floor.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const root = fileURLToPath(new URL('..', import.meta.url));
const server = fileURLToPath(new URL('./servers/fast-stdio.mjs', import.meta.url));
const caseScript = fileURLToPath(new URL('./case.mjs', import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function rmcpBinary() {
  const out = execFileSync('cargo', ['build', '--release', '--example', 'rmcp_client', '--message-format=json-render-diagnostics'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
    maxBuffer: 64 * 2 ** 20,
  });
  for (const line of out.split('\n')) {
    if (!line.startsWith('{')) continue;
    const m = JSON.parse(line);
    if (m.reason === 'compiler-artifact' && m.target?.name === 'rmcp_client' && m.executable) return m.executable;
  }
  throw new Error('cargo built no rmcp_client executable');
}

const binary = rmcpBinary();
const clients = {
  addon: (calls, c) => {
    const spec = { op: 'calls', impl: 'addon', transport: 'stdio-fast', calls, concurrency: c };
    const out = execFileSync(process.execPath, ['--expose-gc', caseScript, JSON.stringify(spec)], { encoding: 'utf8', timeout: 120_000 });
    return JSON.parse(out.trim().split('\n').pop());
  },
  rmcp: (calls, c) =>
    JSON.parse(
      execFileSync(binary, [server, String(calls), String(c)], { encoding: 'utf8', timeout: 120_000 })
        .trim()
        .split('\n')
        .pop(),
    ),
  'Rust floor': (calls, c) => rustFloor({ op: 'calls', transport: 'stdio-fast', calls, concurrency: c }),
};

const started = Date.now();
const rows = [];
for (const c of [16, 128]) {
  const results = Object.fromEntries(Object.keys(clients).map((k) => [k, []]));
  // Interleaved: one process of each client per round.
  for (let i = 0; i < RUNS; i++) for (const [name, run] of Object.entries(clients)) results[name].push(run(20000, c));
  for (const metric of ['callsPerSec', 'cpuUsPerCall']) {
    const m = Object.fromEntries(Object.entries(results).map(([k, rs]) => [k, median(rs.map((r) => r[metric]))]));
    rows.push({ c, metric, ...m });
  }
}
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`Command: \`node bench/rmcp.mjs\` (${RUNS} fresh processes per client, interleaved, medians; ${((Date.now() - started) / 60000).toFixed(1)} min).`);
console.log(`Machine: ${cpu}, ${os.cpus().length} cores, ${Math.round(os.totalmem() / 2 ** 30)} GiB, ${os.type()} ${os.release()}, Node ${process.version}.`);
console.log(`Date: ${new Date().toISOString()}.\n`);
console.log('| fast stdio server, 20,000 echo calls | metric | addon | rmcp client | Rust floor | rmcp / addon |');
console.log('|---|---|---|---|---|---|');
const fmt = (x) => (x >= 100 ? Math.round(x).toString() : x.toFixed(2));
for (const r of rows)
  console.log(`| concurrency ${r.c} | ${r.metric} | ${fmt(r.addon)} | ${fmt(r.rmcp)} | ${fmt(r['Rust floor'])} | ${(r.rmcp / r.addon).toFixed(2)} |`);
