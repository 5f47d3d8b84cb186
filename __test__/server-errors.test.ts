// A server that answers a request with a JSON-RPC error, beside the MCP SDK 1.x client the
// original mcp() is built on: execute() rejects with what that client's callTool rejects with,
// and tools() with what its listTools rejects with (an McpError: `MCP error <code>: <message>`,
// `code`, `data`), over every transport. The engine hands the model `thrown.message`, so the
// model sees the server's failure word for word, as it did with the original.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { describe, expect, it } from 'vitest';
import { ConfigError, mcp } from '../lib/index.js';
import { refusingServer } from './fixtures/refusing-server.mjs';
import { closeAfterEach, ctx, rejection, session } from './helpers/common.js';
import { fixture, MODES, type Mode, serveHttp } from './helpers/harness.js';

const closing = closeAfterEach();

/** The addon's source and the SDK client's transport, each to a server of its own in `mode`. */
async function serve(mode: Mode, listFails: boolean) {
  if (mode === 'inprocess') {
    const [theirs, serverSide] = InMemoryTransport.createLinkedPair();
    await refusingServer({ listFails }).connect(serverSide);
    return { config: { transport: 'inprocess', server: refusingServer({ listFails }) }, transport: theirs };
  }
  if (mode === 'stdio') {
    const command = process.execPath;
    const args = [fixture('refusing-server.mjs')];
    // A value of 4 characters or more would be redacted wherever the server's text repeats it.
    const env = listFails ? { LIST_REFUSED: '1' } : {};
    const transport = new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'ignore' });
    return { config: { transport: 'stdio', command, args, env, stderr: 'ignore' }, transport };
  }
  const http = closing(await serveHttp(() => refusingServer({ listFails }), mode === 'http-stateful'));
  return { config: { transport: 'streamable-http', url: http.url }, transport: new StreamableHTTPClientTransport(new URL(http.url)) };
}

async function connected(mode: Mode, listFails = false) {
  const { config, transport } = await serve(mode, listFails);
  const client = new Client({ name: 'reference', version: '1.0.0' });
  await client.connect(transport);
  closing.defer(() => client.close());
  const source = closing(mcp(config as any));
  return { client, source };
}

/** The same error, as far as anything observes it: class name, words, members. */
function expectSame(ours: any, theirs: any) {
  expect(theirs.name).toBe('McpError');
  expect(ours).toBeInstanceOf(Error);
  expect(ours).not.toBeInstanceOf(ConfigError);
  expect(ours.name).toBe(theirs.name);
  expect(ours.message).toBe(theirs.message);
  expect(ours.code).toBe(theirs.code);
  expect(ours.data).toEqual(theirs.data);
  expect('data' in ours).toBe('data' in theirs);
  expect(Object.keys(ours)).toEqual(Object.keys(theirs));
  expect(ours).toEqual(theirs);
  expect(String(ours)).toBe(String(theirs));
}

describe.each(MODES)('a JSON-RPC error answered over %s, beside the SDK client', (mode) => {
  it('execute() rejects with what callTool rejects with: message, code and data', async () => {
    const { client, source } = await connected(mode);
    await client.listTools();
    const defs = await source.tools(session);
    for (const name of ['query', 'quota', 'empty']) {
      const theirs = await rejection(client.callTool({ name, arguments: {} }));
      const ours: any = await rejection(defs.find((d) => d.name === name)!.execute({}, ctx));
      expectSame(ours, theirs);
      // Where it happened rides beside the words, out of the enumerable members.
      expect(ours.tool).toBe(name);
      expect(ours.source).toBe(source.id);
    }
  });

  it('tools() rejects with what listTools rejects with, and so does the next tools()', async () => {
    const { client, source } = await connected(mode, true);
    const theirs = await rejection(client.listTools());
    const ours: any = await rejection(source.tools(session));
    expectSame(ours, theirs);
    expect(ours.source).toBe(source.id);
    expectSame(await rejection(source.tools(session)), theirs);
  });
});

describe('an opening answered with a JSON-RPC error, beside the SDK client', () => {
  it('tools() rejects with what connect rejects with', async () => {
    const command = process.execPath;
    const args = [fixture('hostile-stdio.mjs')];
    const env = { MODE: 'refuseInitialize' };
    const client = new Client({ name: 'reference', version: '1.0.0' });
    const transport = new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'ignore' });
    const theirs = await rejection(client.connect(transport));
    await client.close();
    const source = closing(mcp({ transport: 'stdio', command, args, env, stderr: 'ignore' }));
    const ours: any = await rejection(source.tools(session));
    expectSame(ours, theirs);
    expect(ours.source).toBe(source.id);
  });
});

describe('what the model sees of a failed call', () => {
  it("is the server's message in the SDK client's words, nothing of ours around it", async () => {
    const { source } = await connected('stdio');
    const [query] = await source.tools(session);
    const thrown = await rejection(query.execute({}, ctx));
    // The engine turns a thrown error into the tool result `{ error: thrown.message }`.
    expect({ error: thrown.message }).toEqual({ error: 'MCP error -32603: connect ECONNREFUSED 127.0.0.1:1' });
    expect((thrown as any).code).toBe(-32603);
    expect((thrown as any).data).toBeUndefined();
  });
});
