// tools() racing close(), checked from outside the host: a connect that close() overtakes, in
// whatever phase (spawning, handshaking, the first page), leaves no process behind (running or
// zombie) and no HTTP session open on the server, and a later tools() connects afresh.
import { readdirSync, readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../examples/server.mjs';
import { type HttpServer, serveHttp, startHost, waitFor } from './helpers/harness.js';
import { rmcpServerBin } from './helpers/servers.js';

const ROUNDS = 100;

/** Every child of `pid`, zombies included: a killed child nobody reaped is still a leak. */
function childrenOf(pid: number): Array<{ pid: number; state: string }> {
  const found = new Map<number, string>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let listed = '';
    try {
      listed = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      continue;
    }
    for (const child of listed.split(' ').filter(Boolean).map(Number)) {
      try {
        const stat = readFileSync(`/proc/${child}/stat`, 'utf8');
        found.set(child, stat.slice(stat.lastIndexOf(')') + 2)[0]);
      } catch {
        // gone while we looked
      }
    }
  }
  return [...found].map(([p, state]) => ({ pid: p, state }));
}

/**
 * The race of the report, `ROUNDS` times on fresh sources in a host process of its own: two
 * tools() and a close() k ms later (k from 0 to 12), then close(). The host then says how the
 * rounds ended, checks that a later tools() works, and waits to be looked at.
 */
function raceBody(config: Record<string, unknown>, rounds: number): string {
  return `
    const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
    const outcomes = {};
    for (let i = 0; i < ${rounds}; i++) {
      const source = mcp(${JSON.stringify(config)});
      const r = await Promise.allSettled([source.tools({ runId: 'r' }), sleep(i % 13).then(() => source.close()), source.tools({ runId: 'r' })]);
      const key = r.map((x) => x.status[0]).join('');
      outcomes[key] = (outcomes[key] ?? 0) + 1;
      await source.close();
    }
    const after = mcp(${JSON.stringify(config)});
    const names = (await after.tools({ runId: 'r' })).map((d) => d.name);
    await after.close();
    console.log(JSON.stringify({ outcomes, names }));
    await sleep(60_000);
  `;
}

async function race(config: Record<string, unknown>, rounds = ROUNDS) {
  const host = startHost(raceBody(config, rounds));
  try {
    expect(await waitFor(() => host.stdout().includes('outcomes'), 60_000)).toBe(true);
    const report = JSON.parse(host.stdout().trim().split('\n').pop()!);
    // The same wait the report gave the original.
    await new Promise((r) => setTimeout(r, 1500));
    return { report, children: childrenOf(host.child.pid!) };
  } finally {
    host.child.kill('SIGKILL');
    await host.exited(5000);
  }
}

describe(`tools() racing close(), ${ROUNDS} rounds`, () => {
  it('stdio (the Rust SDK server, which starts in a millisecond, so every phase is hit): no child survives, not even a zombie', async () => {
    const { report, children } = await race({ transport: 'stdio', command: rmcpServerBin(), stderr: 'ignore' });
    expect(children).toEqual([]);
    expect(report.names.length).toBeGreaterThan(0);
    // Both orders happened: close() first (all fulfilled) and close() overtaking a connect.
    expect(Object.keys(report.outcomes).length).toBeGreaterThan(1);
  }, 120_000);

  // Node takes longer to start than the race lasts, so these rounds all close a connect in its
  // spawning or handshaking phase; fewer of them say as much.
  it('stdio (an SDK server): no child survives', async () => {
    const example = new URL('../examples/server.mjs', import.meta.url).pathname;
    const { report, children } = await race({ transport: 'stdio', command: process.execPath, args: [example], stderr: 'ignore' }, 30);
    expect(children).toEqual([]);
    expect(report.names).toContain('echo');
  }, 120_000);

  describe('streamable HTTP (stateful): no session is left open on the server', () => {
    let served: HttpServer;
    beforeAll(async () => {
      served = await serveHttp(buildServer, true);
    });
    afterAll(async () => {
      await served.stop();
    });

    it('every session opened is deleted', async () => {
      const { report, children } = await race({ transport: 'streamable-http', url: served.url });
      expect(children).toEqual([]);
      expect(report.names).toContain('echo');
      // Enough rounds got as far as opening a session for the check to mean something; how
      // many do depends on how busy the machine is (a close 0-12 ms after the start can
      // overtake a slow connect before its first POST), so the floor is low.
      const opened = served.requests.filter((r) => r.method === 'POST' && r.headers['mcp-session-id'] === undefined).length;
      expect(opened).toBeGreaterThan(ROUNDS / 5);
      expect(served.sessions()).toBe(0);
    }, 120_000);
  });
});
