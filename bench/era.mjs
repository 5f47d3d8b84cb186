// The 2026-07-28 wire beside the 2025 one: the addon against the same minimal servers
// (bench/servers/fast-stdio.mjs, fast-http.mjs) speaking one era or the other, interleaved, at
// concurrency 1 and 16. Part of `npm run bench` (run.mjs); `node bench/era.mjs` runs these rows
// alone and prints them as RESULTS.md's table has them.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const caseScript = fileURLToPath(new URL('./case.mjs', import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const once = (spec) => JSON.parse(execFileSync(process.execPath, ['--expose-gc', caseScript, JSON.stringify(spec)], { encoding: 'utf8', timeout: 120_000 }).trim().split('\n').pop());
const med = (rs) => Object.fromEntries(Object.keys(rs[0]).map((k) => [k, median(rs.map((r) => r[k]))]));

/** The rows, in run.mjs's shape: baseline = the 2025 wire, addon = the 2026 wire. */
export function eraRows(runs) {
  const rows = [];
  for (const [legacy, modern, calls] of [['stdio-fast', 'stdio-fast-2026', 20000], ['http-fast', 'http-fast-2026', 4000]]) {
    for (const concurrency of [1, 16]) {
      const spec = { op: 'calls', impl: 'addon', calls: concurrency === 1 ? Math.min(calls, 3000) : calls, concurrency };
      const old = [];
      const now = [];
      for (let i = 0; i < runs; i++) {
        old.push(once({ ...spec, transport: legacy }));
        now.push(once({ ...spec, transport: modern }));
      }
      const base = med(old);
      const addon = med(now);
      const label = `${modern}, concurrency ${concurrency} (baseline: the same server on 2025-11-25)`;
      const metrics = concurrency === 1 ? [['p50', 'ms', 'lower'], ['mainUsPerCall', 'µs', 'lower']] : [['callsPerSec', 'calls/s', 'higher'], ['mainUsPerCall', 'µs', 'lower']];
      for (const [metric, unit, better] of metrics) rows.push({ label, metric, unit, better, baseline: base[metric], addon: addon[metric], ratio: addon[metric] / base[metric], base, addonAll: addon });
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = Number(process.env.BENCH_RUNS ?? 5);
  const started = Date.now();
  const rows = eraRows(runs);
  const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(3));
  console.log(`Command: \`node bench/era.mjs\` (${runs} fresh processes per side, interleaved, medians; ${((Date.now() - started) / 60000).toFixed(1)} min).`);
  console.log(`Machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}.`);
  console.log(`Date: ${new Date().toISOString()}.\n`);
  console.log('| measurement | metric | 2025-11-25 | 2026-07-28 | ratio | better |\n|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.label} | ${r.metric} (${r.unit}) | ${fmt(r.baseline)} | ${fmt(r.addon)} | ${r.ratio.toFixed(2)} | ${r.better} |`);
}
