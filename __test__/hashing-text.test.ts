// `toolsetHash` reads large toolsets from their JSON text (lib/hashing.js) and anything it cannot
// be sure of through the strict walk. Both must give the same answer for every input: the same
// hash, or the same refusal.
import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { ConfigError, toolsetHash } from '../lib/index.js';

const native = createRequire(import.meta.url)('../lib/native.js');

/** The strict walk's answer, or the package's, as something `toEqual` compares. */
function outcome(fn: () => string): { hash: string } | { refused: string } {
  try {
    return { hash: fn() };
  } catch (err: any) {
    return { refused: String(err?.message) };
  }
}
const walk = (contracts: unknown) => outcome(() => native.toolsetHash(contracts));
const either = (contracts: unknown) => outcome(() => toolsetHash(contracts as any));

/** The text path alone: `null` when it cannot be sure. */
function fromText(contracts: unknown[], chunk = 100): string | null {
  let at = 0;
  return native.toolsetHashFrom(() => {
    if (at >= contracts.length) return null;
    const part = contracts.slice(at, at + chunk);
    at += chunk;
    return JSON.stringify(part);
  });
}

/** A small seeded generator (mulberry32), so a failure names its seed. */
function random(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const NUMBERS = [0, -0, 1, -1, 0.1, 0.1 + 0.2, 1e21, 1e-7, 5e-324, 2 ** 53 + 2, 2 ** 63, 2 ** 64, -(2 ** 70), 123456789.125, 1.7976931348623157e308];
const STRINGS = ['', 'plain', 'quote " and \\ back', 'tab\tnl\ncr\r', '\u0000\u001f\u007f', 'é ü ß', '日本語', '😀 pair', '\ue000\uffff', 'a\u2028b'];
const KEYS = ['type', 'properties', 'items', 'title', 'description', 'default', 'examples', 'format', 'enum', 'z', 'é', '😀', '\ue000', '10', '2', 'minimum'];

function value(rand: () => number, depth: number): unknown {
  const pick = <T>(list: T[]) => list[Math.floor(rand() * list.length)];
  const r = rand();
  if (depth > 4 || r < 0.35) {
    const s = rand();
    if (s < 0.3) return pick(NUMBERS);
    if (s < 0.7) return pick(STRINGS);
    if (s < 0.85) return rand() < 0.5;
    return null;
  }
  if (r < 0.55) return Array.from({ length: Math.floor(rand() * 4) }, () => value(rand, depth + 1));
  const obj: Record<string, unknown> = rand() < 0.1 ? Object.create(null) : {};
  for (let i = Math.floor(rand() * 5); i > 0; i--) obj[pick(KEYS)] = rand() < 0.1 ? undefined : value(rand, depth + 1);
  return obj;
}

function contracts(seed: number, count: number) {
  const rand = random(seed);
  return Array.from({ length: count }, (_, i) => {
    const c: Record<string, unknown> = {
      name: rand() < 0.9 ? `tool_${Math.floor(rand() * count)}_${i % 7}` : STRINGS[i % STRINGS.length],
      description: rand() < 0.8 ? STRINGS[i % STRINGS.length] : undefined,
      parameters: rand() < 0.9 ? { type: 'object', properties: { a: value(rand, 1), b: value(rand, 1) } } : undefined,
      execute: () => 1,
    };
    if (rand() < 0.3) c.version = rand() < 0.5 ? `${i}.0` : i;
    if (rand() < 0.2)
      c.parameters = {
        $defs: { d: { type: 'string', title: value(rand, 3), enum: [value(rand, 3)] } },
        properties: { x: { $ref: '#/$defs/d', default: value(rand, 3) } },
      };
    return c;
  });
}

describe('toolsetHash from text', () => {
  it('gives the strict walk its hash for random toolsets, over one chunk and over many', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const list = contracts(seed, seed % 4 === 0 ? 900 : 40);
      const expected = walk(list);
      expect(either(list), `seed ${seed}`).toEqual(expected);
      expect(expected, `seed ${seed}`).toHaveProperty('hash');
      // The text path was the one taken, not the walk behind it.
      expect(fromText(list), `seed ${seed}`).toBe((expected as { hash: string }).hash);
    }
  });

  it('hands to the strict walk what JSON.stringify would write differently, with the same answer', () => {
    class Schema {
      type = 'object';
    }
    const deep = (n: number) => {
      let s: any = { type: 'string' };
      for (let i = 0; i < n; i++) s = { type: 'object', properties: { a: s } };
      return s;
    };
    const cyclic: any = { type: 'object' };
    cyclic.properties = { self: cyclic };
    const sparse: unknown[] = [];
    sparse[2] = 'x';
    const hidden = (target: object) => Object.defineProperty(target, 'toJSON', { value: () => ({ type: 'string' }), enumerable: false });
    const cases: Record<string, unknown> = {
      toJSON: { type: 'object', toJSON: () => ({ type: 'string' }) },
      hiddenToJSON: hidden({ type: 'object' }),
      hiddenToJSONOnArray: { enum: hidden([1, 2]) },
      date: { type: 'object', default: new Date(0), properties: { a: { const: new Date(0) } } },
      classInstance: new Schema(),
      boxed: { type: 'object', properties: { a: { const: new Number(3) } } },
      boxedString: { enum: [new String('x')] },
      arraySubclass: { enum: new (class extends Array {})() },
      sparse: { enum: sparse },
      undefinedInArray: { enum: [1, undefined] },
      nan: { minimum: NaN },
      infinity: { maximum: -Infinity },
      fn: { default: () => 1 },
      bigint: { minimum: 10n },
      symbol: { const: Symbol('s') },
      loneSurrogate: { const: '\ud800' },
      loneSurrogateKey: { properties: { '\udc00x': { type: 'string' } } },
      past128Levels: deep(150),
      cyclic,
      badRef: { properties: { a: { $ref: '#/$defs/missing' } } },
      remoteRef: { properties: { a: { $ref: 'https://example.com/s.json' } } },
    };
    // Many tools the text path takes, so that each case sits in a later chunk than the first,
    // read on the reading thread.
    const base = contracts(7, 600);
    expect(fromText(base)).toBe(native.toolsetHash(base));
    for (const [label, parameters] of Object.entries(cases)) {
      const list = [...base, { name: 'zz', description: label, parameters }];
      expect(either(list), label).toEqual(walk(list));
    }
    // A `toJSON` every object inherits.
    const list = [...base, { name: 'zz', description: '', parameters: { type: 'object' } }];
    const proto = Object.prototype as any;
    proto.toJSON = () => 'polluted';
    try {
      expect(either(list)).toEqual(walk(list));
    } finally {
      delete proto.toJSON;
    }
  });

  it('reports the refusal the strict walk reports: the first in the toolset order, not the input order', () => {
    const list = [
      { name: 'b', description: '', parameters: { properties: { x: { $ref: '#/nowhere' } } } },
      ...contracts(3, 600),
      { name: 'a', description: '', parameters: { properties: { x: { $ref: 'other.json' } } } },
    ];
    const expected = walk(list);
    expect(expected).toHaveProperty('refused');
    expect(either(list)).toEqual(expected);
    expect(() => toolsetHash(list as any)).toThrow(ConfigError);
  });

  it('refuses what is not an array of contract objects as the walk does', () => {
    for (const bad of [{}, 'x', null, [1], [null], [() => 1], [{ name: 'a', parameters: undefined }]]) {
      expect(either(bad)).toEqual(walk(bad));
    }
    expect(toolsetHash([])).toBe(native.toolsetHash([]));
  });

  it('a getter that throws is thrown by the walk, as before', () => {
    const list = [
      ...contracts(5, 300),
      {
        name: 'g',
        description: '',
        get parameters() {
          throw new Error('getter says no');
        },
      },
    ];
    expect(either(list)).toEqual({ refused: 'getter says no' });
  });

  it('reads as many contracts as the array held when called, as the walk does, however a getter grows it', () => {
    const list: any[] = contracts(11, 600);
    const grower = {
      name: 'grows',
      description: '',
      get parameters() {
        if (list.length < 5000) list.push({ name: `more_${list.length}`, description: '', parameters: { type: 'object' } });
        return { type: 'object' };
      },
    };
    list.splice(10, 0, grower);
    const before = list.length;
    const walked = walk(list);
    const grownByWalk = list.length - before;
    list.length = before;
    expect(either(list)).toEqual(walked);
    // A contract's own members are read once on either path.
    expect(grownByWalk).toBe(1);
    expect(list.length - before).toBe(grownByWalk);
  });

  it('gives up on a chunk the walk in JS refused, or that is not a JSON array of contracts', () => {
    let calls = 0;
    expect(native.toolsetHashFrom(() => (calls++ < 3 ? JSON.stringify(contracts(9, 300)) : false))).toBeNull();
    expect(calls).toBe(4);
    for (const text of ['{', '{"name":"a"}', '[{"name":"a","parameters":{"x":"\\ud800"}}]']) {
      let done = false;
      expect(native.toolsetHashFrom(() => (done ? null : ((done = true), text)))).toBeNull();
    }
  });
});
