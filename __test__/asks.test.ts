// When a server asks back in the middle of a call: elicitation (form and URL), sampling and
// roots answered by the host's hooks (`elicit`, `sample`, `roots`), on the 2025 wire (the
// server's own requests, over stdio, stateful HTTP and in-process) and on 2026-07-28 (Multi
// Round-Trip Requests: an `input_required` result, the call sent again). The peers are real:
// an SDK 1.x server (fixtures/asking-server.mjs) and an @modelcontextprotocol/server 2.x one
// (fixtures/modern-asking.mjs).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, mcp } from '../lib/index.js';
import { rejection, session, thrown } from './helpers/common.js';
import { fixture, serveHttp, type HttpServer } from './helpers/harness.js';
import { askingServer } from './fixtures/asking-server.mjs';

type Recorded = { request: any; ctx: any };

function hooks(record: Recorded[] = []) {
  return {
    elicit: {
      handler: (request: any, ctx: any) => {
        record.push({ request, ctx });
        if (request.mode === 'url') return { action: 'accept' };
        return { action: 'accept', content: { ok: true, email: 'dev@example.com' } };
      },
      url: true,
    },
    sample: (request: any, ctx: any) => {
      record.push({ request, ctx });
      return { role: 'assistant', content: { type: 'text', text: 'it is short' }, model: 'host-model' };
    },
    roots: [{ uri: 'file:///work/project', name: 'project' }],
  };
}

const stdio = (extra: Record<string, unknown> = {}, env: Record<string, string> = {}) =>
  mcp({ transport: 'stdio', command: process.execPath, args: [fixture('asking-server.mjs')], env, stderr: 'ignore', ...extra } as any);

const text = (result: unknown) => JSON.parse(result as string);

describe('config', () => {
  it('refuses ill-typed hooks, typed', () => {
    const base = { transport: 'stdio', command: 'x' };
    for (const [extra, message] of [
      [{ elicit: true }, 'mcp: elicit must be a function or { handler, form?, url? }, got true'],
      [{ sample: { tools: true } }, 'mcp: sample.handler must be a function'],
      [{ roots: [{ uri: 'https://x' }] }, "mcp: roots: a root's uri must be a file:// URI"],
      [{ maxInputRounds: 0 }, 'mcp: maxInputRounds must be an integer from 1 to 1000, got 0'],
    ] as const) {
      const err = thrown(() => mcp({ ...base, ...extra } as any));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toBe(message);
    }
  });
});

describe.each(['stdio', 'http', 'inprocess'] as const)('a 2025 server that asks back, over %s', (mode) => {
  let http: HttpServer | undefined;
  beforeAll(async () => {
    if (mode === 'http') http = await serveHttp(() => askingServer(), true);
  });
  afterAll(async () => {
    await http?.stop();
  });
  const open = (extra: Record<string, unknown>) => {
    if (mode === 'stdio') return stdio(extra);
    if (mode === 'http') return mcp({ transport: 'streamable-http', url: http!.url, ...extra } as any);
    return mcp({ transport: 'inprocess', server: askingServer(), ...extra } as any);
  };

  it('answers an elicitation, a sampling request and the roots through the hooks, with the calling tool’s ctx', async () => {
    const record: Recorded[] = [];
    const source = open(hooks(record));
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      const ctx = { runId: 'run-7', agent: { agentType: 'deployer' } };
      // The schema's default fills what the answer left out.
      expect(text(await by.confirm.execute({ what: 'the release' }, ctx))).toEqual({
        action: 'accept',
        content: { ok: true, email: 'dev@example.com', name: 'anonymous' },
      });
      expect(record[0].request).toMatchObject({ mode: 'form', message: 'Confirm the release?' });
      expect(record[0].ctx.runId).toBe('run-7');
      expect(record[0].ctx.agent).toEqual({ agentType: 'deployer' });
      expect(record[0].ctx.signal).toBeInstanceOf(AbortSignal);
      expect(await by.summarize.execute({ text: 'a long text' }, ctx)).toBe('host-model: it is short');
      expect(record[1].request).toMatchObject({ maxTokens: 64 });
      expect(text(await by.where.execute({}, ctx))).toEqual({ roots: [{ uri: 'file:///work/project', name: 'project' }] });
      expect(text(await by['where-detached'].execute({}, ctx))).toEqual({ roots: [{ uri: 'file:///work/project', name: 'project' }] });
      expect(text(await by.visit.execute({}, ctx))).toEqual({ action: 'accept' });
      expect(record[2].request).toMatchObject({ mode: 'url', url: 'https://consent.example.com/ok', elicitationId: 'consent-1' });
    } finally {
      await source.close();
    }
  });

  it('declares no capability without hooks: the server refuses to ask, as it does today', async () => {
    const source = open({});
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      expect((await rejection(by.confirm.execute({ what: 'x' }, session))).message).toMatch(/does not support (form )?elicitation/i);
    } finally {
      await source.close();
    }
  });

  it('refuses an accept that breaks the requested schema, without quoting it', async () => {
    const source = open({ elicit: () => ({ action: 'accept', content: { ok: 'yes', email: 'secret-words-from-a-person' } }) });
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      const err = await rejection(by.confirm.execute({ what: 'x' }, session));
      expect(err.message).toMatch(/mcp: the elicit hook's answer does not match the requested schema \(at \/ok: type; at \/email: format\)/);
      expect(err.message).not.toContain('secret-words');
    } finally {
      await source.close();
    }
  });

  it('declines when the hook throws, and tells the calling tool’s log why', async () => {
    const logged: string[] = [];
    const source = open({
      elicit: () => {
        throw new Error('nobody is at the keyboard');
      },
    });
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      const ctx = { runId: 'r', log: (level: string, msg: string) => logged.push(`${level} ${msg}`) };
      expect(text(await by.confirm.execute({ what: 'x' }, ctx))).toEqual({ action: 'decline' });
      expect(logged).toContain('warn mcp: the elicit hook failed: nobody is at the keyboard');
    } finally {
      await source.close();
    }
  });

  it('ends the call at callMs when the hook never answers, and aborts the hook’s signal', async () => {
    let signal: AbortSignal | undefined;
    const source = open({
      timeouts: { callMs: 400 },
      elicit: (_: unknown, ctx: any) => {
        signal = ctx.signal;
        return new Promise(() => {});
      },
    });
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      const err = await rejection(by.confirm.execute({ what: 'x' }, session));
      expect(err.message).toBe("mcp: tool 'confirm' timed out after 400ms (timeouts.callMs)");
      await new Promise((r) => setTimeout(r, 100));
      expect(signal?.aborted).toBe(true);
    } finally {
      await source.close();
    }
  });
});

describe('URL elicitation', () => {
  it('passes a URL to the hook only when it is https or loopback http', async () => {
    const record: Recorded[] = [];
    const source = stdio(hooks(record), { VISIT_URL: 'http://phish.example.com/login' });
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      const err = await rejection(by.visit.execute({}, session));
      expect(err.message).toMatch(/the elicitation URL is not https \(or http on a loopback host\)/);
      expect(record).toEqual([]);
    } finally {
      await source.close();
    }
  });

  it('is not offered unless asked for: a function offers the form mode only', async () => {
    const source = stdio({ elicit: () => ({ action: 'accept' }) });
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      expect((await rejection(by.visit.execute({}, session))).message).toMatch(/does not support URL elicitation/i);
    } finally {
      await source.close();
    }
  });
});

describe('a 2026-07-28 server that asks through input_required (Multi Round-Trip Requests)', () => {
  const modern = (extra: Record<string, unknown>, legacy: 'reject' | 'serve' = 'reject') =>
    mcp({ transport: 'stdio', command: process.execPath, args: [fixture('modern-asking.mjs')], env: { LEGACY: legacy }, stderr: 'ignore', ...extra } as any);

  it('answers the input requests through the same hooks and sends the call again with the requestState', async () => {
    const record: Recorded[] = [];
    const source = modern({
      elicit: (request: any, ctx: any) => {
        record.push({ request, ctx });
        return { action: 'accept', content: { confirm: true } };
      },
      sample: () => ({ role: 'assistant', content: { type: 'text', text: 'brief' }, model: 'm-2' }),
      roots: () => [{ uri: 'file:///srv' }],
    });
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      expect(text(await by.deploy.execute({ env: 'prod' }, { runId: 'run-9' }))).toEqual({ deployed: 'prod', note: 'none' });
      expect(record[0].request).toMatchObject({ mode: 'form', message: 'Deploy to prod?' });
      expect(record[0].ctx.runId).toBe('run-9');
      expect(text(await by.brief.execute({}, session))).toEqual({ model: 'm-2', said: 'brief', roots: ['file:///srv'] });
      expect(text(await by.seen.execute({}, session))).toEqual({ deploys: 1, retries: 1, stateEchoed: 1 });
    } finally {
      await source.close();
    }
  });

  it('ends a call that keeps asking after maxInputRounds', async () => {
    let asked = 0;
    const source = modern({
      maxInputRounds: 3,
      elicit: () => {
        asked++;
        return { action: 'accept', content: {} };
      },
    });
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      const err = await rejection(by.forever.execute({}, session));
      expect(err.message).toBe("mcp: tool 'forever' asked for input more than 3 times (maxInputRounds); the call ends unanswered");
      expect(asked).toBe(3);
    } finally {
      await source.close();
    }
  });

  it('without hooks declares no capability, and the server refuses to ask', async () => {
    const source = modern({});
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      // This server checks the request's declared capabilities itself (-32021).
      expect((await rejection(by.deploy.execute({ env: 'prod' }, session))).message).toMatch(/^MCP error -32021: .*do not declare the required capability/);
    } finally {
      await source.close();
    }
  });

  it('declares only what is offered: a server that checks refuses to ask for the rest', async () => {
    const source = modern({ elicit: () => ({ action: 'decline' }) });
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      expect((await rejection(by.brief.execute({}, session))).message).toMatch(
        /^MCP error -32021: Cannot request input '(model|roots)' \((sampling\/createMessage|roots\/list)\)/,
      );
    } finally {
      await source.close();
    }
  });
});

describe('server-everything with the capabilities offered', () => {
  it('lists its 17 tools, and the four that ask back work through the hooks', async () => {
    const { referenceBin } = await import('./helpers/servers.js');
    const asked: string[] = [];
    const source = mcp({
      transport: 'stdio',
      command: process.execPath,
      args: [referenceBin('everything'), 'stdio'],
      stderr: 'ignore',
      elicit: {
        handler: (request: any) => {
          asked.push(request.mode);
          if (request.mode === 'url') return { action: 'accept' };
          return { action: 'accept', content: { name: 'Ada', check: true, email: 'ada@example.com', homepage: 'https://ada.dev', birthdate: '1815-12-10' } };
        },
        url: true,
      },
      sample: () => ({ role: 'assistant', content: { type: 'text', text: 'sampled by the host' }, model: 'host-model' }),
      roots: [{ uri: 'file:///work', name: 'work' }],
    } as any);
    try {
      const defs = await source.tools(session);
      expect(defs).toHaveLength(17);
      const by = Object.fromEntries(defs.map((d) => [d.name, d]));
      expect(await by['get-roots-list'].execute({}, session)).toMatch(/1\. work\s+URI: file:\/\/\/work/);
      expect(await by['trigger-elicitation-request'].execute({}, session)).toMatch(/User provided the requested information[\s\S]*Name: Ada/);
      expect(JSON.stringify(await by['trigger-url-elicitation'].execute({ url: 'https://example.com/consent' }, session))).toMatch(/accept/);
      expect(await by['trigger-sampling-request'].execute({ prompt: 'hi', maxTokens: 10 }, session)).toMatch(/"model": "host-model"[\s\S]*sampled by the host/);
      expect(asked).toEqual(['form', 'url']);
    } finally {
      await source.close();
    }
  });

  it('lists the 13 of old without them', async () => {
    const { referenceBin } = await import('./helpers/servers.js');
    const source = mcp({ transport: 'stdio', command: process.execPath, args: [referenceBin('everything'), 'stdio'], stderr: 'ignore' } as any);
    try {
      expect(await source.tools(session)).toHaveLength(13);
    } finally {
      await source.close();
    }
  });
});

describe('a call aborted while its hook is asking', () => {
  it('rejects at once, aborts the hook’s signal, and tells the server', async () => {
    let hookSignal: AbortSignal | undefined;
    const source = stdio({
      elicit: (_: unknown, ctx: any) => {
        hookSignal = ctx.signal;
        return new Promise(() => {});
      },
    });
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      const controller = new AbortController();
      const pending = by.confirm.execute({ what: 'x' }, { runId: 'r', signal: controller.signal });
      while (hookSignal === undefined) await new Promise((r) => setTimeout(r, 10));
      controller.abort();
      expect((await rejection(pending)).message).toBe("mcp: tool 'confirm' was aborted");
      expect(hookSignal.aborted).toBe(true);
      // The server saw the cancel (notifications/cancelled aborted its request).
      let counts: any;
      for (let i = 0; i < 50; i++) {
        counts = text(await by.count.execute({}, session));
        if (counts.cancelled > 0) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      expect(counts.cancelled).toBe(1);
    } finally {
      await source.close();
    }
  });
});

describe('the @modelcontextprotocol/server 2.x server over each way in', () => {
  const answering = () => ({
    elicit: { handler: (request: any) => (request.mode === 'url' ? { action: 'accept' } : { action: 'accept', content: { confirm: true } }), url: true },
    sample: () => ({ role: 'assistant', content: { type: 'text', text: 'brief' }, model: 'm-2' }),
    roots: [{ uri: 'file:///srv' }],
  });

  it('over HTTP, modern only (createMcpHandler): input_required answered, the call sent again', async () => {
    const { serveModernHttp } = await import('./helpers/modern-http.js');
    const { modernAskingServer } = await import('./fixtures/modern-asking.mjs');
    const http = await serveModernHttp(modernAskingServer, 'reject');
    const source = mcp({ transport: 'streamable-http', url: http.url, ...answering() } as any);
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      expect(text(await by.deploy.execute({ env: 'staging' }, session))).toEqual({ deployed: 'staging', note: 'none' });
      expect(text(await by.consent.execute({}, session))).toEqual({ consent: 'accept' });
      expect(text(await by.brief.execute({}, session))).toEqual({ model: 'm-2', said: 'brief', roots: ['file:///srv'] });
      const calls = http.requests.filter((r) => r.body.includes('"tools/call"')).map((r) => JSON.parse(r.body));
      // Each ask is a second request with a new id, the answers and (for deploy) the state.
      expect(calls.map((c) => [c.params.name, c.params.inputResponses !== undefined, c.params.requestState !== undefined])).toEqual([
        ['deploy', false, false],
        ['deploy', true, true],
        ['consent', false, false],
        ['consent', true, false],
        ['brief', false, false],
        ['brief', true, false],
      ]);
      expect(new Set(calls.map((c) => c.id)).size).toBe(6);
    } finally {
      await source.close();
      await http.stop();
    }
  });

  it('over stdio serving both eras, on the 2025 wire', async () => {
    const source = mcp({
      transport: 'stdio',
      command: process.execPath,
      args: [fixture('modern-asking.mjs')],
      env: { LEGACY: 'serve' },
      stderr: 'ignore',
      ...answering(),
    } as any);
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      expect(text(await by.deploy.execute({ env: 'dev' }, session))).toEqual({ deployed: 'dev', note: 'none' });
    } finally {
      await source.close();
    }
  });

  it('in-process', async () => {
    const { modernAskingServer } = await import('./fixtures/modern-asking.mjs');
    const source = mcp({ transport: 'inprocess', server: modernAskingServer(), ...answering() } as any);
    try {
      const by = Object.fromEntries((await source.tools(session)).map((d) => [d.name, d]));
      expect(text(await by.deploy.execute({ env: 'local' }, session))).toEqual({ deployed: 'local', note: 'none' });
      expect(text(await by.brief.execute({}, session))).toEqual({ model: 'm-2', said: 'brief', roots: ['file:///srv'] });
      expect(text(await by.consent.execute({}, session))).toEqual({ consent: 'accept' });
    } finally {
      await source.close();
    }
  });
});
