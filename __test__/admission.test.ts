// What admission takes and refuses, as the original does: schemas of every JSON Schema dialect,
// the MCP Tool shape of a page, which refusal is reported first, and format checks of results.
import { describe, expect, it } from 'vitest';
import { ConfigError, mcp, unvalidatedReasons } from '../lib/index.js';
import { ctx, rejection, session } from './helpers/common.js';

type Page = { tools: unknown[]; nextCursor?: unknown };

/**
 * An in-process server speaking raw JSON-RPC: it answers tools/list with the pages given
 * (by cursor: page i is asked for with cursor `p<i>`) and tools/call with `call(name, args)`.
 * Nothing in it checks what it sends, so it can send what an SDK server would not.
 */
function rawServer(pages: Page[], call: (name: string, args: any) => unknown = () => ({ content: [] })) {
  return {
    async connect(transport: any) {
      transport.onmessage = (msg: any) => {
        const reply = (result: unknown) => void transport.send({ jsonrpc: '2.0', id: msg.id, result });
        if (msg.method === 'initialize') {
          reply({ protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'raw', version: '0' } });
        } else if (msg.method === 'tools/list') {
          const cursor = msg.params?.cursor;
          reply(pages[cursor === undefined ? 0 : Number(String(cursor).slice(1))]);
        } else if (msg.method === 'tools/call') {
          reply(call(msg.params.name, msg.params.arguments));
        }
      };
      await transport.start();
    },
  };
}

async function importTools(pages: Page[], extra: Record<string, unknown> = {}, call?: (name: string, args: any) => unknown) {
  const source = mcp({ transport: 'inprocess', server: rawServer(pages, call), ...extra } as any);
  try {
    return { defs: await source.tools(session), source };
  } catch (err) {
    await source.close();
    throw err;
  }
}

/** The refusal of importing `pages`; an import that succeeds is closed and fails the test. */
const refusal = (pages: Page[], extra: Record<string, unknown> = {}): Promise<Error> =>
  rejection(importTools(pages, extra).then(({ source }) => source.close()));

const tool = (name: string, inputSchema: unknown, more: Record<string, unknown> = {}) => ({ name, description: 'd', inputSchema, ...more });

describe('schema dialects', () => {
  // Each case: a schema, a value it admits, a value it refuses, in the dialect's meaning.
  const cases: Array<[string, Record<string, unknown>, unknown, unknown]> = [
    [
      'draft-07 array items, no $schema',
      { type: 'object', properties: { p: { type: 'array', items: [{ type: 'string' }, { type: 'number' }] } } },
      { p: ['a', 1] },
      { p: [1, 'a'] },
    ],
    [
      'draft-07 additionalItems',
      { type: 'object', properties: { p: { type: 'array', items: [{ type: 'string' }], additionalItems: false } } },
      { p: ['a'] },
      { p: ['a', 'b'] },
    ],
    ['draft-07 dependencies', { type: 'object', properties: { a: {}, b: {} }, dependencies: { a: ['b'] } }, { a: 1, b: 2 }, { a: 1 }],
    [
      'draft-07 definitions only',
      { type: 'object', properties: { p: { $ref: '#/definitions/S' } }, definitions: { S: { type: 'string' } } },
      { p: 'x' },
      { p: 1 },
    ],
    [
      '$schema draft-04',
      { $schema: 'http://json-schema.org/draft-04/schema#', type: 'object', properties: { n: { type: 'number', maximum: 5, exclusiveMaximum: true } } },
      { n: 4 },
      { n: 5 },
    ],
    [
      '$schema draft-06',
      { $schema: 'http://json-schema.org/draft-06/schema#', type: 'object', properties: { n: { type: 'number', exclusiveMaximum: 5 } } },
      { n: 4 },
      { n: 5 },
    ],
    [
      '$schema draft-07 with array items',
      { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object', properties: { p: { items: [{ type: 'string' }] } } },
      { p: ['a'] },
      { p: [1] },
    ],
    [
      '$schema 2019-09',
      { $schema: 'https://json-schema.org/draft/2019-09/schema', type: 'object', properties: { p: { type: 'array', items: [{ type: 'string' }] } } },
      { p: ['a', 2] },
      { p: [1] },
    ],
    [
      '2020-12 prefixItems, no $schema',
      { type: 'object', properties: { p: { type: 'array', prefixItems: [{ type: 'string' }], items: false } } },
      { p: ['a'] },
      { p: ['a', 'b'] },
    ],
    [
      '2020-12 $defs and dependentRequired',
      { type: 'object', properties: { a: { $ref: '#/$defs/S' }, b: {} }, dependentRequired: { a: ['b'] }, $defs: { S: { type: 'string' } } },
      { a: 'x', b: 1 },
      { a: 'x' },
    ],
    [
      '$schema 2020-12',
      { $schema: 'https://json-schema.org/draft/2020-12/schema', type: 'object', properties: { p: { type: 'string', minLength: 2 } } },
      { p: 'ab' },
      { p: 'a' },
    ],
    [
      'an unused $defs entry with a remote $ref',
      { type: 'object', properties: { p: { type: 'string' } }, $defs: { Unused: { $ref: 'https://example.invalid/never.json' } } },
      { p: 'x' },
      { p: 1 },
    ],
  ];

  for (const [label, schema, good, bad] of cases) {
    it(`admits and validates input: ${label}`, async () => {
      const calls: unknown[] = [];
      const { defs, source } = await importTools([{ tools: [tool('t', schema)] }], {}, (_n, args) => {
        calls.push(args);
        return { content: [{ type: 'text', text: 'ok' }] };
      });
      try {
        expect(defs[0].parameters).toEqual(schema);
        expect(await defs[0].execute(good as any, ctx)).toBe('ok');
        await expect(defs[0].execute(bad as any, ctx)).rejects.toThrow(/invalid input for tool 't'/);
        expect(calls).toEqual([good]);
      } finally {
        await source.close();
      }
    });
  }

  // Identity hashing canonicalizes input schemas, resolving `#name` through `$anchor` only and
  // refusing references to other documents: the original refuses these as input schemas too.
  // As output schemas (not canonicalized) they are read in draft-07's meaning.
  const outputOnly: typeof cases = [
    ['draft-07 #name id', { type: 'object', properties: { p: { $ref: '#s' } }, definitions: { S: { $id: '#s', type: 'string' } } }, { p: 'x' }, { p: 1 }],
    [
      'draft-07 meta-schema reference',
      { type: 'object', properties: { schema: { $ref: 'http://json-schema.org/draft-07/schema#' } } },
      { schema: { type: 'string' } },
      { schema: { type: 12 } },
    ],
  ];

  for (const [label, schema] of outputOnly) {
    it(`refuses as an input schema, as the original does: ${label}`, async () => {
      const err = await refusal([{ tools: [tool('t', schema)] }]);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/^mcp: tool 't' has an input schema that cannot be canonicalized: /);
    });
  }

  for (const [label, schema, good, bad] of [...cases, ...outputOnly]) {
    it(`admits and validates structured output: ${label}`, async () => {
      let answer: unknown = good;
      const { defs, source } = await importTools([{ tools: [tool('t', { type: 'object' }, { outputSchema: schema })] }], {}, () => ({
        content: [],
        structuredContent: answer,
      }));
      try {
        expect(await defs[0].execute({}, ctx)).toEqual(good);
        answer = bad;
        await expect(defs[0].execute({}, ctx)).rejects.toThrow(/does not match its output schema/);
      } finally {
        await source.close();
      }
    });
  }

  it('a schema the validator cannot compile is admitted, its input sent unvalidated, and inspect says why', async () => {
    // A pattern no regex engine here accepts: the original has no validator for it either.
    const schema = { type: 'object', properties: { p: { type: 'string', pattern: '(' } } };
    const calls: unknown[] = [];
    const { defs, source } = await importTools([{ tools: [tool('t', schema)] }], {}, (_n, args) => {
      calls.push(args);
      return { content: [{ type: 'text', text: 'sent' }] };
    });
    try {
      expect(await defs[0].execute({ p: 12 } as any, ctx)).toBe('sent');
      expect(calls).toEqual([{ p: 12 }]);
      expect(unvalidatedReasons(defs[0])?.input).toMatch(/is not a "regex"/);
      expect(Object.keys(defs[0])).not.toContain('unvalidated');
    } finally {
      await source.close();
    }
  });

  it('says why a schema has no validator before any call, for input and output, and only for those', async () => {
    // Validators are compiled when first needed: asking is what compiles these.
    const bad = { type: 'object', properties: { p: { type: 'string', pattern: '(' } } };
    const { defs, source } = await importTools(
      [{ tools: [tool('in', bad), tool('out', { type: 'object' }, { outputSchema: { ...bad } }), tool('fine', { type: 'object' })] }],
      {},
      () => ({ content: [] }),
    );
    try {
      const [input, output, fine] = defs.map((d) => unvalidatedReasons(d));
      expect(input?.input).toMatch(/is not a "regex"/);
      expect(input?.output).toBeUndefined();
      expect(output?.output).toMatch(/is not a "regex"/);
      expect(output?.input).toBeUndefined();
      expect(fine).toBeUndefined();
      expect(unvalidatedReasons(defs[0])).toBe(input);
      expect(unvalidatedReasons({ ...defs[0] })).toBeUndefined();
    } finally {
      await source.close();
    }
  });

  it('an output schema whose reference cannot resolve is refused typed, naming the tool', async () => {
    const err = await refusal([
      { tools: [tool('t', { type: 'object' }, { outputSchema: { type: 'object', properties: { p: { $ref: 'https://example.invalid/x.json' } } } })] },
    ]);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe("mcp: tool 't' has an output schema whose reference 'https://example.invalid/x.json' cannot be resolved");
    const local = await refusal([
      { tools: [tool('t', { type: 'object' }, { outputSchema: { type: 'object', properties: { p: { $ref: '#/$defs/Missing' } } } })] },
    ]);
    expect(local.message).toMatch(/reference '#\/\$defs\/Missing' cannot be resolved/);
  });
});

describe('the MCP Tool shape of a page', () => {
  const shapes: Array<[string, Record<string, unknown>, RegExp]> = [
    ['a numeric description', { description: 5 }, /tool 'bad' has a 'description' that is not a string/],
    ['a null description', { description: null }, /tool 'bad' has a 'description' that is not a string/],
    ['a numeric title', { title: 1 }, /'title' that is not a string/],
    ['required that is not an array', { inputSchema: { type: 'object', required: 'x' } }, /an 'inputSchema' whose 'required' is not an array of strings/],
    ['properties that is not an object', { inputSchema: { type: 'object', properties: [] } }, /an 'inputSchema' whose 'properties' is not an object/],
    ['a property that is not an object', { inputSchema: { type: 'object', properties: { a: true } } }, /whose 'properties' has a member that is not an object/],
    ['an output schema without type object', { outputSchema: { type: 'string' } }, /an 'outputSchema' that is not an object schema/],
    ['a null output schema', { outputSchema: null }, /an 'outputSchema' that is not an object schema/],
    ['annotations that are not an object', { annotations: 'x' }, /'annotations' that is not an object/],
    ['a hint that is not a boolean', { annotations: { readOnlyHint: 'yes' } }, /'annotations.readOnlyHint' that is not a boolean/],
    ['_meta that is not an object', { _meta: 1 }, /a '_meta' that is not an object/],
  ];
  for (const [label, fields, message] of shapes) {
    it(`refuses ${label}, typed, naming the tool and the field`, async () => {
      const err = await refusal([{ tools: [tool('ok', { type: 'object' }), { ...tool('bad', { type: 'object' }), ...fields }] }]);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/^mcp: tools\/list of 'mcp:inprocess' returned a malformed page 1: /);
      expect(err.message).toMatch(message);
    });
  }

  it('a denied tool is held to the shape too (the page is checked as listed)', async () => {
    const err = await refusal([{ tools: [{ ...tool('bad', { type: 'object' }), description: 5 }] }], { deny: ['bad'] });
    expect(err.message).toMatch(/tool 'bad' has a 'description' that is not a string/);
  });

  it('a null nextCursor is refused, an empty one ends the sweep', async () => {
    const err = await refusal([{ tools: [], nextCursor: null }]);
    expect(err.message).toMatch(/'nextCursor' is not a string/);
    const { defs, source } = await importTools([{ tools: [tool('a', { type: 'object' })], nextCursor: '' }]);
    expect(defs.map((d) => d.name)).toEqual(['a']);
    await source.close();
  });
});

describe('which refusal comes first', () => {
  it('maxSchemaBytes over every admitted tool before the name pattern', async () => {
    const err = await refusal(
      [{ tools: [tool('bad name', { type: 'object' }), tool('big', { type: 'object', properties: { abcdefgh: { type: 'string' } } })] }],
      { maxSchemaBytes: 20 },
    );
    expect(err.message).toBe("mcp: tool 'big' declares 61 bytes of schema, over the declared maxSchemaBytes 20; deny the tool or raise the cap");
  });

  it('a later page over maxTools before an earlier page’s bad name', async () => {
    const err = await refusal(
      [{ tools: [tool('bad name', { type: 'object' })], nextCursor: 'p1' }, { tools: [tool('a', { type: 'object' }), tool('b', { type: 'object' })] }],
      { maxTools: 2 },
    );
    expect(err.message).toMatch(/returned at least 3 wire tools, over the declared maxTools 2/);
  });

  it('a malformed later page before an earlier page’s bad name and schema bytes', async () => {
    const err = await refusal(
      [
        { tools: [tool('bad name', { type: 'object', properties: { abcdefghijkl: {} } })], nextCursor: 'p1' },
        { tools: [{ name: 'x', description: 5, inputSchema: { type: 'object' } }] },
      ],
      { maxSchemaBytes: 10 },
    );
    expect(err.message).toMatch(/malformed page 2: tool 'x' has a 'description'/);
  });

  it("an unresolvable output schema on page 1 before page 1's maxTools, a page-2 one after it", async () => {
    const broken = tool('o', { type: 'object' }, { outputSchema: { type: 'object', properties: { p: { $ref: '#/nope' } } } });
    const first = await refusal([{ tools: [broken, tool('a', { type: 'object' })] }], { maxTools: 1 });
    expect(first.message).toMatch(/tool 'o' has an output schema whose reference/);
    const later = await refusal([{ tools: [tool('a', { type: 'object' }), tool('b', { type: 'object' })], nextCursor: 'p1' }, { tools: [broken] }], {
      maxTools: 1,
    });
    expect(later.message).toMatch(/over the declared maxTools 1/);
  });

  it('the name pattern and canonicalization tool by tool, in order', async () => {
    const recursive = { type: 'object', properties: { a: { $ref: '#' } } };
    const canon = await refusal([{ tools: [tool('rec', recursive), tool('bad name', { type: 'object' })] }]);
    expect(canon.message).toMatch(/tool 'rec' has an input schema that cannot be canonicalized/);
    const name = await refusal([{ tools: [tool('bad name', recursive), tool('rec', recursive)] }]);
    expect(name.message).toMatch(/imported tool name 'bad name'/);
  });
});

describe('formats in structured results', () => {
  const formats: Array<[string, string, string]> = [
    ['date-time', '2026-12-01T02:00:00Z', 'yesterday'],
    ['email', 'a@example.com', 'not an email'],
    ['uri', 'https://example.com/x', 'not a uri'],
    ['uuid', '123e4567-e89b-12d3-a456-426614174000', '123'],
    ['ipv4', '127.0.0.1', '999.1.1.1'],
  ];
  for (const [format, good, bad] of formats) {
    it(`a '${format}' result is checked; input with the same schema is not`, async () => {
      const schema = { type: 'object', properties: { v: { type: 'string', format } } };
      let v = good;
      const { defs, source } = await importTools([{ tools: [tool('t', schema, { outputSchema: schema })] }], {}, () => ({
        content: [],
        structuredContent: { v },
      }));
      try {
        expect(await defs[0].execute({ v: bad }, ctx)).toEqual({ v: good });
        v = bad;
        await expect(defs[0].execute({ v: good }, ctx)).rejects.toThrow(/does not match its output schema/);
      } finally {
        await source.close();
      }
    });
  }
});
