'use strict';

// Which JavaScript runtime loaded the package, and what it can do, decided once at load (never
// discovered at a deadline). The supported runtimes are Node 20 and later, Bun 1.4 and later,
// and Deno 2.9 and later (through its Node compatibility: `deno run -A`); the runtime matrix
// in __test__/runtimes.test.ts runs each one.

const versions = process.versions;

/** `{ name, version }` of the runtime: `bun`, `deno` or `node`. */
function current() {
  if (versions.bun !== undefined) return { name: 'bun', version: versions.bun };
  if (versions.deno !== undefined) return { name: 'deno', version: versions.deno };
  return { name: 'node', version: versions.node ?? '0' };
}

/** The lowest major.minor supported of each runtime. */
const FLOORS = { node: [20, 0], bun: [1, 4], deno: [2, 9] };

/** Why the runtime cannot run the package, or null when it can. */
function unsupported() {
  const { name, version } = current();
  const [major, minor] = version.split('.').map(Number);
  const [floorMajor, floorMinor] = FLOORS[/** @type {'node' | 'bun' | 'deno'} */ (name)];
  if (major > floorMajor || (major === floorMajor && minor >= floorMinor)) return null;
  return `@rulvar/mcp-native needs Node 20 or later, Bun 1.4 or later, or Deno 2.9 or later; this is ${name} ${version}`;
}

/**
 * Whether a stdio child's stdout can be read on the JS thread, as a `net.Socket` opened on its
 * descriptor (lib/pipe.js): Node and Deno read such a socket; Bun opens it and never reads
 * from it (a source would wait out `connectMs`), and Windows hands Node no descriptor. Where it
 * cannot, a native runtime thread reads the pipe, as the crate's own tests do.
 */
const READS_PIPES_ON_JS_THREAD = process.platform !== 'win32' && current().name !== 'bun';

module.exports = { current, unsupported, READS_PIPES_ON_JS_THREAD };
