// A conformance client built on the addon: the suite starts it with the server URL as its
// last argument. It imports the server's tools, calls each one, and closes.
import { mcp } from '../../lib/index.mjs';

const url = process.argv[process.argv.length - 1];
const argumentsFor = (def) => {
  const properties = def.parameters?.properties ?? {};
  // Numbers get small integers (add_numbers: 2 + 3); strings a word; the rest nothing.
  return Object.fromEntries(
    Object.entries(properties).map(([name, schema], i) => [name, schema.type === 'string' ? 'hello' : i + 2]),
  );
};

const source = mcp({ transport: 'streamable-http', url, timeouts: { callMs: 10_000 } });
try {
  const defs = await source.tools({ runId: 'conformance' });
  // The addon opens its notification stream (a GET) just after the handshake. sse-retry times
  // the first GET after its tool stream closes, so let that stream open before the call,
  // or a slow machine makes the scenario mistake it for an early reconnect.
  await new Promise((resolve) => setTimeout(resolve, 200));
  for (const def of defs) {
    try {
      const result = await def.execute(argumentsFor(def), { runId: 'conformance' });
      console.log(`${def.name}: ${JSON.stringify(result)}`);
    } catch (err) {
      console.log(`${def.name} failed: ${err.message}`);
    }
  }
} finally {
  await source.close();
}
