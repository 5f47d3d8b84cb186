// The warm-up before a row of calls starts its clock, the same for every client and for the Rust
// floor (bench/floor.mjs hands it on): at the measured concurrency (at least 8), two calls per
// call in flight at least. An HTTP client opens a connection per call in flight, and 120 of them
// opened inside a 2,000-call run at concurrency 128 were its p99 (the same client's p99 fell
// from 265 ms to 23-58 ms over 10,000 calls): the ramp measured instead of the calls. A wide
// result is 1 MB of 200,000 members, which the SDK baseline takes seconds per call over: a few
// calls (200 of them outlasted the per-process time limit).

/** @param {{ op?: string, concurrency?: number, warmup?: number }} spec */
export function warmUp(spec) {
  if (spec.op === 'wide') return { calls: 3, concurrency: 1 };
  const concurrency = Math.max(8, spec.concurrency ?? 8);
  return { calls: spec.warmup ?? Math.max(200, 2 * concurrency), concurrency };
}
