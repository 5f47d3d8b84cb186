// A structured result checked on the JS side (lib/outputcheck.js: the output schema compiled to
// code, run on the value JSON.parse gave) answers exactly as the native validator does. Each
// generated schema is served twice by a real stdio server: as it is, and with a keyword the JS
// compiler does not know (which the native validator ignores), so that tool's results take the
// native path whole. Every value, written as text with the numbers and escapes the two parsers
// read differently, must resolve to the same value or reject with the same message through both.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { mcp } from '../lib/index.js';
import { compileCheck } from '../lib/outputcheck.js';
import { closeAfterEach, ctx, rejection, seeded, session } from './helpers/common.js';
import { fixture } from './helpers/harness.js';

const closing = closeAfterEach();
const dir = mkdtempSync(join(tmpdir(), 'outputcheck-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Random = ReturnType<typeof seeded>;

const KEYS = ['a', 'b', 'n', 's', '__proto__', 'é'];
const TYPES = ['null', 'boolean', 'object', 'array', 'number', 'integer', 'string'];
const NUMBERS = [0, -0, 1, 2, 3, 1.5, -2, 0.1, 100, 999999999999999, -7.25];
const STRINGS = ['', 'a', 'ab', 'é', '😀', 'x y', 'abc'];
// What the JS compiler leaves to the native path: a schema with any of these gets no check.
const ELSEWHERE: Record<string, unknown>[] = [
  { pattern: '^a' },
  { format: 'date' },
  { multipleOf: 2 },
  { not: { type: 'string' } },
  { oneOf: [{ type: 'string' }, { type: 'number' }] },
  { uniqueItems: true },
  { exclusiveMinimum: true, minimum: 1 },
];

// Admission takes a boolean schema only where a keyword's value may be one of its own. The
// keywords of a type mostly come with it (a `minLength` where strings are), sometimes not.
function schemaOf(r: Random, depth: number, bool = false, root = false): any {
  if (!root && (depth > 3 || r.chance(0.08))) return r.pick([...(bool ? [true, false] : []), {}, { type: r.pick(TYPES) }]);
  const s: Record<string, unknown> = {};
  const type = root ? 'object' : r.pick(TYPES);
  if (root || r.chance(0.7)) s.type = root || r.chance(0.85) ? type : [type, r.pick(TYPES)];
  const near = (t: string[], p: number) => r.chance(t.includes(type) ? p : p / 6);
  if (near(['object'], 0.7)) {
    const properties: Record<string, unknown> = {};
    for (let i = r.int(4) + 1; i > 0; i--) properties[r.pick(KEYS)] = schemaOf(r, depth + 1);
    s.properties = properties;
  }
  if (near(['object'], 0.4)) s.required = [r.pick(KEYS), r.pick(KEYS)].slice(0, r.int(2) + 1);
  if (near(['object'], 0.3)) s.additionalProperties = r.chance(0.4) ? r.chance(0.5) : schemaOf(r, depth + 1, true);
  if (near(['object'], 0.2)) s[r.pick(['minProperties', 'maxProperties'])] = r.int(3);
  if (near(['array'], 0.6)) s.items = schemaOf(r, depth + 1);
  if (near(['array'], 0.3)) s[r.pick(['minItems', 'maxItems'])] = r.int(3);
  if (near(['string'], 0.5)) s[r.pick(['minLength', 'maxLength'])] = r.int(4);
  if (near(['number', 'integer'], 0.6)) s[r.pick(['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'])] = r.pick(NUMBERS);
  if (r.chance(0.12)) s.enum = [r.pick(NUMBERS), r.pick(STRINGS), r.pick([null, true, false])];
  if (r.chance(0.06)) s.const = r.pick([...NUMBERS, ...STRINGS, null, true]);
  if (r.chance(0.1)) s.allOf = [schemaOf(r, depth + 1, true), schemaOf(r, depth + 1)];
  if (r.chance(0.12)) s.anyOf = [schemaOf(r, depth + 1, true), schemaOf(r, depth + 1)];
  if (r.chance(0.1)) s.description = 'annotated';
  if (r.chance(0.05)) Object.assign(s, r.pick(ELSEWHERE));
  return s;
}

/** A value for `schema` as JSON text: often close to valid, with the numbers and strings written several ways. */
function textFor(r: Random, schema: any, depth: number): string {
  const shaped = typeof schema === 'object' && schema !== null && r.chance(0.8);
  const declared = shaped ? [schema.type].flat().filter((t) => typeof t === 'string') : [];
  const type = declared.length > 0 ? r.pick(declared) : r.pick(depth > 3 ? ['number', 'string', 'null'] : TYPES);
  switch (type) {
    case 'null':
      return 'null';
    case 'boolean':
      return r.pick(['true', 'false']);
    case 'integer':
    case 'number': {
      // A bound itself, as written or with a fraction of zero: where > and >= part.
      const bounds = shaped ? ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum'].map((k) => schema[k]).filter((b) => typeof b === 'number') : [];
      if (bounds.length > 0 && r.chance(0.5)) {
        const bound = r.pick(bounds);
        return Number.isInteger(bound) && r.chance(0.5) ? `${bound}.0` : Object.is(bound, -0) ? '-0' : String(bound);
      }
      return r.pick([
        '0',
        '-0',
        '1',
        '1.0',
        '2',
        '1.5',
        '-3',
        '100',
        '1e2',
        '2.5E-1',
        '0.1',
        '999999999999999',
        '9007199254740993',
        '-12345678901234567890',
        '3.000000000000000001',
      ]);
    }
    case 'string':
      return r.pick([
        '""',
        '"a"',
        '"ab"',
        '"abc"',
        '"abcd"',
        '"é"',
        '"éé"',
        '"\\u00e9"',
        '"😀"',
        '"😀😀"',
        '"a😀"',
        '"\\ud83d\\ude00"',
        '"x\\ny"',
        '"\\"q\\""',
      ]);
    case 'array': {
      const items = Array.from({ length: r.int(4) }, () => textFor(r, shaped ? schema.items : undefined, depth + 1));
      return `[${items.join(',')}]`;
    }
    default: {
      const members: string[] = [];
      const named = shaped && typeof schema.properties === 'object' ? Object.keys(schema.properties) : [];
      for (const key of [...named, ...KEYS.slice(0, r.int(3))]) {
        if (!r.chance(0.75)) continue;
        members.push(`${JSON.stringify(key)}:${textFor(r, shaped ? schema.properties?.[key] : undefined, depth + 1)}`);
      }
      // A repeated key now and then: the last one counts, in both parsers.
      if (members.length > 0 && r.chance(0.1)) members.push(members[0].replace(/:.*/s, `:${textFor(r, undefined, depth + 1)}`));
      return `{${members.join(',')}}`;
    }
  }
}

async function outcome(promise: Promise<unknown>) {
  try {
    return { value: await promise };
  } catch (err) {
    return { error: (err as Error).message };
  }
}

describe('the JS check of structured results', () => {
  it('answers every generated schema and value exactly as the native validator does', async () => {
    const r = seeded(20261205);
    const schemas = Array.from({ length: 400 }, () => schemaOf(r, 0, false, true));
    const tools = schemas.flatMap((schema, i) => [
      { name: `js${i}`, inputSchema: { type: 'object' }, outputSchema: schema },
      { name: `native${i}`, inputSchema: { type: 'object' }, outputSchema: { ...schema, 'x-native': true } },
    ]);
    const file = join(dir, 'tools.json');
    writeFileSync(file, JSON.stringify(tools));
    const source = closing(mcp({ transport: 'stdio', command: process.execPath, args: [fixture('structured-stdio.mjs')], env: { TOOLS: file } } as any));
    const defs = await source.tools(session);
    const byName = new Map(defs.map((d) => [d.name, d]));
    let compiled = 0;
    let accepted = 0;
    let refused = 0;
    for (const [i, schema] of schemas.entries()) {
      const check = compileCheck(JSON.stringify(schema));
      if (check !== null) compiled++;
      expect(compileCheck(JSON.stringify({ ...schema, 'x-native': true }))).toBeNull();
      for (let v = 0; v < 16; v++) {
        const raw = textFor(r, schema, 0);
        const [viaJs, viaNative] = await Promise.all([
          outcome(byName.get(`js${i}`)!.execute({ raw }, ctx)),
          outcome(byName.get(`native${i}`)!.execute({ raw }, ctx)),
        ]);
        // The native tool's name is in its refusal; the JS one's is the same otherwise.
        if ('error' in viaNative) viaNative.error = viaNative.error!.replace(`'native${i}'`, `'js${i}'`);
        expect(viaJs, `${JSON.stringify(schema)} on ${raw}`).toEqual(viaNative);
        if (check !== null && 'value' in viaJs) accepted++;
        if ('error' in viaJs) refused++;
      }
    }
    // The cases reach both sides of the check, and most schemas compile to one.
    expect(compiled).toBeGreaterThan(schemas.length / 2);
    expect(accepted).toBeGreaterThan(200);
    expect(refused).toBeGreaterThan(200);
  }, 60_000);

  it('compiles nothing a schema writes into code', () => {
    const hostile = '"]);process.exit(7);//';
    const check = compileCheck(
      JSON.stringify({
        type: 'object',
        properties: { [hostile]: { enum: [hostile, 1], description: hostile } },
        required: [hostile],
        additionalProperties: { const: hostile },
      }),
    )!;
    expect(check).not.toBeNull();
    expect(check({ [hostile]: hostile })).toBe(true);
    expect(check({ [hostile]: 1, other: hostile })).toBe(true);
    expect(check({ [hostile]: 2 })).toBe(false);
    expect(check({ other: hostile })).toBe(false);
    // Numbers are written as numbers or not at all; keywords it does not know leave it uncompiled.
    expect(compileCheck('{"type":"object","maximum":"1;process.exit(7)"}')).toBeNull();
    expect(compileCheck('{"type":"object","properties":{"a":{"maximum":9007199254740993}}}')).toBeNull();
    expect(compileCheck('{"type":"object","$schema":"http://json-schema.org/draft-04/schema#"}')).toBeNull();
    expect(compileCheck('{"type":"object","x":{"properties":{}}}')).toBeNull();
    // Too large or too deep to be worth its code: the native path.
    expect(compileCheck(JSON.stringify({ type: 'object', description: 'd'.repeat(70_000) }))).toBeNull();
    let deep: any = { type: 'string' };
    for (let i = 0; i < 40; i++) deep = { type: 'object', properties: { a: deep } };
    expect(compileCheck(JSON.stringify(deep))).toBeNull();
  });

  it('reads own members only, whatever Object.prototype holds', () => {
    const check = compileCheck(
      '{"type":"object","properties":{"__proto__":{"type":"string"},"toString":{"type":"number"},"extra":{"type":"string"}},"required":["__proto__","toString","extra"]}',
    )!;
    expect(check(JSON.parse('{"__proto__":"x","toString":1,"extra":"e"}'))).toBe(true);
    expect(check(JSON.parse('{"toString":1,"extra":"e"}'))).toBe(false);
    expect(check(JSON.parse('{"__proto__":"x","extra":"e"}'))).toBe(false);
    expect(check(JSON.parse('{"__proto__":1,"toString":1,"extra":"e"}'))).toBe(false);
    // A member a host put on Object.prototype after the check was compiled is not the value's.
    Object.defineProperty(Object.prototype, 'extra', { value: 'inherited', configurable: true, writable: true });
    try {
      expect(check(JSON.parse('{"__proto__":"x","toString":1}'))).toBe(false);
    } finally {
      delete (Object.prototype as any).extra;
    }
  });

  it('settles a flood of refused results, a huge accepted one, and calls in flight at close()', async () => {
    const schema = { type: 'object', properties: { items: { type: 'array', items: { type: 'integer', maximum: 9 } } }, required: ['items'] };
    const file = join(dir, 'hostile.json');
    writeFileSync(file, JSON.stringify([{ name: 'typed', inputSchema: { type: 'object' }, outputSchema: schema }]));
    const open = () =>
      mcp({
        transport: 'stdio',
        command: process.execPath,
        args: [fixture('structured-stdio.mjs')],
        env: { TOOLS: file },
        timeouts: { callMs: 20_000 },
      } as any);
    const source = closing(open());
    const [typed] = await source.tools(session);
    expect(compileCheck(JSON.stringify(schema))).not.toBeNull();
    // 2,000 refusals at once, each asked of the native validator in the batch it came in.
    const refused = await Promise.all(Array.from({ length: 2000 }, (_, i) => rejection(typed.execute({ raw: `{"items":[1,${10 + i}]}` }, ctx))));
    expect(refused.map((err) => err.message)).toEqual(
      refused.map(
        (_, i) =>
          `mcp: tool 'typed' returned structured content that does not match its output schema: at /items/1: ${10 + i} is greater than the maximum of 9`,
      ),
    );
    // 200,000 items (about 400 KB) checked and accepted; one past the bound among them refused.
    const many = Array.from({ length: 200_000 }, (_, i) => i % 10);
    expect(await typed.execute({ raw: JSON.stringify({ items: many }) }, ctx)).toEqual({ items: many });
    many[199_999] = 99;
    expect((await rejection(typed.execute({ raw: JSON.stringify({ items: many }) }, ctx))).message).toMatch(/at \/items\/199999: 99 is greater/);
    // Calls whose answers are still on their way when the source closes: every one settles.
    const second = open();
    const [late] = await second.tools(session);
    const inFlight = Array.from({ length: 100 }, () => rejection(late.execute({ raw: '{"items":[1]}', delayMs: 300 }, ctx)));
    await second.close();
    for (const err of await Promise.all(inFlight)) expect(err.message).toMatch(/^mcp: tool 'typed' failed: .* was closed$/);
  });

  it('leaves to the native path a result both parsers would not read alike', async () => {
    const schema = { type: 'object', properties: { n: { type: 'number', maximum: 10 }, s: { type: 'string', maxLength: 1 } } };
    const file = join(dir, 'exotic.json');
    writeFileSync(file, JSON.stringify([{ name: 'typed', inputSchema: { type: 'object' }, outputSchema: schema }]));
    const source = closing(
      mcp({ transport: 'stdio', command: process.execPath, args: [fixture('structured-stdio.mjs')], env: { TOOLS: file }, timeouts: { callMs: 500 } } as any),
    );
    const [typed] = await source.tools(session);
    expect(compileCheck(JSON.stringify(schema))).not.toBeNull();
    // JSON.parse reads 1e400 as Infinity and keeps a lone surrogate; the native parser refuses
    // both, so neither may be handed on as valid.
    for (const raw of ['{"n":-1e400}', '{"s":"\\ud800"}']) {
      const err = await rejection(typed.execute({ raw }, ctx));
      expect(err.message, raw).not.toMatch(/does not match/);
    }
    // A paired escape and a number with an exponent are read alike, decided natively all the same.
    expect(await typed.execute({ raw: '{"s":"\\ud83d\\ude00","n":1e1}' }, ctx)).toEqual({ s: '😀', n: 10 });
    const over = await rejection(typed.execute({ raw: '{"n":1.1e1}' }, ctx));
    expect(over.message).toMatch(
      /^mcp: tool 'typed' returned structured content that does not match its output schema: at \/n: 11(\.0)? is greater than the maximum of 10/,
    );
  });
});
