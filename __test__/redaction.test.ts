// Secrets (env and header values) never reach an error in clear, whichever of the server's texts
// echoes them: an isError result, a failed output-schema check, an HTTP body or stderr cut to
// its size, and the config's own values however many rotated tokens came after them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { mcp } from '../lib/index.js';
import { closeAfterEach, ctx, rejection, session } from './helpers/common.js';
import { fixture } from './helpers/harness.js';

const closing = closeAfterEach();
const TOKEN = 'tok-env-0a1b2c3d4e5f6a7b';

const leaky = (extra: Record<string, unknown> = {}) =>
  closing(
    mcp({
      transport: 'stdio',
      command: process.execPath,
      args: [fixture('leaky-server.mjs')],
      env: { TOKEN },
      stderr: 'pipe',
      ...extra,
    } as any),
  );

/** A raw HTTP server: the handshake answered, every other request handed to `rest`. */
async function serve(rest: (req: http.IncomingMessage, res: http.ServerResponse) => void): Promise<string> {
  const server = http.createServer((req, res) => {
    let text = '';
    req.on('data', (d) => (text += d));
    req.on('end', () => {
      const body = text ? JSON.parse(text) : undefined;
      if (body?.method === 'initialize') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            jsonrpc: '2.0',
            id: body.id,
            result: { protocolVersion: '2025-06-18', capabilities: { tools: {} }, serverInfo: { name: 'h', version: '0' } },
          }),
        );
      } else if (req.method !== 'POST' || body?.id === undefined) {
        res.writeHead(req.method === 'GET' ? 405 : 202).end();
      } else {
        rest(req, res);
      }
    });
  });
  closing.defer(() => {
    server.closeAllConnections();
    return new Promise((r) => server.close(r));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

describe('redaction', () => {
  it('an isError result (a tool that threw, through the SDK) rejects with the env secret redacted', async () => {
    const [throws] = await leaky().tools(session);
    const err = await rejection(throws.execute({}, ctx));
    expect(err.message).toBe('token [redacted] was refused');
  });

  it('structured content that fails its output schema: the quoted value is redacted', async () => {
    const defs = await leaky().tools(session);
    const mismatch = defs.find((d) => d.name === 'mismatch')!;
    const err = await rejection(mismatch.execute({}, ctx));
    expect(err.message).toMatch(/does not match its output schema/);
    expect(err.message).toContain('[redacted]');
    expect(err.message).not.toContain(TOKEN.slice(4));
  });

  it("stderr's tail starting inside the secret: redacted before it is cut", async () => {
    const err = await rejection(leaky({ env: { TOKEN, MODE: 'stderrAcrossTail' } }).tools(session));
    // Redacted first, the tail is shorter than its cut: the line before the secret shows too.
    expect(err.message).toMatch(/exited with code 3; its stderr ended with:\nstarting\n\[redacted\]y+$/);
    // Cut first, the tail started with the secret but for its first 6 bytes.
    expect(err.message).not.toContain(TOKEN.slice(6, 16));
  });

  it('an HTTP body whose first 512 bytes end inside the token: redacted before it is cut', async () => {
    const token = 'tok-http-9f8e7d6c5b4a3210';
    // 505 bytes of text and the token: the first 7 bytes of it fall within the 512 shown.
    const url = await serve((req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`${'x'.repeat(505)}${String(req.headers.authorization).slice(7)} and more`);
    });
    const err = await rejection(
      closing(mcp({ transport: 'streamable-http', url, http: { headers: { authorization: `Bearer ${token}` } } } as any)).tools(session),
    );
    expect(err.message).toMatch(/HTTP 500/);
    expect(err.message).not.toContain(token.slice(0, 7));
    expect(err.message).toMatch(/x\[redac/);
  });

  it("the config's own values stay redacted however many rotated header values came after them", async () => {
    // The URL's credential is a configured value; the hook rotates 60 headers (120 values to
    // redact: each and its token part) per request, past the 256 remembered in a few requests.
    const url = await serve((req, res) => {
      res.writeHead(500, { 'content-type': 'text/plain' }).end(`no access for ${req.url}`);
    });
    let n = 0;
    const headers = () => {
      n += 1;
      return Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`x-rot-${i}`, `Bearer rotated-${n}-${i}-value`]));
    };
    const source = closing(mcp({ transport: 'streamable-http', url: `${url}?api_key=sk-url-cred-5566778899`, http: { headers } } as any));
    const err = await rejection(source.tools(session));
    expect(n).toBeGreaterThanOrEqual(3);
    expect(err.message).toMatch(/HTTP 500/);
    expect(err.message).toContain('no access for /mcp?api_key=[redacted]');
    expect(err.message).not.toContain('sk-url-cred-5566778899');
  });
});
