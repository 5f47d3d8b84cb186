// A call settles by construction, whatever a server answers. A real server
// (fixtures/hostile-tasks.mjs) answers each call and each task poll with what the test
// generated: task handles with numbers at every extreme (a poll interval of 1e300 once
// panicked the task-following code and left execute() pending forever), wrong types, missing
// members and huge values, in both eras, over stdio and HTTP, and `resumeTask` with hostile
// polls. Every execute() must settle by callMs plus a margin, every failure must be an Error,
// and close() must settle every call still in flight at once. The cases come from a seeded
// generator: a failure names the seed and the case.
import { type ChildProcess, spawn } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { mcp, resumeTask } from '../lib/index.js';
import { closeAfterEach, seeded, session } from './helpers/common.js';
import { fixture, runHost } from './helpers/harness.js';

const keep = closeAfterEach();
const CALL_MS = 400;
// Generous: a liveness bound (a hang is a failure), not a speed figure.
const MARGIN_MS = 3000;
const CASES = Number(process.env.HOSTILE_TASK_CASES ?? 48);

const NUMBERS = [1e300, -1e300, Number.MAX_VALUE, -Number.MAX_VALUE, 2 ** 64, -(2 ** 63), 2 ** 53 + 2, 0, -0, 0.5, 1e-300, -1, 10, 20, 30_000];
const ODD = ['', 'x'.repeat(200_000), null, true, false, [], {}, [1, 'a'], { a: 1 }, '\u202e\u0007\u001b[2J', '1e300'];
const STATUSES = ['working', 'completed', 'input_required', 'failed', 'cancelled', 'COMPLETED', '', 5, null, {}, 'w'.repeat(50_000)];

function hostileValue(g: ReturnType<typeof seeded>): unknown {
  return g.next() < 0.5 ? g.pick(NUMBERS) : g.pick(ODD);
}

/** One task object as a server might send it: every member present or not, right or wrong. */
function task(g: ReturnType<typeof seeded>, key: string, modern: boolean): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const maybe = (name: string, value: () => unknown) => {
    if (g.next() < 0.75) out[name] = value();
  };
  maybe('taskId', () => (g.next() < 0.8 ? key : hostileValue(g)));
  maybe('status', () => (g.next() < 0.8 ? g.pick(STATUSES) : hostileValue(g)));
  maybe(modern ? 'pollIntervalMs' : 'pollInterval', () => hostileValue(g));
  maybe('statusMessage', () => hostileValue(g));
  maybe('ttlMs', () => hostileValue(g));
  maybe('result', () => (g.next() < 0.5 ? { content: [{ type: 'text', text: 'done' }] } : hostileValue(g)));
  maybe('inputRequests', () =>
    g.next() < 0.5 ? { a: { method: 'elicitation/create', params: { message: 'm', requestedSchema: { type: 'object' } } } } : hostileValue(g),
  );
  maybe('error', () => (g.next() < 0.5 ? { code: hostileValue(g), message: hostileValue(g) } : hostileValue(g)));
  return out;
}

/** The arguments that script one call: its handle and the answers to its polls. */
function scripted(g: ReturnType<typeof seeded>, i: number, modern: boolean) {
  const key = `k${i}`;
  const inner = task(g, key, modern);
  let handle: unknown;
  if (modern) handle = g.next() < 0.9 ? { resultType: 'task', ...inner } : hostileValue(g);
  else handle = g.next() < 0.9 ? { task: inner } : { task: hostileValue(g) };
  const polls = Array.from({ length: 1 + Math.floor(g.next() * 3) }, () => task(g, key, modern));
  return { key, handle, polls };
}

/** Settles `p` or says it did not within `ms`. */
async function settledWithin(p: Promise<unknown>, ms: number): Promise<{ settled: boolean; value?: unknown; error?: unknown }> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<{ settled: false }>((r) => {
    timer = setTimeout(() => r({ settled: false }), ms);
  });
  try {
    return await Promise.race([
      p.then(
        (value) => ({ settled: true, value }),
        (error) => ({ settled: true, error }),
      ),
      late,
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** The fixture served over HTTP on 127.0.0.1, with its URL. */
async function overHttp(era: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, [fixture('hostile-tasks.mjs')], { env: { ...process.env, PORT: '0', ERA: era }, stdio: ['ignore', 'pipe', 'inherit'] });
  keep.defer(() => child.kill());
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d) => {
      const m = /listening (\d+)/.exec(String(d));
      if (m) resolve(Number(m[1]));
    });
    child.on('exit', () => reject(new Error('the fixture exited')));
  });
  return { url: `http://127.0.0.1:${port}/mcp`, child };
}

async function sourceFor(transport: 'stdio' | 'http', era: 'legacy' | 'modern', callMs = CALL_MS) {
  const common = { tasks: true, timeouts: { callMs }, ...(era === 'modern' ? { protocol: '2026-07-28' } : {}) };
  if (transport === 'stdio') {
    return keep(
      mcp({ transport: 'stdio', command: process.execPath, args: [fixture('hostile-tasks.mjs')], env: { ERA: era }, stderr: 'ignore', ...common } as any),
    );
  }
  const { url } = await overHttp(era);
  return keep(mcp({ transport: 'streamable-http', url, ...common } as any));
}

describe('a call settles whatever a server answers to it and to its task polls', () => {
  for (const transport of ['stdio', 'http'] as const) {
    for (const era of ['legacy', 'modern'] as const) {
      it(`${transport}, ${era}: ${CASES} generated hostile task answers all settle by callMs`, async () => {
        const seed = 0x41 + (transport === 'http' ? 2 : 0) + (era === 'modern' ? 1 : 0);
        const g = seeded(seed);
        const source = await sourceFor(transport, era);
        const [t] = await source.tools(session);
        const cases = Array.from({ length: CASES }, (_, i) => scripted(g, i, era === 'modern'));
        const outcomes = await Promise.all(cases.map((args) => settledWithin(t.execute(args, session), CALL_MS + MARGIN_MS)));
        outcomes.forEach((o, i) => {
          const where = `seed ${seed}, case ${i}: ${JSON.stringify(cases[i]).slice(0, 300)}`;
          expect(o.settled, where).toBe(true);
          if (o.error !== undefined) {
            expect(o.error, where).toBeInstanceOf(Error);
            expect((o.error as Error).message, where).not.toMatch(/panicked|without an outcome/);
          }
        });
        // Still answering after all that: the connection and the runtime are whole.
        const seen = await source.tools(session).then((defs: any[]) => defs[1].execute({}, session));
        expect(JSON.parse(seen).calls).toBe(CASES);
      });
    }
  }

  it('resumeTask with hostile polls settles by callMs, in both eras', async () => {
    for (const era of ['legacy', 'modern'] as const) {
      const g = seeded(0x52 + (era === 'modern' ? 1 : 0));
      const source = await sourceFor('stdio', era);
      const [t] = await source.tools(session);
      // A call scripts the polls of a task id; resumeTask then follows that id.
      const runs = Array.from({ length: 12 }, (_, i) => {
        const { key, polls } = scripted(g, i, era === 'modern');
        return t
          .execute({ key, handle: { content: [{ type: 'text', text: 'scripted' }] }, polls }, session)
          .then(() => settledWithin(resumeTask(source, 't', key, session), CALL_MS + MARGIN_MS));
      });
      for (const outcome of await Promise.all(runs)) expect(outcome.settled).toBe(true);
    }
  });

  it('a poll interval of 1e300 ends the call at callMs with a timeout, and the host prints no panic', async () => {
    const run = await runHost(
      `
      const source = mcp({ transport: 'stdio', command: process.execPath, args: [${JSON.stringify(fixture('hostile-tasks.mjs'))}],
        stderr: 'ignore', tasks: true, protocol: '2026-07-28', timeouts: { callMs: 300 } });
      const [t] = await source.tools({ runId: 'r' });
      const handle = { resultType: 'task', taskId: 'k', status: 'working', pollIntervalMs: 1e300 };
      const outcome = await t.execute({ key: 'k', handle, polls: [handle] }, { runId: 'r' }).then(String, (e) => e.message);
      console.log('outcome:', outcome);
      await source.close();
    `,
      15_000,
    );
    expect(run.out).toContain("outcome: mcp: tool 't' timed out after 300ms (timeouts.callMs)");
    expect(run.err).not.toMatch(/panicked/);
    // Exited by itself, nothing left pending.
    expect(run.code).toBe(0);
  });

  it('close() settles every call in flight at once, a task waiting between polls among them', async () => {
    for (const era of ['legacy', 'modern'] as const) {
      const source = await sourceFor('stdio', era, 60_000);
      const [t] = await source.tools(session);
      const modern = era === 'modern';
      const waiting = (key: string) => {
        const inner = { taskId: key, status: 'working', [modern ? 'pollIntervalMs' : 'pollInterval']: 30_000 };
        return { key, handle: modern ? { resultType: 'task', ...inner } : { task: inner }, polls: [inner] };
      };
      const calls = Array.from({ length: 6 }, (_, i) => t.execute(waiting(`c${i}`), session));
      // Every call has become a task waiting out its 30 s poll interval.
      await new Promise((r) => setTimeout(r, 300));
      const closing = source.close();
      const outcomes = await Promise.all(calls.map((c) => settledWithin(c, 2000)));
      await closing;
      for (const o of outcomes) {
        expect(o.settled).toBe(true);
        expect(o.error).toBeInstanceOf(Error);
      }
    }
  });
});
