// What offering answers to a server's asks (`elicit`, `sample`, `tasks`) costs a call that asks
// nothing: the addon with the hooks set against the addon without them, interleaved, at
// concurrency 16. Part of `npm run bench` (run.mjs); `node bench/asks.mjs` runs these rows alone
// and prints them as RESULTS.md's table has them.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const caseScript = fileURLToPath(new URL('./case.mjs', import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const once = (spec) => JSON.parse(execFileSync(process.execPath, ['--expose-gc', caseScript, JSON.stringify(spec)], { encoding: 'utf8', timeout: 120_000 }).trim().split('\n').pop());

/** The rows, in run.mjs's shape: baseline = no hooks, addon = hooks offered. */
export function asksRows(runs) {
  const rows = [];
  for (const [transport, calls] of [['stdio-fast', 20000], ['inprocess', 10000]]) {
    const spec = { op: 'calls', impl: 'addon', transport, calls, concurrency: 16 };
    const plain = [];
    const offered = [];
    // Interleaved, so a busy moment of the machine falls on both sides alike.
    for (let i = 0; i < runs; i++) {
      plain.push(once({ ...spec, asks: false }));
      offered.push(once({ ...spec, asks: true }));
    }
    const med = (rs) => Object.fromEntries(Object.keys(rs[0]).map((k) => [k, median(rs.map((r) => r[k]))]));
    const base = med(plain);
    const addon = med(offered);
    const label = `${transport}, c16, elicit + sample + tasks offered (baseline: none)`;
    for (const [metric, unit, better] of [['callsPerSec', 'calls/s', 'higher'], ['mainUsPerCall', 'µs', 'lower'], ['p50', 'ms', 'lower']]) {
      rows.push({ label, metric, unit, better, baseline: base[metric], addon: addon[metric], ratio: addon[metric] / base[metric], base, addonAll: addon });
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = Number(process.env.BENCH_RUNS ?? 5);
  const started = Date.now();
  const rows = asksRows(runs);
  const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));
  console.log(`Command: \`node bench/asks.mjs\` (${runs} fresh processes per side, interleaved, medians; ${((Date.now() - started) / 60000).toFixed(1)} min).`);
  console.log(`Machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}.`);
  console.log(`Date: ${new Date().toISOString()}.\n`);
  console.log('| measurement | metric | no hooks | hooks offered | ratio | better |\n|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.label} | ${r.metric} (${r.unit}) | ${fmt(r.baseline)} | ${fmt(r.addon)} | ${r.ratio.toFixed(2)} | ${r.better} |`);
}
