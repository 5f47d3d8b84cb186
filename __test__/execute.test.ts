// execute(input, ctx) on every transport: the input is validated before any tools/call goes out,
// the result is mapped (isError, structuredContent against outputSchema, content blocks), and
// every failure is a rejected Promise, never a crash of the Node process.
import { describe, expect, it } from 'vitest';
import { ConfigError, mcp } from '../lib/index.js';
import { execServer } from './fixtures/exec-server.mjs';
import { closeAfterEach, ctx, ctxWith, session } from './helpers/common.js';
import { fixture, serveHttp } from './helpers/harness.js';

type Mode = 'inprocess' | 'stdio' | 'http-stateful' | 'http-stateless';

const closing = closeAfterEach();
let dying: (() => void) | undefined;

async function open(mode: Mode, extra: Record<string, unknown> = {}) {
  // "Killing" a server in the test process closes its connection from the server side.
  const onDie = () => dying?.();
  let config: Record<string, unknown>;
  if (mode === 'inprocess') {
    const server = execServer({ onDie });
    dying = () => void server.close();
    config = { transport: 'inprocess', server };
  } else if (mode === 'stdio') {
    config = { transport: 'stdio', command: process.execPath, args: [fixture('exec-server.mjs')] };
  } else {
    const http = closing(await serveHttp(() => execServer({ onDie }), mode === 'http-stateful'));
    dying = () => void http.stop();
    config = { transport: 'streamable-http', url: http.url };
  }
  const source = closing(mcp({ ...config, ...extra } as any));
  const defs = await source.tools(session);
  const tool = (name: string) => defs.find((d) => d.name === name)!;
  return { source, defs, tool };
}

const MODES: Mode[] = ['inprocess', 'stdio', 'http-stateful', 'http-stateless'];

describe.each(MODES)('execute over %s', (mode) => {
  it('resolves text content as one string', async () => {
    const { tool } = await open(mode);
    expect(await tool('echo').execute({ text: 'hello' }, ctx)).toBe('hello');
  });

  it('resolves structured content validated against the output schema', async () => {
    const { tool } = await open(mode);
    expect(await tool('double').execute({ n: 21 }, ctx)).toEqual({ doubled: 42 });
  });

  it('rejects isError results with their text, or the fallback message', async () => {
    const { tool } = await open(mode);
    await expect(tool('fail').execute({}, ctx)).rejects.toThrow(/^it broke$/);
    await expect(tool('failSilently').execute({}, ctx)).rejects.toThrow(/^MCP tool reported an error$/);
    const err = await tool('fail')
      .execute({}, ctx)
      .catch((e) => e);
    expect(err).toBeInstanceOf(Error);
    expect(err).not.toBeInstanceOf(ConfigError);
  });

  it('rejects a declared output schema without structured content', async () => {
    const { tool } = await open(mode);
    await expect(tool('forgetStructured').execute({}, ctx)).rejects.toThrow(/has an output schema but did not return structured content/);
  });

  it('rejects structured content that fails its output schema, naming the issue', async () => {
    const { tool } = await open(mode);
    await expect(tool('wrongStructured').execute({}, ctx)).rejects.toThrow(/\/doubled.*"forty-two" is not of type "number"/);
  });

  it('passes an image block through beside normalized text blocks', async () => {
    const { tool } = await open(mode);
    expect(await tool('picture').execute({}, ctx)).toEqual([
      { type: 'text', text: 'a pixel' },
      { type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' },
    ]);
  });

  it('times a slow call out at callMs', async () => {
    const { tool } = await open(mode, { timeouts: { callMs: 50 } });
    await expect(tool('slow').execute({ ms: 400 }, ctx)).rejects.toThrow(/timed out/i);
  });

  it('reports server progress through ctx.log', async () => {
    const { tool } = await open(mode);
    const logged: unknown[][] = [];
    const result = await tool('progress').execute({}, ctxWith({ log: (...args: unknown[]) => logged.push(args) }));
    expect(result).toBe('progressed');
    await new Promise((r) => setTimeout(r, 20));
    expect(logged.map((l) => l[0])).toEqual(['debug', 'debug', 'debug']);
    expect(logged[2][1]).toBe('progress 3/3: step 3');
  });

  it('rejects every in-flight call when close() runs', async () => {
    const { source, tool } = await open(mode);
    const calls = Array.from({ length: 50 }, () => tool('slow').execute({ ms: 5000 }, ctx));
    const settled = Promise.allSettled(calls);
    await new Promise((r) => setTimeout(r, 50));
    const started = Date.now();
    await source.close();
    const results = await settled;
    expect(results.every((r) => r.status === 'rejected')).toBe(true);
    expect(Date.now() - started).toBeLessThan(3000);
  });
});

// Counting what the server saw needs one server across calls: not the stateless mode.
describe.each(['inprocess', 'stdio', 'http-stateful'] as Mode[])('execute over %s (server state)', (mode) => {
  it('refuses bad input before any tools/call goes out', async () => {
    const { tool } = await open(mode);
    const strict = tool('strict');
    await expect(strict.execute({ n: 'one', s: 's' }, ctx)).rejects.toThrow(/^mcp: invalid input for tool 'strict': at \/n: "one" is not of type "integer"$/);
    await expect(strict.execute({ n: 1 }, ctx)).rejects.toThrow(/"s" is a required property/);
    await expect(strict.execute(undefined, ctx)).rejects.toThrow(/"n" is a required property/);
    expect(JSON.parse((await tool('stats').execute({}, ctx)) as string).strict).toBe(0);
    expect(await strict.execute({ n: 1, s: 'x' }, ctx)).toBe('1x');
    expect(JSON.parse((await tool('stats').execute({}, ctx)) as string).strict).toBe(1);
  });

  it('an abort rejects at once and the server sees the cancellation', async () => {
    const { tool } = await open(mode);
    const controller = new AbortController();
    const call = tool('slow').execute({ ms: 2000 }, ctxWith({ signal: controller.signal }));
    await new Promise((r) => setTimeout(r, 20));
    const aborted = Date.now();
    controller.abort();
    await expect(call).rejects.toThrow(/aborted/);
    expect(Date.now() - aborted).toBeLessThan(100);
    let cancelled = 0;
    for (let i = 0; i < 50 && cancelled === 0; i++) {
      await new Promise((r) => setTimeout(r, 20));
      cancelled = JSON.parse((await tool('stats').execute({}, ctx)) as string).cancelled;
    }
    expect(cancelled).toBe(1);
  });

  it('1,000 calls sharing one signal: one listener on it, no warning, and the abort ends them all', async () => {
    const { tool } = await open(mode);
    const warnings: Error[] = [];
    const onWarning = (w: Error) => warnings.push(w);
    process.on('warning', onWarning);
    try {
      const controller = new AbortController();
      const calls = Array.from({ length: 1000 }, () =>
        tool('slow')
          .execute({ ms: 5000 }, ctxWith({ signal: controller.signal }))
          .catch((e) => e),
      );
      await new Promise((r) => setTimeout(r, 50));
      const { getEventListeners } = await import('node:events');
      expect(getEventListeners(controller.signal, 'abort').length).toBe(1);
      controller.abort();
      const outcomes = await Promise.all(calls);
      expect(outcomes.every((e) => e instanceof Error && /was aborted/.test(e.message))).toBe(true);
      expect(getEventListeners(controller.signal, 'abort').length).toBe(0);
      await new Promise((r) => setImmediate(r));
      expect(warnings.filter((w) => w.name === 'MaxListenersExceededWarning')).toEqual([]);
      // Calls that settle on their own take their share of the listener with them.
      const quiet = new AbortController();
      await Promise.all(Array.from({ length: 20 }, () => tool('echo').execute({ text: 'x' }, ctxWith({ signal: quiet.signal }))));
      expect(getEventListeners(quiet.signal, 'abort').length).toBe(0);
    } finally {
      process.off('warning', onWarning);
    }
  }, 30_000);

  it('an already-aborted signal never calls the server', async () => {
    const { tool } = await open(mode);
    const before = JSON.parse((await tool('stats').execute({}, ctx)) as string).calls;
    await expect(tool('echo').execute({ text: 'x' }, ctxWith({ signal: AbortSignal.abort() }))).rejects.toThrow(/aborted/);
    const after = JSON.parse((await tool('stats').execute({}, ctx)) as string).calls;
    expect(after).toBe(before + 1);
  });

  it('a server that dies mid-call fails the call', async () => {
    const { tool } = await open(mode, { timeouts: { callMs: 10_000 } });
    const started = Date.now();
    await expect(tool('die').execute({}, ctx)).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(5000);
  });
});

describe('load', () => {
  it('500 concurrent calls over stdio all resolve correctly', async () => {
    const { tool } = await open('stdio');
    const echo = tool('echo');
    const results = await Promise.all(Array.from({ length: 500 }, (_, i) => echo.execute({ text: `m${i}` }, ctx)));
    expect(results).toEqual(Array.from({ length: 500 }, (_, i) => `m${i}`));
  });

  it('inputs larger than the pipe holds arrive whole and in order, however many are in flight', async () => {
    // 64 KiB pipes: these lines cannot all be written at once, so most wait in the queue
    // behind a partial write; any interleaving would corrupt a line and fail its call.
    const { tool } = await open('stdio');
    const echo = tool('echo');
    const texts = Array.from({ length: 60 }, (_, i) => `${i}:`.padEnd(100_000 + i * 997, String.fromCharCode(97 + (i % 26))));
    const pending: Promise<unknown>[] = [];
    for (const text of texts) {
      pending.push(echo.execute({ text }, ctx));
      // Let the server drain part of the pipe between sends, so a later line could slip in
      // ahead of an earlier one's unwritten rest if the order were not kept.
      await new Promise((r) => setImmediate(r));
    }
    expect(await Promise.all(pending)).toEqual(texts);
    // The connection is still in step afterwards.
    expect(await echo.execute({ text: 'after' }, ctx)).toBe('after');
  });

  it('calls on one source are multiplexed, not serialized', async () => {
    const { tool } = await open('stdio');
    const started = Date.now();
    await Promise.all(Array.from({ length: 10 }, () => tool('slow').execute({ ms: 300 }, ctx)));
    expect(Date.now() - started).toBeLessThan(2000);
  });
});
