// Servers from other SDKs, as shipped: the npm reference servers (server-everything, -filesystem,
// -memory) and a server built with the official Rust SDK (rmcp, examples/rmcp_server.rs). For
// each: list (the names the SDK's own client lists), call, listChanged where the server sends it,
// close with no child left.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mcp } from '../lib/index.js';
import { liveChildren, waitFor } from './helpers/harness.js';
import { everythingHttp, listenAddresses, listening, type Listening, referenceBin, rmcpServerBin } from './helpers/servers.js';

const session = { runId: 'r1' };
const ctx = { runId: 'r1' } as any;
type Source = ReturnType<typeof mcp>;
type Defs = Awaited<ReturnType<Source['tools']>>;

/** What the SDK's own client lists once connected: the reference for a full import. */
async function referenceNames(transport: StreamableHTTPClientTransport | StdioClientTransport): Promise<string[]> {
  const client = new Client({ name: 'reference', version: '1.0.0' });
  await client.connect(transport);
  try {
    return (await client.listTools()).tools.map((t) => t.name);
  } finally {
    await client.close();
  }
}

const stdioReference = (command: string, args: string[], env: Record<string, string> = {}) =>
  referenceNames(new StdioClientTransport({ command, args, env: { PATH: process.env.PATH ?? '', ...env }, stderr: 'ignore' }));

const run = (defs: Defs, name: string, input: unknown) => defs.find((d) => d.name === name)!.execute(input as any, ctx);

/** Polls tools() until `name` is listed (a listChanged reached the cache), bounded. */
async function listedAfterChange(source: Source, before: Defs, name: string): Promise<Defs> {
  let after = before;
  const end = Date.now() + 5000;
  while (!after.some((d) => d.name === name) && Date.now() < end) {
    await new Promise((r) => setTimeout(r, 20));
    after = await source.tools(session);
  }
  return after;
}

// The children this worker had before a test (an HTTP server started by the file's hooks among
// them): a closed source must leave no other behind.
let childrenBefore = new Set<number>();
beforeEach(() => {
  childrenBefore = new Set(liveChildren());
});
const noChildLeft = () => waitFor(() => liveChildren().every((pid) => childrenBefore.has(pid)), 3000);

describe('server-everything over streamable HTTP', () => {
  let server: Listening;
  beforeAll(async () => {
    server = await everythingHttp();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it('listens on loopback only', () => {
    const port = Number(new URL(server.url).port);
    expect(listenAddresses(port)).toEqual(['0100007F']);
  });

  it('imports every tool in 20 imports out of 20, as the SDK client lists them', async () => {
    // The server registers its 13th tool while it takes notifications/initialized (and announces
    // it with a listChanged before any notification stream can be open): an import that lists
    // before the server took the notification gets 12.
    const reference = await referenceNames(new StreamableHTTPClientTransport(new URL(server.url)));
    expect(reference.length).toBe(13);
    const counts: number[] = [];
    for (let i = 0; i < 20; i++) {
      const source = mcp({ transport: 'streamable-http', url: server.url });
      try {
        const names = (await source.tools(session)).map((d) => d.name);
        counts.push(names.length);
        if (names.length === reference.length) expect(names).toEqual(reference);
      } finally {
        await source.close();
      }
    }
    const full = counts.filter((n) => n === reference.length).length;
    expect(`${full}/20 full imports (${counts.join(',')})`).toBe(`20/20 full imports (${counts.map(() => reference.length).join(',')})`);
  }, 60_000);

  it('calls tools, keeps its list, and ends the session on close', async () => {
    const source = mcp({ transport: 'streamable-http', url: server.url });
    const defs = await source.tools(session);
    expect(await run(defs, 'echo', { message: 'hi' })).toBe('Echo: hi');
    expect(await run(defs, 'get-sum', { a: 2, b: 3 })).toBe('The sum of 2 and 3 is 5.');
    expect(await run(defs, 'get-structured-content', { location: 'New York' })).toMatchObject({ conditions: expect.any(String) });
    // Nothing changed since the import: the cached array stands.
    expect(await source.tools(session)).toBe(defs);
    await source.close();
    expect(await waitFor(() => /Received session termination request/.test(server.output()))).toBe(true);
  });
});

describe('server-everything over stdio', () => {
  it('lists, calls, relists on the listChanged it sends after initialization, closes', async () => {
    const bin = referenceBin('everything');
    const reference = await stdioReference(process.execPath, [bin, 'stdio']);
    const source = mcp({ transport: 'stdio', command: process.execPath, args: [bin, 'stdio'], stderr: 'ignore' });
    const first = await source.tools(session);
    expect(first.map((d) => d.name)).toEqual(reference);
    expect(first.length).toBe(13);
    expect(await run(first, 'get-sum', { a: 40, b: 2 })).toBe('The sum of 40 and 2 is 42.');
    // The listChanged for the tool registered on initialization follows the first list on the
    // pipe, so the list is taken again once (same names), then stays cached.
    const second = await source.tools(session);
    expect(second).not.toBe(first);
    expect(second.map((d) => d.name)).toEqual(reference);
    expect(await source.tools(session)).toBe(second);
    await source.close();
    expect(await noChildLeft()).toBe(true);
  });
});

describe('server-filesystem over stdio', () => {
  it('lists, writes and reads a file, refuses a path outside its root, closes', async () => {
    const root = mkdtempSync(join(tmpdir(), 'rulvar-fs-'));
    const bin = referenceBin('filesystem');
    const reference = await stdioReference(process.execPath, [bin, root]);
    const source = mcp({ transport: 'stdio', command: process.execPath, args: [bin, root], stderr: 'ignore' });
    const defs = await source.tools(session);
    expect(defs.map((d) => d.name)).toEqual(reference);
    expect(reference).toEqual(expect.arrayContaining(['read_text_file', 'write_file', 'list_directory']));
    const file = join(root, 'note.txt');
    expect(await run(defs, 'write_file', { path: file, content: 'from the addon' })).toEqual({ content: `Successfully wrote to ${file}` });
    expect(readFileSync(file, 'utf8')).toBe('from the addon');
    expect(await run(defs, 'read_text_file', { path: file })).toEqual({ content: 'from the addon' });
    await expect(run(defs, 'read_text_file', { path: '/etc/hostname' })).rejects.toThrow(/Access denied - path outside allowed directories/);
    expect(await source.tools(session)).toBe(defs);
    await source.close();
    expect(await noChildLeft()).toBe(true);
  });
});

describe('server-memory over stdio', () => {
  it('lists, stores an entity and finds it, closes', async () => {
    const env = { MEMORY_FILE_PATH: join(mkdtempSync(join(tmpdir(), 'rulvar-memory-')), 'memory.jsonl') };
    const bin = referenceBin('memory');
    const reference = await stdioReference(process.execPath, [bin], env);
    const source = mcp({ transport: 'stdio', command: process.execPath, args: [bin], env, stderr: 'ignore' });
    const defs = await source.tools(session);
    expect(defs.map((d) => d.name)).toEqual(reference);
    const ada = { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] };
    expect(await run(defs, 'create_entities', { entities: [ada] })).toEqual({ entities: [ada] });
    expect(await run(defs, 'search_nodes', { query: 'first program' })).toEqual({ entities: [ada], relations: [] });
    expect(readFileSync(env.MEMORY_FILE_PATH, 'utf8')).toContain('"name":"Ada"');
    await source.close();
    expect(await noChildLeft()).toBe(true);
  });
});

/** The checks shared by both rmcp transports. */
async function exerciseRmcp(source: Source): Promise<void> {
  const defs = await source.tools(session);
  expect(defs.map((d) => d.name)).toEqual(['echo', 'add', 'fail', 'add_tool']);
  expect(await run(defs, 'echo', { text: 'hi' })).toBe('hi');
  expect(await run(defs, 'add', { a: 1, b: 2 })).toEqual({ sum: 3 });
  await expect(run(defs, 'fail', {})).rejects.toThrow(/it broke/);
  expect(await source.tools(session)).toBe(defs);
  // Announced 100 ms after the call returned: outside any request (over HTTP, on the GET stream).
  expect(await run(defs, 'add_tool', { name: 'late', delay_ms: 100 })).toBe('late will be added');
  const after = await listedAfterChange(source, defs, 'late');
  expect(after.map((d) => d.name)).toEqual(['echo', 'add', 'fail', 'add_tool', 'late']);
  expect(await run(after, 'late', {})).toBe('late ran');
  // The arrays handed out before keep their tools.
  expect(defs.map((d) => d.name)).toEqual(['echo', 'add', 'fail', 'add_tool']);
  expect(await run(defs, 'echo', { text: 'still' })).toBe('still');
}

describe('rmcp server (the official Rust SDK)', () => {
  it('over stdio: lists, calls, follows listChanged, closes', async () => {
    const source = mcp({ transport: 'stdio', command: rmcpServerBin(), args: ['stdio'], stderr: 'ignore' });
    await exerciseRmcp(source);
    await source.close();
    expect(await noChildLeft()).toBe(true);
  });

  it('over streamable HTTP: lists, calls, follows listChanged, closes', async () => {
    const server = await listening(rmcpServerBin(), ['http']);
    try {
      expect(listenAddresses(Number(new URL(server.url).port))).toEqual(['0100007F']);
      const source = mcp({ transport: 'streamable-http', url: server.url });
      await exerciseRmcp(source);
      // Right after an import the notification stream is open: a change announced at once counts.
      const fresh = mcp({ transport: 'streamable-http', url: server.url });
      const first = await fresh.tools(session);
      await run(first, 'add_tool', { name: 'prompt', delay_ms: 0 });
      expect((await listedAfterChange(fresh, first, 'prompt')).map((d) => d.name)).toContain('prompt');
      await fresh.close();
      await source.close();
    } finally {
      await server.stop();
    }
  });
});
