// Servers that misbehave on purpose: a typed error or the right result, the process alive,
// bounded time, no child left behind (a server's fault is an error, never a crash or a hang).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, mcp } from '../lib/index.js';
import { ctx, rejection, session } from './helpers/common.js';
import { fixture, liveChildren } from './helpers/harness.js';

async function withHostile<T>(mode: string, extra: Record<string, unknown>, body: (s: ReturnType<typeof mcp>) => Promise<T>) {
  const before = liveChildren();
  const source = mcp({
    transport: 'stdio',
    command: process.execPath,
    args: [fixture('hostile-stdio.mjs')],
    env: { MODE: mode },
    ...extra,
  } as any);
  try {
    return await body(source);
  } finally {
    await source.close();
    expect(liveChildren().filter((p) => !before.includes(p))).toEqual([]);
  }
}

describe('hostile stdio servers', () => {
  it('skips non-JSON lines before and after the handshake', async () => {
    await withHostile('banner', {}, async (s) => {
      const defs = await s.tools(session);
      expect(defs.map((d) => d.name)).toEqual(['echo']);
      expect(await defs[0].execute({}, ctx)).toBe('called echo');
    });
  });

  it('skips a line of invalid UTF-8', async () => {
    await withHostile('badUtf8', {}, async (s) => {
      expect((await s.tools(session)).map((d) => d.name)).toEqual(['echo']);
    });
  });

  it('ignores a response to an id it never sent', async () => {
    await withHostile('unknownId', {}, async (s) => {
      expect((await s.tools(session)).map((d) => d.name)).toEqual(['echo']);
    });
  });

  it('ignores duplicate responses', async () => {
    await withHostile('duplicate', {}, async (s) => {
      const defs = await s.tools(session);
      const results = await Promise.all([1, 2, 3].map(() => defs[0].execute({}, ctx)));
      expect(results).toEqual(['called echo', 'called echo', 'called echo']);
    });
  });

  it('refuses a 100 MB line at the frame limit, typed, and gives the memory back', async () => {
    await withHostile('hugeLine', { stderr: 'ignore' }, async (s) => {
      const before = process.memoryUsage().rss;
      const err = await s.tools(session).catch((e) => e);
      expect(err.message).toMatch(/larger than the 64 MiB frame limit/);
      // What the refused frame used is returned, not kept by the allocator for later.
      expect(process.memoryUsage().rss - before).toBeLessThan(64 * 1024 * 1024);
    });
  }, 30_000);

  it('refuses a result whose tools is not an array', async () => {
    await withHostile('toolsNotArray', {}, async (s) => {
      const err = await s.tools(session).catch((e) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/malformed page 1: 'tools' is not an array/);
    });
  });

  it('refuses a malformed tool on a page that names a next one, without asking for it', async () => {
    // Page 1's own tools refuse the sweep before its cursor is followed: a page 2 that would
    // never come is neither asked for nor waited for.
    const listed = join(mkdtempSync(join(tmpdir(), 'rulvar-listed-')), 'calls');
    await withHostile('malformedThenHang', { env: { MODE: 'malformedThenHang', LISTED_AT: listed } }, async (s) => {
      const started = Date.now();
      const err = await s.tools(session).catch((e) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toBe(
        `mcp: tools/list of 'mcp:stdio:${process.execPath}' returned a malformed page 1: tool 'x' has a 'description' that is not a string`,
      );
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(readFileSync(listed, 'utf8')).toBe('first\n');
    });
  });

  it('refuses a tool without inputSchema, naming it', async () => {
    await withHostile('noInputSchema', {}, async (s) => {
      const err = await s.tools(session).catch((e) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/tool 'schemaless' has an 'inputSchema' that is not an object schema/);
    });
  });

  it('refuses a 10,000-character name with a bounded message', async () => {
    await withHostile('longName', {}, async (s) => {
      const err = await s.tools(session).catch((e) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/^mcp: imported tool name 'n+…' must match/);
      expect(err.message.length).toBeLessThan(400);
    });
  });

  it('refuses a schema nested 10,000 levels deep, typed, without hanging', async () => {
    await withHostile('nested', {}, async (s) => {
      const started = Date.now();
      const err = await s.tools(session).catch((e) => e);
      expect(err.message).toMatch(/nested deeper than 128 levels/);
      expect(Date.now() - started).toBeLessThan(5000);
    });
  });

  it('reads call results that JSON allows more than one reading of as the whole message reads', async () => {
    await withHostile('oddResults', { stderr: 'ignore' }, async (s) => {
      const [echo, typed] = await s.tools(session);
      expect(await echo.execute({ case: 'repeatedContent' }, ctx)).toBe('last');
      expect(await typed.execute({ case: 'repeatedStructured' }, ctx)).toEqual({ k: 7 });
      const invalid = await rejection(typed.execute({ case: 'repeatedInvalid' }, ctx));
      expect(invalid.message).toMatch(
        /^mcp: tool 'typed' returned structured content that does not match its output schema: at \/k: "not an integer" is not of type "integer"/,
      );
      const ordered = await echo.execute({ case: 'ordered' }, ctx);
      expect(JSON.stringify(ordered)).toBe('{"z":1,"a":[1.5,-2,10000000000],"m":{"b":true,"a":null}}');
      // A result of 200,000 distinct members is read (its repeated-key check is not pairwise:
      // bench/ measures it), and a repeat among them still reads as the whole message does.
      expect(await echo.execute({ case: 'wide' }, ctx)).toBe('wide');
      expect(await echo.execute({ case: 'wideRepeated' }, ctx)).toBe('last');
      // Too deep for the client: the connection ends with the typed reason, nothing hangs.
      const deep = await rejection(echo.execute({ case: 'deep' }, ctx));
      expect(deep.message).toMatch(/nested deeper than 128 levels/);
    });
  });

  it('refuses an exponential $ref DAG at admission, typed, without eating memory', async () => {
    await withHostile('dagSchema', {}, async (s) => {
      const before = process.memoryUsage().rss;
      const err = await s.tools(session).catch((e) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/^mcp: tool 'dag' has an input schema that cannot be canonicalized: Schema expands past 16777216 bytes/);
      expect(process.memoryUsage().rss - before).toBeLessThan(512 * 1024 * 1024);
    });
  }, 30_000);

  it('refuses a 50 MB schema under maxSchemaBytes, typed', async () => {
    await withHostile('fatSchema', { maxSchemaBytes: 1_000_000 }, async (s) => {
      const err = await s.tools(session).catch((e) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/^mcp: tool 'fat' declares 5\d{7} bytes of schema, over the declared maxSchemaBytes 1000000/);
    });
  }, 60_000);

  it('100,000 tools in one page: refused by maxTools, or all imported without it', async () => {
    await withHostile('manyTools', { maxTools: 1000 }, async (s) => {
      const err = await s.tools(session).catch((e) => e);
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/returned at least 100000 wire tools, over the declared maxTools 1000/);
    });
    await withHostile('manyTools', {}, async (s) => {
      const defs = await s.tools(session);
      expect(defs.length).toBe(100_000);
      expect(defs[99_999].name).toBe('t99999');
    });
  }, 60_000);

  it('survives a flood of 100,000 notifications', async () => {
    await withHostile('flood', {}, async (s) => {
      const before = process.memoryUsage().rss;
      expect((await s.tools(session)).map((d) => d.name)).toEqual(['echo']);
      expect(process.memoryUsage().rss - before).toBeLessThan(200 * 1024 * 1024);
    });
  }, 30_000);

  it('fails a tools/list page at once when the server stops reading its stdin mid-sweep', async () => {
    await withHostile('closeStdinMidSweep', { stderr: 'ignore', timeouts: { listMs: 20_000 } }, async (s) => {
      const started = Date.now();
      const err = await s.tools(session).catch((e) => e);
      expect(err.message).toMatch(/stdin is closed/);
      expect(Date.now() - started).toBeLessThan(3000);
    });
  });

  it('fails the sweep at once when the server stops reading after a page, with no listMs to end it', async () => {
    // Page 2's request sits in the pipe when the server closes its stdin: no write fails, and
    // only the pipe's own report that its reader is gone can end the wait.
    const closedAt = join(mkdtempSync(join(tmpdir(), 'rulvar-')), 'closed-at');
    await withHostile('closeStdinAfterPage', { stderr: 'ignore', env: { MODE: 'closeStdinAfterPage', CLOSED_AT: closedAt } }, async (s) => {
      const err = await s.tools(session).catch((e) => e);
      const refusedAt = Date.now();
      expect(err.message).toMatch(/tools\/list of .* failed: mcp: the server's stdin is closed/);
      expect(refusedAt - Number(readFileSync(closedAt, 'utf8'))).toBeLessThan(1000);
    });
  });

  it('fails a call at once when the server stops reading its stdin but keeps running', async () => {
    await withHostile('closeStdin', { stderr: 'ignore', timeouts: { callMs: 20_000 } }, async (s) => {
      const [echo] = await s.tools(session);
      await new Promise((r) => setTimeout(r, 200));
      const started = Date.now();
      const err = await echo.execute({}, ctx).catch((e) => e);
      expect(err.message).toMatch(/stdin is closed/);
      expect(Date.now() - started).toBeLessThan(3000);
    });
  });

  it('reads the last answer of a server that answers, closes its stdin and exits', async () => {
    // Its stdin's end and its answer arrive together: the answer must win, every time.
    for (let round = 0; round < 20; round++) {
      await withHostile('answerThenExit', { stderr: 'ignore' }, async (s) => {
        const [echo] = await s.tools(session);
        expect(await echo.execute({}, ctx)).toBe('called echo');
      });
    }
  });

  it("redacts env values a server's JSON-RPC error message and data echo", async () => {
    await withHostile('errorEchoesEnv', { stderr: 'ignore', env: { MODE: 'errorEchoesEnv', TOKEN: 'tok-0a1b2c3d4e5f' } }, async (s) => {
      const [echo] = await s.tools(session);
      const err = await echo.execute({}, ctx).catch((e) => e);
      // The SDK client's words, as the original threw them; the tool rides beside them.
      expect(err.message).toBe('MCP error -32000: token [redacted] was refused');
      expect(err.code).toBe(-32000);
      expect(err.tool).toBe('echo');
      expect(err.data).toEqual({
        token: '[redacted]',
        '[redacted]': 1,
        quoted: '"[redacted]"\n',
        list: [{ deep: 'Bearer [redacted]' }],
      });
      expect(JSON.stringify(err.data)).not.toContain('0a1b2c3d4e5f');
    });
    const env = { MODE: 'errorEchoesEnvAnyCode', TOKEN: 'tok-0a1b2c3d4e5f' };
    await withHostile('errorEchoesEnvAnyCode', { stderr: 'ignore', env }, async (s) => {
      const [echo] = await s.tools(session);
      const err = await echo.execute({}, ctx).catch((e) => e);
      expect(err.message).toBe('MCP error -32099: token [redacted] was refused');
    });
  });

  it('bounds what an error answer carries: a code JS cannot hold exactly is -32603, data over 16 KiB is left out', async () => {
    await withHostile('oddErrors', { stderr: 'ignore' }, async (s) => {
      const [echo] = await s.tools(session);
      const failed = async (c: string) => {
        const err = await echo.execute({ case: c }, ctx).catch((e) => e);
        return { name: err.name, message: err.message, code: err.code, data: err.data };
      };
      const internal = (message: string) => ({ name: 'McpError', message: `MCP error -32603: ${message}`, code: -32603, data: undefined });
      expect(await failed('fractionalCode')).toEqual(internal('a fraction'));
      expect(await failed('hugeCode')).toEqual(internal('a huge code'));
      expect(await failed('unsafeCode')).toEqual(internal('past what a double holds exactly'));
      expect(await failed('stringCode')).toEqual(internal('a string code'));
      expect(await failed('noCode')).toEqual(internal('no code at all'));
      expect(await failed('objectMessage')).toEqual({ name: 'McpError', message: 'MCP error -32000: unknown error', code: -32000, data: undefined });
      expect(await failed('hugeData')).toEqual({ name: 'McpError', message: 'MCP error -32000: huge data', code: -32000, data: undefined });
      expect(await failed('smallData')).toEqual({ name: 'McpError', message: 'MCP error -32000: small data', code: -32000, data: [1, 'two', { three: null }] });
      // The connection is still in step afterwards.
      expect(await echo.execute({}, ctx)).toBe('called echo');
    });
  });

  it("refuses an opening answered with a JSON-RPC error in the SDK client's words, its stderr beside them", async () => {
    await withHostile('refuseInitialize', { stderr: 'pipe' }, async (s) => {
      const err: any = await rejection(s.tools(session));
      expect(err).not.toBeInstanceOf(ConfigError);
      expect(err.name).toBe('McpError');
      expect(err.message).toBe('MCP error -32603: license expired');
      expect(err.code).toBe(-32603);
      expect(err.data).toEqual({ renewAt: 'https://example.test/renew' });
      expect(err.source).toBe(s.id);
      expect(err.stderr).toContain('license check failed: expired 2024-01-01');
      expect(Object.keys(err)).toEqual(['code', 'data', 'name']);
    });
  });

  it('fails calls queued behind a full pipe at once when the server then closes its stdin', async () => {
    await withHostile('stallThenCloseStdin', { stderr: 'ignore', timeouts: { callMs: 20_000 } }, async (s) => {
      const [echo] = await s.tools(session);
      const stalled = echo.execute({}, ctx).catch((e) => e);
      // Far more than a pipe holds: most of it waits in the addon's queue when stdin closes.
      const big = echo.execute({ blob: 'x'.repeat(4 * 1024 * 1024) }, ctx).catch((e) => e);
      const started = Date.now();
      const err = await big;
      expect(err.message).toMatch(/stdin is closed/);
      expect(Date.now() - started).toBeLessThan(5000);
      void stalled;
    });
  });

  it('fails at once when the server closes stdout but keeps running, and is killed on close', async () => {
    await withHostile('closeStdout', { stderr: 'ignore' }, async (s) => {
      const started = Date.now();
      const err = await s.tools(session).catch((e) => e);
      expect(err.message).toMatch(/closed its stdout|exited/);
      expect(Date.now() - started).toBeLessThan(3000);
    });
  });
});
