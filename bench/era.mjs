// The 2026-07-28 wire beside the 2025 one: the addon against the same minimal servers
// (bench/servers/fast-stdio.mjs, fast-http.mjs) speaking one era or the other, interleaved, at
// concurrency 1 and 16. Part of `npm run bench` (run.mjs); `node bench/era.mjs` runs these rows
// alone and prints them as RESULTS.md's table has them.
import { interleaved, printRows } from './interleaved.mjs';

/** The rows, in run.mjs's shape: baseline = the 2025 wire, addon = the 2026 wire. */
export function eraRows(runs) {
  const rows = [];
  for (const [legacy, modern, calls] of [
    ['stdio-fast', 'stdio-fast-2026', 20000],
    ['http-fast', 'http-fast-2026', 4000],
  ]) {
    for (const concurrency of [1, 16]) {
      const spec = { op: 'calls', impl: 'addon', calls: concurrency === 1 ? Math.min(calls, 3000) : calls, concurrency };
      const [base, addon] = interleaved({ ...spec, transport: legacy }, { ...spec, transport: modern }, runs);
      const label = `${modern}, concurrency ${concurrency} (baseline: the same server on 2025-11-25)`;
      const metrics =
        concurrency === 1
          ? [
              ['p50', 'ms', 'lower'],
              ['mainUsPerCall', 'µs', 'lower'],
            ]
          : [
              ['callsPerSec', 'calls/s', 'higher'],
              ['mainUsPerCall', 'µs', 'lower'],
              // The client's whole process (every thread) per call, and the server's: what the
              // modern wire costs each side.
              ['cpuUsPerCall', 'µs', 'lower'],
              ['serverCpuUsPerCall', 'µs', 'lower'],
            ];
      for (const [metric, unit, better] of metrics)
        rows.push({ label, metric, unit, better, baseline: base[metric], addon: addon[metric], ratio: addon[metric] / base[metric], base, addonAll: addon });
    }
  }
  return rows;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const runs = Number(process.env.BENCH_RUNS ?? 5);
  const started = Date.now();
  const rows = eraRows(runs);
  printRows('node bench/era.mjs', 'fresh processes per side, interleaved, medians', ['2025-11-25', '2026-07-28'], rows, started, runs);
}
