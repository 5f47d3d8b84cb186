// The smoke's worker thread: the package loaded again in a worker, an in-process source's
// tools() and a call, close(); what it saw goes back to the main thread.
import { parentPort } from 'node:worker_threads';

const { mcp } = await import('../../lib/index.mjs');
const { buildServer } = await import('../../examples/server.mjs');
const source = mcp({ transport: 'inprocess', server: buildServer() });
try {
  const defs = await source.tools({ runId: 'worker' });
  const double = defs.find((d) => d.name === 'double');
  parentPort.postMessage({ tools: defs.length, result: await double.execute({ n: 2 }, { runId: 'worker' }) });
} catch (e) {
  parentPort.postMessage({ error: String(e?.message ?? e) });
} finally {
  await source.close();
}
