// What the engine and its tests do with either variant of mcp.ts: flat configs (including a key of
// another transport, on purpose, to see the run-time refusal), the source as a ToolSource, its
// ToolDefs as the engine's ToolDef, execute with the engine's full ToolContext.
import * as own from './mcp-own.js';
import * as reexport from './mcp-reexport.js';
import type { RegulatedPostureDescriptor, ToolContext, ToolDef, ToolSource } from './l0.js';

type Variant = { mcp: (cfg: own.McpConfig) => ToolSource & { close(): Promise<void> } };

export const ctx: ToolContext = {
  runId: 'r1',
  spanId: 's1',
  agent: { agentType: 'coder', label: 'c1' },
  cwd: '/srv',
  isolation: { kind: 'worktree', ref: 'main' },
  signal: new AbortController().signal,
  log(_level, _msg, _data) {},
};

export async function engineUse(variant: Variant): Promise<unknown[]> {
  const crossed = variant.mcp({ transport: 'stdio', command: 'x', http: { headers: {} } });
  const inprocess = variant.mcp({ transport: 'inprocess', server: { not: 'a server' } });
  const http = variant.mcp({
    transport: 'streamable-http',
    url: 'https://mcp.example.com/mcp',
    http: { headers: async () => ({ authorization: 'Bearer t' }) },
    timeouts: { discoveryMs: 5000 },
    requireBounds: false,
    drift: 'refuse',
  });
  const sources: ToolSource[] = [crossed, inprocess, http];
  const out: unknown[] = [];
  for (const source of sources) {
    const defs: ToolDef[] = await source.tools({ runId: 'r1' });
    for (const def of defs) out.push(await def.execute({ q: 'x' }, ctx));
    const posture: RegulatedPostureDescriptor | undefined = source.describeRegulatedPosture?.();
    out.push(posture);
  }
  await crossed.close();
  return out;
}

export const ownVariant: Variant = own;
export const reexportVariant: Variant = reexport;

// The re-exported McpConfig takes every config core's own declaration takes, and vice versa.
export const asAddon = (cfg: own.McpConfig): reexport.McpConfig => cfg;
export const asCore = (cfg: reexport.McpConfig): own.McpConfig => cfg;

// The re-exported source, used directly, is the engine's ToolSource with a typed posture.
export async function addonSource(source: reexport.McpToolSource): Promise<ToolDef[]> {
  const asSource: ToolSource = source;
  const posture: RegulatedPostureDescriptor = source.describeRegulatedPosture();
  void posture;
  return asSource.tools({ runId: 'r1' });
}

// Core's tests against the re-exported config: keys of another transport, on purpose.
export const refusedAtRunTime: unknown[] = [
  reexport.mcp({ transport: 'stdio', command: 'x', url: 'https://x' }),
  reexport.mcp({ transport: 'streamable-http', url: 'https://x', server: {} }),
  reexport.mcp({ transport: 'inprocess', server: {}, http: { headers: {} } }),
];
