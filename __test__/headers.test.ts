// http.headers: a record, or a (possibly async) hook called and awaited before EVERY wire request
// (handshake, list, call, stream, delete), so a rotated token reaches the very next request.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { mcp } from '../lib/index.js';
import { buildServer } from '../examples/server.mjs';
import { closeAfterEach, ctx, session } from './helpers/common.js';
import { serveHttp, type HttpServer } from './helpers/harness.js';

const closing = closeAfterEach();
/** The binding itself, for `nativeMemory().hooksAwaited`. */
const native = createRequire(import.meta.url)('../lib/native.js') as { nativeMemory(): string };
let served: HttpServer | undefined;

async function exercise(config: any) {
  const source = mcp(config);
  const defs = await source.tools(session);
  expect(await defs[0].execute({ text: 'hi' }, ctx)).toBe('hi');
  // Let the notification stream open, so it is among the requests checked.
  for (let i = 0; i < 100 && !served!.requests.some((r) => r.method === 'GET'); i++) await new Promise((r) => setTimeout(r, 10));
  await source.close();
  return served!.requests;
}

describe('http.headers', () => {
  it('a static record reaches every request the server sees', async () => {
    served = closing(await serveHttp(buildServer, true));
    const requests = await exercise({
      transport: 'streamable-http',
      url: served.url,
      http: { headers: { authorization: 'Bearer static-token', 'x-tenant': 't1' } },
    });
    const methods = requests.map((r) => r.method);
    expect(methods).toContain('POST');
    expect(methods).toContain('GET');
    expect(methods).toContain('DELETE');
    for (const r of requests) {
      expect(r.headers.authorization).toBe('Bearer static-token');
      expect(r.headers['x-tenant']).toBe('t1');
    }
    // Every request after initialize carries the agreed protocol version and the session.
    expect(requests[0].headers['mcp-protocol-version']).toBeUndefined();
    for (const r of requests.slice(1)) {
      expect(r.headers['mcp-protocol-version']).toBe('2025-11-25');
      expect(r.headers['mcp-session-id']).toMatch(/^[0-9a-f-]{36}$/);
    }
  });

  it('a hook is awaited afresh before every request (rotating values)', async () => {
    served = closing(await serveHttp(buildServer, true));
    let n = 0;
    const requests = await exercise({
      transport: 'streamable-http',
      url: served.url,
      http: {
        headers: async () => {
          await new Promise((r) => setTimeout(r, 1));
          n += 1;
          return { authorization: `Bearer rotated-${n}` };
        },
      },
    });
    const values = requests.map((r) => r.headers.authorization);
    expect(values.length).toBeGreaterThan(0);
    expect(values.every((v) => typeof v === 'string' && /^Bearer rotated-\d+$/.test(v))).toBe(true);
    expect(new Set(values).size).toBe(values.length);
    expect(n).toBeGreaterThanOrEqual(requests.length);
    expect(requests.map((r) => r.method)).toEqual(expect.arrayContaining(['POST', 'GET', 'DELETE']));
  });

  it('a synchronous hook works too', async () => {
    served = closing(await serveHttp(buildServer, false));
    const requests = await exercise({
      transport: 'streamable-http',
      url: served.url,
      http: { headers: () => ({ 'x-sync': 'yes' }) },
    });
    expect(requests.length).toBeGreaterThan(0);
    expect(requests.every((r) => r.headers['x-sync'] === 'yes')).toBe(true);
  });

  it('a hook that throws fails the request with a plain error; the process lives on', async () => {
    served = closing(await serveHttp(buildServer, false));
    const source = mcp({
      transport: 'streamable-http',
      url: served.url,
      http: {
        headers: () => {
          throw new Error('vault unavailable');
        },
      },
      timeouts: { connectMs: 2000 },
    });
    await expect(source.tools(session)).rejects.toThrow(/^mcp: the http.headers hook failed: .*vault unavailable/);
    await source.close();
    expect(served.requests).toEqual([]);
  });
  it('a flood of calls, each awaiting the hook, gets each answer once: every value sent once, no throw sent', async () => {
    served = closing(await serveHttp(buildServer, false));
    // The hook answers out of order (random delays) and every third time throws: each answer
    // must reach the one request that awaited it (the port routes it by number).
    let n = 0;
    const resolved = new Set<string>();
    const awaited = () => JSON.parse(native.nativeMemory()).hooksAwaited as number;
    const before = awaited();
    const source = mcp({
      transport: 'streamable-http',
      url: served.url,
      http: {
        headers: async () => {
          const mine = ++n;
          await new Promise((r) => setTimeout(r, Math.floor(Math.random() * 5)));
          if (mine % 3 === 0) throw new Error(`vault busy ${mine}`);
          resolved.add(`Bearer flood-${mine}`);
          return { authorization: `Bearer flood-${mine}` };
        },
      },
      timeouts: { connectMs: 10_000 },
    });
    let defs: Awaited<ReturnType<typeof source.tools>> | undefined;
    for (let tries = 0; defs === undefined && tries < 10; tries++) defs = await source.tools(session).catch(() => undefined);
    expect(defs).toBeDefined();
    const outcomes = await Promise.allSettled(Array.from({ length: 300 }, () => defs![0].execute({ text: 'hi' }, ctx)));
    const failed = outcomes.filter((o) => o.status === 'rejected');
    expect(failed.length).toBeGreaterThan(0);
    expect(outcomes.length - failed.length).toBeGreaterThan(0);
    for (const f of failed)
      expect(String((f as PromiseRejectedResult).reason.message)).toMatch(/^mcp: tool 'echo' failed: mcp: the http.headers hook failed: .*vault busy \d+/);
    await source.close();
    const sent = served.requests.map((r) => r.headers.authorization as string);
    expect(new Set(sent).size).toBe(sent.length);
    expect(new Set(sent)).toEqual(resolved);
    expect(awaited()).toBe(before);
  });
});
