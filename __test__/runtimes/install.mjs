// The runtime matrix's tool folder: Node 18, 22 and 24, Bun and Deno from their npm packages,
// as __test__/runtimes/package-lock.json pins them, installed once into
// node_modules/.cache/rulvar-runtimes (again only when the lock changes). Used by the matrix
// (__test__/runtimes.test.ts) and the benchmark's runtime column (bench/runtimes.mjs).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { installPinned } from '../helpers/tool-folder.mjs';

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
  installPinned(pinned, tools);
}
