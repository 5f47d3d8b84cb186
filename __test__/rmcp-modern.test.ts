// The rmcp test server (examples/rmcp_server.rs, built with the official Rust SDK) in its
// modern mode: it serves 2026-07-28 only (server/discover, no initialize), and two of its tools
// ask the client back through Multi Round-Trip Requests (`input_required`, `inputRequests`, a
// `requestState` the retry must bring back as issued). rmcp ends a stdio connection once it has
// refused `initialize`, so an `auto` opening is made again on a new process, with
// server/discover. Its legacy mode, unchanged, is checked beside it.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { ConfigError, mcp, protocolOf } from '../lib/index.js';
import { ctx, rejection, session } from './helpers/common.js';
import { liveChildren, waitFor } from './helpers/harness.js';
import { listening, rmcpServerBin } from './helpers/servers.js';

type Source = ReturnType<typeof mcp>;
type Defs = Awaited<ReturnType<Source['tools']>>;
type Recorded = { request: any; ctx: any };

const MODERN_TOOLS = ['echo', 'add', 'fail', 'add_tool', 'confirm', 'brief'];

/** A file the server appends its pid to at each start (RMCP_STARTS). */
const startsFile = () => join(mkdtempSync(join(tmpdir(), 'rmcp-starts-')), 'starts');
const starts = (file: string) => readFileSync(file, 'utf8').trim().split('\n').filter(Boolean).map(Number);

const modern = (extra: Record<string, unknown> = {}, env: Record<string, string> = {}) =>
  mcp({ transport: 'stdio', command: rmcpServerBin(), args: ['stdio', 'modern'], env, stderr: 'ignore', ...extra } as any);

const byName = (defs: Defs) => Object.fromEntries(defs.map((d) => [d.name, d]));
const parsed = (result: unknown) => JSON.parse(result as string);

/** The three hooks, each recording what it was handed. */
function hooks(record: Recorded[], approve = true) {
  return {
    elicit: (request: any, ctx: any) => {
      record.push({ request, ctx });
      return approve ? { action: 'accept', content: { approve: true } } : { action: 'decline' };
    },
    sample: (request: any, ctx: any) => {
      record.push({ request, ctx });
      return { role: 'assistant', content: { type: 'text', text: 'all is well' }, model: 'host-model' };
    },
    roots: [{ uri: 'file:///srv/project', name: 'project' }],
  };
}

let childrenBefore: number[] = [];
beforeEach(() => {
  childrenBefore = liveChildren();
});
const newChildren = () => liveChildren().filter((p) => !childrenBefore.includes(p));

describe('rmcp server, modern mode, over stdio', () => {
  it("imports and calls its tools in 2026-07-28: 'auto' opens again after rmcp ends the refused connection", async () => {
    const file = startsFile();
    const source = modern({}, { RMCP_STARTS: file });
    try {
      expect(protocolOf(source)).toBeUndefined();
      const defs = await source.tools(session);
      expect(defs.map((d) => d.name)).toEqual(MODERN_TOOLS);
      expect(protocolOf(source)).toBe('2026-07-28');
      // The first process refused `initialize` and exited; the second was opened with discover.
      const pids = starts(file);
      expect(pids.length).toBe(2);
      expect(newChildren()).toEqual([pids[1]]);
      const by = byName(defs);
      expect(await by.echo.execute({ text: 'hi' }, ctx)).toBe('hi');
      expect(await by.add.execute({ a: 2, b: 3 }, ctx)).toEqual({ sum: 5 });
      expect((await rejection(by.fail.execute({}, ctx))).message).toBe('it broke');
      expect(await source.tools(session)).toBe(defs);
    } finally {
      await source.close();
    }
    expect(await waitFor(() => newChildren().length === 0)).toBe(true);
  });

  it('remembers the era: a reconnect after the server died opens with server/discover at once', async () => {
    const file = startsFile();
    const source = modern({}, { RMCP_STARTS: file });
    try {
      const first = await source.tools(session);
      expect(starts(file).length).toBe(2);
      process.kill(starts(file)[1], 'SIGKILL');
      // The dead connection invalidates the list; the next import connects again.
      let again = first;
      expect(
        await waitFor(() => {
          void source.tools(session).then(
            (d) => (again = d),
            () => {},
          );
          return again !== first;
        }),
      ).toBe(true);
      expect(again.map((d) => d.name)).toEqual(MODERN_TOOLS);
      expect(protocolOf(source)).toBe('2026-07-28');
      // One process more, not two: no `initialize` was tried on it.
      expect(starts(file).length).toBe(3);
      expect(await byName(again).echo.execute({ text: 'back' }, ctx)).toBe('back');
    } finally {
      await source.close();
    }
  });

  it('pinned to 2026-07-28 it starts one process; pinned to 2025-11-25 it is refused, typed', async () => {
    const file = startsFile();
    const pinned = modern({ protocol: '2026-07-28' }, { RMCP_STARTS: file });
    try {
      expect((await pinned.tools(session)).map((d) => d.name)).toEqual(MODERN_TOOLS);
      expect(starts(file).length).toBe(1);
    } finally {
      await pinned.close();
    }
    const legacy = modern({ protocol: '2025-11-25' });
    try {
      const err = await rejection(legacy.tools(session));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toBe(
        "mcp: 'mcp:stdio:" +
          rmcpServerBin() +
          "' cannot be opened: the server refused protocol 2025-11-25 ('protocol' pins it): MCP error -32022: Unsupported protocol version",
      );
    } finally {
      await legacy.close();
    }
  });

  it('confirm: the elicitation goes to the elicit hook, and the retry brings the answer and the requestState', async () => {
    const record: Recorded[] = [];
    const source = modern(hooks(record));
    try {
      const by = byName(await source.tools(session));
      const first = parsed(await by.confirm.execute({ action: 'deploy' }, { runId: 'run-7' }));
      // What the server read from the retry: the hook's answer, and the state it issued for
      // this call (it refuses a state it did not issue, or one already redeemed).
      expect(first).toEqual({
        tool: 'confirm',
        action: 'deploy',
        answer: 'accept',
        content: { approve: true },
        requestState: 'confirm-round-1-of-call-1',
      });
      expect(record.length).toBe(1);
      expect(record[0].request).toEqual({
        mode: 'form',
        message: 'Approve deploy?',
        requestedSchema: { type: 'object', properties: { approve: { type: 'boolean' } }, required: ['approve'] },
      });
      expect(record[0].ctx.runId).toBe('run-7');
      // Each call is its own exchange, with its own state.
      expect(parsed(await by.confirm.execute({ action: 'rollback' }, ctx))).toMatchObject({
        action: 'rollback',
        requestState: 'confirm-round-1-of-call-2',
      });
      expect(record.map((r) => r.request.message)).toEqual(['Approve deploy?', 'Approve rollback?']);
    } finally {
      await source.close();
    }
  });

  it('confirm: a decline reaches the server as a decline, with no content', async () => {
    const record: Recorded[] = [];
    const source = modern(hooks(record, false));
    try {
      const by = byName(await source.tools(session));
      const said = parsed(await by.confirm.execute({ action: 'deploy' }, ctx));
      expect(said).toEqual({ tool: 'confirm', action: 'deploy', answer: 'decline', content: null, requestState: 'confirm-round-1-of-call-1' });
      expect(record.length).toBe(1);
    } finally {
      await source.close();
    }
  });

  it('brief: a sampling request and the roots, asked in one round, answered by the sample and roots hooks', async () => {
    const record: Recorded[] = [];
    const source = modern(hooks(record));
    try {
      const by = byName(await source.tools(session));
      expect(parsed(await by.brief.execute({ topic: 'the outage' }, ctx))).toEqual({
        tool: 'brief',
        model: 'host-model',
        said: 'all is well',
        roots: ['file:///srv/project'],
        requestState: 'brief-round-1-of-call-1',
      });
      expect(record.length).toBe(1);
      expect(record[0].request).toMatchObject({
        messages: [{ role: 'user', content: { type: 'text', text: 'Summarize the outage.' } }],
        maxTokens: 64,
      });
    } finally {
      await source.close();
    }
  });

  it('without hooks the asking tools fail, naming what the server asked for; the others still work', async () => {
    const source = modern();
    try {
      const by = byName(await source.tools(session));
      expect((await rejection(by.confirm.execute({ action: 'deploy' }, ctx))).message).toBe(
        "mcp: tool 'confirm' needs input from the client that it cannot give (the server asked for elicitation/create)",
      );
      expect((await rejection(by.brief.execute({ topic: 'x' }, ctx))).message).toBe(
        "mcp: tool 'brief' needs input from the client that it cannot give (the server asked for roots/list, sampling/createMessage)",
      );
      expect(await by.echo.execute({ text: 'fine' }, ctx)).toBe('fine');
    } finally {
      await source.close();
    }
  });

  it('with only elicit offered, confirm works and brief fails naming the sampling it cannot give', async () => {
    const record: Recorded[] = [];
    const source = modern({ elicit: hooks(record).elicit });
    try {
      const by = byName(await source.tools(session));
      expect(parsed(await by.confirm.execute({ action: 'ship' }, ctx)).answer).toBe('accept');
      // The entries are answered in the order the server wrote them; the first one no hook
      // can answer ends the call.
      expect((await rejection(by.brief.execute({ topic: 'x' }, ctx))).message).toBe(
        "mcp: tool 'brief' needs input from the client that it cannot give (the server asked for sampling/createMessage)",
      );
    } finally {
      await source.close();
    }
  });

  it('list changes reach the addon through subscriptions/listen', async () => {
    const source = modern();
    try {
      const first = await source.tools(session);
      expect(await source.tools(session)).toBe(first);
      // Announced 100 ms after the call returned, on the listen request's stream only.
      expect(await byName(first).add_tool.execute({ name: 'late', delay_ms: 100 }, ctx)).toBe('late will be added');
      let after = first;
      expect(
        await waitFor(() => {
          void source.tools(session).then((d) => (after = d));
          return after.some((d) => d.name === 'late');
        }, 5000),
      ).toBe(true);
      expect(after.map((d) => d.name)).toEqual([...MODERN_TOOLS, 'late']);
      expect(await byName(after).late.execute({}, ctx)).toBe('late ran');
      expect(first.map((d) => d.name)).toEqual(MODERN_TOOLS);
    } finally {
      await source.close();
    }
  });
});

describe('rmcp server, modern mode, over streamable HTTP', () => {
  it('imports in 2026-07-28, answers confirm through the hook, and follows list changes', async () => {
    const server = await listening(rmcpServerBin(), ['http', 'modern']);
    const record: Recorded[] = [];
    const source = mcp({ transport: 'streamable-http', url: server.url, ...hooks(record) } as any);
    try {
      const first = await source.tools(session);
      expect(first.map((d) => d.name)).toEqual(MODERN_TOOLS);
      expect(protocolOf(source)).toBe('2026-07-28');
      const by = byName(first);
      expect(await by.add.execute({ a: 1, b: 2 }, ctx)).toEqual({ sum: 3 });
      // Each round is its own POST; the state the server issued is what came back.
      expect(parsed(await by.confirm.execute({ action: 'deploy' }, ctx))).toEqual({
        tool: 'confirm',
        action: 'deploy',
        answer: 'accept',
        content: { approve: true },
        requestState: 'confirm-round-1-of-call-1',
      });
      expect(record.length).toBe(1);
      await by.add_tool.execute({ name: 'later', delay_ms: 0 }, ctx);
      let after = first;
      expect(
        await waitFor(() => {
          void source.tools(session).then((d) => (after = d));
          return after.some((d) => d.name === 'later');
        }, 5000),
      ).toBe(true);
    } finally {
      await source.close();
      await server.stop();
    }
  });
});

describe('rmcp server, legacy mode (the default), unchanged', () => {
  it("speaks 2025-11-25 with its four tools, whether 'legacy' is named or not", async () => {
    for (const args of [['stdio'], ['stdio', 'legacy']]) {
      const source = mcp({ transport: 'stdio', command: rmcpServerBin(), args, stderr: 'ignore', ...hooks([]) } as any);
      try {
        const defs = await source.tools(session);
        expect(defs.map((d) => d.name)).toEqual(['echo', 'add', 'fail', 'add_tool']);
        expect(protocolOf(source)).toBe('2025-11-25');
        expect(await byName(defs).echo.execute({ text: 'old' }, ctx)).toBe('old');
      } finally {
        await source.close();
      }
    }
  });
});
