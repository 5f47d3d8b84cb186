// The two implementations behind one interface: the addon's mcp(), and the baseline that does
// what the TypeScript mcp() does with @modelcontextprotocol/sdk's Client (connect, page through
// tools/list, build tool objects, callTool, which validates structured output itself).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { mcp } from '../lib/index.mjs';

/** target: { kind: 'stdio', command, args, env } | { kind: 'http', url } | { kind: 'inprocess', server } */
export function addonSource(target) {
  const config =
    target.kind === 'stdio'
      ? { transport: 'stdio', command: target.command, args: target.args, env: target.env }
      : target.kind === 'http'
        ? { transport: 'streamable-http', url: target.url }
        : { transport: 'inprocess', server: target.server };
  // `asks`: the host offers answers to what a server asks back, which these calls never use
  // (what offering them costs a call that asks nothing).
  if (target.asks)
    Object.assign(config, {
      elicit: () => ({ action: 'decline' }),
      sample: () => ({ role: 'assistant', content: { type: 'text', text: '' }, model: 'none' }),
      tasks: true,
    });
  const source = mcp(config);
  return {
    tools: () => source.tools({ runId: 'bench' }),
    close: () => source.close(),
  };
}

export function sdkSource(target) {
  let client;
  async function connect() {
    client = new Client({ name: 'rulvar', version: '1.0.0' });
    if (target.kind === 'stdio') {
      await client.connect(new StdioClientTransport({ command: target.command, args: target.args, env: target.env }));
    } else if (target.kind === 'http') {
      await client.connect(new StreamableHTTPClientTransport(new URL(target.url)));
    } else {
      const [a, b] = InMemoryTransport.createLinkedPair();
      await target.server.connect(b);
      await client.connect(a);
    }
  }
  return {
    async tools() {
      await connect();
      const wire = [];
      let cursor;
      do {
        const page = await client.listTools(cursor === undefined ? {} : { cursor });
        wire.push(...page.tools);
        cursor = page.nextCursor || undefined;
      } while (cursor !== undefined);
      return wire.map((t) => ({
        kind: 'tool',
        name: t.name,
        description: t.description ?? '',
        parameters: t.inputSchema,
        executor: 'inprocess',
        needsApproval: false,
        async execute(input, ctx) {
          // As the TypeScript mcp() does: the call's signal goes to the SDK request.
          const options = ctx?.signal ? { signal: ctx.signal } : undefined;
          const result = await client.callTool({ name: t.name, arguments: input ?? {} }, undefined, options);
          if (result.isError) throw new Error(result.content.map((c) => c.text ?? '').join('') || 'MCP tool reported an error');
          if (result.structuredContent !== undefined) return result.structuredContent;
          return result.content.every((c) => c.type === 'text') ? result.content.map((c) => c.text).join('') : result.content;
        },
      }));
    },
    async close() {
      await client?.close();
    },
  };
}
