// A big import's ToolDefs are handed to JS page by page while the server lists the next (stdio
// and HTTP; an in-process server lists on the JS thread, so it hands over the whole text once):
// the ToolDefs are the same either way, a sweep never takes another's pages, and a sweep that
// fails leaves nothing of its pages behind.
import { createRequire } from 'node:module';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigError, mcp } from '../lib/index.js';
import { bigList } from './fixtures/scenarios.mjs';
import { closeAfterEach, rejection, session } from './helpers/common.js';
import { MODES, serveScenario } from './helpers/harness.js';

const closing = closeAfterEach();
const native = createRequire(import.meta.url)('../lib/native.js');

// How each snapshot's ToolDefs were read: its whole text (`json`), or from the pages already
// parsed on (`from <count>`, and whether the snapshot agreed to write the rest).
const proto = native.NativeSnapshot.prototype;
const { json, jsonFrom } = proto;
let reads: string[] = [];
let asked: { snapshot: any; sweep: number; count: number } | undefined;
proto.json = function (this: unknown) {
  reads.push('json');
  return json.call(this);
};
proto.jsonFrom = function (this: unknown, sweep: number, count: number) {
  asked = { snapshot: this, sweep, count };
  const rest = jsonFrom.call(this, sweep, count);
  reads.push(`from ${count}${rest === null ? ' refused' : ''}`);
  return rest;
};
afterEach(() => {
  reads = [];
  asked = undefined;
});

const config = { prefix: 'p', risk: { b3: 'write', b250: 'destructive' }, approval: { b4: true, b399: true } };

/** The ToolDefs `config` makes of `list`, as the contract words them. */
function expected(list: ReturnType<typeof bigList>) {
  return list.map((t) => ({
    kind: 'tool',
    name: `p_${t.name}`,
    description: t.description,
    parameters: t.inputSchema,
    executor: 'inprocess',
    needsApproval: t.name in config.approval,
    ...(t.name in config.risk ? { risk: (config.risk as Record<string, string>)[t.name] } : {}),
  }));
}
const shown = (defs: any[]) => defs.map(({ execute, ...def }) => def);

describe.each(MODES)('a big import over %s', (mode) => {
  const paged = mode !== 'inprocess';

  it('is read from its pages, a listChanged sweep from its own, and equals the whole text', async () => {
    const served = closing(await serveScenario(mode, 'bigChanged'));
    const source = closing(mcp({ ...served.config, ...config } as any));
    const first = await source.tools(session);
    expect(shown(first)).toEqual(expected(bigList(450, 0)));
    // The listChanged during the sweep kept it from being cached: this sweeps again.
    const second = await source.tools(session);
    expect(second).not.toBe(first);
    expect(shown(second)).toEqual(expected(bigList(451, 1)));
    expect(second.every((d) => typeof d.execute === 'function')).toBe(true);
    await expect(second[449].execute({ f1: 'x' }, session)).resolves.toBe('called b449');
    if (paged) {
      // Each sweep's pages, and only its own: the snapshot wrote at most what had not come.
      expect(reads).toHaveLength(2);
      for (const read of reads) expect(read).toMatch(/^from [1-9]\d*$/);
      // The snapshot writes what the JS side lacks of its own sweep's pages, and nothing for
      // another sweep or for more than it handed over.
      const { snapshot, sweep, count } = asked!;
      const whole = JSON.parse(json.call(snapshot));
      for (const start of [0, 100, count]) expect(JSON.parse(jsonFrom.call(snapshot, sweep, start))).toEqual(whole.slice(start));
      expect(jsonFrom.call(snapshot, sweep - 1, 0)).toBeNull();
      expect(jsonFrom.call(snapshot, sweep + 1, 0)).toBeNull();
      expect(jsonFrom.call(snapshot, sweep, count + 1)).toBeNull();
    } else {
      expect(reads).toEqual(['json', 'json']);
    }
  });

  it('a sweep that fails on its third page imports nothing; the next reads only its own pages', async () => {
    const served = closing(await serveScenario(mode, 'bigBroken'));
    const source = closing(mcp({ ...served.config, ...config } as any));
    const refused = await rejection(source.tools(session));
    expect(refused.message).toMatch(/b207/);
    expect(reads).toEqual([]);
    const defs = await source.tools(session);
    expect(shown(defs)).toEqual(expected(bigList(450, 0)));
    if (paged) expect(reads).toEqual([expect.stringMatching(/^from [1-9]\d*$/)]);
  });
});

it('an import refused past its first pages names the first tool over maxSchemaBytes, and imports nothing', async () => {
  const served = closing(await serveScenario('stdio', 'bigChanged'));
  const source = closing(mcp({ ...served.config, maxSchemaBytes: 163 } as any));
  const bytes = (t: any) => Buffer.byteLength(JSON.stringify(t.inputSchema)) + (t.outputSchema ? Buffer.byteLength(JSON.stringify(t.outputSchema)) : 0);
  const over = bigList(450, 0).find((t) => bytes(t) > 163);
  // On the second page: the first was handed over before the refusal.
  expect(Number(over?.name.slice(1))).toBeGreaterThan(99);
  const refused = await rejection(source.tools(session));
  expect(refused).toBeInstanceOf(ConfigError);
  expect(refused.message).toContain(`tool '${over?.name}' declares ${bytes(over)} bytes of schema, over the declared maxSchemaBytes 163`);
  expect(reads).toEqual([]);
});
