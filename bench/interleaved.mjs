// What bench/asks.mjs and bench/era.mjs share: one measurement in a fresh process, two specs
// measured in turn (so a busy moment of the machine falls on both sides alike), and a run of
// rows printed as RESULTS.md's tables have them.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';

const caseScript = fileURLToPath(new URL('./case.mjs', import.meta.url));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const once = (spec) =>
  JSON.parse(
    execFileSync(process.execPath, ['--expose-gc', caseScript, JSON.stringify(spec)], { encoding: 'utf8', timeout: 120_000 })
      .trim()
      .split('\n')
      .pop(),
  );
const med = (rs) => Object.fromEntries(Object.keys(rs[0]).map((k) => [k, median(rs.map((r) => r[k]))]));

/** `runs` of `base` and `other` in turn; the medians of each: `[base, other]`. */
export function interleaved(base, other, runs) {
  const a = [];
  const b = [];
  for (let i = 0; i < runs; i++) {
    a.push(once(base));
    b.push(once(other));
  }
  return [med(a), med(b)];
}

/** Prints the command, machine, date and `rows` (`label, metric, unit, baseline, addon, ratio, better`). */
export function printRows(command, note, columns, rows, started, runs) {
  const fmt = (x) => (Math.abs(x) >= 100 ? x.toFixed(0) : x.toFixed(3));
  console.log(`Command: \`${command}\` (${runs} ${note}; ${((Date.now() - started) / 60000).toFixed(1)} min).`);
  console.log(
    `Machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}, Node ${process.version}.`,
  );
  console.log(`Date: ${new Date().toISOString()}.\n`);
  console.log(`| measurement | metric | ${columns[0]} | ${columns[1]} | ratio | better |\n|---|---|---|---|---|---|`);
  for (const r of rows) console.log(`| ${r.label} | ${r.metric} (${r.unit}) | ${fmt(r.baseline)} | ${fmt(r.addon)} | ${r.ratio.toFixed(2)} | ${r.better} |`);
}
