// The cost of a confined stdio server (`sandbox`, Linux): spawn to the first tools/list, with
// and without a policy, the fast stdio server (bench/servers/fast-stdio.mjs), fresh sources in
// turn in one process, RUNS rounds (default 30). Medians.
//   node bench/sandbox.mjs
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { mcp } from '../lib/index.mjs';

const RUNS = Number(process.env.RUNS ?? 30);
const servers = fileURLToPath(new URL('./servers/', import.meta.url));
const base = { transport: 'stdio', command: process.execPath, args: [`${servers}fast-stdio.mjs`] };
const policy = { fs: { read: [servers] }, net: 'deny' };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

async function once(config) {
  const started = performance.now();
  const source = mcp(config);
  await source.tools({ runId: 'bench' });
  const ms = performance.now() - started;
  await source.close();
  return ms;
}

const open = [];
const confined = [];
for (let i = 0; i < RUNS + 3; i++) {
  const a = await once(base);
  const b = await once({ ...base, sandbox: policy });
  // The first rounds warm the page cache and the JIT for both alike.
  if (i >= 3) {
    open.push(a);
    confined.push(b);
  }
}
console.log(`Command: \`node bench/sandbox.mjs\` (${RUNS} rounds, interleaved).`);
console.log(`Machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.cpus().length} cores, ${os.type()} ${os.release()}, Node ${process.version}.`);
console.log(`Date: ${new Date().toISOString()}.\n`);
console.log('| spawn to first tools/list | median (ms) | p90 (ms) |\n|---|---|---|');
const p90 = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.9)];
console.log(`| no sandbox | ${median(open).toFixed(2)} | ${p90(open).toFixed(2)} |`);
console.log(`| sandbox (fs.read: the server's folder, net: 'deny') | ${median(confined).toFixed(2)} | ${p90(confined).toFixed(2)} |`);
console.log(`\nratio of the medians: ${(median(confined) / median(open)).toFixed(3)}`);
