// A streamable-HTTP server built with @modelcontextprotocol/server 2.4's `createMcpHandler`
// (stateless, both eras or modern only), on 127.0.0.1, with every request it saw.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createMcpHandler } from '@modelcontextprotocol/server';

export interface ModernHttp {
  url: string;
  requests: Array<{ method: string; headers: http.IncomingHttpHeaders; body: string }>;
  /** Publishes a tool-list change to every open subscription. */
  toolsChanged(): void;
  stop(): Promise<void>;
}

export async function serveModernHttp(factory: () => any, legacy: 'reject' | 'stateless'): Promise<ModernHttp> {
  const handler = createMcpHandler(factory, { legacy });
  const requests: ModernHttp['requests'] = [];
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const body = Buffer.concat(chunks);
    requests.push({ method: req.method ?? '', headers: req.headers, body: body.toString() });
    const aborted = new AbortController();
    res.on('close', () => aborted.abort());
    try {
      const headers = new Headers();
      for (const [k, v] of Object.entries(req.headers)) if (typeof v === 'string') headers.set(k, v);
      const response = await handler.fetch(
        new Request(`http://127.0.0.1${req.url}`, { method: req.method, headers, body: req.method === 'POST' ? body : undefined, signal: aborted.signal }),
      );
      res.writeHead(response.status, Object.fromEntries(response.headers));
      if (response.body !== null) for await (const chunk of response.body as any) res.write(chunk);
      res.end();
    } catch (err) {
      if (!res.headersSent) res.writeHead(500);
      res.end(String(err));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    toolsChanged: () => handler.notify.toolsChanged(),
    async stop() {
      await handler.close();
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}
