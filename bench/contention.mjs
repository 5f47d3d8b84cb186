// A busy machine on demand (`--contention N`): N processes run beside every measured process,
// the same for every client, so "under load" is a measured condition and not the day's accident.
// Shapes: 'cpu', each spins; 'wake', each sleeps a millisecond and then works a tenth of one,
// over and over (the wake-ups of timers, streams and servers beside an agent).
import { spawn } from 'node:child_process';

const BODIES = {
  cpu: 'for (;;) {}',
  wake: 'const spin = () => { const end = performance.now() + 0.1; while (performance.now() < end) {} setTimeout(spin, 1); }; spin();',
};

/** `--contention N` and `--contention-shape cpu|wake` of `argv` (or BENCH_CONTENTION, BENCH_CONTENTION_SHAPE). */
export function contentionOf(argv, env = process.env) {
  const flag = (name) => {
    const at = argv.indexOf(name);
    return at === -1 ? undefined : argv[at + 1];
  };
  const n = Number(flag('--contention') ?? env.BENCH_CONTENTION ?? 0);
  const shape = flag('--contention-shape') ?? env.BENCH_CONTENTION_SHAPE ?? 'cpu';
  if (!Number.isInteger(n) || n < 0) throw new Error(`--contention takes a count of processes, got ${n}`);
  if (!(shape in BODIES)) throw new Error(`--contention-shape is cpu or wake, got ${shape}`);
  return { n, shape };
}

/** Starts the contention; the function returned stops it (every process killed). */
export function startContention({ n, shape }) {
  const kids = Array.from({ length: n }, () => spawn(process.execPath, ['-e', BODIES[shape]], { stdio: 'ignore' }));
  return () => {
    for (const kid of kids) kid.kill('SIGKILL');
  };
}
