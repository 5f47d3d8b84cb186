// What a user of one runtime does with the package, through its public entry points (`import`
// of lib/index.mjs and `require` of lib/index.js): a stdio server, an HTTP server (its URL in
// SMOKE_URL) and an in-process one; tools(), an execute() with a result, a refusal and an
// abort; close() with no child left; the same in a worker thread. It prints one JSON line of
// what it saw and ends without process.exit: the driver (__test__/runtimes.test.ts) holds it
// to exiting by itself. SMOKE_NODE is the Node that runs the stdio server.
import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../', import.meta.url));
const require = createRequire(import.meta.url);
const required = require(`${root}lib/index.js`);
const imported = await import(`${root}lib/index.mjs`);
const { buildServer } = await import(`${root}examples/server.mjs`);
const session = { runId: 'smoke' };

/** This process's live children (every thread's list: the addon forks on a thread of its own). */
function children() {
  const found = [];
  for (const task of readdirSync('/proc/self/task')) {
    try {
      found.push(...readFileSync(`/proc/self/task/${task}/children`, 'utf8').split(' ').filter(Boolean));
    } catch {
      // The thread ended while we looked.
    }
  }
  return found;
}

/** tools(), a result, a refusal and an abort of one source; then close(). */
async function exercise(mcp, config) {
  const source = mcp(config);
  try {
    const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
    const result = await by.double.execute({ n: 21 }, session);
    const refusal = await by.double.execute({ n: 'x' }, session).then(
      () => null,
      (e) => e.message,
    );
    const controller = new AbortController();
    const aborting = by.echo.execute({ text: 'late' }, { ...session, signal: controller.signal });
    controller.abort();
    const aborted = await aborting.then(
      () => null,
      (e) => e.message,
    );
    return { tools: Object.keys(by).length, result, refusal, aborted };
  } finally {
    await source.close();
  }
}

const seen = {
  runtime: process.versions.bun ? `bun ${process.versions.bun}` : process.versions.deno ? `deno ${process.versions.deno}` : `node ${process.versions.node}`,
  sameEntry: required.mcp === imported.mcp,
  stdio: await exercise(imported.mcp, { transport: 'stdio', command: process.env.SMOKE_NODE, args: [`${root}examples/server.mjs`] }),
  http: await exercise(required.mcp, { transport: 'streamable-http', url: process.env.SMOKE_URL }),
  inprocess: await exercise(imported.mcp, { transport: 'inprocess', server: buildServer() }),
};
seen.childrenAfterClose = children().length;

// A worker thread, where the runtime has them.
let threads = null;
try {
  threads = await import('node:worker_threads');
} catch {
  seen.worker = 'unsupported';
}
if (threads !== null) {
  seen.worker = await new Promise((resolve) => {
    const worker = new threads.Worker(new URL('./worker.mjs', import.meta.url));
    worker.once('message', resolve);
    worker.once('error', (e) => resolve({ error: String(e?.message ?? e) }));
  });
}
console.log(JSON.stringify(seen));
