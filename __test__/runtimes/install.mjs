// The runtime matrix's tool folder: Node 18, 22 and 24, Bun and Deno from their npm packages,
// as __test__/runtimes/package-lock.json pins them, installed once into
// node_modules/.cache/rulvar-runtimes (again only when the lock changes). Used by the matrix
// (__test__/runtimes.test.ts) and the benchmark's runtime column (bench/runtimes.mjs).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const pinned = fileURLToPath(new URL('.', import.meta.url));
const tools = fileURLToPath(new URL('../../node_modules/.cache/rulvar-runtimes/', import.meta.url));
const bin = (path) => join(tools, 'node_modules', path);

/** Each supported runtime: its name and the command that runs a script with it. */
export const RUNTIMES = [
  ['node 20 (this machine)', [process.execPath]],
  ['node 22', [bin('node22/bin/node')]],
  ['node 24', [bin('node24/bin/node')]],
  ['bun', [bin('.bin/bun')]],
  ['deno', [bin('.bin/deno'), 'run', '-A']],
];

/** A Node the package does not support, which must be refused by name. */
export const NODE_18 = bin('node18/bin/node');

export function installRuntimes() {
  const lock = readFileSync(join(pinned, 'package-lock.json'), 'utf8');
  const stamp = join(tools, '.installed-lock');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === lock) return;
  rmSync(tools, { recursive: true, force: true });
  mkdirSync(tools, { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(pinned, f), join(tools, f));
  // Under `npm test` the outer npm's project root is in the environment: the nested npm must
  // find its own (the tool folder), not install into the project.
  const env = { ...process.env };
  delete env.npm_config_local_prefix;
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: tools, env, stdio: 'pipe', timeout: 280_000 });
  writeFileSync(stamp, lock);
}
