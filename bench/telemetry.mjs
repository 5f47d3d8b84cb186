// The cost of OpenTelemetry per call: the addon with @opentelemetry/api absent (the baseline),
// installed with no SDK registered, and with the SDK recording a span and a histogram point
// per call. Part of `npm run bench` (run.mjs); `node bench/telemetry.mjs` runs these rows alone
// and prints them as RESULTS.md's table has them.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const caseScript = fileURLToPath(new URL('./case.mjs', import.meta.url));
const absent = fileURLToPath(new URL('./otel-absent.cjs', import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Median of `runs` fresh processes; `preload`: a module to --require first. */
function measure(spec, runs) {
  const results = [];
  for (let i = 0; i < runs; i++) {
    const pre = spec.preload ? ['--require', spec.preload] : [];
    const out = execFileSync(process.execPath, ['--expose-gc', ...pre, caseScript, JSON.stringify(spec)], { encoding: 'utf8', timeout: 120_000 });
    results.push(JSON.parse(out.trim().split('\n').pop()));
  }
  return Object.fromEntries(Object.keys(results[0]).map((k) => [k, median(results.map((r) => r[k]))]));
}

/** The rows, in run.mjs's shape: baseline = peer absent, addon = the variant. */
export function telemetryRows(runs) {
  const rows = [];
  for (const [transport, calls] of [
    ['stdio-fast', 10000],
    ['inprocess', 10000],
  ]) {
    const spec = { op: 'calls', impl: 'addon', transport, calls, concurrency: 16 };
    const base = measure({ ...spec, preload: absent }, runs);
    for (const [variant, otel] of [
      ['@opentelemetry/api installed, no SDK', 'api'],
      ['OpenTelemetry SDK recording every call', 'sdk'],
    ]) {
      const addon = measure({ ...spec, otel }, runs);
      const label = `${transport}, c16, ${variant} (baseline: peer absent)`;
      for (const [metric, unit, better] of [
        ['mainUsPerCall', 'µs', 'lower'],
        ['callsPerSec', 'calls/s', 'higher'],
      ]) {
        rows.push({ label, metric, unit, better, baseline: base[metric], addon: addon[metric], ratio: addon[metric] / base[metric], base, addonAll: addon });
      }
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = Number(process.env.BENCH_RUNS ?? 5);
  const started = Date.now();
  const rows = telemetryRows(runs);
  const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(2));
  console.log(`Command: \`node bench/telemetry.mjs\` (${runs} fresh processes per measurement, medians; ${((Date.now() - started) / 60000).toFixed(1)} min).`);
  console.log(
    `Machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}.`,
  );
  console.log(`Date: ${new Date().toISOString()}.\n`);
  console.log('| measurement | metric | peer absent | variant | ratio | better |\n|---|---|---|---|---|---|');
  for (const r of rows) console.log(`| ${r.label} | ${r.metric} (${r.unit}) | ${fmt(r.baseline)} | ${fmt(r.addon)} | ${r.ratio.toFixed(2)} | ${r.better} |`);
}
