// A 2026-07-28 request whose answer is lost with its stream: a list is sent again once, a
// tool call only when the host said it is safe to repeat (risk 'read', or `idempotent`), and
// any other call ends with an error saying its outcome is unknown. The server is real: it
// counts every execution and drops the connection under the first answer of each method.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { mcp } from '../lib/index.js';
import { rejection, session } from './helpers/common.js';

interface Dropping {
  url: string;
  runs: Record<string, number>;
  drops: Record<string, number>;
  /** Notifications the server got, by method; requests whose stream the client closed. */
  notified: string[];
  closedUnanswered: number[];
  stop(): Promise<void>;
}

/** Drops the connection under the first answer of every key in `drop` (`tools/list`, a tool). */
async function droppingServer(drop: string[]): Promise<Dropping> {
  const runs: Record<string, number> = {};
  const drops: Record<string, number> = {};
  const notified: string[] = [];
  const closedUnanswered: number[] = [];
  const tools = ['lookup', 'charge', 'refund', 'slow'].map((name) => ({ name, description: `The ${name} tool.`, inputSchema: { type: 'object' } }));
  const server = http.createServer(async (req, res) => {
    let body = '';
    for await (const chunk of req) body += chunk;
    const { id, method, params } = JSON.parse(body);
    const answer = (result: unknown) => {
      const key = method === 'tools/call' ? params.name : method;
      if (drop.includes(key) && !drops[key]) {
        drops[key] = 1;
        res.socket?.destroy();
        return;
      }
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id, result: { resultType: 'complete', ...(result as object) } }));
    };
    if (id === undefined) {
      notified.push(method);
      return void res.writeHead(202).end();
    }
    if (method === 'initialize') {
      return void res
        .writeHead(400, { 'content-type': 'application/json' })
        .end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'] } } }));
    }
    if (method === 'server/discover')
      return answer({ supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'dropping', version: '1' } });
    if (method === 'tools/list') {
      runs.list = (runs.list ?? 0) + 1;
      return answer({ tools, ttlMs: 0, cacheScope: 'private' });
    }
    if (method === 'tools/call' && params.name === 'slow') {
      // Never answered: the client ends it.
      res.on('close', () => {
        if (!res.writableEnded) closedUnanswered.push(id);
      });
      return;
    }
    if (method === 'tools/call') {
      runs[params.name] = (runs[params.name] ?? 0) + 1;
      return answer({ content: [{ type: 'text', text: `${params.name} done` }] });
    }
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ jsonrpc: '2.0', id, error: { code: -32601, message: 'Method not found' } }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    runs,
    drops,
    notified,
    closedUnanswered,
    async stop() {
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

describe('a lost answer on a 2026-07-28 connection', () => {
  let server: Dropping;
  beforeEach(async () => {
    server = await droppingServer(['tools/list', 'lookup', 'charge', 'refund']);
  });
  afterEach(async () => {
    await server.stop();
  });
  const open = (extra: Record<string, unknown> = {}) => mcp({ transport: 'streamable-http', url: server.url, risk: { lookup: 'read' }, ...extra } as any);

  it('sends tools/list again once, and a read tool’s call again once', async () => {
    const source = open();
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      expect(server.runs.list).toBe(2);
      expect(await by.lookup.execute({}, session)).toBe('lookup done');
      expect(server.runs.lookup).toBe(2);
    } finally {
      await source.close();
    }
  });

  it('ends a write tool’s call with the outcome unknown, run once on the server', async () => {
    const source = open();
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      const err = await rejection(by.charge.execute({}, session));
      expect(err.message).toMatch(
        /^mcp: tool 'charge' failed: .*; whether it ran is unknown, and it was not sent again \(a call is sent again only for a tool with risk 'read' or listed in 'idempotent', and once\)$/,
      );
      expect(server.runs.charge).toBe(1);
    } finally {
      await source.close();
    }
  });

  it('sends a tool listed in idempotent again', async () => {
    const source = open({ idempotent: ['refund'] });
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      expect(await by.refund.execute({}, session)).toBe('refund done');
      expect(server.runs.refund).toBe(2);
    } finally {
      await source.close();
    }
  });

  it('cancels a call by closing its stream, with no notifications/cancelled', async () => {
    const source = open();
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      const controller = new AbortController();
      const pending = by.slow.execute({}, { runId: 'r', signal: controller.signal });
      await new Promise((r) => setTimeout(r, 100));
      controller.abort();
      expect((await rejection(pending)).message).toBe("mcp: tool 'slow' was aborted");
      for (let i = 0; i < 50 && server.closedUnanswered.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
      expect(server.closedUnanswered).toHaveLength(1);
      expect(server.notified).not.toContain('notifications/cancelled');
    } finally {
      await source.close();
    }
  });
});
