// The demo the README runs: what mcp() refuses, and the identity an engine would record.
import { mcp, ConfigError, schemaHash, toolsetHash } from '../lib/index.mjs';

const source = mcp({
  transport: 'stdio',
  command: process.execPath,
  args: [new URL('./server.mjs', import.meta.url).pathname],
  prefix: 'demo',
  maxTools: 50,
  maxPages: 5,
  maxSchemaBytes: 65536,
  timeouts: { discoveryMs: 5000 },
});
console.log(`source ${source.id}`);
console.log('posture', JSON.stringify(source.describeRegulatedPosture()));

try {
  mcp({ transport: 'stdio', command: 'x', maxTools: 1.5 });
} catch (err) {
  console.log(`refused (${err instanceof ConfigError ? 'ConfigError' : 'Error'}): ${err.message}`);
}

const contracts = [
  { name: 'echo', description: 'Echo text.', parameters: { type: 'object', properties: { text: { type: 'string' } } } },
];
console.log('schemaHash', schemaHash(contracts[0].parameters));
console.log('toolsetHash', toolsetHash(contracts));
await source.close();
