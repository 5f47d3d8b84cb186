// The embedded example server: an @modelcontextprotocol/sdk McpServer with a text tool, a
// structured-output tool, an isError tool and an image tool. Run directly, it serves stdio.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { z } from 'zod';

export function buildServer() {
  const server = new McpServer({ name: 'rulvar-example', version: '1.0.0' });
  server.registerTool(
    'echo',
    { description: 'Echo text.', inputSchema: { text: z.string() } },
    async ({ text }) => ({ content: [{ type: 'text', text }] }),
  );
  server.registerTool(
    'double',
    {
      description: 'Double a number.',
      inputSchema: { n: z.number() },
      outputSchema: { doubled: z.number() },
    },
    async ({ n }) => ({ content: [{ type: 'text', text: String(n * 2) }], structuredContent: { doubled: n * 2 } }),
  );
  server.registerTool('fail', { description: 'Always fails.' }, async () => ({
    isError: true,
    content: [{ type: 'text', text: 'it broke' }],
  }));
  server.registerTool('picture', { description: 'An image.' }, async () => ({
    content: [
      { type: 'text', text: 'a pixel' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ],
  }));
  return server;
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await buildServer().connect(new StdioServerTransport());
}
