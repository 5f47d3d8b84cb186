// An engine-shaped host for `npm run release:local`: it loads @rulvar/mcp-native by name, the
// way the Rulvar engine's `tools/mcp.ts` does (`createMcp({ ConfigError })` with the engine's own
// error class), imports the example server's tools as a ToolSource, runs one with an engine
// ToolContext, checks that a refused config throws the engine's class, and closes.
//   node host.mjs <result file> [server node]      (host.cjs: the same through require)
// The result goes to a file as JSON: under Wine, Node's stdout cannot be a pipe.
// `server node` is the Node that runs the example server (default: this one); under qemu the
// host's own Node, since an arm64 child cannot be started without binfmt_misc.
import { createRequire } from 'node:module';
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import * as pkg from '@rulvar/mcp-native';

const require = createRequire(import.meta.url);
export async function engineRun(api, how, out, serverNode) {
  const result = { how, platform: `${process.platform}-${process.arch}`, node: process.version };
  try {
    class ConfigError extends Error {}
    const mcp = api.createMcp({ ConfigError });
    const entry = require.resolve('@rulvar/mcp-native');
    const server = join(dirname(entry), '..', 'examples', 'server.mjs');
    const source = mcp({
      transport: 'stdio',
      command: serverNode || process.execPath,
      args: [server],
      prefix: 'ex',
      risk: { double: 'read' },
      approval: { echo: true },
    });
    const defs = await source.tools({ runId: 'run-1' });
    result.tools = defs.map((d) => d.name);
    const ctx = {
      runId: 'run-1',
      spanId: 's1',
      agent: { agentType: 'tester', label: 'release' },
      isolation: 'none',
      signal: new AbortController().signal,
      log: () => {},
    };
    result.call = await defs.find((d) => d.name === 'ex_double').execute({ n: 21 }, ctx);
    await source.close();
    try {
      mcp({ transport: 'stdio' });
      result.refusal = 'not refused';
    } catch (e) {
      // biome-ignore lint/complexity/useOptionalChain: a falsy thrown value is reported as itself, not as undefined
      result.refusal = e instanceof ConfigError ? 'engine ConfigError' : `another error: ${e && e.name}`;
    }
    // Which binary the loader picked: the shared object or DLL loaded from node_modules.
    const report = process.report.getReport();
    result.binary = (report.sharedObjects || []).filter((f) => /mcp-native[.-]/.test(f)).map((f) => f.replace(/\\/g, '/').replace(/^.*node_modules\//, ''));
    result.ok = result.call && result.call.doubled === 42 && result.refusal === 'engine ConfigError';
  } catch (e) {
    result.ok = false;
    result.error = String(e?.stack || e);
  }
  writeFileSync(out, `${JSON.stringify(result)}\n`);
}

if (process.argv[1] && /host\.mjs$/.test(process.argv[1])) await engineRun(pkg, 'import', process.argv[2], process.argv[3]);
