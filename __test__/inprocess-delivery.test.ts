// How an in-process call's request reaches the host's server object: once the call is
// registered, in order, and at once (before execute() returns) for calls made one at a time,
// whether the server answers later or from inside its own onmessage.
import { describe, expect, it } from 'vitest';
import { mcp } from '../lib/index.js';
import { closeAfterEach, ctx, rejection, session } from './helpers/common.js';

const closing = closeAfterEach();

const TOOLS = [{ name: 'echo', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } }];

/**
 * A server object speaking the SDK's Transport interface by hand: it records the id of every
 * tools/call it is handed, and answers each request from inside onmessage (`sync`) or a
 * promise tick later.
 */
function rawServer(sync: boolean) {
  const seen: number[] = [];
  const server = {
    seen,
    /** Run right after the server answered a call whose text is 'nest' (from inside onmessage). */
    nested: undefined as (() => void) | undefined,
    async connect(transport: any) {
      transport.onmessage = (msg: any) => {
        if (msg.id === undefined) return;
        let result: unknown = {};
        if (msg.method === 'initialize') {
          result = { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '1' } };
        } else if (msg.method === 'tools/list') {
          result = { tools: TOOLS };
        } else if (msg.method === 'tools/call') {
          seen.push(msg.id);
          result = { content: [{ type: 'text', text: `${msg.params.arguments.text}` }] };
        }
        const reply = () => transport.send({ jsonrpc: '2.0', id: msg.id, result });
        if (sync) void reply();
        else void Promise.resolve().then(reply);
        if (msg.params?.arguments?.text === 'nest') server.nested?.();
      };
      await transport.start();
    },
  };
  return server;
}

async function open(sync: boolean) {
  const server = rawServer(sync);
  const source = closing(mcp({ transport: 'inprocess', server } as any));
  const [echo] = await source.tools(session);
  return { server, echo };
}

describe.each([false, true])('in-process delivery (server answers inside onmessage: %s)', (sync) => {
  it('hands a call made one at a time to the server before execute() returns', async () => {
    const { server, echo } = await open(sync);
    expect(await echo.execute({ text: 'a' }, ctx)).toBe('a');
    for (let i = 0; i < 5; i++) {
      const before = server.seen.length;
      const call = echo.execute({ text: `n${i}` }, ctx);
      expect(server.seen.length).toBe(before + 1);
      expect(await call).toBe(`n${i}`);
    }
  });

  it('hands calls started together to the server once they are all registered, in order', async () => {
    const { server, echo } = await open(sync);
    expect(await echo.execute({ text: 'a' }, ctx)).toBe('a');
    const before = server.seen.length;
    const calls = Array.from({ length: 20 }, (_, i) => echo.execute({ text: `c${i}` }, ctx));
    expect(await Promise.all(calls)).toEqual(Array.from({ length: 20 }, (_, i) => `c${i}`));
    const ids = server.seen.slice(before);
    expect(ids).toHaveLength(20);
    expect([...ids].sort((x, y) => x - y)).toEqual(ids);
  });

  it('takes a call the server starts from inside its onmessage once, after what came before it', async () => {
    const { server, echo } = await open(sync);
    expect(await echo.execute({ text: 'a' }, ctx)).toBe('a');
    let inner: Promise<unknown> | undefined;
    server.nested = () => {
      server.nested = undefined;
      inner = echo.execute({ text: 'inner' }, ctx);
    };
    const before = server.seen.length;
    expect(await echo.execute({ text: 'nest' }, ctx)).toBe('nest');
    expect(await inner).toBe('inner');
    const ids = server.seen.slice(before);
    expect(ids).toHaveLength(2);
    expect(ids[0]).toBeLessThan(ids[1]);
  });

  it('sends nothing for a refused input, and the calls after it still go out', async () => {
    const { server, echo } = await open(sync);
    expect(await echo.execute({ text: 'a' }, ctx)).toBe('a');
    const before = server.seen.length;
    const refused = await rejection(echo.execute({ text: 1 }, ctx));
    expect(refused.message).toMatch(/invalid input for tool 'echo'/);
    expect(server.seen.length).toBe(before);
    expect(await echo.execute({ text: 'b' }, ctx)).toBe('b');
    expect(await Promise.all([echo.execute({ text: 'c' }, ctx), echo.execute({ text: 'd' }, ctx)])).toEqual(['c', 'd']);
    expect(server.seen.length).toBe(before + 3);
  });
});
