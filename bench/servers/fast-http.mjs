// A minimal streamable-HTTP JSON-RPC server without the SDK, answering each POST with JSON (no
// sessions): the client's cost dominates. MODERN=1: it speaks only 2026-07-28 (a 400 with
// UnsupportedProtocolVersion for initialize, server/discover, `resultType` on every result);
// otherwise 2025-11-25. Prints its URL on stdout.
import http from 'node:http';
import { callResult, listPage, makeTools } from './tools.mjs';

const tools = makeTools(Number(process.env.TOOLS ?? 10));
const modern = process.env.MODERN === '1';
const json = (res, status, body) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));

const server = http.createServer((req, res) => {
  if (req.method !== 'POST') return void res.writeHead(405).end();
  let body = '';
  req.on('data', (d) => (body += d));
  req.on('end', () => {
    const msg = JSON.parse(body);
    if (msg.id === undefined) return void res.writeHead(202).end();
    const done = (result) => json(res, 200, { jsonrpc: '2.0', id: msg.id, result: modern ? { resultType: 'complete', ...result } : result });
    switch (msg.method) {
      case 'initialize':
        if (modern)
          return json(res, 400, {
            jsonrpc: '2.0',
            id: msg.id,
            error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'] } },
          });
        return done({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'fast-http', version: '1' } });
      case 'server/discover':
        return done({ supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'fast-http', version: '1' } });
      case 'tools/list':
        return done(listPage(tools, msg.params?.cursor));
      case 'tools/call':
        return done(callResult(msg.params.name, msg.params.arguments));
      default:
        return done({});
    }
  });
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}/mcp`));
