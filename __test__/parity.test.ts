// What a current official client sends on the 2026-07-28 wire, beside what the addon sends: the
// reference is @modelcontextprotocol/client 2.4 in its auto mode, against the same real
// 2026-only HTTP server (@modelcontextprotocol/server 2.4, createMcpHandler), one tools/list and
// one tools/call each. The routing headers, the `_meta` envelope's members and the call's
// params must match.
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mcp } from '../lib/index.js';
import { session } from './helpers/common.js';
import { type ModernHttp, serveModernHttp } from './helpers/modern-http.js';
import { modernServer } from './fixtures/modern-stdio.mjs';

type Seen = ModernHttp['requests'][number];
const ROUTING = ['mcp-protocol-version', 'mcp-method', 'mcp-name'];

function call(requests: Seen[]) {
  const seen = requests.find((r) => r.method === 'POST' && JSON.parse(r.body).method === 'tools/call');
  if (seen === undefined) throw new Error('no tools/call was sent');
  const body = JSON.parse(seen.body);
  return {
    headers: Object.fromEntries(ROUTING.map((h) => [h, seen.headers[h]])),
    meta: Object.keys(body.params._meta ?? {})
      .filter((k) => k.startsWith('io.modelcontextprotocol/'))
      .sort(),
    version: body.params._meta?.['io.modelcontextprotocol/protocolVersion'],
    name: body.params.name,
    arguments: body.params.arguments,
  };
}

describe('the 2026-07-28 wire, beside @modelcontextprotocol/client 2.4 (auto)', () => {
  let reference: ModernHttp;
  let ours: ModernHttp;
  beforeAll(async () => {
    reference = await serveModernHttp(modernServer, 'reject');
    ours = await serveModernHttp(modernServer, 'reject');
    const client = new Client({ name: 'reference', version: '2.4.0' }, { versionNegotiation: { mode: 'auto' } } as any);
    await client.connect(new StreamableHTTPClientTransport(new URL(reference.url)));
    await client.listTools();
    await client.callTool({ name: 'echo', arguments: { text: 'hi' } });
    await client.close();
    const source = mcp({ transport: 'streamable-http', url: ours.url });
    const defs = await source.tools(session);
    await defs.find((d) => d.name === 'echo')!.execute({ text: 'hi' }, session);
    await source.close();
  });
  afterAll(async () => {
    await reference.stop();
    await ours.stop();
  });

  it('sends the same routing headers and the same _meta members on a tool call', () => {
    const theirs = call(reference.requests);
    const mine = call(ours.requests);
    expect(theirs.version).toBe('2026-07-28');
    expect(mine).toEqual(theirs);
  });

  it('opens as the design says: the 2025 initialize, refused, then server/discover, and nothing else but the listen before the list', () => {
    const opening = (rs: Seen[]) =>
      rs
        .slice(
          0,
          rs.findIndex((r) => r.body.includes('"tools/list"')),
        )
        .map((r) => `${r.method} ${r.body ? JSON.parse(r.body).method : ''}`);
    const mine = opening(ours.requests);
    expect(mine.slice(0, 2)).toEqual(['POST initialize', 'POST server/discover']);
    // The subscription for list changes may open before the list does.
    expect(mine.slice(2).every((r) => r === 'POST subscriptions/listen')).toBe(true);
    // What the reference sent before its list, for the record in the failure message.
    expect(opening(reference.requests).length, JSON.stringify(opening(reference.requests))).toBeGreaterThan(0);
  });
});
