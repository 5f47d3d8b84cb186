// The runtime column: the addon's stdio row at concurrency 16 (the fast stdio server, 20,000
// calls) with the client on each supported runtime (Node 20, 22 and 24, Bun, Deno), the server
// on this machine's Node for all of them, and the SDK client on this machine's Node as the
// baseline, one fresh process each, in turn, RUNS rounds. Medians.
//   node bench/runtimes.mjs            (RUNS=5 by default)
// Bun has no event-loop utilisation, so its main-thread figure is not reported. The runtimes
// are those of the matrix (__test__/runtimes/install.mjs installs them from npm).
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { installRuntimes, RUNTIMES } from '../__test__/runtimes/install.mjs';

const RUNS = Number(process.env.RUNS ?? 5);
const caseScript = fileURLToPath(new URL('./case.mjs', import.meta.url));
const spec = { op: 'calls', transport: 'stdio-fast', calls: 20000, concurrency: 16 };
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

installRuntimes();
const started = Date.now();
// `--expose-gc` is Node's and Bun's; Deno takes V8 flags as `--v8-flags=`.
const flags = (command) => (command.includes('run') ? ['--v8-flags=--expose-gc'] : ['--expose-gc']);
const clients = [['SDK client (node 20)', [process.execPath], 'sdk'], ...RUNTIMES.map(([name, command]) => [`addon on ${name}`, command, 'addon'])];
const results = clients.map(() => []);
for (let i = 0; i < RUNS; i++) {
  for (const [j, [, command, impl]] of clients.entries()) {
    const [bin, ...pre] = command;
    const args = [...pre, ...flags(command), caseScript, JSON.stringify({ ...spec, impl })];
    const out = execFileSync(bin, args, { encoding: 'utf8', timeout: 120_000, env: { ...process.env, BENCH_SERVER_NODE: process.execPath } });
    results[j].push(JSON.parse(out.trim().split('\n').pop()));
  }
}
console.log(`Command: \`node bench/runtimes.mjs\` (${RUNS} runs each, interleaved; ${((Date.now() - started) / 60000).toFixed(1)} min).`);
console.log(
  `Machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.cpus().length} cores, ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB, ${os.type()} ${os.release()}.`,
);
console.log(`Date: ${new Date().toISOString()}.\n`);
console.log('| client | calls/s | ratio to the SDK client | p50 (ms) | process CPU per call (us) |\n|---|---|---|---|---|');
const base = median(results[0].map((r) => r.callsPerSec));
for (const [j, [name]] of clients.entries()) {
  const m = (k) => median(results[j].map((r) => r[k]));
  console.log(
    `| ${name} | ${m('callsPerSec').toFixed(0)} | ${(m('callsPerSec') / base).toFixed(2)} | ${m('p50').toFixed(3)} | ${m('cpuUsPerCall').toFixed(1)} |`,
  );
}
