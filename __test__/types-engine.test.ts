// The README's drop-in recipe typechecks inside an engine shaped like @rulvar/core (issue 16):
// __test__/types/engine-core/ mirrors the engine's public tool types and applies the recipe both
// keeping core's own McpConfig/McpToolSource and re-exporting the addon's. Each control below
// puts back one of the shapes that broke the recipe and the same files must then fail to compile.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { compile, compileWith } from './helpers/tsc.js';

const dir = fileURLToPath(new URL('./types/engine-core/', import.meta.url));
const project = join(dir, 'tsconfig.json');
const dts = readFileSync(fileURLToPath(new URL('../index.d.ts', import.meta.url)), 'utf8');

function replaceOnce(text: string, from: string, to: string): string {
  expect(text.split(from).length, `'${from}' occurs once in index.d.ts`).toBe(2);
  return text.replace(from, to);
}

// Each: a shape that does not fit the engine, and where the recipe must then fail.
const controls: Array<{ name: string; edits: Array<[string, string]>; expected: RegExp[] }> = [
  {
    name: 'McpConfig as the strict discriminated union',
    edits: [
      ['export interface McpConfig extends McpCommonConfig {', 'export interface McpFlatConfig extends McpCommonConfig {'],
      ['export type McpStrictConfig =', 'export type McpConfig ='],
      ['Every `McpStrictConfig` is an {@link McpConfig}.', ''],
    ],
    expected: [
      /mcp-own\.ts\(\d+,\d+\): error TS2322/,
      /is not assignable to type '"inprocess"'/,
      /use\.ts\(\d+,\d+\): error TS2345: Argument of type '\{ transport: "stdio"; command: string; url: string; \}'/,
    ],
  },
  {
    name: 'ToolDef.parameters as unknown',
    edits: [['  parameters: JsonSchema;', '  parameters: unknown;']],
    expected: [/mcp-own\.ts\(\d+,\d+\): error TS2322/, /Types of property 'parameters' are incompatible/],
  },
  {
    name: 'ToolContext.agent as a string',
    edits: [['  agent?: { agentType: string; label?: string };', '  agent?: string;']],
    expected: [/mcp-own\.ts\(\d+,\d+\): error TS2322/, /Types of property 'agent' are incompatible/],
  },
  {
    name: "ToolContext.log's data as unknown",
    edits: [['data?: JsonValue) => void;', 'data?: unknown) => void;']],
    expected: [/mcp-own\.ts\(\d+,\d+\): error TS2322/, /Types of property 'log' are incompatible/],
  },
  {
    name: "ToolDef's input defaulting to an object",
    edits: [['ToolDef<I = unknown,', 'ToolDef<I = Record<string, unknown>,']],
    expected: [/mcp-own\.ts\(\d+,\d+\): error TS2322/, /Types of property 'execute' are incompatible/],
  },
];

describe('the drop-in recipe in an engine shaped like @rulvar/core', () => {
  it('compiles under strict + isolatedDeclarations, own types kept and addon types re-exported', () => {
    const result = compile(project);
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  }, 60_000);

  for (const control of controls) {
    it(`would fail with ${control.name}`, () => {
      let changed = dts;
      for (const [from, to] of control.edits) changed = replaceOnce(changed, from, to);
      const result = compileWith(project, changed);
      expect(result.ok).toBe(false);
      for (const pattern of control.expected) expect(result.output).toMatch(pattern);
    }, 60_000);
  }
});
