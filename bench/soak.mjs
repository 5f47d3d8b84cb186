// `node bench/soak.mjs [--contention N] [--calls N] [--clients addon,sdk] [--transports a,b]`: memory under steady
// calls, per transport: 1,000,000 echo calls at concurrency 16 in a fresh process, RSS sampled
// every 50,000 (bench/case.mjs, op 'soak'). The bounds it is held to: growth over the first
// 100,000 under 10 MB, growth after them under 5 MB. Prints a Markdown table for
// bench/RESULTS.md. The addon's live native memory is counted only by a build with the
// `alloc-count` feature: `cargo build --release --lib --features alloc-count` and
// NAPI_RS_NATIVE_LIBRARY_PATH=<that .so> for this command.
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import { fileURLToPath } from 'node:url';
import { contentionOf, startContention } from './contention.mjs';

const argv = process.argv.slice(2);
const flag = (name, fallback) => {
  const at = argv.indexOf(name);
  return at === -1 ? fallback : argv[at + 1];
};
const calls = Number(flag('--calls', 1_000_000));
const clients = flag('--clients', 'addon,sdk').split(',');
const transports = flag('--transports', 'stdio-fast,http-fast,inprocess').split(',');
const busy = contentionOf(argv);
const caseScript = fileURLToPath(new URL('./case.mjs', import.meta.url));

const rows = [];
for (const transport of transports) {
  for (const impl of clients) {
    const spec = { op: 'soak', transport, calls, impl };
    const stop = startContention(busy);
    let r;
    try {
      const out = execFileSync(process.execPath, ['--expose-gc', caseScript, JSON.stringify(spec)], {
        encoding: 'utf8',
        timeout: 3_600_000,
        stdio: ['ignore', 'pipe', 'ignore'],
        maxBuffer: 64 * 2 ** 20,
      });
      r = JSON.parse(out.trim().split('\n').pop());
    } finally {
      stop();
    }
    const verdict = r.firstMb < 10 && r.afterMb < 5 ? 'within' : 'over';
    const mb = (x) => (x === undefined || x === null ? '-' : x.toFixed(1));
    rows.push(
      `| ${transport} | ${impl} | ${mb(r.firstMb)} | ${mb(r.firstV8Mb)} | ${mb(r.firstCommittedMb)} | ${mb(r.firstLiveMb)} | ${mb(r.afterMb)} | ${mb(r.afterV8Mb)} | ${mb(r.afterCommittedMb)} | ${mb(r.afterLiveMb)} | ${verdict} | ${r.samples} |`,
    );
    console.error(rows[rows.length - 1]);
  }
}
console.log(
  [
    `Command: \`node bench/soak.mjs${argv.length ? ` ${argv.join(' ')}` : ''}\` (${calls.toLocaleString('en')} calls per process, c16).`,
    `Machine: ${os.cpus()[0]?.model ?? 'unknown'}, ${os.cpus().length} cores, Node ${process.version}. Date: ${new Date().toISOString()}.`,
    '',
    // "allocator": what the addon's allocator holds from the system (live and cached); "live":
    // what of it the addon holds (an addon built with `--features alloc-count`; '-' otherwise).
    '| transport | client | RSS growth over the first 100,000 (MB) | of it V8 (MB) | addon allocator (MB) | of it live (MB) | RSS growth after 100,000 (MB) | of it V8 (MB) | addon allocator (MB) | of it live (MB) | bounds (10 / 5 MB) | RSS every 50,000 (MB) |',
    '|---|---|---|---|---|---|---|---|---|---|---|---|',
    ...rows,
  ].join('\n'),
);
