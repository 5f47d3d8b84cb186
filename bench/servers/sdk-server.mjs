// The SDK's low-level Server with paginated tools; stdio by default, HTTP with HTTP_PORT=0.
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { callResult, listPage, makeTools } from './tools.mjs';

export function sdkServer(count) {
  const tools = makeTools(count);
  const server = new Server({ name: 'bench', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler(ListToolsRequestSchema, async (req) => listPage(tools, req.params?.cursor));
  server.setRequestHandler(CallToolRequestSchema, async (req) => callResult(req.params.name, req.params.arguments));
  return server;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const count = Number(process.env.TOOLS ?? 10);
  if (process.env.HTTP_PORT === undefined) {
    await sdkServer(count).connect(new StdioServerTransport());
  } else {
    const sessions = new Map();
    const server = http.createServer(async (req, res) => {
      const sid = req.headers['mcp-session-id'];
      let t = sid && sessions.get(sid);
      if (!t) {
        t = new StreamableHTTPServerTransport({ sessionIdGenerator: () => randomUUID(), onsessioninitialized: (id) => sessions.set(id, t) });
        t.onclose = () => sessions.delete(t.sessionId);
        await sdkServer(count).connect(t);
      }
      await t.handleRequest(req, res);
    });
    server.keepAliveTimeout = 60_000;
    server.listen(0, '127.0.0.1', () => console.log(`http://127.0.0.1:${server.address().port}/mcp`));
  }
}
