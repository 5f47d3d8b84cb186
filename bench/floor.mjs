// The Rust floor (bench/floor: a current-thread tokio client, newline JSON over stdio or
// keep-alive HTTP/1.1, no validation): what the server and the machine allow any client, with
// no JS thread in the way. run.mjs measures it beside the bare Node client (raw-client.mjs).
//
// `node bench/floor.mjs '<case spec>'`: one measurement in bench/case.mjs's spec and output
// shape, e.g. '{"op":"calls","transport":"stdio-fast","calls":20000,"concurrency":16}'. The
// binary is built in release first (`cargo build --release --manifest-path
// bench/floor/Cargo.toml`, honouring CARGO_TARGET_DIR); a build with nothing to do takes a
// fraction of a second.
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { serverCommand } from './servers/commands.mjs';
import { warmUp } from './warmup.mjs';

const manifest = fileURLToPath(new URL('./floor/Cargo.toml', import.meta.url));
let binary;

/** The floor's executable, built in release on first use. */
export function floorBinary() {
  if (binary === undefined) {
    let out;
    try {
      out = execFileSync('cargo', ['build', '--release', '--manifest-path', manifest, '--message-format=json-render-diagnostics'], {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        maxBuffer: 64 * 2 ** 20,
      });
    } catch (e) {
      throw new Error(`building the Rust floor failed (cargo: ${e.status ?? e.code}); its messages are above`);
    }
    for (const line of out.split('\n')) {
      if (!line.startsWith('{')) continue;
      const m = JSON.parse(line);
      if (m.reason === 'compiler-artifact' && m.target?.name === 'rulvar-bench-floor' && m.executable) binary = m.executable;
    }
    if (binary === undefined) throw new Error('cargo built no rulvar-bench-floor executable');
  }
  return binary;
}

/** One measurement of the Rust floor in a fresh process: `spec` as bench/case.mjs takes it. */
export function rustFloor(spec) {
  if (spec.op !== 'calls') throw new Error(`the Rust floor measures calls only, not ${spec.op}`);
  const server = serverCommand(spec.transport, spec.tools ?? 10);
  if (server === undefined) throw new Error(`no Rust floor for ${spec.transport}`);
  const warm = warmUp(spec);
  const floorSpec = {
    ...server,
    calls: spec.calls,
    concurrency: spec.concurrency,
    warmCalls: warm.calls,
    warmConcurrency: warm.concurrency,
    ...(spec.threads === undefined ? {} : { threads: spec.threads }),
  };
  const out = execFileSync(floorBinary(), [JSON.stringify(floorSpec)], { encoding: 'utf8', timeout: 120_000, stdio: ['ignore', 'pipe', 'inherit'] });
  return JSON.parse(out.trim().split('\n').pop());
}

if (import.meta.url === `file://${process.argv[1]}`) {
  console.log(JSON.stringify(rustFloor(JSON.parse(process.argv[2]))));
}
