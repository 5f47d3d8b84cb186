// What offering answers to a server's asks (`elicit`, `sample`, `tasks`) costs a call that asks
// nothing: the addon with the hooks set against the addon without them, interleaved, at
// concurrency 16. Part of `npm run bench` (run.mjs); `node bench/asks.mjs` runs these rows alone
// and prints them as RESULTS.md's table has them.
import { interleaved, printRows } from './interleaved.mjs';

/** The rows, in run.mjs's shape: baseline = no hooks, addon = hooks offered. */
export function asksRows(runs) {
  const rows = [];
  for (const [transport, calls] of [
    ['stdio-fast', 20000],
    ['inprocess', 10000],
  ]) {
    const spec = { op: 'calls', impl: 'addon', transport, calls, concurrency: 16 };
    const [base, addon] = interleaved({ ...spec, asks: false }, { ...spec, asks: true }, runs);
    const label = `${transport}, c16, elicit + sample + tasks offered (baseline: none)`;
    for (const [metric, unit, better] of [
      ['callsPerSec', 'calls/s', 'higher'],
      ['mainUsPerCall', 'µs', 'lower'],
      ['p50', 'ms', 'lower'],
    ]) {
      rows.push({ label, metric, unit, better, baseline: base[metric], addon: addon[metric], ratio: addon[metric] / base[metric], base, addonAll: addon });
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = Number(process.env.BENCH_RUNS ?? 5);
  const started = Date.now();
  const rows = asksRows(runs);
  printRows('node bench/asks.mjs', 'fresh processes per side, interleaved, medians', ['no hooks', 'hooks offered'], rows, started, runs);
}
