// Connect, close and the stdio child's life: connectMs bounds the whole handshake and a failed
// connect leaves nothing behind; close() is idempotent, ends the child's stdin, then SIGTERMs and
// SIGKILLs its process group (500 ms apart) and reaps it, and leaves nothing keeping Node alive.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigError, mcp } from '../lib/index.js';
import { ctx, session } from './helpers/common.js';
import { example, fixture, runHost, running, waitFor } from './helpers/harness.js';

function processesWithArgs(needle: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ');
      if (cmdline.includes(needle) && running(Number(entry))) found.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return found;
}

const lifecycle = (env: Record<string, string> = {}) =>
  mcp({ transport: 'stdio', command: process.execPath, args: [fixture('lifecycle-server.mjs')], env, stderr: 'ignore' });

async function call(source: ReturnType<typeof mcp>, name: string): Promise<string> {
  const defs = await source.tools(session);
  return (await defs.find((d) => d.name === name)!.execute({}, ctx)) as string;
}

describe('connect', () => {
  it('times out a server that never answers, typed, and kills it', async () => {
    const marker = '31.7173';
    const source = mcp({ transport: 'stdio', command: 'sleep', args: [marker], timeouts: { connectMs: 150 } });
    const started = Date.now();
    const err = await source.tools(session).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe("mcp: connect to 'mcp:stdio:sleep' timed out after 150ms");
    expect(Date.now() - started).toBeLessThan(1500);
    expect(processesWithArgs(`sleep ${marker}`)).toEqual([]);
    await source.close();
  });

  it('rejects a child that exits at once, leaves nothing behind, and tries again later', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rulvar-'));
    const starts = join(dir, 'starts');
    const source = mcp({
      transport: 'stdio',
      command: process.execPath,
      args: ['-e', "require('fs').appendFileSync(process.env.STARTS, 'x'); process.exit(3)"],
      env: { STARTS: starts },
    });
    const first = await source.tools(session).catch((e) => e);
    expect(first).toBeInstanceOf(Error);
    expect(first).not.toBeInstanceOf(ConfigError);
    expect(first.message).toMatch(/exited with code 3/);
    await expect(source.close()).resolves.toBeUndefined();
    await expect(source.tools(session)).rejects.toThrow(/exited with code 3/);
    expect(readFileSync(starts, 'utf8')).toBe('xx');
    await source.close();
  });

  it('rejects a command that does not exist with a plain error', async () => {
    const source = mcp({ transport: 'stdio', command: '/nonexistent/mcp-server' });
    await expect(source.tools(session)).rejects.toThrow(/could not start '\/nonexistent\/mcp-server'/);
    await source.close();
  });
});

describe('stdio close', () => {
  it('reaps the child before close() resolves', async () => {
    const source = lifecycle();
    const pid = Number(await call(source, 'pid'));
    expect(running(pid)).toBe(true);
    await source.close();
    expect(running(pid)).toBe(false);
  });

  it('[Symbol.asyncDispose]() is close(): the child is reaped when it resolves', async () => {
    const source = lifecycle();
    const pid = Number(await call(source, 'pid'));
    expect(running(pid)).toBe(true);
    await source[Symbol.asyncDispose]();
    expect(running(pid)).toBe(false);
    // Closed, not broken: like after close(), the next tools() starts a fresh child.
    const next = Number(await call(source, 'pid'));
    expect(next).not.toBe(pid);
    await source.close();
  });

  it('`await using` closes the source when its block ends, also when the block throws', async () => {
    let pid = 0;
    {
      await using source = lifecycle();
      pid = Number(await call(source, 'pid'));
      expect(running(pid)).toBe(true);
    }
    expect(running(pid)).toBe(false);
    const failed = await (async () => {
      await using source = lifecycle();
      pid = Number(await call(source, 'pid'));
      throw new Error('the block failed');
    })().catch((e) => e);
    expect(failed.message).toBe('the block failed');
    expect(running(pid)).toBe(false);
  });

  it('kills a child that ignores SIGTERM', async () => {
    const source = lifecycle({ IGNORE_SIGTERM: '1' });
    const pid = Number(await call(source, 'pid'));
    await source.close();
    expect(running(pid)).toBe(false);
  });

  it('kills the grandchildren too', async () => {
    const source = lifecycle();
    const grandchild = Number(await call(source, 'grandchild'));
    expect(running(grandchild)).toBe(true);
    await source.close();
    expect(await waitFor(() => !running(grandchild))).toBe(true);
  });

  it('closes twice, closes before connect, and starts a fresh child after close', async () => {
    const source = lifecycle();
    await source.close();
    const first = Number(await call(source, 'pid'));
    await source.close();
    await source.close();
    const second = Number(await call(source, 'pid'));
    expect(second).not.toBe(first);
    expect(running(first)).toBe(false);
    await source.close();
    expect(running(second)).toBe(false);
  });

  it('passes only the environment allow-list plus env', async () => {
    process.env.RULVAR_TEST_SECRET = 'hunter2';
    try {
      const source = lifecycle({ PASSED_ON: 'yes' });
      const env = JSON.parse(await call(source, 'env'));
      await source.close();
      expect(env.RULVAR_TEST_SECRET).toBeUndefined();
      expect(env.PASSED_ON).toBe('yes');
      expect(env.PATH).toBe(process.env.PATH);
      const allowed = new Set(['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'PASSED_ON']);
      // Node may add a few of its own at startup; none may come from the host.
      for (const key of Object.keys(env)) {
        if (!allowed.has(key)) expect(process.env[key]).not.toBe(env[key]);
      }
    } finally {
      delete process.env.RULVAR_TEST_SECRET;
    }
  });

  it('a server that died is replaced by the next tools(), with a new array that works', async () => {
    const source = mcp({ transport: 'stdio', command: process.execPath, args: [fixture('exec-server.mjs')], stderr: 'ignore' });
    const before = await source.tools(session);
    await expect(before.find((d) => d.name === 'die')!.execute({}, ctx)).rejects.toThrow(/exited/);
    const after = await source.tools(session);
    expect(after).not.toBe(before);
    expect(await after.find((d) => d.name === 'echo')!.execute({ text: 'back' }, ctx)).toBe('back');
    await source.close();
  });

  it('fails calls of a closed source instead of hanging', async () => {
    const source = lifecycle();
    const defs = await source.tools(session);
    await source.close();
    await expect(defs[0].execute({}, ctx)).rejects.toThrow(/closed/);
  });
});

describe('a one-shot node script exits by itself after close()', () => {
  it('over stdio, and the child dies with the host when close() was never called', async () => {
    const r = await runHost(`
      const s = mcp({ transport: 'stdio', command: process.execPath, args: [${JSON.stringify(fixture('lifecycle-server.mjs'))}] });
      const defs = await s.tools({ runId: 'r' });
      console.log(await defs.find((d) => d.name === 'pid').execute({}, {}));
    `);
    expect(r.code).toBe(0);
    const pid = Number(r.out.trim());
    expect(pid).toBeGreaterThan(0);
    expect(await waitFor(() => !running(pid))).toBe(true);
  });

  it('over stdio', async () => {
    const r = await runHost(`
      const s = mcp({ transport: 'stdio', command: process.execPath, args: [${JSON.stringify(example('server.mjs'))}] });
      const defs = await s.tools({ runId: 'r' });
      console.log(await defs[0].execute({ text: 'bye' }, {}));
      await s.close();
    `);
    expect(r.out.trim()).toBe('bye');
    expect(r.code).toBe(0);
  });

  it('in-process', async () => {
    const r = await runHost(`
      const { buildServer } = await import(${JSON.stringify(example('server.mjs'))});
      const s = mcp({ transport: 'inprocess', server: buildServer() });
      const defs = await s.tools({ runId: 'r' });
      console.log(await defs[0].execute({ text: 'bye' }, {}));
      await s.close();
    `);
    expect(r.out.trim()).toBe('bye');
    expect(r.code).toBe(0);
  });

  it('over HTTP, with a header hook', async () => {
    const { serveHttp } = await import('./helpers/harness.js');
    const { buildServer } = await import('../examples/server.mjs');
    const served = await serveHttp(buildServer, true);
    try {
      const r = await runHost(`
        const s = mcp({ transport: 'streamable-http', url: ${JSON.stringify(served.url)}, http: { headers: async () => ({ 'x-run': 'r' }) } });
        const defs = await s.tools({ runId: 'r' });
        console.log(await defs[0].execute({ text: 'bye' }, {}));
        await s.close();
      `);
      expect(r.out.trim()).toBe('bye');
      expect(r.code).toBe(0);
    } finally {
      await served.stop();
    }
  });
});

describe('in-process connect', () => {
  it("rejects with the very error object the server's connect threw", async () => {
    const thrown = new TypeError('no transport for you');
    const source = mcp({ transport: 'inprocess', server: { connect: async () => Promise.reject(thrown) } });
    await expect(source.tools(session)).rejects.toBe(thrown);
    await source.close();
  });

  it('times out a connect that never resolves, typed', async () => {
    const source = mcp({ transport: 'inprocess', server: { connect: () => new Promise(() => {}) }, timeouts: { connectMs: 100 } });
    const err = await source.tools(session).catch((e) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe("mcp: connect to 'mcp:inprocess' timed out after 100ms");
    await source.close();
  });

  it('times out a connect whose never-settling promise is collected meanwhile', async () => {
    // Nothing references the promise: a collection in the wait drops it unsettled.
    const source = mcp({ transport: 'inprocess', server: { connect: () => new Promise(() => {}) }, timeouts: { connectMs: 300 } });
    const pending = source.tools(session).catch((e) => e);
    for (let i = 0; i < 5; i++) {
      await new Promise((r) => setTimeout(r, 20));
      (globalThis as { gc?: () => void }).gc?.();
    }
    const err = await pending;
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe("mcp: connect to 'mcp:inprocess' timed out after 300ms");
    await source.close();
  });

  it('close() does not wait for a connect in progress', async () => {
    let transport: any;
    const source = mcp({
      transport: 'inprocess',
      server: {
        connect: (t: unknown) => {
          transport = t;
          return new Promise(() => {});
        },
      },
    });
    let closedSeen = false;
    const pending = source.tools(session).catch((e) => e);
    await waitFor(() => transport !== undefined);
    transport.onclose = () => {
      closedSeen = true;
    };
    const started = Date.now();
    await source.close();
    expect(Date.now() - started).toBeLessThan(1000);
    const err = await pending;
    expect(err.message).toBe("mcp: 'mcp:inprocess' was closed while connecting");
    expect(closedSeen).toBe(true);
  });
});
