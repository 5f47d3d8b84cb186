// The surfaces a server reaches besides its answers, each against a real server that abuses it
// (fixtures/hostile-asks.mjs, fixtures/hostile-tasks.mjs): its own requests (flooded, with no
// call in flight, on a 2026-07-28 connection where they do not exist), a task that asks for
// input forever, log and progress text carrying secrets and terminal escapes, huge lines that
// once froze the host's event loop, a tool list changed without a word, and a hook wait past
// setTimeout's range.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { mcp } from '../lib/index.js';
import { closeAfterEach, rejection, session } from './helpers/common.js';
import { fixture, runHost } from './helpers/harness.js';

const keep = closeAfterEach();

const hostile = (env: Record<string, string> = {}, extra: Record<string, unknown> = {}) =>
  keep(mcp({ transport: 'stdio', command: process.execPath, args: [fixture('hostile-asks.mjs')], env, stderr: 'ignore', ...extra } as any));

async function toolsOf(source: any) {
  return Object.fromEntries((await source.tools(session)).map((d: any) => [d.name, d]));
}

const sampled = { model: 'm', role: 'assistant', content: { type: 'text', text: 'ok' } };

describe("a server's own requests are bounded", () => {
  it('200 sampling requests at once during one call: at most 5 reach the hook together, the rest are refused, typed', async () => {
    let running = 0;
    let most = 0;
    let calls = 0;
    const source = hostile(
      {},
      {
        sample: async () => {
          calls++;
          running++;
          most = Math.max(most, running);
          await new Promise((r) => setTimeout(r, 30));
          running--;
          return sampled;
        },
      },
    );
    const by = await toolsOf(source);
    const outcome = JSON.parse(await by.flood.execute({}, session));
    // 4, and one for the one call in flight; a burst of 16, and one for it.
    expect(most).toBeLessThanOrEqual(5);
    expect(outcome.ok).toBe(calls);
    expect(outcome.ok).toBeLessThanOrEqual(17);
    expect(outcome.ok + outcome.refused.length).toBe(200);
    expect(outcome.refused.length).toBeGreaterThan(0);
    expect(new Set(outcome.refused)).toEqual(
      new Set(
        [
          "mcp: the client answers at most 4 of the server's requests at once, and one more per tool call in flight",
          'mcp: the server asks faster than the client answers (a burst of 16, then 4 a second, and one more of each per tool call in flight)',
        ].filter((m) => outcome.refused.includes(m)),
      ),
    );
  });

  it('with no call in flight nothing reaches a hook, unless the host opts in; a fixed roots list still answers', async () => {
    let asked = 0;
    const elicit = () => {
      asked++;
      return { action: 'accept', content: { ok: true } };
    };
    const quiet = hostile({ EAGER: '10' }, { elicit });
    const by = await toolsOf(quiet);
    await new Promise((r) => setTimeout(r, 200));
    expect(asked).toBe(0);
    const seen = JSON.parse(await by.seen.execute({}, session));
    expect(seen.errors).toHaveLength(10);
    expect(seen.errors[0].message).toMatch(/only while one of its tool calls is in flight/);
    // During a call the same request is answered.
    expect(JSON.parse(await by.ask.execute({}, session))).toMatchObject({ result: { action: 'accept' } });
    expect(asked).toBe(1);

    asked = 0;
    const open = hostile({ EAGER: '3' }, { elicit, asksOutsideCalls: true });
    await open.tools(session);
    await new Promise((r) => setTimeout(r, 200));
    expect(asked).toBe(3);
  });

  it('on a 2026-07-28 connection a server-initiated request is Method not found, and no hook runs', async () => {
    let asked = 0;
    const source = hostile({ ERA: 'modern' }, { elicit: () => (asked++, { action: 'accept' }) });
    const by = await toolsOf(source);
    const answer = JSON.parse(await by.ask.execute({}, session));
    expect(answer.error.code).toBe(-32601);
    expect(asked).toBe(0);
  });

  it('a task that asks for input forever is cancelled past maxInputRounds', async () => {
    let asked = 0;
    const source = keep(
      mcp({
        transport: 'stdio',
        command: process.execPath,
        args: [fixture('hostile-tasks.mjs')],
        stderr: 'ignore',
        tasks: true,
        protocol: '2026-07-28',
        maxInputRounds: 2,
        sample: () => (asked++, sampled),
      } as any),
    );
    const [t, seenTool] = await source.tools(session);
    const needs = {
      taskId: 'k',
      status: 'input_required',
      pollIntervalMs: 10,
      inputRequests: { a: { method: 'sampling/createMessage', params: { messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }], maxTokens: 5 } } },
    };
    const err = await rejection(t.execute({ key: 'k', handle: { resultType: 'task', ...needs }, polls: [needs] }, session));
    expect(err.message).toBe("mcp: tool 't' asked for input more than 2 times (maxInputRounds); the call ends unanswered");
    expect(asked).toBe(2);
    await new Promise((r) => setTimeout(r, 100));
    expect(JSON.parse(await seenTool.execute({}, session)).cancels).toBe(1);
  });

  it('24 calls each asked at once are all answered (the bounds grow with the calls in flight), through one listener on the closing signal', async () => {
    const { modernAskingServer } = await import('./fixtures/modern-asking.mjs');
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const source = keep(
        mcp({
          transport: 'inprocess',
          server: modernAskingServer(),
          elicit: async () => {
            await new Promise((r) => setTimeout(r, 100));
            return { action: 'accept', content: { confirm: true } };
          },
        } as any),
      );
      const by = await toolsOf(source);
      const deployed = await Promise.all(Array.from({ length: 24 }, (_, i) => by.deploy.execute({ env: `e${i}` }, session)));
      expect(deployed.map((t: string) => JSON.parse(t).deployed)).toEqual(Array.from({ length: 24 }, (_, i) => `e${i}`));
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('a hook is waited on for a callMs past setTimeout’s range (no overflow to 1 ms)', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const source = hostile(
        {},
        {
          timeouts: { callMs: 2 ** 31 + 10 },
          elicit: async () => {
            await new Promise((r) => setTimeout(r, 50));
            return { action: 'accept', content: { ok: true } };
          },
        },
      );
      const by = await toolsOf(source);
      expect(JSON.parse(await by.ask.execute({}, session))).toMatchObject({ result: { action: 'accept', content: { ok: true } } });
      expect(warnings).not.toContain('TimeoutOverflowWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });
});

describe("a server's text reaching the host", () => {
  it('log and progress messages reach ctx.log redacted, escaped and bounded, by one rule', async () => {
    const secret = 'sk-live-0123456789abcdef';
    const source = hostile({ SECRET: secret }, { serverLogs: 'debug' });
    const by = await toolsOf(source);
    const logged: Array<[string, string, any]> = [];
    await by.chatty.execute({}, { runId: 'r', log: (level: string, msg: string, data: any) => logged.push([level, msg, data]) });
    const all = JSON.stringify(logged);
    expect(logged.length).toBeGreaterThanOrEqual(2);
    expect(all).not.toContain(secret);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: what must not reach a terminal
    expect(all).not.toMatch(/[\u001b\u0007\u202e]/);
    expect(logged.map(([, msg]) => msg).join('\n')).toContain('<U+001B>]8;;https://evil.example/<U+0007>click');
  });
});

describe('the stdio reader never holds the host', () => {
  it('huge lines are parsed off the JS thread: no feed() holds it 250 ms, nor does a 10 ms heartbeat stall 500 ms', async () => {
    const lines = Number(process.env.HUGE_LINES ?? 6);
    const run = await runHost(
      `
      // Every chunk of the pipe passes NativeSource.feed on the JS thread: timed, each one.
      const { NativeSource } = require(${JSON.stringify(fileURLToPath(new URL('../lib/native.js', import.meta.url)))});
      const feed = NativeSource.prototype.feed;
      let longestFeed = 0;
      NativeSource.prototype.feed = function (...args) {
        const start = performance.now();
        try {
          return feed.apply(this, args);
        } finally {
          longestFeed = Math.max(longestFeed, performance.now() - start);
        }
      };
      const source = mcp({ transport: 'stdio', command: process.execPath, args: [${JSON.stringify(fixture('hostile-asks.mjs'))}],
        env: { LINES: '${lines}', LINE_MB: '51' }, stderr: 'ignore' });
      const tools = await source.tools({ runId: 'r' });
      const big = tools.find((t) => t.name === 'big');
      let last = performance.now();
      let worst = 0;
      const beat = setInterval(() => {
        const now = performance.now();
        worst = Math.max(worst, now - last);
        last = now;
      }, 10);
      const result = await big.execute({}, { runId: 'r' });
      clearInterval(beat);
      console.log(JSON.stringify({ result, worst, longestFeed }));
      await source.close();
    `,
      120_000,
    );
    expect(run.code, run.out).toBe(0);
    const { result, worst, longestFeed } = JSON.parse(run.out.trim().split('\n').pop()!);
    expect(result).toBe('after the flood');
    // What the addon holds the JS thread for: well under 250 ms per chunk (it held it for
    // seconds while a runtime thread parsed under the line buffer's lock). Both figures are
    // wall time and count the scheduler's delays of a busy 2-core machine (a feed measured
    // 62 ms with a build beside the suite); alone, each stays under 50 ms.
    expect(longestFeed).toBeLessThan(250);
    expect(worst).toBeLessThan(500);
  }, 150_000);
});

describe("drift 'refuse' holds every import to the first", () => {
  it('a server that changes its tools without a word, then drops the connection, is refused at the reconnect', async () => {
    const state = join(mkdtempSync(join(tmpdir(), 'drift-')), 'generation');
    const source = hostile({ STATE: state, VERSION: '2' }, { drift: 'refuse' });
    const first = await toolsOf(source);
    expect(first.extra).toBeUndefined();
    await first.die.execute({}, session).catch(() => {});
    const err = await rejection(source.tools(session));
    expect(err.message).toMatch(/^mcp: the tool list of 'mcp:stdio:.*' changed after import \(listChanged\) and drift policy 'refuse' holds the source closed/);
    // close() lifts it: the new list is imported deliberately.
    await source.close();
    expect((await toolsOf(source)).extra).toBeDefined();
  });
});
