import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as api from '../lib/index.js';

// The engine's hashing vectors, kept in this repository (origin, format: tests/vectors/README.md).

type Case = { id: string; kind: string; input: unknown; output?: unknown; error?: string };

const cases: Case[] = JSON.parse(readFileSync(new URL('../tests/vectors/hashing.json', import.meta.url), 'utf8'));

const call = (c: Case): unknown => {
  switch (c.kind) {
    case 'jcs':
      return api.jcsSerialize(c.input);
    case 'canonicalize':
      return api.canonicalizeSchema(c.input);
    case 'schemaHash':
      return api.schemaHash(c.input);
    case 'toolContractHash':
      return api.toolContractHash(c.input);
    case 'toolsetHash':
      return api.toolsetHash(c.input);
    default:
      throw new Error(`unknown vector kind ${c.kind}`);
  }
};

describe('engine hashing vectors', () => {
  it('has the whole file', () => {
    expect(cases.length).toBeGreaterThan(100);
  });

  for (const c of cases) {
    it(c.id, () => {
      if (c.error !== undefined) {
        let thrown: unknown;
        try {
          call(c);
        } catch (err) {
          thrown = err;
        }
        expect(thrown).toBeInstanceOf(api.ConfigError);
        expect((thrown as Error).message).toBe(c.error);
      } else if (c.kind === 'canonicalize') {
        // Member order carries no meaning: compare structurally.
        expect(call(c)).toEqual(c.output);
      } else {
        expect(call(c)).toBe(c.output);
      }
    });
  }
});
