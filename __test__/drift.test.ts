// listChanged, the cache and drift policy against a real McpServer: a tools/list_changed
// invalidates the cached list before any later message from the server is processed (tools handed
// out keep working), and under drift 'refuse' it holds the source closed until close().
import { describe, expect, it } from 'vitest';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { z } from 'zod';
import { ConfigError, mcp } from '../lib/index.js';
import { closeAfterEach, ctx, session } from './helpers/common.js';
import { serveHttp } from './helpers/harness.js';

const tick = () => new Promise((r) => setImmediate(r));

function server() {
  const s = new McpServer({ name: 'drifting', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
  s.registerTool('first', { description: 'The first tool.', inputSchema: { n: z.number() } }, async ({ n }) => ({
    content: [{ type: 'text', text: `first ${n}` }],
  }));
  return s;
}

const closing = closeAfterEach();
const open = (config: any) => closing(mcp(config));

describe('listChanged (in-process)', () => {
  it('a tool registered after import appears in a new snapshot; the old array is unchanged', async () => {
    const mcpServer = server();
    const source = open({ transport: 'inprocess', server: mcpServer });
    const before = await source.tools(session);
    expect(before.map((d) => d.name)).toEqual(['first']);
    mcpServer.registerTool('second', { description: 'Added later.' }, async () => ({
      content: [{ type: 'text', text: 'second' }],
    }));
    await tick();
    const after = await source.tools(session);
    expect(after).not.toBe(before);
    expect(after.map((d) => d.name)).toEqual(['first', 'second']);
    expect(before.map((d) => d.name)).toEqual(['first']);
    expect(await before[0].execute({ n: 1 }, ctx)).toBe('first 1');
    expect(await after[1].execute({}, ctx)).toBe('second');
  });

  it("drift: 'refuse' poisons until close(); defs captured before keep executing", async () => {
    const mcpServer = server();
    const source = open({ transport: 'inprocess', server: mcpServer, drift: 'refuse' });
    const before = await source.tools(session);
    mcpServer.registerTool('sneaky', { description: 'Added later.' }, async () => ({ content: [] }));
    await tick();
    const poisoned = `mcp: the tool list of 'mcp:inprocess' changed after import (listChanged) and drift policy 'refuse' holds the source closed; close() and re-create the source (and re-record any toolset attestation) to import the changed list deliberately`;
    const err = await source.tools(session).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(poisoned);
    await expect(source.tools(session)).rejects.toThrow(poisoned);
    expect(await before[0].execute({ n: 2 }, ctx)).toBe('first 2');
    await source.close();
    const fresh = await source.tools(session);
    expect(fresh.map((d) => d.name)).toEqual(['first', 'sneaky']);
  });

  it('a cached list is the same array until something changes', async () => {
    const source = open({ transport: 'inprocess', server: server() });
    const a = await source.tools(session);
    expect(await source.tools(session)).toBe(a);
    const [b, c] = await Promise.all([source.tools(session), source.tools(session)]);
    expect(b).toBe(a);
    expect(c).toBe(a);
  });
});

describe('listChanged (HTTP, stateful)', () => {
  it('arrives on the GET stream and invalidates the cache', async () => {
    const servers: McpServer[] = [];
    const served = await serveHttp(() => {
      const s = server();
      servers.push(s);
      return s;
    }, true);
    try {
      const source = open({ transport: 'streamable-http', url: served.url });
      const before = await source.tools(session);
      expect(before.map((d) => d.name)).toEqual(['first']);
      // The handshake waits for the GET stream: a change announced right after the import
      // reaches the cache.
      expect(served.requests.some((r) => r.method === 'GET')).toBe(true);
      servers[0].registerTool('second', { description: 'Added later.' }, async () => ({ content: [] }));
      let after = before;
      for (let i = 0; i < 100 && after === before; i++) {
        await new Promise((r) => setTimeout(r, 10));
        after = await source.tools(session);
      }
      expect(after.map((d) => d.name)).toEqual(['first', 'second']);
    } finally {
      await served.stop();
    }
  });
});
