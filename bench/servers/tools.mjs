// Realistic tool definitions for benchmarks: 1-3 KB input schemas, deterministic.
export function makeTools(count) {
  const tools = [];
  for (let i = 0; i < count; i++) {
    const props = {};
    const n = 6 + (i % 12);
    for (let p = 0; p < n; p++) {
      props[`field_${p}`] = {
        type: p % 3 === 0 ? 'string' : p % 3 === 1 ? 'integer' : 'boolean',
        description: `Parameter ${p} of tool ${i}: controls one aspect of the operation in detail.`,
        ...(p % 3 === 0 ? { maxLength: 256 } : p % 3 === 1 ? { minimum: 0, maximum: 1000 } : {}),
      };
    }
    tools.push({
      name: `tool_${i}`,
      description: `Benchmark tool number ${i}, which does a representative amount of nothing.`,
      inputSchema: { type: 'object', properties: props, required: ['field_0'] },
    });
  }
  tools.push({ name: 'echo', description: 'Echo text.', inputSchema: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] } });
  tools.push({
    name: 'big',
    description: 'Returns 10 KB of structured content.',
    inputSchema: { type: 'object', properties: {} },
    outputSchema: {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          items: { type: 'object', properties: { id: { type: 'integer' }, name: { type: 'string' }, ok: { type: 'boolean' } }, required: ['id', 'name', 'ok'] },
        },
      },
      required: ['items'],
    },
  });
  return tools;
}

export const BIG = { items: Array.from({ length: 160 }, (_, i) => ({ id: i, name: `item-${i}-${'x'.repeat(30)}`, ok: i % 2 === 0 })) };
export const PAGE = 100;

export function listPage(tools, cursor) {
  const start = cursor ? Number(cursor) : 0;
  const page = tools.slice(start, start + PAGE);
  const next = start + PAGE < tools.length ? String(start + PAGE) : undefined;
  return next === undefined ? { tools: page } : { tools: page, nextCursor: next };
}

// A result object of 200,000 distinct members beside its content (about 3 MB): what a
// repeated-key check that compares every pair of members would spend 10^10 comparisons on.
let wide;
function wideResult() {
  if (wide === undefined) {
    wide = { content: [{ type: 'text', text: 'wide' }] };
    for (let i = 0; i < 200_000; i++) wide[`k${i}`] = i;
  }
  return wide;
}

export function callResult(name, args) {
  if (name === 'big') return { content: [{ type: 'text', text: 'big' }], structuredContent: BIG };
  if (name === 'echo' && args?.text === 'wide') return wideResult();
  return { content: [{ type: 'text', text: String(args?.text ?? '') }] };
}
