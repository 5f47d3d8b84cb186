// MCP 2026-07-28 beside 2025-11-25: a server that speaks only the modern revision refuses the
// legacy opening, and is then spoken to in 2026-07-28 on the same connection (no second
// process); one that serves both eras keeps the 2025 wire. The peer is a real server built with
// @modelcontextprotocol/server 2.4 (`serveStdio`, `legacy: 'reject' | 'serve'`).
import { describe, expect, it } from 'vitest';
import { ConfigError, leftOutOf, mcp, protocolOf } from '../lib/index.js';
import { ctx, rejection, session } from './helpers/common.js';
import { fixture, liveChildren, waitFor } from './helpers/harness.js';
import { serveModernHttp } from './helpers/modern-http.js';
import { modernServer } from './fixtures/modern-stdio.mjs';

const modern = (legacy: 'reject' | 'serve', extra: Record<string, unknown> = {}) =>
  mcp({ transport: 'stdio', command: process.execPath, args: [fixture('modern-stdio.mjs')], env: { LEGACY: legacy }, stderr: 'ignore', ...extra } as any);

describe('a stdio server that speaks only 2026-07-28', () => {
  it('imports and calls its tools over the modern wire', async () => {
    const before = liveChildren();
    const source = modern('reject');
    try {
      expect(protocolOf(source)).toBeUndefined();
      const defs = await source.tools(session);
      expect(defs.map((d) => d.name)).toEqual(['echo', 'add', 'fail', 'count', 'grow']);
      expect(protocolOf(source)).toBe('2026-07-28');
      // One server process: the era was learned on the connection that was refused.
      expect(liveChildren().filter((p) => !before.includes(p)).length).toBe(1);
      const by = Object.fromEntries(defs.map((d) => [d.name, d]));
      expect(await by.echo.execute({ text: 'hi' }, ctx)).toBe('hi');
      expect(await by.add.execute({ a: 2, b: 3 }, ctx)).toEqual({ sum: 5 });
      expect((await rejection(by.fail.execute({}, ctx))).message).toBe('it broke');
      // Input the schema refuses never reaches the server, whatever the era.
      expect((await rejection(by.add.execute({ a: 'x' }, ctx))).message).toMatch(/^mcp: invalid input for tool 'add'/);
    } finally {
      await source.close();
    }
    expect(liveChildren().filter((p) => !before.includes(p))).toEqual([]);
  });

  it('sees list changes through subscriptions/listen: the next tools() lists again', async () => {
    const source = modern('reject');
    try {
      const first = await source.tools(session);
      expect(await source.tools(session)).toBe(first);
      const grow = first.find((d) => d.name === 'grow')!;
      expect(await grow.execute({ name: 'later' }, ctx)).toBe('added later');
      // The notification arrives on the listen request's stream, apart from the call's reply.
      let names: string[] = [];
      expect(
        await waitFor(() => {
          void source.tools(session).then((d) => (names = d.map((t) => t.name)));
          return names.includes('later');
        }, 3000),
      ).toBe(true);
    } finally {
      await source.close();
    }
  });

  it("drift: 'refuse' holds the source closed after a change, as on a 2025 connection", async () => {
    const source = modern('reject', { drift: 'refuse' });
    try {
      const grow = (await source.tools(session)).find((d) => d.name === 'grow')!;
      await grow.execute({ name: 'sneaky' }, ctx);
      let refused: Error | undefined;
      expect(
        await waitFor(() => {
          void source.tools(session).then(
            () => {},
            (e) => (refused = e),
          );
          return refused !== undefined;
        }, 3000),
      ).toBe(true);
      expect(refused!.message).toMatch(/changed after import \(listChanged\) and drift policy 'refuse' holds the source closed/);
    } finally {
      await source.close();
    }
  });
});

describe('a stdio server that serves both eras', () => {
  it('is spoken to in 2025-11-25, as every 2025 server is', async () => {
    const source = modern('serve');
    try {
      const defs = await source.tools(session);
      expect(defs.map((d) => d.name)).toEqual(['echo', 'add', 'fail', 'count', 'grow']);
      expect(protocolOf(source)).toBe('2025-11-25');
      expect(await defs[0].execute({ text: 'old' }, ctx)).toBe('old');
    } finally {
      await source.close();
    }
  });
});

describe("the 'protocol' pin", () => {
  const sdk1 = (extra: Record<string, unknown>) =>
    mcp({
      transport: 'stdio',
      command: process.execPath,
      args: [new URL('../examples/server.mjs', import.meta.url).pathname],
      stderr: 'ignore',
      ...extra,
    } as any);

  it("'2026-07-28' opens with server/discover: a dual-era server serves it, a 2025-only one is refused typed", async () => {
    const dual = modern('serve', { protocol: '2026-07-28' });
    try {
      const defs = await dual.tools(session);
      expect(await defs[0].execute({ text: 'new' }, ctx)).toBe('new');
    } finally {
      await dual.close();
    }
    const old = sdk1({ protocol: '2026-07-28' });
    try {
      const err = await rejection(old.tools(session));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/^mcp: 'mcp:stdio:.*' cannot be opened: the server refused protocol 2026-07-28 \('protocol' pins it\): MCP error -32601/);
    } finally {
      await old.close();
    }
  });

  it("'2025-11-25' never falls forward: a modern-only server is refused typed, naming both versions", async () => {
    const source = modern('reject', { protocol: '2025-11-25' });
    try {
      const err = await rejection(source.tools(session));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(
        /cannot be opened: the server refused protocol 2025-11-25 \('protocol' pins it\): MCP error -32022: Unsupported protocol version: 2025-11-25/,
      );
    } finally {
      await source.close();
    }
  });

  it('any other value is refused at construction', () => {
    expect(() => mcp({ transport: 'stdio', command: 'x', protocol: '2026' } as any)).toThrow(
      "mcp: 'protocol' must be 'auto', '2025-11-25' or '2026-07-28', got '2026'",
    );
  });
});

describe('a streamable-HTTP server that speaks only 2026-07-28 (createMcpHandler)', () => {
  it('refuses the legacy opening with a 400 whose body is the error; then every request is modern, headers included', async () => {
    const served = await serveModernHttp(modernServer, 'reject');
    const source = mcp({ transport: 'streamable-http', url: served.url });
    try {
      const defs = await source.tools(session);
      expect(defs.map((d) => d.name)).toEqual(expect.arrayContaining(['echo', 'add', 'fail', 'count', 'grow']));
      const by = Object.fromEntries(defs.map((d) => [d.name, d]));
      expect(await by.echo.execute({ text: 'hi' }, ctx)).toBe('hi');
      expect(await by.add.execute({ a: 1, b: 2 }, ctx)).toEqual({ sum: 3 });
      const posts = served.requests.filter((r) => r.method === 'POST').map((r) => ({ ...r, message: JSON.parse(r.body) }));
      expect(posts[0].message.method).toBe('initialize');
      const modern = posts.slice(1);
      expect(modern.map((p) => p.message.method)).toEqual(expect.arrayContaining(['server/discover', 'tools/list', 'tools/call']));
      for (const p of modern) {
        expect(p.headers['mcp-protocol-version']).toBe('2026-07-28');
        expect(p.headers['mcp-method']).toBe(p.message.method);
        expect(p.message.params._meta['io.modelcontextprotocol/protocolVersion']).toBe('2026-07-28');
        expect(p.headers['mcp-session-id']).toBeUndefined();
      }
      const calls = modern.filter((p) => p.message.method === 'tools/call');
      expect(calls.map((p) => p.headers['mcp-name'])).toEqual(['echo', 'add']);
      // No session, so no GET stream and no DELETE.
      expect(served.requests.filter((r) => r.method !== 'POST')).toEqual([]);
    } finally {
      await source.close();
      await served.stop();
    }
  });

  it('sees list changes on the subscriptions/listen stream', async () => {
    const served = await serveModernHttp(modernServer, 'reject');
    const source = mcp({ transport: 'streamable-http', url: served.url });
    try {
      const first = await source.tools(session);
      expect(await source.tools(session)).toBe(first);
      await waitFor(() => served.requests.some((r) => r.body.includes('subscriptions/listen')), 3000);
      // The stream stays open and quiet: the cached list stays current until a change.
      await new Promise((r) => setTimeout(r, 500));
      expect(await source.tools(session)).toBe(first);
      served.toolsChanged();
      let again: unknown;
      expect(
        await waitFor(() => {
          void source.tools(session).then((d) => (again = d));
          return again !== undefined && again !== first;
        }, 3000),
      ).toBe(true);
    } finally {
      await source.close();
      await served.stop();
    }
  });
});

describe('x-mcp-header declarations', () => {
  const server = (legacy?: string) =>
    mcp({
      transport: 'stdio',
      command: process.execPath,
      args: [fixture('hostile-stdio.mjs')],
      env: { MODE: 'modernHeaders', ...(legacy ? { LEGACY: legacy } : {}) },
      stderr: 'ignore',
    } as any);

  it('a modern import leaves out a tool whose declarations break the rules, and says why', async () => {
    const source = server();
    try {
      expect((await source.tools(session)).map((d) => d.name)).toEqual(['good']);
      expect(protocolOf(source)).toBe('2026-07-28');
      expect(leftOutOf(source)).toEqual([{ name: 'bad', reason: "x-mcp-header 'N' is declared on 'n', which is not a string, integer or boolean" }]);
    } finally {
      await source.close();
    }
  });

  it('on a 2025 connection the keyword is plain data: both tools are imported', async () => {
    const source = server('serve');
    try {
      expect((await source.tools(session)).map((d) => d.name)).toEqual(['good', 'bad']);
      expect(protocolOf(source)).toBe('2025-11-25');
      expect(leftOutOf(source)).toEqual([]);
    } finally {
      await source.close();
    }
  });
});
