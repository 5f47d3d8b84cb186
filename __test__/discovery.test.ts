// The tools/list sweep against real SDK servers, on every transport: cursor pagination with its
// bounds and guards (each a ConfigError naming the source), then admission (filter, schema bytes,
// final names, canonicalization) before any ToolDef is built.
import { describe, expect, it } from 'vitest';
import { ConfigError, mcp } from '../lib/index.js';
import { closeAfterEach, rejection as refusal, session } from './helpers/common.js';
import { MODES, serveScenario } from './helpers/harness.js';

const closing = closeAfterEach();
let source: ReturnType<typeof mcp> | undefined;

async function open(mode: (typeof MODES)[number], scenario: string, extra: Record<string, unknown> = {}) {
  const served = closing(await serveScenario(mode, scenario));
  source = closing(mcp({ ...served.config, ...extra } as any));
  return { source, served };
}

describe.each(MODES)('discovery over %s', (mode) => {
  const id = () => source!.id;

  it('two sources of one server get equal, independent parameters, wire order and numbers kept', async () => {
    const { source, served } = await open(mode, 'exact');
    // An in-process server object serves one connection: the second source gets its twin.
    const twin = mode === 'inprocess' ? await serveScenario(mode, 'exact') : served;
    const second = mcp({ ...twin.config } as any);
    try {
      const [one] = await source.tools(session);
      const [two] = await second.tools(session);
      const wire = {
        type: 'object',
        required: ['z'],
        properties: { z: { type: 'number', maximum: 1e21, minimum: 0.1, multipleOf: 1e-7 }, a: { type: 'integer', maximum: 9007199254740991 } },
      };
      expect(one.parameters).toEqual(wire);
      expect(Object.keys(one.parameters)).toEqual(['type', 'required', 'properties']);
      expect(Object.keys((one.parameters as any).properties)).toEqual(['z', 'a']);
      expect(two.parameters).toEqual(wire);
      // Shared natively, never shared as JS objects: a host editing one import edits only it.
      expect(two.parameters).not.toBe(one.parameters);
      (one.parameters as any).properties.z.maximum = 1;
      expect((two.parameters as any).properties.z.maximum).toBe(1e21);
    } finally {
      await second.close();
      if (twin !== served) await twin.stop();
    }
  });

  it('imports every page and stops at an empty cursor', async () => {
    const { source, served } = await open(mode, 'paginated');
    const defs = await source.tools(session);
    expect(defs.map((d) => d.name)).toEqual(['t0', 't1', 't2', 't3', 't4', 't5']);
    expect(served.listCalls()).toBe(3);
  });

  it('refuses an echoed cursor after exactly 2 list calls', async () => {
    const { source, served } = await open(mode, 'echo');
    const err = await refusal(source.tools(session));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(`mcp: tools/list of '${id()}' returned the cursor it was queried with ('same') on page 2: the pagination makes no progress`);
    expect(served.listCalls()).toBe(2);
  });

  it('refuses an A, B, A cursor cycle after exactly 3 list calls', async () => {
    const { source, served } = await open(mode, 'aba');
    const err = await refusal(source.tools(session));
    expect(err.message).toBe(`mcp: tools/list of '${id()}' returned a cursor this sweep already visited ('A') on page 3: the pagination cycles`);
    expect(served.listCalls()).toBe(3);
  });

  it('stops endless unique cursors at exactly maxPages calls', async () => {
    const { source, served } = await open(mode, 'endless', { maxPages: 4 });
    const err = await refusal(source.tools(session));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(
      `mcp: tools/list of '${id()}' still reports another page after 4 page(s), over the declared maxPages 4; raise the cap or trim the server`,
    );
    expect(served.listCalls()).toBe(4);
  });

  it('counts maxTools before the filter: allow cannot admit past it', async () => {
    const { source } = await open(mode, 'many', { maxTools: 5, allow: ['m0'] });
    const err = await refusal(source.tools(session));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(`mcp: tools/list of '${id()}' returned at least 10 wire tools, over the declared maxTools 5; raise the cap or trim the server`);
  });

  it('applies maxSchemaBytes after the filter', async () => {
    const { source, served } = await open(mode, 'fat', { maxSchemaBytes: 1024, deny: ['fat'] });
    expect((await source.tools(session)).map((d) => d.name)).toEqual(['slim']);
    // One server object connects to one source at a time (in-process).
    await source.close();
    const wide = mcp({ ...served.config, maxSchemaBytes: 1024 } as any);
    try {
      const err = await refusal(wide.tools(session));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/^mcp: tool 'fat' declares \d+ bytes of schema, over the declared maxSchemaBytes 1024; deny the tool or raise the cap$/);
    } finally {
      await wide.close();
    }
  });

  it('stops a slow endless server at the discovery deadline', async () => {
    const { source } = await open(mode, 'slowEndless', { timeouts: { discoveryMs: 30 } });
    const err = await refusal(source.tools(session));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(
      new RegExp(
        `^mcp: tools/list of '${id().replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}' exceeded the discovery deadline \\(timeouts.discoveryMs 30\\) after \\d+ page\\(s\\)`,
      ),
    );
  });

  it('cuts a 2 s page at the remaining discovery budget', async () => {
    const { source } = await open(mode, 'slowSingle', { timeouts: { discoveryMs: 25 } });
    // Connect first, so the clock below measures the sweep alone.
    const started = Date.now();
    const err = await refusal(source.tools(session));
    const elapsed = Date.now() - started;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(
      `mcp: tools/list of '${id()}' exceeded the discovery deadline (timeouts.discoveryMs 25) after 0 page(s): the current page call was cut at the remaining budget`,
    );
    expect(elapsed).toBeLessThan(1500);
  });

  it('times a slow page out at listMs', async () => {
    const { source } = await open(mode, 'slowList', { timeouts: { listMs: 50 } });
    const err = await refusal(source.tools(session));
    expect(err.message).toMatch(/timed out/i);
  });

  it('lists again after a listChanged sent before the first list response', async () => {
    const { source, served } = await open(mode, 'changedBeforeResponse');
    const first = await source.tools(session);
    expect(first.map((d) => d.name)).toEqual(['gen1']);
    const second = await source.tools(session);
    expect(served.listCalls()).toBe(2);
    expect(second.map((d) => d.name)).toEqual(['gen2']);
    expect(second).not.toBe(first);
    expect(await source.tools(session)).toBe(second);
    expect(served.listCalls()).toBe(2);
  });

  it('reports a failed page as an error, never the stale list', async () => {
    const { source, served } = await open(mode, 'failAfterChange');
    expect((await source.tools(session)).map((d) => d.name)).toEqual(['stale']);
    const err = await refusal(source.tools(session));
    expect(err).not.toBeInstanceOf(ConfigError);
    // The server's answer in the SDK client's words, as the original's host saw it.
    expect(err.message).toBe('MCP error -32603: listing is broken now');
    expect([err.name, (err as any).code, (err as any).source]).toEqual(['McpError', -32603, source.id]);
    expect(served.listCalls()).toBe(2);
  });

  it('makes one sweep for concurrent cold calls, all sharing one array', async () => {
    const { source, served } = await open(mode, 'paginated');
    const [a, b, c] = await Promise.all([source.tools(session), source.tools(session), source.tools(session)]);
    expect(a).toBe(b);
    expect(b).toBe(c);
    expect(served.listCalls()).toBe(3);
    expect(await source.tools(session)).toBe(a);
  });
});
