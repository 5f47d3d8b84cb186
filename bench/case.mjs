// One measurement in a fresh process: `node bench/case.mjs '<json spec>'` prints JSON.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { performance } from 'node:perf_hooks';
import { lockText, mcp, toolsetHash } from '../lib/index.mjs';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRequire } from 'node:module';
import v8 from 'node:v8';
import { addonSource, sdkSource } from './clients.mjs';
import { aiSdkSource, sdk2Source } from './peers.mjs';
import { rawSource } from './raw-client.mjs';
import { serverCommand } from './servers/commands.mjs';
import { bareServer } from './servers/bare-server.mjs';
import { sdkServer } from './servers/sdk-server.mjs';
import { makeTools } from './servers/tools.mjs';
import { warmUp } from './warmup.mjs';

const spec = JSON.parse(process.argv[2]);
// `otel: 'sdk'`: the OpenTelemetry SDK registered and every call under an active span (the
// peer-absent case preloads otel-absent.cjs instead; see telemetry.mjs).
const otel = spec.otel === 'sdk' ? await import('./otel-sdk.mjs') : null;
const gc = () => globalThis.gc?.();
// Memory as it stands once a collection is over: V8 hands the pages a collection freed back
// to the system from a thread of its own, after the collection returns, so RSS read right
// after gc() counts some of them or none by chance (up to 20 MB apart on the same run).
// Collected, given time to let go of them, collected again.
async function settled() {
  gc();
  await new Promise((resolve) => setTimeout(resolve, 300));
  gc();
  await new Promise((resolve) => setTimeout(resolve, 100));
  gc();
  return process.memoryUsage();
}
/** The resident size in bytes of V8's spaces whose name `keep` accepts (all unless given). */
const residentOf = (keep = () => true) =>
  v8
    .getHeapSpaceStatistics()
    .filter((space) => keep(space.space_name))
    .reduce((sum, space) => sum + space.physical_space_size, 0);
// V8's heap as it is resident, in bytes (`physical_space_size`): `heapTotal` counts what it has
// reserved, whose pages count in RSS only once first written, calls later.
const v8Resident = () => residentOf();
const V8_PAGE_BYTES = 256 * 1024;
/**
 * What V8's heap pages hold resident beyond what its space statistics count, in MB, on Linux
 * (null elsewhere): the resident part of every anonymous mapping of exactly one V8 page
 * (256 KiB, /proc/self/smaps) less the physical size of the spaces made of such pages (every
 * space but the large-object ones). Its level is an offset (pages partly untouched); its growth
 * is memory V8 keeps mapped and resident that no space counts: on Nodes 22 and 24 tens of MB
 * over the first 100,000 calls for every client (on Node 22 58 for the original, 28 for the
 * addon), which RSS less `v8Resident()` would count outside V8: V8's pool of freed pages
 * (`poolGivenBack()`). On Node 20 it stays flat.
 */
function v8Uncounted() {
  let smaps;
  try {
    smaps = readFileSync('/proc/self/smaps', 'utf8');
  } catch {
    return null;
  }
  let kb = 0;
  let page = false;
  for (const line of smaps.split('\n')) {
    const mapping = /^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ (\d+)\s*(.*)$/.exec(line);
    if (mapping !== null) {
      const bytes = Number.parseInt(mapping[2], 16) - Number.parseInt(mapping[1], 16);
      page = bytes === V8_PAGE_BYTES && mapping[3] === '0' && mapping[4] === '';
    } else if (page && line.startsWith('Rss:')) {
      kb += Number.parseInt(line.slice(4), 10);
    }
  }
  return kb / 1024 - residentOf((name) => !name.includes('large_object')) / 2 ** 20;
}
/**
 * What V8's page pool gives back (Node 22 and later: V8 12 keeps the pages its collections
 * freed in a pool for reuse, `pooled` in `--trace-gc`, which `v8Uncounted()` reads as pages no
 * space counts): RSS and the uncounted pages after a last-resort collection, which empties the
 * pool as V8's memory reducer does by itself 10-15 s after a process stops calling (seen on
 * Node 22, both clients); null before V8 12, whose gc() takes no flavor, and off Linux.
 */
async function poolGivenBack() {
  if (Number(process.versions.v8.split('.')[0]) < 12 || globalThis.gc === undefined) return null;
  globalThis.gc({ type: 'major', execution: 'sync', flavor: 'last-resort' });
  await new Promise((resolve) => setTimeout(resolve, 300));
  const uncounted = v8Uncounted();
  return uncounted === null ? null : { rss: process.memoryUsage().rss / 2 ** 20, uncounted };
}
/** V8's young generation as it is resident (its semi-spaces and new large objects), in MB. */
const youngMb = () => residentOf((name) => name === 'new_space' || name === 'new_large_object_space') / 2 ** 20;
// The addon's own memory (`nativeMemory`): what its allocator holds from the system
// (`committedBytes`) and, in a build with the `alloc-count` feature, what of that is live
// (`liveBytes`); `{}` for any other client.
const addonNative = spec.impl === 'addon' ? createRequire(import.meta.url)('../lib/native.js') : undefined;
const ownMemory = () => (addonNative === undefined ? {} : JSON.parse(addonNative.nativeMemory()));

async function target(transport, tools) {
  if (transport === 'inprocess') return { kind: 'inprocess', server: sdkServer(tools) };
  if (transport === 'inprocess-bare') return { kind: 'inprocess', server: bareServer() };
  const server = serverCommand(transport, tools);
  if (server === undefined) throw new Error(`unknown transport ${transport}`);
  if (server.kind === 'stdio') return server;
  const child = spawn(server.command, server.args, { env: server.env, stdio: ['ignore', 'pipe', 'inherit'] });
  const url = await new Promise((resolve) => child.stdout.once('data', (d) => resolve(String(d).trim())));
  return { kind: 'http', url, pid: child.pid, stop: () => child.kill() };
}

const sources = {
  addon: (t) => addonSource({ ...t, asks: spec.asks === true }),
  raw: rawSource,
  sdk: sdkSource,
  sdk2: sdk2Source,
  aisdk: aiSdkSource,
};
const open = (t) => (sources[spec.impl] ?? sdkSource)(t);

// Every call of one measurement shares one context; with `spec.sharedSignal` it carries one
// AbortSignal, as an engine hands its run-level signal to every tool call of a run.
const callCtx = { runId: 'bench', ...(spec.sharedSignal ? { signal: new AbortController().signal } : {}) };

// The server's scheduler times from /proc (Linux), in ns: its main thread on a CPU and waiting
// for one, all its threads on a CPU. The server is this process's one child (started here for
// HTTP, by the client for stdio); none (in-process, or no /proc): no server figures.
let serverPid;
function findServer(t) {
  if (t.pid !== undefined) return t.pid;
  if (t.kind !== 'stdio' || !existsSync('/proc/self/stat')) return undefined;
  const children = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === process.pid) children.push(Number(entry));
    } catch {}
  }
  return children.length === 1 ? children[0] : undefined;
}
function serverTimes() {
  if (serverPid === undefined) return undefined;
  try {
    const schedstat = (task) => readFileSync(`/proc/${serverPid}/task/${task}/schedstat`, 'utf8').split(' ').map(Number);
    const [mainOnCpu, mainWaiting] = schedstat(serverPid);
    let allOnCpu = 0;
    for (const task of readdirSync(`/proc/${serverPid}/task`)) {
      try {
        allOnCpu += schedstat(task)[0];
      } catch {}
    }
    return { mainOnCpu, mainWaiting, allOnCpu };
  } catch {
    return undefined;
  }
}

/** Voluntary context switches of all this process's threads so far (Linux), or undefined. */
function switches() {
  try {
    let sum = 0;
    for (const task of readdirSync('/proc/self/task')) {
      try {
        sum += Number(/voluntary_ctxt_switches:\s+(\d+)/.exec(readFileSync(`/proc/self/task/${task}/status`, 'utf8'))[1]);
      } catch {}
    }
    return sum;
  } catch {
    return undefined;
  }
}

/** The middle of three samples (the median a memory row reads). */
const mid3 = (xs) => [...xs].sort((a, b) => a - b)[1];

async function calls(defs, name, input, total, concurrency) {
  const def = defs.find((d) => d.name === name);
  const latencies = [];
  let next = 0;
  const worker = async () => {
    while (next < total) {
      next += 1;
      const t0 = performance.now();
      await def.execute(input, callCtx);
      latencies.push(performance.now() - t0);
    }
  };
  const server0 = serverTimes();
  const elu0 = performance.eventLoopUtilization();
  const cpu0 = process.cpuUsage();
  const t0 = performance.now();
  const all = () => Promise.all(Array.from({ length: concurrency }, worker));
  await (otel === null ? all() : otel.underSpan(all));
  const ms = performance.now() - t0;
  const cpu = process.cpuUsage(cpu0);
  const elu = performance.eventLoopUtilization(elu0);
  const server1 = server0 && serverTimes();
  latencies.sort((a, b) => a - b);
  // Beside the client's figures, the server's (as the Rust floor reports them): the share of the
  // wall time its main thread was on a CPU (`serverBusy`), on one or waiting for one
  // (`serverDemand`: it had work), and all its threads' CPU time per call.
  const server = server1
    ? {
        serverBusy: (server1.mainOnCpu - server0.mainOnCpu) / (ms * 1e6),
        serverDemand: (server1.mainOnCpu - server0.mainOnCpu + server1.mainWaiting - server0.mainWaiting) / (ms * 1e6),
        serverCpuUsPerCall: (server1.allOnCpu - server0.allOnCpu) / 1000 / total,
      }
    : {};
  return {
    callsPerSec: total / (ms / 1000),
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p99: latencies[Math.floor(latencies.length * 0.99)],
    cpuUsPerCall: (cpu.user + cpu.system) / total,
    elu: elu.utilization,
    // Main-thread busy time per call: what the engine's event loop pays.
    mainUsPerCall: (elu.active * 1000) / total,
    ...server,
  };
}

function jsJcs(v) {
  if (v === null || typeof v !== 'object') return JSON.stringify(v);
  if (Array.isArray(v)) return `[${v.map(jsJcs).join(',')}]`;
  return `{${Object.keys(v)
    .sort()
    .filter((k) => v[k] !== undefined)
    .map((k) => `${JSON.stringify(k)}:${jsJcs(v[k])}`)
    .join(',')}}`;
}

async function main() {
  const op = spec.op;
  if (op === 'hash') {
    const contracts = makeTools(5000).map((t) => ({ name: t.name, description: t.description, parameters: t.inputSchema }));
    const run =
      spec.impl === 'addon'
        ? () => toolsetHash(contracts)
        : () =>
            createHash('sha256')
              .update(jsJcs([...contracts].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))))
              .digest('hex');
    run();
    const t0 = performance.now();
    for (let i = 0; i < 5; i++) run();
    return { ms: (performance.now() - t0) / 5 };
  }
  if (op === 'memory50') {
    const t = await target('stdio-fast', 100);
    const sources = Array.from({ length: 50 }, () => open(t));
    // Each host keeps the tool array it imported, as an engine does for a session.
    const kept = [];
    for (const s of sources) kept.push(await s.tools());
    gc();
    const rss = process.memoryUsage().rss / 2 ** 20;
    if (kept.length !== 50) throw new Error('lost a source');
    for (const s of sources) await s.close();
    return { rssMb: rss };
  }
  if (op === 'cycles') {
    // A fresh source per cycle (open, tools(), close()) on one in-process server object that
    // keeps every transport it was handed, as some embedded servers do for metrics: the time
    // of `spec.cycles` cycles, and what stays in memory after forced collections. With
    // `spec.keep === false` it keeps none, so what stays is what each client leaves of its own.
    const inner = sdkServer(10);
    const kept = [];
    let connected = 0;
    const server = {
      connect: async (transport) => {
        connected += 1;
        if (spec.keep !== false) kept.push(transport);
        return inner.connect(transport);
      },
    };
    const cycle = async () => {
      const s = open({ kind: 'inprocess', server });
      await s.tools();
      await s.close();
    };
    // Warmed up until V8's young generation has reached its working size (32 MB here) for
    // every client: it grows with the bytes allocated, so after 50 cycles the original's had
    // reached it and the addon's, which allocates less per cycle, stood at 9.6 MB, and the
    // row counted 22 MB of young generation still to come as the addon's growth.
    const WARM = 500;
    for (let i = 0; i < WARM; i++) await cycle();
    // Memory once settled (a dead source's native memory is freed by its wrapper's finalizer,
    // which runs after the collection that found it, hence `settled()`'s pauses), with V8's
    // heap as it is resident: of the RSS growth, `v8ResidentMb` is V8's, `outsideV8Mb` the
    // rest (the allocators, the addon).
    // Of `outsideV8Mb`, the addon's allocator: what it holds from the system (`allocatorMb`)
    // and, in an `alloc-count` build, what of that is live (`liveMb`).
    const settle = async () => ({ ...(await settled()), resident: v8Resident(), own: ownMemory() });
    const m0 = await settle();
    const s0 = switches();
    const t0 = performance.now();
    for (let i = 0; i < spec.cycles; i++) await cycle();
    const ms = performance.now() - t0;
    const s1 = switches();
    const m1 = await settle();
    /** What memory grew by from `m0` to `m`, in MB. */
    const grown = (m) => {
      const rssMb = (m.rss - m0.rss) / 2 ** 20;
      const v8ResidentMb = (m.resident - m0.resident) / 2 ** 20;
      return { heapMb: (m.heapUsed - m0.heapUsed) / 2 ** 20, rssMb, v8ResidentMb, outsideV8Mb: rssMb - v8ResidentMb };
    };
    // With `spec.thenTo`, the same process goes on to that many cycles in all and reads memory
    // again: whether it grows with the cycles, seen past the spread between processes, without
    // doing the first cycles twice.
    let later = {};
    if (spec.thenTo !== undefined) {
      for (let i = spec.cycles; i < spec.thenTo; i++) await cycle();
      const g = grown(await settle());
      later = { thenToHeapMb: g.heapMb, thenToRssMb: g.rssMb, thenToV8ResidentMb: g.v8ResidentMb, thenToOutsideV8Mb: g.outsideV8Mb };
    }
    if (connected !== (spec.thenTo ?? spec.cycles) + WARM) throw new Error('a cycle did not connect');
    return {
      ms,
      ...grown(m1),
      ...later,
      ...(addonNative === undefined ? {} : { allocatorMb: (m1.own.committedBytes - m0.own.committedBytes) / 2 ** 20 }),
      ...(m0.own.liveBytes == null ? {} : { liveMb: (m1.own.liveBytes - m0.own.liveBytes) / 2 ** 20 }),
      // Threads put to sleep and woken again, all the process's threads (Linux): what a cycle's
      // trips between threads cost beyond its own work.
      ...(s0 === undefined || s1 === undefined ? {} : { switchesPerCycle: (s1 - s0) / spec.cycles }),
    };
  }
  if (op === 'lockImport') {
    // A cold import with or without checking it against its lock (written by a source of its
    // own first, not measured). `mcpMs`: what reading and parsing the lock adds to mcp().
    // `cpuMs`: this process's CPU time over mcp() and the import, every thread (the lock's
    // entries are read on a thread of the source's, beside the server's start).
    const t = await target(spec.transport, spec.tools);
    const config = { transport: 'stdio', command: t.command, args: t.args, env: t.env };
    const file = join(mkdtempSync(join(tmpdir(), 'rulvar-bench-')), 'tools.lock.json');
    const writer = mcp(config);
    writeFileSync(file, await lockText(writer));
    await writer.close();
    gc();
    const cpu0 = process.cpuUsage();
    const m0 = performance.now();
    const source = mcp(spec.lock ? { ...config, lock: file } : config);
    const mcpMs = performance.now() - m0;
    const t0 = performance.now();
    const defs = await source.tools({ runId: 'bench' });
    const ms = performance.now() - t0;
    const cpu = process.cpuUsage(cpu0);
    await source.close();
    return { ms, mcpMs, cpuMs: (cpu.user + cpu.system) / 1000, tools: defs.length };
  }
  const t = await target(spec.transport, spec.tools ?? 10);
  const source = open(t);
  try {
    if (op === 'import') {
      const t0 = performance.now();
      const cpu0 = process.cpuUsage();
      const defs = await source.tools();
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      // `cpuMs`: this process's CPU time over the import, every thread. The server started in
      // the import: all its CPU time (`serverCpuMs`) and its main thread's time waiting for a
      // CPU (`serverWaitMs`) are the import's.
      serverPid = findServer(t);
      const server = serverTimes();
      return {
        ms,
        tools: defs.length,
        cpuMs: (cpu.user + cpu.system) / 1000,
        ...(server ? { serverCpuMs: server.allOnCpu / 1e6, serverWaitMs: server.mainWaiting / 1e6 } : {}),
      };
    }
    const defs = await source.tools();
    serverPid = findServer(t);
    const [name, input] = op === 'big' ? ['big', {}] : op === 'wide' ? ['echo', { text: 'wide' }] : ['echo', { text: 'hello' }];
    const warm = warmUp(spec);
    await calls(defs, name, input, warm.calls, warm.concurrency);
    if (op === 'plateau') {
      // RSS after a short warm-up (10,000 calls), sampled every 10,000 calls up to 110,000
      // (`growthMb`: the last sample against the first), then every 100,000 up to 1,010,000
      // (`plateauMb`: the median of the last three against the sample at 110,000; `spec.later`
      // samples of 100,000 calls, 9 unless given, and none when 0). Of `growthMb`, V8's own
      // heap (`v8HeapGrowthMb`: its young generation grows to its working size over the first
      // calls) and the rest, outside it (`outsideV8Mb`: the allocators, buffers, the addon).
      let heap = 0;
      let young = 0;
      let uncounted = null;
      const rss = async () => {
        const m = await settled();
        heap = v8Resident() / 2 ** 20;
        young = youngMb();
        uncounted = v8Uncounted();
        return m.rss / 2 ** 20;
      };
      // 100,000 calls in runs of 10,000, before 110,000 and after alike: one run of 100,000
      // keeps 100,000 latencies, and V8's heap stepped up at the first of them (+5.6 MB on
      // Node 22), which the row read as growth after 110,000 calls.
      const hundredThousand = async () => {
        for (let i = 0; i < 10; i++) await calls(defs, name, input, 10_000, 16);
      };
      await calls(defs, name, input, 10_000, 16);
      const first = await rss();
      const [firstHeap, youngAt10k, firstUncounted] = [heap, young, uncounted];
      await hundredThousand();
      const at110k = await rss();
      const v8HeapGrowthMb = heap - firstHeap;
      const [heapAt110k, uncountedAt110k, youngAt110k] = [heap, uncounted, young];
      // Each later sample's RSS, V8's heap and V8's uncounted pages, read at the same moment.
      const later = [];
      for (let i = 0; i < (spec.later ?? 9); i++) {
        await hundredThousand();
        later.push({ rss: await rss(), heap, uncounted });
      }
      const last = later.slice(-3);
      const three = last.length >= 3;
      const plateauMb = three ? mid3(last.map((s) => s.rss)) - at110k : 0;
      // Of it, V8's resident heap (on Node 24 its young generation is still growing there for
      // a client that allocates little per call) and the rest, outside V8.
      const plateauV8Mb = three ? mid3(last.map((s) => s.heap)) - heapAt110k : 0;
      // Outside V8, sample by sample (RSS less V8's heap at the same moment), then the median:
      // the two medians above may come from different samples, so their difference need not
      // be any sample's.
      const plateauOutsideV8Mb = three ? mid3(last.map((s) => s.rss - s.heap)) - (at110k - heapAt110k) : 0;
      const growthMb = at110k - first;
      // Of what lies outside V8's statistics, V8's own pages (Linux only), and at the end what
      // of the last sample V8's pool gives back (Node 22 and later).
      const pooled = three && firstUncounted !== null ? await poolGivenBack() : null;
      const end = later.at(-1);
      const pages =
        firstUncounted === null
          ? {}
          : {
              v8UncountedGrowthMb: uncountedAt110k - firstUncounted,
              ...(three ? { plateauV8UncountedMb: mid3(last.map((s) => s.uncounted)) - uncountedAt110k } : {}),
              ...(pooled === null ? {} : { poolGivenBackMb: end.rss - pooled.rss, uncountedGivenBackMb: end.uncounted - pooled.uncounted }),
            };
      // The young generation's size at 10,000 and 110,000 calls: V8 grows it to its working
      // size after as many scavenges, so a client that allocates less per call gets there later.
      return {
        growthMb,
        v8HeapGrowthMb,
        outsideV8Mb: growthMb - v8HeapGrowthMb,
        plateauMb,
        plateauV8Mb,
        plateauOutsideV8Mb,
        rssMb: at110k,
        youngAt10kMb: youngAt10k,
        youngAt110kMb: youngAt110k,
        // At the last sample, where the plateau ends: the young generation (on Node 24 a client
        // that allocates little per call still grows it after 110,000) and RSS itself.
        ...(end === undefined ? {} : { youngAtEndMb: young, rssAtEndMb: end.rss }),
        ...pages,
      };
    }
    if (op === 'soak') {
      // `spec.calls` calls (1,000,000 unless given) at concurrency 16, RSS sampled once memory
      // settled before the first and after every 50,000: `firstMb`, the growth over the first
      // 100,000; `afterMb`, the highest sample after 100,000 against the one at 100,000.
      // Beside RSS, V8's resident heap, so what grew outside V8 (the allocators, the addon)
      // is told apart; for the addon, also what its allocator holds from the system and, in a
      // build with the `alloc-count` feature, what of that is live (`nativeMemory`).
      const every = 50_000;
      const total = spec.calls ?? 1_000_000;
      const samples = [];
      const sample = async () => {
        const m = await settled();
        const heap = v8Resident();
        const own = ownMemory();
        samples.push({
          rssMb: m.rss / 2 ** 20,
          v8Mb: heap / 2 ** 20,
          committedMb: own.committedBytes === undefined ? undefined : own.committedBytes / 2 ** 20,
          liveMb: own.liveBytes == null ? undefined : own.liveBytes / 2 ** 20,
        });
      };
      await sample();
      for (let done = 0; done < total; done += every) {
        await calls(defs, name, input, every, 16);
        await sample();
      }
      const at100k = samples[Math.min(2, samples.length - 1)];
      const later = samples.slice(3);
      const peak = later.reduce((a, b) => (b.rssMb > a.rssMb ? b : a), at100k);
      const grew = (key, from, to) => (from[key] === undefined ? undefined : to[key] - from[key]);
      return {
        firstMb: at100k.rssMb - samples[0].rssMb,
        firstV8Mb: at100k.v8Mb - samples[0].v8Mb,
        firstCommittedMb: grew('committedMb', samples[0], at100k),
        firstLiveMb: grew('liveMb', samples[0], at100k),
        afterMb: peak.rssMb - at100k.rssMb,
        afterV8Mb: peak.v8Mb - at100k.v8Mb,
        afterCommittedMb: grew('committedMb', at100k, peak),
        afterLiveMb: grew('liveMb', at100k, peak),
        samples: samples.map((x) => Math.round(x.rssMb * 10) / 10).join(' '),
      };
    }
    if (op === 'growth') {
      // Growth means a leak only once the heaps have reached their working size: V8's young
      // generation and the allocators' arenas keep expanding over the first 100,000 calls or
      // so, and afterwards RSS still swings by 10-20 MB as they hand pages back and take them
      // again. So: warm up, sample RSS every tenth of the run, and compare the median of the
      // last three samples with the median of the first three.
      await calls(defs, name, input, spec.warmup ?? 200_000, 16);
      const samples = [];
      const sample = async () => samples.push((await settled()).rss / 2 ** 20);
      await sample();
      for (let i = 0; i < 10; i++) {
        await calls(defs, name, input, spec.calls / 10, 16);
        await sample();
      }
      return { growthMb: mid3(samples.slice(-3)) - mid3(samples.slice(0, 3)) };
    }
    return await calls(defs, name, input, spec.calls, spec.concurrency);
  } finally {
    await source.close();
    t.stop?.();
  }
}

main().then(
  (r) => {
    console.log(JSON.stringify(r));
    process.exit(0);
  },
  (e) => {
    console.error(e);
    process.exit(1);
  },
);
