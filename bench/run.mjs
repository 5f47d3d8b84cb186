// `npm run bench`: every row of the benchmark plan, baseline and addon side by side in the
// same run, 5 fresh processes per client, interleaved (one of each client in turn), medians and ratios written to RESULTS.md.
// BENCH_RUNS=n: n processes per measurement. BENCH_ONLY=<regex>: only the rows whose label
// matches (the era, asks and telemetry rows have scripts of their own), printed as RESULTS.md's
// table has them and not written to it. `--contention N [--contention-shape cpu|wake]`: N busy
// processes beside every measured one (bench/contention.mjs). A full run writes its table to
// bench/tables/ (quiet.md, or contention-N-shape.md; with -nodeM on a later Node than the
// oldest the package supports), and RESULTS.md is every table there, the quiet one first, then
// NOTES.md (`npm run bench -- --compose` writes it again, measuring nothing).
// BENCH_PEERS=0 leaves out the clients a user would pick instead (bench/peers.mjs).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { telemetryRows } from './telemetry.mjs';
import { asksRows } from './asks.mjs';
import { eraRows } from './era.mjs';
import { rustFloor } from './floor.mjs';
import { contentionOf, startContention } from './contention.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 5);
const only = process.env.BENCH_ONLY ? new RegExp(process.env.BENCH_ONLY) : undefined;
const wanted = (label) => only === undefined || only.test(label);
const caseScript = fileURLToPath(new URL('./case.mjs', import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const busy = contentionOf(process.argv.slice(2));
const peers = process.env.BENCH_PEERS !== '0';
const here = (path) => fileURLToPath(new URL(path, import.meta.url));

/** RESULTS.md: every table of bench/tables/, the quiet one first, then NOTES.md. */
function compose() {
  const titles = (name) => {
    const [, condition, major] = /^(.*?)(?:-node(\d+))?$/.exec(name) ?? [];
    const [, n, shape] = /^contention-(\d+)-(\w+)$/.exec(condition) ?? [];
    const title = n === undefined ? 'Quiet' : `Beside ${n} ${shape}-bound processes (\`--contention ${n} --contention-shape ${shape}\`)`;
    return major === undefined ? title : `${title}, on Node ${major}`;
  };
  // The tables on the oldest Node the package supports first (quiet, then each contention),
  // then those of a later Node in the same order.
  const order = (name) => `${/-node\d+$/.test(name) ? 1 : 0}${name.startsWith('quiet') ? 0 : 1}${name}`;
  const tables = (existsSync(here('./tables/')) ? readdirSync(here('./tables/')) : [])
    .filter((f) => f.endsWith('.md'))
    .map((f) => f.slice(0, -3))
    .sort((a, b) => order(a).localeCompare(order(b)));
  const sections = tables.map((name) => `## ${titles(name)}\n\n${readFileSync(here(`./tables/${name}.md`), 'utf8')}`);
  const notes = existsSync(here('./NOTES.md')) ? readFileSync(here('./NOTES.md'), 'utf8') : '';
  writeFileSync(here('./RESULTS.md'), `# Benchmark results\n\n${sections.join('\n')}\n${notes}`);
}
// `--compose`: RESULTS.md again from the tables and NOTES.md, measuring nothing (after NOTES.md
// was edited).
if (process.argv.includes('--compose')) {
  compose();
  process.exit(0);
}

/** One fresh process of `spec` (or one run of the Rust floor): its figures. */
function once(spec) {
  const stop = startContention(busy);
  try {
    return measured(spec);
  } finally {
    stop();
  }
}

function measured(spec) {
  if (spec.impl === 'rust') return rustFloor(spec);
  // `spec.node`: flags of Node's own for the case's process (V8's heap sizes, say).
  const out = execFileSync(process.execPath, [...(spec.node ?? []), '--expose-gc', caseScript, JSON.stringify(spec)], { encoding: 'utf8', timeout: 120_000 });
  return JSON.parse(out.trim().split('\n').pop());
}

/**
 * The medians of each of `specs`, measured in turn, one process of each per round (so a busy
 * moment of the machine falls on every client of a row alike, not on whichever ran then).
 */
function measure(...specs) {
  const results = specs.map(() => []);
  for (let i = 0; i < (specs[0].runs ?? RUNS); i++) {
    for (const [j, spec] of specs.entries()) results[j].push(once(spec));
  }
  return results.map((rs) => Object.fromEntries(Object.keys(rs[0]).map((k) => [k, median(rs.map((r) => r[k]))])));
}

const rows = [];
// `floor`: also measure the bare Node client (bench/raw-client.mjs), where one applies: what
// the pipe and the server allow any Node client, SDK or not. `rust`: and the Rust floor
// (bench/floor.mjs), what the server and the machine allow any client at all.
function compare(label, spec, metric, unit, better, floor = false, rust = false) {
  if (!wanted(label)) return undefined;
  // The peers take the rows of calls and imports, on every transport.
  const withPeers = peers && (spec.op === 'calls' || spec.op === 'import');
  const impls = ['sdk', 'addon', ...(floor ? ['raw'] : []), ...(rust ? ['rust'] : []), ...(withPeers ? ['sdk2', 'aisdk'] : [])];
  const [base, addon, ...floors] = measure(...impls.map((impl) => ({ ...spec, impl })));
  const raw = floor ? floors.shift() : undefined;
  const native = rust ? floors.shift() : undefined;
  const sdk2 = withPeers ? floors.shift() : undefined;
  const aisdk = withPeers ? floors.shift() : undefined;
  const row = {
    label,
    metric,
    unit,
    better,
    baseline: base[metric],
    addon: addon[metric],
    ratio: addon[metric] / base[metric],
    raw: raw?.[metric],
    rust: native?.[metric],
    sdk2: sdk2?.[metric],
    aisdk: aisdk?.[metric],
    base,
    addonAll: addon,
    rawAll: raw,
    rustAll: native,
    sdk2All: sdk2,
    aisdkAll: aisdk,
  };
  rows.push(row);
  console.log(
    `${label.padEnd(44)} ${metric.padEnd(12)} baseline ${fmt(row.baseline)} addon ${fmt(row.addon)} ratio ${row.ratio.toFixed(2)}${raw ? ` raw ${fmt(row.raw)}` : ''}${native ? ` rust ${fmt(row.rust)}` : ''}${sdk2 ? ` sdk2 ${fmt(row.sdk2)} ai-sdk ${fmt(row.aisdk)}` : ''}${row.addonAll.serverBusy === undefined ? '' : ` bound ${bound(row)}`}`,
  );
  return row;
}
// A metric no client reported on this machine or Node (V8's pool before Node 22) is no row.
const extra = (row, metric, unit, better) =>
  row &&
  (row.base[metric] !== undefined || row.addonAll[metric] !== undefined) &&
  rows.push({
    ...row,
    metric,
    unit,
    better,
    baseline: row.base[metric],
    addon: row.addonAll[metric],
    ratio: row.addonAll[metric] / row.base[metric],
    raw: row.rawAll?.[metric],
    rust: row.rustAll?.[metric],
    sdk2: row.sdk2All?.[metric],
    aisdk: row.aisdkAll?.[metric],
  });
// What held the addon's run back, from the scheduler times of the server's main thread during
// it (bench/case.mjs): on a CPU 90% of the wall time or more, the server; on one or waiting for
// one 90% or more, the cores (the server had work, the client or others had the CPUs); less,
// the client (the server sat waiting for requests). Calls/s rows with a server process only.
const pct = (x) => `${Math.round(x * 100)}%`;
function bound(r) {
  if (r.metric === 'ms' && r.addonAll.serverCpuMs !== undefined) return importBound(r.addonAll);
  const busy = r.addonAll.serverBusy;
  const demand = r.addonAll.serverDemand;
  if (r.metric !== 'callsPerSec' || busy === undefined) return '-';
  if (busy >= 0.9) return `server (busy ${pct(busy)})`;
  if (demand >= 0.9) return `cores (busy ${pct(busy)}, with work ${pct(demand)})`;
  return `client (busy ${pct(busy)})`;
}
// A cold import: the server's start and answers (its CPU time, and its main thread's time
// waiting for a CPU) against the import's wall time, beside the client's own CPU time.
function importBound(a) {
  const ms = (x) => `${Math.round(x)} ms`;
  const server = a.serverCpuMs + a.serverWaitMs;
  const who = server >= 0.5 * a.ms ? 'server' : 'client';
  return `${who} (server CPU ${ms(a.serverCpuMs)}, waiting ${ms(a.serverWaitMs)}; client CPU ${ms(a.cpuMs)}; of ${ms(a.ms)})`;
}
const serverBusy = (row) => extra(row, 'serverBusy', "server's main thread on a CPU, share of the wall time", '-');
/** The addon against the better of the two peers on row `r`, or '-'. */
function bestPeer(r) {
  if (r.sdk2 === undefined || r.aisdk === undefined) return '-';
  const best = r.better === 'lower' ? Math.min(r.sdk2, r.aisdk) : Math.max(r.sdk2, r.aisdk);
  return (r.addon / best).toFixed(2);
}
const fmt = (x) => (x === undefined ? '-' : Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));

const started = Date.now();
// 1. Cold import. The server's own start is most of a cold import's time and varies the most
// from process to process (more so on a busy machine), so these rows take more runs.
for (const tools of [10, 1000, 5000]) {
  const row = compare(
    `cold import, ${tools} tools (SDK stdio server)`,
    { op: 'import', transport: 'stdio-sdk', tools, runs: Math.max(RUNS, 9) },
    'ms',
    'ms',
    'lower',
    true,
  );
  extra(row, 'cpuMs', "ms (the client process's CPU time over the import, all its threads)", 'lower');
}
// 1b. The toolset lock: the same cold import checked against its lock, the addon against itself.
if (wanted('cold import, 5000 tools, checked against its lock (baseline: no lock)')) {
  const spec = { op: 'lockImport', transport: 'stdio-sdk', tools: 5000, impl: 'addon' };
  const [plain, locked] = measure({ ...spec, lock: false }, { ...spec, lock: true });
  const label = 'cold import, 5000 tools, checked against its lock (baseline: no lock)';
  rows.push({
    label,
    metric: 'ms',
    unit: 'ms',
    better: 'lower',
    baseline: plain.ms,
    addon: locked.ms,
    ratio: locked.ms / plain.ms,
    base: plain,
    addonAll: locked,
  });
  console.log(`${label.padEnd(44)} ms           baseline ${fmt(plain.ms)} addon ${fmt(locked.ms)} ratio ${(locked.ms / plain.ms).toFixed(2)}`);
  extra(rows[rows.length - 1], 'mcpMs', 'ms (mcp() reading the lock)', 'lower');
  extra(rows[rows.length - 1], 'cpuMs', "ms (the client process's CPU time over mcp() and the import, all its threads)", 'lower');
}
// 2. Latency and throughput per transport and concurrency.
// `http`: the SDK's server, stateful (a session, replies as event streams); `http-fast`: the
// minimal one, stateless (no session, JSON replies). The Rust floor runs beside the fast stdio
// server and both HTTP servers at concurrency 16 and 128. The bare Node client runs on every
// transport; in-process it hands the server objects (bench/raw-client.mjs).
// In-process calls are the fastest rows: 40,000 of them make a run long enough (about a second)
// that a busy moment of the machine does not decide its median.
const callCounts = { 'stdio-fast': 20000, 'stdio-sdk': 10000, http: 2000, 'http-fast': 2000, inprocess: 40000 };
for (const transport of ['stdio-fast', 'stdio-sdk', 'http', 'http-fast', 'inprocess']) {
  const rust = transport === 'stdio-fast' || transport.startsWith('http');
  const c1 = compare(
    `${transport}, concurrency 1`,
    { op: 'calls', transport, calls: Math.min(callCounts[transport], 3000), concurrency: 1 },
    'p50',
    'ms',
    'lower',
    true,
  );
  extra(c1, 'p99', 'ms', 'lower');
  extra(c1, 'callsPerSec', 'calls/s', 'higher');
  for (const concurrency of [16, 128]) {
    const row = compare(
      `${transport}, concurrency ${concurrency}`,
      { op: 'calls', transport, calls: callCounts[transport], concurrency },
      'callsPerSec',
      'calls/s',
      'higher',
      true,
      rust,
    );
    extra(row, 'p99', 'ms', 'lower');
    if (rust) serverBusy(row);
  }
}
// Every call sharing one AbortSignal (an engine's run-level signal), at concurrency 128.
for (const transport of ['stdio-fast', 'inprocess']) {
  compare(
    `${transport}, concurrency 128, one shared signal`,
    { op: 'calls', transport, calls: callCounts[transport], concurrency: 128, sharedSignal: true },
    'callsPerSec',
    'calls/s',
    'higher',
  );
}
// In-process open/tools()/close() cycles, a fresh source each, on one server object that keeps
// every transport it was handed. The same processes go on to 20,000 cycles: after 5,000 a
// process's RSS is within its own spread (about 2 MB between runs of one client), so whether
// memory grows with the cycles shows over more of them. The server keeps every transport, so
// V8's heap grows alike for every client.
const cycles = compare('in-process open/tools()/close(), 5,000 cycles', { op: 'cycles', cycles: 5000, thenTo: 20000 }, 'ms', 'ms', 'lower');
const longCycles = cycles && { ...cycles, label: 'in-process open/tools()/close(), 20,000 cycles' };
// Each memory figure at 5,000 cycles and at 20,000.
const cycleMemory = [
  ['heapMb', 'thenToHeapMb', 'MB after GC'],
  ['rssMb', 'thenToRssMb', 'MB after GC'],
  ['v8ResidentMb', 'thenToV8ResidentMb', 'MB of the RSS growth, V8 heap'],
  ['outsideV8Mb', 'thenToOutsideV8Mb', 'MB of the RSS growth, outside V8'],
];
for (const [metric, , unit] of cycleMemory) extra(cycles, metric, unit, 'lower');
extra(cycles, 'switchesPerCycle', 'voluntary context switches', 'lower');
for (const [, metric, unit] of cycleMemory) extra(longCycles, metric, unit, 'lower');
// The same cycles on a server that keeps no transport: what a client leaves behind of each
// source it opened and closed, with nothing the host holds on top.
const unkept = compare(
  'in-process open/tools()/close(), 20,000 cycles, the server keeping no transport',
  { op: 'cycles', cycles: 5000, thenTo: 20000, keep: false },
  'thenToRssMb',
  'MB after GC',
  'lower',
);
for (const [, metric, unit] of cycleMemory.slice(2)) extra(unkept, metric, unit, 'lower');
// 3. 10 KB structured results with outputSchema validation.
compare(
  '10 KB structured + outputSchema (stdio-fast, c16)',
  { op: 'big', transport: 'stdio-fast', calls: 5000, concurrency: 16 },
  'callsPerSec',
  'calls/s',
  'higher',
  true,
);
// The same once warm: 5,000 calls is under a second, most of it before V8 has optimized the
// calls' code (the addon's JS thread takes 67 us a call then, 42-51 once warm).
compare(
  '10 KB structured + outputSchema, warm (stdio-fast, c16, 20,000 calls after 2,000)',
  { op: 'big', transport: 'stdio-fast', calls: 20000, concurrency: 16, warmup: 2000 },
  'callsPerSec',
  'calls/s',
  'higher',
  true,
);
// A result of 200,000 distinct members (about 3 MB), sequential calls.
compare('result of 200,000 distinct members (stdio-fast, c1)', { op: 'wide', transport: 'stdio-fast', calls: 20, concurrency: 1 }, 'p50', 'ms', 'lower', true);
// 4. Main-thread cost per call.
const cpu = compare(
  'main thread per call (stdio-fast, c16, 10,000 calls)',
  { op: 'calls', transport: 'stdio-fast', calls: 10000, concurrency: 16 },
  'mainUsPerCall',
  'µs',
  'lower',
  true,
  true,
);
extra(cpu, 'elu', '', 'lower');
extra(cpu, 'cpuUsPerCall', 'µs (process)', 'lower');
// The same once warm: the row above is a tenth of a second of calls, in which V8 is still
// compiling the calls' code on its own threads (in every client's process alike).
const warm = compare(
  'process CPU per call, warm (stdio-fast, c16, 100,000 calls after 20,000)',
  { op: 'calls', transport: 'stdio-fast', calls: 100000, concurrency: 16, warmup: 20000 },
  'cpuUsPerCall',
  'µs (process)',
  'lower',
  true,
  true,
);
extra(warm, 'mainUsPerCall', 'µs', 'lower');
// 5. Hashing.
compare('toolsetHash over 5,000 contracts (vs JS JCS + sha256)', { op: 'hash' }, 'ms', 'ms', 'lower');
// 6. Memory.
compare('RSS, 50 stdio sources x 100 tools', { op: 'memory50' }, 'rssMb', 'MB', 'lower', true);
compare('RSS growth over 100,000 calls after 200,000 (stdio-fast)', { op: 'growth', transport: 'stdio-fast', calls: 100000 }, 'growthMb', 'MB', 'lower', true);
// 1,010,000 calls per process: 3 processes per side, not 5. Beside the growth: how much of it
// is V8's own heap, and where RSS stands at 110,000 calls.
const plateau = compare(
  'RSS growth over 100,000 calls after 10,000 (stdio-fast, c16)',
  { op: 'plateau', transport: 'stdio-fast', runs: Math.min(3, RUNS) },
  'growthMb',
  'MB',
  'lower',
  true,
);
extra(plateau, 'v8HeapGrowthMb', "MB (V8's heap, resident)", 'lower');
extra(plateau, 'outsideV8Mb', "MB (RSS growth less V8's resident heap's)", 'lower');
extra(plateau, 'rssMb', 'MB at 110,000', 'lower');
// Of the growth outside V8's statistics, V8's own pages that no space counts (Linux; on Node
// 22 most of it, for every client).
extra(plateau, 'v8UncountedGrowthMb', "MB (V8's pages beyond its space statistics)", 'lower');
// V8 grows its young generation to a working size after as many scavenges; a client that
// allocates less per call gets there later, past 10,000 calls, and the growth is that.
extra(plateau, 'youngAt10kMb', "MB (V8's young generation, resident, at 10,000)", 'lower');
extra(plateau, 'youngAt110kMb', "MB (V8's young generation, resident, at 110,000)", 'lower');
const plateauRow = plateau && { ...plateau, label: 'RSS from 110,000 to 1,010,000 calls (stdio-fast, c16)' };
extra(plateauRow, 'plateauMb', 'MB', 'lower');
// Where RSS stands at the end: a client whose young generation reaches its working size later
// grows more here and may still stand lower.
extra(plateauRow, 'rssAtEndMb', 'MB at 1,010,000', 'lower');
extra(plateauRow, 'plateauV8Mb', "MB (V8's heap, resident)", 'lower');
extra(plateauRow, 'youngAtEndMb', "MB (V8's young generation, resident, at 1,010,000)", 'lower');
extra(plateauRow, 'plateauOutsideV8Mb', "MB (RSS less V8's resident heap)", 'lower');
extra(plateauRow, 'plateauV8UncountedMb', "MB (of it, V8's pages beyond its space statistics)", 'lower');
// Those pages are V8's pool of the pages its collections freed, kept for reuse: a last-resort
// collection at 1,010,000 calls empties it (Node 22 and later) and shrinks the young
// generation, and RSS falls by both.
extra(plateauRow, 'poolGivenBackMb', 'MB (RSS given back at 1,010,000 by a last-resort collection)', 'lower');
extra(plateauRow, 'uncountedGivenBackMb', "MB (of it, V8's pages beyond its space statistics)", 'lower');
// The same 100,000 calls with V8's young generation held at its smallest (1 MB semi-spaces):
// V8 grows it with the rate at which objects survive its scavenges, to 16 MB semi-spaces by
// default, a host's setting and the same for every client. Held, what grows is the rest: the
// allocators' arenas, buffers at their high-water mark, the old generation.
const held = compare(
  'RSS growth over 100,000 calls after 10,000, young generation held (stdio-fast, c16, node --max-semi-space-size=1)',
  { op: 'plateau', transport: 'stdio-fast', later: 0, node: ['--max-semi-space-size=1'] },
  'growthMb',
  'MB',
  'lower',
  true,
);
extra(held, 'v8HeapGrowthMb', "MB (V8's heap, resident)", 'lower');
extra(held, 'outsideV8Mb', "MB (RSS growth less V8's resident heap's)", 'lower');

// 7. OpenTelemetry per call: peer absent (baseline), API installed, SDK recording.
for (const row of only === undefined ? [...eraRows(RUNS), ...asksRows(RUNS)] : []) {
  rows.push(row);
  console.log(`${row.label.padEnd(44)} ${row.metric.padEnd(12)} baseline ${fmt(row.baseline)} addon ${fmt(row.addon)} ratio ${row.ratio.toFixed(2)}`);
}
for (const row of only === undefined ? telemetryRows(RUNS) : []) {
  rows.push(row);
  console.log(`${row.label.padEnd(44)} ${row.metric.padEnd(12)} baseline ${fmt(row.baseline)} addon ${fmt(row.addon)} ratio ${row.ratio.toFixed(2)}`);
}

// A run on a later Node than the oldest the package supports (`engines.node`, the tables'
// own) keeps a table of its own: hosts run 20, 22 and 24, and V8 moves the JS clients' rows.
const oldest = /\d+/.exec(JSON.parse(readFileSync(here('../package.json'), 'utf8')).engines.node)[0];
const major = process.versions.node.split('.')[0];
const minutes = ((Date.now() - started) / 60000).toFixed(1);
const cpuModel = os.cpus()[0]?.model ?? 'unknown';
const lines = [
  `Command: \`${major === oldest ? '' : `PATH=<Node ${major}>:$PATH `}${only === undefined ? '' : `BENCH_ONLY='${only.source}' `}${RUNS === 5 ? '' : `BENCH_RUNS=${RUNS} `}npm run bench${busy.n ? ` -- --contention ${busy.n} --contention-shape ${busy.shape}` : ''}\` (${RUNS} fresh processes per client, ${Math.max(RUNS, 9)} for the cold imports, interleaved, medians; ${minutes} min end to end${busy.n ? `; ${busy.n} ${busy.shape}-bound processes beside every measured one` : ', quiet'}).`,
  `Machine: ${cpuModel}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}.`,
  `Date: ${new Date().toISOString()}.`,
  '',
  'Baseline: `@modelcontextprotocol/sdk` `Client` doing what the TypeScript `mcp()` does. Ratio = addon / baseline.',
  'Peers: the TypeScript SDK 2.x `Client` (`@modelcontextprotocol/client` 2.4, legacy negotiation) and `@ai-sdk/mcp` 2.0.99 (no protocol discovery), on the rows of calls and imports; `addon / best peer` is against the better of the two (a ratio above 1 is ahead on a higher-is-better row, below 1 on a lower-is-better row).',
  'Floors: a bare JSON-RPC client in Node (bench/raw-client.mjs: no SDK, no validation; in-process, it hands the server objects, no text) and one in Rust (bench/floor: a current-thread tokio client, newline JSON or keep-alive HTTP/1.1), measured in the same run where they apply.',
  "Bound: what held the addon's run back, from the server's main-thread scheduler times: `server` (on a CPU at least 90% of the wall time), `cores` (on one or waiting for one at least 90%: it had work, the CPUs were taken), `client` (it sat waiting for requests). For a cold import: `server` when the server's CPU time and its main thread's wait for a CPU make half the import's time or more, with the client's own CPU time beside them.",
  '',
  '| measurement | metric | baseline | addon | ratio | better | floor (raw Node) | addon / floor | floor (Rust) | addon / Rust floor | SDK 2.x | @ai-sdk/mcp | addon / best peer | bound |',
  '|---|---|---|---|---|---|---|---|---|---|---|---|---|---|',
  ...rows.map(
    (r) =>
      `| ${r.label} | ${r.metric} ${r.unit ? `(${r.unit})` : ''} | ${fmt(r.baseline)} | ${fmt(r.addon)} | ${r.ratio.toFixed(2)} | ${r.better} | ${r.raw === undefined ? '-' : fmt(r.raw)} | ${r.raw === undefined ? '-' : (r.addon / r.raw).toFixed(2)} | ${r.rust === undefined ? '-' : fmt(r.rust)} | ${r.rust === undefined ? '-' : (r.addon / r.rust).toFixed(2)} | ${r.sdk2 === undefined ? '-' : fmt(r.sdk2)} | ${r.aisdk === undefined ? '-' : fmt(r.aisdk)} | ${bestPeer(r)} | ${bound(r)} |`,
  ),
  '',
];
if (only !== undefined) {
  // A part of the plan: printed, RESULTS.md left as the last full runs wrote it.
  console.log(`\n${lines.join('\n')}`);
  process.exit(0);
}
// Each full run keeps its table under its condition; RESULTS.md is all of them, quiet first,
// and the analysis of the numbers, kept by hand in NOTES.md.
const condition = `${busy.n > 0 ? `contention-${busy.n}-${busy.shape}` : 'quiet'}${major === oldest ? '' : `-node${major}`}`;
mkdirSync(here('./tables/'), { recursive: true });
writeFileSync(here(`./tables/${condition}.md`), `${lines.join('\n')}\n`);
compose();
console.log(`wrote bench/tables/${condition}.md and bench/RESULTS.md in ${minutes} min`);
