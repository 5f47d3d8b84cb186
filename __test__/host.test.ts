// A stdio server's life seen from its host: what the child inherits, where its stderr goes,
// which children a worker's exit ends, and that children die however the host ends.
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { mcp } from '../lib/index.js';
import { session } from './helpers/common.js';
import { example, fixture, liveChildren, running, runHost, startHost, waitFor } from './helpers/harness.js';

const stubborn = fixture('stubborn-server.mjs');
const lib = fileURLToPath(new URL('../lib/index.js', import.meta.url));
// For a host script (Linux): `switches()`, the voluntary context switches of the runtime's
// threads so far. Each wake-up of a parked runtime thread shows as one.
const RUNTIME_SWITCHES = `
  const switches = () => {
    const { readdirSync, readFileSync } = require('node:fs');
    let n = 0;
    for (const t of readdirSync('/proc/self/task')) {
      const lines = readFileSync('/proc/self/task/' + t + '/status', 'utf8').split('\\n');
      const field = (name) => (lines.find((l) => l.startsWith(name + ':')) ?? '').slice(name.length + 1).trim();
      if (field('Name') === 'tokio-rt-worker') n += Number(field('voluntary_ctxt_switches'));
    }
    return n;
  };
`;

describe("the child's descriptors and stderr", () => {
  it("gets the host's stderr on fd 2 and no other descriptor of the host", async () => {
    // Python lists the descriptors it started with on stderr (fstat opens none of its own),
    // then becomes the example server.
    const probe = [
      'import os, sys',
      'fds = []',
      'for fd in range(1024):',
      '    try:',
      '        os.fstat(fd)',
      '        fds.append(str(fd))',
      '    except OSError:',
      '        pass',
      "print('fd-probe:', ' '.join(fds), file=sys.stderr, flush=True)",
      'os.execv(sys.argv[1], sys.argv[1:])',
    ].join('\n');
    const r = await runHost(`
      const s = mcp({ transport: 'stdio', command: 'python3', args: ['-c', ${JSON.stringify(probe)}, process.execPath, ${JSON.stringify(example('server.mjs'))}] });
      const defs = await s.tools({ runId: 'r' });
      console.log(await defs[0].execute({ text: 'served' }, {}));
      await s.close();
    `);
    expect(r.code).toBe(0);
    expect(r.out).toContain('served');
    // The line reached the host's stderr at all only because fd 2 was open in the child.
    expect(r.err).toMatch(/^fd-probe: 0 1 2$/m);
  });

  it('shows stderr live, and puts its last lines (redacted) into the error when the server dies at start', async () => {
    const source = mcp({
      transport: 'stdio',
      command: process.execPath,
      args: ['-e', "console.error('starting'); console.error('fatal: the API key ' + process.env.API_KEY + ' was refused'); process.exit(3)"],
      env: { API_KEY: 'sk-live-not-for-logs' },
      stderr: 'pipe',
    });
    const err = await source.tools(session).catch((e) => e);
    await source.close();
    expect(err.message).toMatch(/exited with code 3/);
    expect(err.message).toMatch(/its stderr ended with:\nstarting\nfatal: the API key \[redacted\] was refused/);
    expect(err.message).not.toContain('sk-live-not-for-logs');
  });

  it('keeps nothing with stderr: ignore', async () => {
    const source = mcp({
      transport: 'stdio',
      command: process.execPath,
      args: ['-e', "console.error('fatal: nope'); process.exit(3)"],
      stderr: 'ignore',
    });
    const err = await source.tools(session).catch((e) => e);
    await source.close();
    expect(err.message).toMatch(/exited with code 3$/);
  });

  it('names what the server said when its connect times out', async () => {
    const source = mcp({
      transport: 'stdio',
      command: process.execPath,
      args: ['-e', "console.error('waiting for the database'); setInterval(() => {}, 1000)"],
      stderr: 'pipe',
      timeouts: { connectMs: 300 },
    });
    const err = await source.tools(session).catch((e) => e);
    await source.close();
    expect(err.message).toMatch(/^mcp: connect to '.*' timed out after 300ms; its stderr ended with:\nwaiting for the database$/);
  });

  it("with inherit (the default) the server's lines reach the host's stderr as they come", async () => {
    const r = await runHost(`
      const s = mcp({ transport: 'stdio', command: process.execPath, args: ['-e', "console.error('line from the server'); process.exit(4)"] });
      const err = await s.tools({ runId: 'r' }).catch((e) => e);
      console.log(JSON.stringify(err.message));
      await s.close();
    `);
    expect(r.code).toBe(0);
    expect(r.err).toContain('line from the server');
    expect(JSON.parse(r.out.split('\n')[0])).toMatch(/exited with code 4; its stderr ended with:\nline from the server/);
  });
});

describe('children belong to their Node environment', () => {
  it("a worker thread's exit ends its own servers only", async () => {
    const r = await runHost(
      `
      const { Worker } = require('node:worker_threads');
      const s = mcp({ transport: 'stdio', command: process.execPath, args: [${JSON.stringify(stubborn)}] });
      const defs = await s.tools({ runId: 'r' });
      const echo = defs.find((d) => d.name === 'echo');
      console.log('before', await echo.execute({ text: 'a' }, {}));
      const worker = new Worker(${JSON.stringify(fixture('worker-source.cjs'))}, {
        workerData: { lib: ${JSON.stringify(lib)}, server: ${JSON.stringify(stubborn)} },
      });
      const workerChild = Number(await new Promise((resolve) => worker.once('message', resolve)));
      await worker.terminate();
      // Gone, or a zombie: either way no longer running.
      const running = (pid) => {
        try {
          const stat = require('node:fs').readFileSync(\`/proc/\${pid}/stat\`, 'utf8');
          return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
        } catch {
          return false;
        }
      };
      let gone = false;
      for (let i = 0; i < 150 && !gone; i++) {
        gone = !running(workerChild);
        if (!gone) await new Promise((r) => setTimeout(r, 20));
      }
      console.log('worker child gone', gone);
      console.log('after', await echo.execute({ text: 'b' }, {}));
      await s.close();
    `,
      15_000,
    );
    expect(r.out).toContain('before a');
    expect(r.out).toContain('worker child gone true');
    expect(r.out).toContain('after b');
    expect(r.code).toBe(0);
  }, 20_000);
});

describe('children die with the host, however it ends', () => {
  async function hostWithServer(end: string) {
    const host = startHost(`
      const s = mcp({ transport: 'stdio', command: process.execPath, args: [${JSON.stringify(stubborn)}], stderr: 'ignore' });
      const defs = await s.tools({ runId: 'r' });
      console.log(await defs.find((d) => d.name === 'pid').execute({}, {}));
      ${end}
    `);
    await waitFor(() => /\d+\n/.test(host.stdout()), 10_000);
    const pid = Number(host.stdout().trim());
    expect(pid).toBeGreaterThan(0);
    return { host, pid };
  }

  it('process.exit() right after a call', async () => {
    const { host, pid } = await hostWithServer('process.exit(0);');
    expect(await host.exited()).toBe(0);
    expect(await waitFor(() => !running(pid))).toBe(true);
  });

  it('the end of the event loop without close()', async () => {
    const { host, pid } = await hostWithServer('');
    expect(await host.exited()).toBe(0);
    expect(await waitFor(() => !running(pid))).toBe(true);
  });

  it.runIf(process.platform === 'linux')('the host killed with SIGKILL (Linux)', async () => {
    const { host, pid } = await hostWithServer('setInterval(() => {}, 1000);');
    expect(running(pid)).toBe(true);
    host.child.kill('SIGKILL');
    await host.exited();
    expect(await waitFor(() => !running(pid))).toBe(true);
  });
});

describe("the host's event loop and an in-process import", () => {
  it('stays alive while an in-process tools() is under way, with nothing else holding it', async () => {
    // The import is polled on the JS thread; only its hold on the loop keeps the host from
    // exiting before the connect timeout answers.
    const r = await runHost(`
      const s = mcp({ transport: 'inprocess', server: { connect: () => new Promise(() => {}) }, timeouts: { connectMs: 300 } });
      s.tools({ runId: 'r' }).then(() => console.log('listed'), (e) => console.log('refused:', e.message)).then(() => s.close()).then(() => console.log('closed'));
    `);
    expect(r.code).toBe(0);
    expect(r.out).toContain("refused: mcp: connect to 'mcp:inprocess' timed out after 300ms");
    expect(r.out).toContain('closed');
  });

  it.runIf(process.platform === 'linux')("opens, lists and closes an in-process source without waking the runtime's threads (Linux)", async () => {
    // Each wake-up of a parked runtime thread shows as a voluntary context switch of it; the
    // opening, the sweep, the deadline timer and the close all run on the JS thread.
    const r = await runHost(`
      ${RUNTIME_SWITCHES}
      const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
      const server = new McpServer({ name: 'local', version: '1.0.0' });
      server.registerTool('one', {}, async () => ({ content: [{ type: 'text', text: 'x' }] }));
      const cycle = async () => {
        const s = mcp({ transport: 'inprocess', server });
        if ((await s.tools({ runId: 'r' })).length !== 1) throw new Error('lost the tool');
        await s.close();
      };
      for (let i = 0; i < 20; i++) await cycle();
      const before = switches();
      for (let i = 0; i < 200; i++) await cycle();
      console.log('switches', switches() - before);
    `);
    expect(r.code).toBe(0);
    const switches = Number(/switches (\d+)/.exec(r.out)?.[1]);
    // With only the deadline timer on the runtime: 590 here; with the whole opening there: 3,354.
    expect(switches).toBeLessThan(20);
  });

  it('lets the host exit once an in-process source is closed', async () => {
    const r = await runHost(`
      const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
      const server = new McpServer({ name: 'held', version: '1.0.0' });
      server.registerTool('one', {}, async () => ({ content: [{ type: 'text', text: 'x' }] }));
      const s = mcp({ transport: 'inprocess', server });
      s.tools({ runId: 'r' }).then((defs) => console.log('tools', defs.length)).then(() => s.close()).then(() => console.log('closed'));
    `);
    expect(r.code).toBe(0);
    expect(r.out).toContain('tools 1');
    expect(r.out).toContain('closed');
  });
});

describe("the host's event loop and a stdio import", () => {
  it.runIf(process.platform === 'linux')("reads a stdio server's replies on the JS thread: sequential calls wake no runtime thread (Linux)", async () => {
    // The child's stdout is read by Node's loop and each reply settles its call right there: a
    // runtime thread that read it would be woken by the pipe and would wake the JS thread in
    // turn (about two switches a call).
    const r = await runHost(`
      ${RUNTIME_SWITCHES}
      const s = mcp({ transport: 'stdio', command: process.execPath, args: [${JSON.stringify(stubborn)}], stderr: 'ignore' });
      const echo = (await s.tools({ runId: 'r' })).find((d) => d.name === 'echo');
      for (let i = 0; i < 20; i++) await echo.execute({ text: 'warm' }, {});
      const before = switches();
      for (let i = 0; i < 300; i++) {
        const out = await echo.execute({ text: 'n' + i }, {});
        if (!JSON.stringify(out).includes('n' + i)) throw new Error('lost a reply: ' + JSON.stringify(out));
      }
      console.log('switches', switches() - before);
      await s.close();
    `);
    expect(r.code).toBe(0);
    const switches = Number(/switches (\d+)/.exec(r.out)?.[1]);
    expect(switches).toBeLessThan(20);
  });
});

describe('the leak probe of the test suite', () => {
  it('finds a child left behind on purpose, whichever thread forked it', async () => {
    const before = liveChildren();
    const source = mcp({ transport: 'stdio', command: process.execPath, args: [stubborn], stderr: 'ignore' });
    await source.tools(session);
    const left = liveChildren().filter((p) => !before.includes(p));
    expect(left.length).toBe(1);
    await source.close();
    expect(liveChildren().filter((p) => !before.includes(p))).toEqual([]);
  });
});
