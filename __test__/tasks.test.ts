// A call that comes back as a task (MCP Tasks, `tasks: true`): polled to its result within
// callMs, its status told to the calling tool's log, its input requests answered through the
// hooks, cancelled on the caller's signal and at the deadline. The peers are real servers: a
// 2026-07-28 stdio server of the io.modelcontextprotocol/tasks extension
// (fixtures/task-server.mjs) and server-everything's task tool (the 2025-11-25 experimental
// form).
import { describe, expect, it } from 'vitest';
import { ConfigError, mcp, resumeTask } from '../lib/index.js';
import { rejection, session, thrown } from './helpers/common.js';
import { fixture } from './helpers/harness.js';
import { referenceBin } from './helpers/servers.js';

const tasksServer = (extra: Record<string, unknown> = {}) =>
  mcp({ transport: 'stdio', command: process.execPath, args: [fixture('task-server.mjs')], stderr: 'ignore', ...extra } as any);

async function toolsOf(source: any) {
  return Object.fromEntries((await source.tools(session)).map((d: any) => [d.name, d]));
}

async function serverLog(by: any, until: (seen: any) => boolean = () => true) {
  let seen: any;
  for (let i = 0; i < 100; i++) {
    seen = JSON.parse(await by.log.execute({}, session));
    if (until(seen)) break;
    await new Promise((r) => setTimeout(r, 20));
  }
  return seen;
}

describe('tasks on 2026-07-28 (io.modelcontextprotocol/tasks)', () => {
  it('refuses a tasks key that is not a boolean', () => {
    const err = thrown(() => mcp({ transport: 'stdio', command: 'x', tasks: 'yes' } as any));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe("mcp: tasks must be a boolean, got the string 'yes'");
  });

  it('without tasks the extension is not declared and the server runs the call at once', async () => {
    const source = tasksServer();
    try {
      const by = await toolsOf(source);
      expect(await by.build.execute({ target: 'x' }, session)).toBe('build ran at once');
      expect((await serverLog(by)).declared).toBe(false);
    } finally {
      await source.close();
    }
  });

  it('polls a task to its result and tells each status change to the calling tool’s log, with the task id', async () => {
    const source = tasksServer({ tasks: true });
    try {
      const by = await toolsOf(source);
      const logged: Array<[string, string, any]> = [];
      const ctx = { runId: 'r', log: (level: string, msg: string, data: any) => logged.push([level, msg, data]) };
      expect(await by.build.execute({ target: 'app' }, ctx)).toBe('built app');
      const told = logged.filter(([, , data]) => data?.task !== undefined);
      expect(told.map(([level, msg]) => `${level} ${msg}`)).toEqual([
        'info task task-1: working',
        'info task task-1: working: step 1 of 3',
        'info task task-1: working: step 2 of 3',
        'info task task-1: completed',
      ]);
      expect(told[0][2].task).toEqual({ taskId: 'task-1', status: 'working' });
      expect(told[0][2].progressToken).toBeTypeOf('number');
      const seen = await serverLog(by);
      expect(seen.declared).toBe(true);
      expect(seen.polls).toBe(3);
    } finally {
      await source.close();
    }
  });

  it('answers a task’s input request through the elicit hook and sends it with tasks/update', async () => {
    const asked: any[] = [];
    const source = tasksServer({
      tasks: true,
      elicit: (request: any) => {
        asked.push(request);
        return { action: 'accept', content: { ok: true } };
      },
    });
    try {
      const by = await toolsOf(source);
      expect(await by.approve.execute({}, session)).toBe('approved');
      expect(asked).toEqual([expect.objectContaining({ mode: 'form', message: 'Approve the change?' })]);
      expect((await serverLog(by)).updates).toEqual([{ ok: { action: 'accept', content: { ok: true } } }]);
    } finally {
      await source.close();
    }
  });

  it('cancels the task when the caller aborts: the server gets tasks/cancel', async () => {
    const source = tasksServer({ tasks: true });
    try {
      const by = await toolsOf(source);
      const controller = new AbortController();
      const pending = by.stall.execute({}, { runId: 'r', signal: controller.signal });
      await new Promise((r) => setTimeout(r, 150));
      controller.abort();
      expect((await rejection(pending)).message).toBe("mcp: tool 'stall' was aborted");
      expect((await serverLog(by, (s) => s.cancels.length > 0)).cancels).toEqual(['task-1']);
    } finally {
      await source.close();
    }
  });

  it('ends the task at callMs and cancels it', async () => {
    const source = tasksServer({ tasks: true, timeouts: { callMs: 300 } });
    try {
      const by = await toolsOf(source);
      expect((await rejection(by.stall.execute({}, session))).message).toBe("mcp: tool 'stall' timed out after 300ms (timeouts.callMs)");
      expect((await serverLog(by, (s) => s.cancels.length > 0)).cancels).toEqual(['task-1']);
    } finally {
      await source.close();
    }
  });
});

describe('a task kept from an earlier run', () => {
  it('is followed by its id with resumeTask: polled at once to its result, each status told', async () => {
    const source = tasksServer({ tasks: true });
    try {
      const by = await toolsOf(source);
      // The call that started the task; its id as the log told it (what an engine keeps).
      let taskId: string | undefined;
      const started = by.build.execute({ target: 'app' }, { runId: 'r', log: (_l: string, _m: string, data: any) => (taskId ??= data?.task?.taskId) });
      while (taskId === undefined) await new Promise((r) => setTimeout(r, 5));
      const logged: string[] = [];
      const resumed = resumeTask(source, 'build', taskId, { runId: 'r2', log: (level: string, msg: string) => logged.push(`${level} ${msg}`) });
      expect(await resumed).toBe('built app');
      expect(await started).toBe('built app');
      expect(logged[0]).toBe('info task task-1: working');
      expect(logged[logged.length - 1]).toBe('info task task-1: completed');
      // A task the server does not know is the call's error: the server's answer, in the SDK
      // client's words, the tool beside them.
      const unknown: any = await rejection(resumeTask(source, 'build', 'task-404'));
      expect(unknown.message).toBe('MCP error -32602: unknown task');
      expect([unknown.name, unknown.code, unknown.tool]).toEqual(['McpError', -32602, 'build']);
      expect((await rejection(resumeTask(source, 'nope', 'task-1'))).message).toMatch(/^mcp: no tool 'nope' was admitted from mcp:stdio:/);
    } finally {
      await source.close();
    }
  });

  it('needs tasks: true', async () => {
    const source = tasksServer();
    try {
      await toolsOf(source);
      expect((await rejection(resumeTask(source, 'build', 'task-1'))).message).toMatch(/resumes a task only with 'tasks: true' set/);
    } finally {
      await source.close();
    }
  });
});

describe('tasks on 2025-11-25 (the experimental form)', () => {
  it('runs server-everything’s task tool to its result, its clarifying question answered by the hook', async () => {
    const asked: any[] = [];
    const source = mcp({
      transport: 'stdio',
      command: process.execPath,
      args: [referenceBin('everything'), 'stdio'],
      stderr: 'ignore',
      tasks: true,
      elicit: (request: any) => {
        asked.push(request);
        const choice = request.requestedSchema.properties.interpretation.oneOf[0].const;
        return { action: 'accept', content: { interpretation: choice } };
      },
    } as any);
    try {
      const by = await toolsOf(source);
      const logged: string[] = [];
      const report = await by['simulate-research-query'].execute(
        { topic: 'python', ambiguous: true },
        { runId: 'r', log: (level: string, msg: string) => logged.push(`${level} ${msg}`) },
      );
      expect(JSON.stringify(report)).toMatch(/python/i);
      expect(asked).toHaveLength(1);
      expect(logged.some((l) => /^info task \S+: working/.test(l))).toBe(true);
    } finally {
      await source.close();
    }
  }, 30_000);
});
