// Tool names that MCP 2026-07-28 allows and the engine's final-name rule does not (dots, up to
// 128 characters): refused by default, as the original does; with `names: 'map'`, imported
// under an engine-legal name that is the same every time, and two tools that would share one
// refused. The peer is a real SDK server, in-process.
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { describe, expect, it } from 'vitest';
import { ConfigError, importedAs, lockText, mcp, protocolOf, toolContractHash, unvalidatedReasons } from '../lib/index.js';
import { rejection, session, thrown } from './helpers/common.js';

const LONG = `${'report'.repeat(12)}.weekly`; // 79 characters

function server(names: string[]) {
  const s = new McpServer({ name: 'names', version: '1.0.0' });
  for (const name of names) s.registerTool(name, { description: `The ${name} tool.` }, async () => ({ content: [{ type: 'text', text: name }] }));
  return s;
}

describe("names: 'map'", () => {
  it('refuses a dotted name by default, as the original does', async () => {
    const source = mcp({ transport: 'inprocess', server: server(['fs.read']) });
    try {
      const err = await rejection(source.tools(session));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toBe("mcp: imported tool name 'fs.read' must match ^[a-zA-Z0-9_-]{1,64}$");
    } finally {
      await source.close();
    }
  });

  it('maps dotted and long names to legal ones, calls them by their own names, the same on every import', async () => {
    const open = () => mcp({ transport: 'inprocess', server: server(['fs.read', LONG, 'plain']), names: 'map' } as any);
    const first = open();
    const second = open();
    try {
      const defs = await first.tools(session);
      const names = defs.map((d) => d.name);
      expect(names[0]).toBe('fs_read');
      expect(names[1]).toMatch(/^(report){9}r_[0-9a-f]{8}$/);
      expect(names[1]).toHaveLength(64);
      expect(names[2]).toBe('plain');
      // The server is called by the name it knows.
      expect(await defs[0].execute({}, session)).toBe('fs.read');
      expect(await defs[1].execute({}, session)).toBe(LONG);
      // What the CLI shows as the original name is the core's, not a prefix taken off.
      expect(defs.map((d) => importedAs(d)?.original)).toEqual(['fs.read', LONG, 'plain']);
      expect(importedAs(defs[0])?.schemaBytes).toBe(JSON.stringify(defs[0].parameters).length);
      const again = await second.tools(session);
      expect(again.map((d) => d.name)).toEqual(names);
      expect(toolContractHash(again[1] as any)).toBe(toolContractHash(defs[1] as any));
    } finally {
      await first.close();
      await second.close();
    }
  });

  it("keeps what a ToolDef and a source were imported as where the host's keys, copies and look-alikes never reach it", async () => {
    const source = mcp({ transport: 'inprocess', server: server(['fs.read']), names: 'map' } as any);
    try {
      const [def] = await source.tools(session);
      // Only the engine's members, whatever a host lists, serializes or compares.
      expect(Object.keys(def)).toEqual(['kind', 'name', 'description', 'parameters', 'executor', 'needsApproval', 'execute']);
      expect(Object.keys(source)).toEqual(['id', 'tools', 'close', 'describeRegulatedPosture', 'lockReport']);
      expect(JSON.parse(JSON.stringify(def))).toEqual({
        kind: 'tool',
        name: 'fs_read',
        description: 'The fs.read tool.',
        parameters: def.parameters,
        executor: 'inprocess',
        needsApproval: false,
      });
      expect(importedAs(def)?.original).toBe('fs.read');
      expect(protocolOf(source)).toBe('2025-11-25');
      expect(protocolOf(new Proxy(source, {}))).toBe('2025-11-25');
      // A copy, an object inheriting from it, and one carrying a look-alike record are no ToolDef.
      expect(importedAs({ ...def })).toBeUndefined();
      expect(importedAs(Object.create(def))).toBeUndefined();
      const [key] = Object.getOwnPropertySymbols(def);
      const fake = { [key]: { snapshot: { schemaBytes: () => 7 }, index: 0, original: 'forged' } };
      expect(importedAs(fake)).toBeUndefined();
      expect(unvalidatedReasons(fake)).toBeUndefined();
      const [sourceKey] = Object.getOwnPropertySymbols(source).filter((s) => s !== Symbol.asyncDispose);
      const forged = { [sourceKey]: { latest: { protocol: 'forged' }, lockText: async () => 'forged' } };
      expect(protocolOf(forged)).toBeUndefined();
      await expect(lockText(forged as any)).rejects.toThrow('lockText: not a source made by mcp()');
      for (const nothing of [null, undefined, 7, 'def']) expect(importedAs(nothing as any)).toBeUndefined();
      // A revoked Proxy, or one whose traps throw, is none either: asked, a rejection, never a throw.
      const revoked = Proxy.revocable(source, {});
      revoked.revoke();
      const throwing = new Proxy(source, {
        get() {
          throw new Error('trap');
        },
      });
      for (const odd of [revoked.proxy, throwing]) {
        expect(protocolOf(odd)).toBeUndefined();
        expect(importedAs(odd as any)).toBeUndefined();
        const asked = lockText(odd);
        await expect(asked).rejects.toThrow('lockText: not a source made by mcp()');
      }
    } finally {
      await source.close();
    }
  });

  it("a hostile server's flood of list changes leaves each ToolDef answering for its own import, and its calls settle by callMs and at close()", async () => {
    // 2,000 dotted names, descriptions carrying terminal escapes, then 40 list changes in a row
    // while calls of the first import hang: each import's ToolDefs keep their own record, the
    // newest list is what protocolOf and importedAs see, and nothing waits past callMs or close().
    const s = new McpServer({ name: 'flood', version: '1.0.0' });
    const never = () => new Promise<never>(() => {});
    for (let i = 0; i < 2000; i++) s.registerTool(`t.${i}`, { description: `\u001b]0;owned\u0007 ${i}` }, never);
    const source = mcp({ transport: 'inprocess', server: s, names: 'map', timeouts: { callMs: 300 } } as any);
    try {
      const first = await source.tools(session);
      expect(first).toHaveLength(2000);
      const hung = rejection(first[1999].execute({}, session));
      const held = rejection(first[5].execute({}, session));
      for (let i = 0; i < 40; i++) s.registerTool(`late.${i}`, { description: 'late' }, never);
      await new Promise((r) => setImmediate(r));
      const latest = await source.tools(session);
      expect(latest).toHaveLength(2040);
      expect(latest).not.toBe(first);
      expect(importedAs(first[1999])?.original).toBe('t.1999');
      expect(importedAs(latest[2039])?.original).toBe('late.39');
      expect(importedAs(latest[0])?.schemaBytes).toBe(JSON.stringify(latest[0].parameters).length);
      expect(protocolOf(source)).toBe('2025-11-25');
      // Both first-import calls time out by callMs before the close: the second started a
      // moment after the first (a collection can fall between them), so its deadline is later.
      const [timedOut, heldOut] = await Promise.all([hung, held]);
      expect(timedOut.message).toBe("mcp: tool 't_1999' timed out after 300ms (timeouts.callMs)");
      expect(heldOut.message).toBe("mcp: tool 't_5' timed out after 300ms (timeouts.callMs)");
      const closing = rejection(latest[2039].execute({}, session));
      await source.close();
      expect((await closing).message).toBe("mcp: tool 'late_39' failed: mcp: 'mcp:inprocess' was closed");
      // A closed source's ToolDefs still answer what they were imported as.
      expect(importedAs(latest[2039])?.original).toBe('late.39');
    } finally {
      await source.close();
    }
  });

  it('refuses two tools that would import under one name', async () => {
    const source = mcp({ transport: 'inprocess', server: server(['fs.read', 'fs_read']), names: 'map' } as any);
    try {
      const err = await rejection(source.tools(session));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toBe("mcp: tools 'fs.read' and 'fs_read' both import as 'fs_read' (names: 'map'); deny one of them");
    } finally {
      await source.close();
    }
  });

  it('refuses an unknown value, typed', () => {
    const err = thrown(() => mcp({ transport: 'stdio', command: 'x', names: 'rename' } as any));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe("mcp: 'names' must be 'refuse' or 'map', got 'rename'");
  });
});
