// Streamable-HTTP servers that misbehave on purpose: each fault is an error, never a crash or hang.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { mcp } from '../lib/index.js';
import { closeAfterEach, session } from './helpers/common.js';

type Handler = (req: http.IncomingMessage, res: http.ServerResponse, body: any) => void | Promise<void>;

const closing = closeAfterEach();
// The server started last, for a test that takes it down itself.
let latest: http.Server | undefined;

/** A raw HTTP server that completes the handshake and hands every other request to `misbehave`. */
async function hostile(misbehave: Handler, seen: http.IncomingHttpHeaders[] = []): Promise<string> {
  const server = http.createServer((req, res) => {
    seen.push(req.headers);
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', async () => {
      const body = text ? JSON.parse(text) : undefined;
      if (body?.method === 'initialize') {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'sess-1' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'h', version: '0' } },
          }),
        );
        return;
      }
      if (req.method !== 'POST' || body?.id === undefined) {
        res.writeHead(req.method === 'GET' ? 405 : 202).end();
        return;
      }
      await misbehave(req, res, body);
    });
  });
  latest = server;
  closing.defer(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

async function failure(config: Record<string, unknown>): Promise<{ err: Error; ms: number }> {
  const source = mcp({ transport: 'streamable-http', ...config } as any);
  const started = Date.now();
  try {
    await source.tools(session);
    throw new Error('expected a failure');
  } catch (err) {
    return { err: err as Error, ms: Date.now() - started };
  } finally {
    await source.close();
  }
}

/**
 * A stateful server that takes its time over notifications/initialized (`initializedMs`) and over
 * answering the GET for its notification stream (`getMs`), and logs what it saw in order.
 */
async function slowToSetUp(initializedMs: number, getMs: number | 'never', log: string[], initializedStatus = 202): Promise<string> {
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', async () => {
      const body = text ? JSON.parse(text) : undefined;
      const what = req.method === 'POST' ? body.method : req.method;
      log.push(`${what} received`);
      if (body?.method === 'initialize') {
        res.writeHead(200, { 'content-type': 'application/json', 'mcp-session-id': 'sess-1' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'h', version: '0' } },
          }),
        );
        return;
      }
      if (body?.method === 'notifications/initialized') {
        await new Promise((r) => setTimeout(r, initializedMs));
        log.push('notifications/initialized answered');
        res.writeHead(initializedStatus).end(initializedStatus === 202 ? undefined : 'not today');
        return;
      }
      if (req.method === 'GET') {
        if (getMs === 'never') return;
        await new Promise((r) => setTimeout(r, getMs));
        log.push('GET answered');
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(': open\n\n');
        return;
      }
      if (req.method === 'DELETE') {
        res.writeHead(200).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { tools: [{ name: 'ok', inputSchema: { type: 'object' } }] } }));
    });
  });
  closing.defer(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe('the streamable-HTTP handshake', () => {
  it('waits for the initialized notification to be taken and the GET stream to answer before listing', async () => {
    const log: string[] = [];
    const url = await slowToSetUp(150, 150, log);
    const source = mcp({ transport: 'streamable-http', url });
    expect((await source.tools(session)).map((d) => d.name)).toEqual(['ok']);
    await source.close();
    expect(log.slice(0, 6)).toEqual([
      'initialize received',
      'notifications/initialized received',
      'notifications/initialized answered',
      'GET received',
      'GET answered',
      'tools/list received',
    ]);
  });

  it('a refused initialized notification fails the connect, as it fails the SDK client', async () => {
    const url = await slowToSetUp(0, 0, [], 500);
    const { err } = await failure({ url });
    expect(err.message).toBe(`mcp: POST ${url} answered HTTP 500 Internal Server Error to notifications/initialized: not today`);
  });

  it('a GET stream that never answers is bounded by connectMs', async () => {
    const url = await slowToSetUp(0, 'never', []);
    const { err, ms } = await failure({ url, timeouts: { connectMs: 300 } });
    expect(err.message).toBe(`mcp: connect to 'mcp:http:${url}' timed out after 300ms`);
    expect(ms).toBeLessThan(2000);
  });

  it('close() ends a handshake waiting for the GET stream at once', async () => {
    const url = await slowToSetUp(0, 'never', []);
    const source = mcp({ transport: 'streamable-http', url });
    const pending = source.tools(session).catch((e) => e);
    await new Promise((r) => setTimeout(r, 100));
    const started = Date.now();
    await source.close();
    const err = await pending;
    expect(Date.now() - started).toBeLessThan(1000);
    expect(err).toBeInstanceOf(Error);
  });
});

describe('hostile HTTP servers', () => {
  it('a 70 MiB SSE event: the typed frame-limit refusal, as over stdio', async () => {
    const url = await hostile(async (_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = 'x'.repeat(1024 * 1024);
      res.write('data: {"jsonrpc":"2.0","id":2,"result":{"tools":[],"pad":"');
      for (let i = 0; i < 70 && !res.destroyed; i++) {
        if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
      }
      res.end('"}}\n\n');
    });
    const { err } = await failure({ url, timeouts: { listMs: 20_000 } });
    expect(err.message).toMatch(/larger than the 64 MiB frame limit/);
  }, 30_000);

  it('a 500 whose body echoes the Authorization header: the token is redacted', async () => {
    const token = 'Bearer tok-9f8e7d6c5b4a-secret';
    const url = await hostile((req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`denied for ${req.headers.authorization}`);
    });
    const { err } = await failure({ url, http: { headers: { authorization: token } } });
    expect(err.message).toMatch(/HTTP 500/);
    expect(err.message).toContain('denied for [redacted]');
    expect(err.message).not.toContain('tok-9f8e7d6c5b4a-secret');
    // The hook's values too, whichever it returned last.
    let n = 0;
    const { err: hooked } = await failure({ url, http: { headers: () => ({ authorization: `Bearer rotating-token-${++n}` }) } });
    expect(hooked.message).toContain('denied for [redacted]');
    expect(hooked.message).not.toMatch(/rotating-token/);
  });

  it('500 with an HTML body: a plain error quoting the status', async () => {
    const url = await hostile((_q, res) => {
      res.writeHead(500, { 'content-type': 'text/html' }).end('<html><body>Internal oops</body></html>');
    });
    const { err } = await failure({ url });
    expect(err.message).toMatch(/answered HTTP 500 Internal Server Error: <html><body>Internal oops/);
  });

  it('404 for an expired session closes the connection; the next tools() starts a new session', async () => {
    let lists = 0;
    const url = await hostile((_q, res, body) => {
      lists += 1;
      if (lists === 1) {
        res.writeHead(404).end();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ jsonrpc: '2.0', id: body.id, result: { tools: [{ name: 'ok', inputSchema: { type: 'object' } }] } }));
    });
    const source = mcp({ transport: 'streamable-http', url });
    await expect(source.tools(session)).rejects.toThrow(/no longer knows this session/);
    expect((await source.tools(session)).map((d) => d.name)).toEqual(['ok']);
    await source.close();
  });

  it('a connection reset mid-SSE fails the request', async () => {
    const url = await hostile((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"jsonrpc":');
      setTimeout(() => res.socket?.destroy(), 20);
    });
    const { err, ms } = await failure({ url });
    expect(err.message).toMatch(/without a JSON-RPC response/);
    expect(ms).toBeLessThan(3000);
  });

  it('an SSE stream dripping one byte per 100 ms is cut at listMs', async () => {
    const url = await hostile((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const timer = setInterval(() => res.write(':'), 100);
      res.on('close', () => clearInterval(timer));
    });
    const { err, ms } = await failure({ url, timeouts: { listMs: 300 } });
    expect(err.message).toMatch(/timed out/);
    expect(ms).toBeLessThan(2000);
  });

  it('a wrong content type is refused', async () => {
    const url = await hostile((_q, res) => {
      res.writeHead(200, { 'content-type': 'text/plain' }).end('hello');
    });
    const { err } = await failure({ url });
    expect(err.message).toMatch(/content type 'text\/plain'/);
  });

  it('a redirect to another origin is refused and the header values never reach it', async () => {
    const elsewhere: http.IncomingHttpHeaders[] = [];
    const other = await hostile((_q, res) => res.writeHead(500).end(), elsewhere);
    const url = await hostile((_q, res) => {
      res.writeHead(307, { location: other }).end();
    });
    const { err } = await failure({ url, http: { headers: { authorization: 'Bearer secret-value', 'x-api-key': 'k-123' } } });
    expect(err.message).toMatch(/refused a redirect to another origin/);
    expect(err.message).not.toMatch(/secret-value|k-123/);
    expect(elsewhere).toEqual([]);
  });

  it('a header hook that never resolves is bounded by connectMs', async () => {
    const url = await hostile((_q, res) => res.writeHead(500).end());
    const { err, ms } = await failure({ url, http: { headers: () => new Promise(() => {}) }, timeouts: { connectMs: 200 } });
    // Either the connect times out, or V8 collects the promise that can never settle first.
    expect([
      `mcp: connect to 'mcp:http:${url}' timed out after 200ms`,
      'mcp: the http.headers hook failed: its promise was collected without ever settling',
    ]).toContain(err.message);
    expect(ms).toBeLessThan(2000);
  });

  it('a header hook whose promise is collected unsettled fails the connect with that reason', async () => {
    const url = await hostile((_q, res) => res.writeHead(500).end());
    // Nothing references the promise: a collection in the wait drops it, and the port's
    // finalization registry tells the waiter long before the connect timeout.
    const pending = failure({ url, http: { headers: () => new Promise(() => {}) }, timeouts: { connectMs: 20_000 } });
    let done = false;
    pending.finally(() => (done = true));
    for (let i = 0; i < 200 && !done; i++) {
      await new Promise((r) => setTimeout(r, 10));
      (globalThis as { gc?: () => void }).gc?.();
    }
    const { err, ms } = await pending;
    expect(err.message).toBe('mcp: the http.headers hook failed: its promise was collected without ever settling');
    expect(ms).toBeLessThan(10_000);
  });

  it('a server that is not there fails the connect with a plain error', async () => {
    const url = await hostile((_q, res) => res.end());
    latest!.close();
    latest!.closeAllConnections();
    const { err } = await failure({ url, timeouts: { connectMs: 2000 } });
    expect(err.message).toMatch(/POST .* failed/);
  });
});
