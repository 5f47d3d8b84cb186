// The demo the README runs: import the example server's tools the way an engine would, show
// what was admitted and the identity it hashes to, then call two tools.
import { mcp, resolveToolset } from '../lib/index.mjs';

const source = mcp({
  transport: 'stdio',
  command: process.execPath,
  args: [new URL('./server.mjs', import.meta.url).pathname],
  prefix: 'demo',
  risk: { echo: 'read', fail: 'execute' },
  approval: { fail: true },
  maxTools: 50,
  maxPages: 5,
  maxSchemaBytes: 65536,
  timeouts: { discoveryMs: 5000, callMs: 5000 },
});

try {
  const session = { runId: 'demo' };
  const defs = await source.tools(session);
  console.log(`imported from ${source.id}:`);
  for (const def of defs) {
    console.log(`  ${def.name.padEnd(14)} risk=${def.risk ?? '-'} approval=${def.needsApproval}  ${def.description}`);
  }
  const toolset = await resolveToolset([source], session);
  console.log(`toolsetHash   ${toolset.hash}`);
  console.log(`authorityHash ${toolset.authorityHash}`);
  console.log('posture', JSON.stringify(source.describeRegulatedPosture()));

  const echo = defs.find((d) => d.name === 'demo_echo');
  const double = defs.find((d) => d.name === 'demo_double');
  console.log('call demo_echo   ->', JSON.stringify(await echo.execute({ text: 'hello from Rust' }, session)));
  console.log('call demo_double ->', JSON.stringify(await double.execute({ n: 21 }, session)));
  await echo.execute({ text: 42 }, session).catch((err) => console.log('bad input refused ->', err.message));
} finally {
  await source.close();
}
