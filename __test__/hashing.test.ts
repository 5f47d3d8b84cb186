import { describe, expect, it } from 'vitest';
import {
  canonicalizeSchema,
  ConfigError,
  jcsSerialize,
  resolveToolset,
  schemaHash,
  toolContractHash,
  toolsetAuthorityHash,
  toolsetHash,
  validateJson,
} from '../lib/index.js';
import { session, thrown } from './helpers/common.js';

describe('jcsSerialize strictness', () => {
  it('omits undefined members and refuses undefined in arrays', () => {
    expect(jcsSerialize({ b: undefined, a: 1 })).toBe('{"a":1}');
    const err = thrown(() => jcsSerialize({ list: [1, undefined] }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe('at $.list[1]: undefined in an array cannot be JSON');
  });
  it('refuses non-finite numbers, functions, symbols and bigints', () => {
    for (const bad of [NaN, Infinity, -Infinity, () => 1, Symbol('s'), 10n]) {
      expect(thrown(() => jcsSerialize({ x: [bad] }))).toBeInstanceOf(ConfigError);
    }
  });
  it('refuses a cycle instead of overflowing', () => {
    const cyclic: any = { a: {} };
    cyclic.a.self = cyclic;
    expect(thrown(() => jcsSerialize(cyclic)).message).toMatch(/cyclic/);
  });
  it('keeps __proto__ as an ordinary member both ways', () => {
    const value = JSON.parse('{"__proto__":{"x":1},"a":2}');
    expect(jcsSerialize(value)).toBe('{"__proto__":{"x":1},"a":2}');
    const canonical: any = canonicalizeSchema(JSON.parse('{"properties":{"__proto__":{"type":"string","title":"t"}}}'));
    expect(Object.getPrototypeOf(canonical.properties)).toBe(Object.prototype);
    expect(Object.keys(canonical.properties)).toEqual(['__proto__']);
    expect(jcsSerialize(canonical)).toBe('{"properties":{"__proto__":{"type":"string"}}}');
  });
});

describe('canonicalization bounds', () => {
  it('refuses a schema nested 10,000 levels deep, typed', () => {
    let schema: any = { type: 'string' };
    for (let i = 0; i < 10_000; i++) schema = { type: 'object', properties: { a: schema } };
    for (const fn of [() => canonicalizeSchema(schema), () => schemaHash(schema)]) {
      const err = thrown(fn);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/deeper than/);
    }
  });

  it('refuses a schema nested just past the canonical depth, typed', () => {
    let schema: any = { type: 'string' };
    for (let i = 0; i < 300; i++) schema = { not: schema };
    expect(thrown(() => canonicalizeSchema(schema)).message).toMatch(/too deep to canonicalize/);
  });

  it('refuses a $ref DAG whose inlined form would exceed 16 MiB, without eating memory', () => {
    const defs: Record<string, unknown> = { d0: { type: 'string', minLength: 1 } };
    for (let i = 1; i <= 40; i++) {
      const prev = { $ref: `#/$defs/d${i - 1}` };
      defs[`d${i}`] = { type: 'object', properties: { a: prev, b: prev } };
    }
    const before = process.memoryUsage().rss;
    const err = thrown(() => canonicalizeSchema({ $ref: '#/$defs/d40', $defs: defs }));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/expands past 16777216 bytes/);
    expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
  });

  it('inlines a small DAG fully', () => {
    const defs: Record<string, unknown> = { d0: { type: 'string' } };
    for (let i = 1; i <= 4; i++) {
      defs[`d${i}`] = { properties: { a: { $ref: `#/$defs/d${i - 1}` }, b: { $ref: `#/$defs/d${i - 1}` } } };
    }
    const text = jcsSerialize(canonicalizeSchema({ $ref: '#/$defs/d4', $defs: defs }));
    expect(text.match(/"type":"string"/g)).toHaveLength(16);
  });
});

describe('hashes over ToolDefs', () => {
  const def = (name: string, extra: Record<string, unknown> = {}) => ({
    kind: 'tool',
    name,
    description: `${name} tool`,
    parameters: { type: 'object', properties: { x: { type: 'string', description: 'ignored' } } },
    executor: 'inprocess',
    needsApproval: false,
    execute: async () => 'ok',
    ...extra,
  });

  it('ignores members outside the contract, execute included', () => {
    const bare = { name: 'a', description: 'a tool', parameters: def('a').parameters };
    expect(toolContractHash(def('a') as any)).toBe(toolContractHash(bare));
    expect(toolsetHash([def('b'), def('a')] as any)).toBe(toolsetHash([def('a'), def('b')] as any));
  });

  it('the authority hash moves with approval and risk, not with order', () => {
    const base = toolsetAuthorityHash([def('a'), def('b')] as any);
    expect(toolsetAuthorityHash([def('b'), def('a')] as any)).toBe(base);
    expect(toolsetAuthorityHash([def('a', { needsApproval: true }), def('b')] as any)).not.toBe(base);
    expect(toolsetAuthorityHash([def('a', { risk: 'write' }), def('b')] as any)).not.toBe(base);
  });

  it('resolveToolset expands sources in order and hashes the result', async () => {
    const source = { id: 's', tools: async () => [def('s_one'), def('s_two')] };
    const resolved = await resolveToolset([def('local') as any, source as any], session);
    expect(resolved.tools.map((t) => t.name)).toEqual(['local', 's_one', 's_two']);
    expect(resolved.contracts[0]).toEqual({
      name: 'local',
      description: 'local tool',
      parameters: def('local').parameters,
    });
    expect(resolved.hash).toBe(toolsetHash(resolved.contracts));
    expect(resolved.authorityHash).toBe(toolsetAuthorityHash(resolved.tools as any));
  });

  it('resolveToolset refuses bad and duplicate names', async () => {
    await expect(resolveToolset([def('has space') as any], session)).rejects.toThrow(
      "imported tool name 'has space' must match ^[a-zA-Z0-9_-]{1,64}$; namespace it with the source prefix option",
    );
    const dup = resolveToolset([def('x') as any, { id: 's', tools: async () => [def('x')] } as any], session);
    await expect(dup).rejects.toBeInstanceOf(ConfigError);
    await expect(resolveToolset([def('x') as any, { id: 's', tools: async () => [def('x')] } as any], session)).rejects.toThrow(
      "duplicate tool name 'x' in one toolset; disambiguate with the MCP prefix option",
    );
  });
});

describe('validateJson', () => {
  const schema = {
    type: 'object',
    properties: { n: { type: 'integer' }, tags: { type: 'array', items: { type: 'string' } } },
    required: ['n'],
    additionalProperties: false,
  };
  it('accepts a valid value', () => {
    expect(validateJson(schema, { n: 1, tags: ['a'] })).toEqual({ valid: true });
  });
  it('names each issue with its path', () => {
    const result = validateJson(schema, { tags: ['a', 2], extra: true });
    expect(result.valid).toBe(false);
    if (result.valid) return;
    const messages = result.issues.map((i) => `${i.path ?? ''} ${i.message}`);
    expect(messages.some((m) => m.includes('"n" is a required property'))).toBe(true);
    expect(result.issues.some((i) => i.path === '/tags/1')).toBe(true);
    expect(messages.some((m) => /extra/.test(m))).toBe(true);
  });
  it('honours $schema (draft-07 tuple items)', () => {
    const d7 = { $schema: 'http://json-schema.org/draft-07/schema#', items: [{ type: 'string' }] };
    expect(validateJson(d7, ['a']).valid).toBe(true);
    expect(validateJson(d7, [1]).valid).toBe(false);
  });
  it('refuses a schema that is not a schema, typed', () => {
    const err = thrown(() => validateJson({ type: 12 }, {}));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/^validateJson: the schema is not a valid JSON Schema/);
  });
});
