// The clients a user would pick instead of this package, behind the interface of clients.mjs:
// the TypeScript SDK 2.x `Client` (@modelcontextprotocol/client 2.4, the 2025 sequence with no
// probe: `versionNegotiation: { mode: 'legacy' }`) and Vercel's `@ai-sdk/mcp` (2.0.99,
// `protocolVersionDiscovery: false`; in-process it rides the SDK's InMemoryTransport, which it
// takes as any transport object). Each lists every page and calls through its own `callTool`;
// neither validates output against a schema nor keeps a copy of the list beyond its tools.
import { createMCPClient } from '@ai-sdk/mcp';
import { Experimental_StdioMCPTransport } from '@ai-sdk/mcp/mcp-stdio';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';

/** A tool object as the bench calls it, from a listed tool and a call function. */
function def(t, call) {
  return {
    name: t.name,
    description: t.description ?? '',
    parameters: t.inputSchema,
    async execute(input, ctx) {
      const result = await call(t.name, input ?? {}, ctx?.signal);
      if (result.isError) throw new Error(result.content.map((c) => c.text ?? '').join('') || 'MCP tool reported an error');
      if (result.structuredContent !== undefined) return result.structuredContent;
      return result.content.every((c) => c.type === 'text') ? result.content.map((c) => c.text).join('') : result.content;
    },
  };
}

/** Every page of a list, through `list(cursor)`. */
async function allPages(list) {
  const tools = [];
  let cursor;
  do {
    const page = await list(cursor);
    tools.push(...page.tools);
    cursor = page.nextCursor || undefined;
  } while (cursor !== undefined);
  return tools;
}

/** An in-process server connected to one end of a linked pair; the other end for the client. */
async function inMemory(server) {
  const [client, end] = InMemoryTransport.createLinkedPair();
  await server.connect(end);
  return client;
}

export function sdk2Source(target) {
  let client;
  return {
    async tools() {
      client = new Client({ name: 'rulvar', version: '1.0.0' }, { versionNegotiation: { mode: 'legacy' } });
      const transport =
        target.kind === 'stdio'
          ? new StdioClientTransport({ command: target.command, args: target.args, env: target.env })
          : target.kind === 'http'
            ? new StreamableHTTPClientTransport(new URL(target.url))
            : await inMemory(target.server);
      await client.connect(transport);
      const tools = await allPages((cursor) => client.listTools(cursor === undefined ? {} : { cursor }));
      return tools.map((t) => def(t, (name, args, signal) => client.callTool({ name, arguments: args }, signal ? { signal } : undefined)));
    },
    async close() {
      await client?.close();
    },
  };
}

export function aiSdkSource(target) {
  let client;
  return {
    async tools() {
      const transport =
        target.kind === 'stdio'
          ? new Experimental_StdioMCPTransport({ command: target.command, args: target.args, env: target.env })
          : target.kind === 'http'
            ? { type: 'http', url: target.url }
            : await inMemory(target.server);
      client = await createMCPClient({ transport, protocolVersionDiscovery: false });
      const tools = await allPages((cursor) => client.listTools(cursor === undefined ? {} : { params: { cursor } }));
      return tools.map((t) => def(t, (name, args, signal) => client.callTool({ name, arguments: args, options: signal ? { signal } : undefined })));
    },
    async close() {
      await client?.close();
    },
  };
}
