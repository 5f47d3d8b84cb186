// OpenTelemetry, with the real SDK registered as an application registers it: MCP client spans
// and the duration histogram per the MCP semantic conventions, the trace context each server
// received in `params._meta` (read back by the server itself), the engine's execute_tool span
// taken over instead of a second span, and nothing of an argument, a result or a header in any
// attribute. The peer-absent case runs in a child process that cannot resolve the API.
import { execFileSync } from 'node:child_process';
import { copyFileSync, cpSync, mkdtempSync, readdirSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { context, metrics, propagation, type Span, SpanStatusCode, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { AggregationTemporality, InMemoryMetricExporter, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, type ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createMcp, mcp } from '../lib/index.js';
import { closeAfterEach, ctx, rejection, session } from './helpers/common.js';
import { fixture, serveHttp } from './helpers/harness.js';
import { traceServer } from './fixtures/trace-server.mjs';

const spans = new InMemorySpanExporter();
const metricExporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
const reader = new PeriodicExportingMetricReader({ exporter: metricExporter, exportIntervalMillis: 3_600_000 });
const tracer = trace.getTracer('test-engine');
const keep = closeAfterEach();

beforeAll(() => {
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
  metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));
});
afterAll(() => {
  trace.disable();
  metrics.disable();
  propagation.disable();
  context.disable();
});
beforeEach(() => spans.reset());

const stdio = (script = 'trace-server.mjs', extra: Record<string, unknown> = {}) => ({
  transport: 'stdio',
  command: process.execPath,
  args: [fixture(script)],
  ...extra,
});
const traceparentOf = (span: ReadableSpan | Span) => {
  const c = span.spanContext();
  return `00-${c.traceId}-${c.spanId}-0${c.traceFlags}`;
};
const finished = (name: string) => spans.getFinishedSpans().filter((s) => s.name === name);
const only = (name: string) => {
  const found = finished(name);
  expect(found, `spans named '${name}'`).toHaveLength(1);
  return found[0];
};
const parentOf = (span: ReadableSpan) => span.parentSpanContext?.spanId;
/** Runs `fn` inside an active span of its own, ended after; resolves with both. */
async function under<T>(name: string, fn: (span: Span) => Promise<T>, attributes: Record<string, string> = {}) {
  return tracer.startActiveSpan(name, { attributes }, async (span) => {
    try {
      return { span, value: await fn(span) };
    } finally {
      span.end();
    }
  });
}
async function durations() {
  await reader.forceFlush();
  const all =
    metricExporter
      .getMetrics()
      .at(-1)
      ?.scopeMetrics.flatMap((s) => s.metrics) ?? [];
  return all.filter((m) => m.descriptor.name === 'mcp.client.operation.duration');
}

describe('OpenTelemetry: spans, context and the histogram', () => {
  it('a stdio import and call: spans under the active one, the server gets each span as its parent', async () => {
    const source = keep(mcp(stdio()));
    const { span: agent, value: seen } = await under('agent', async () => {
      const defs = await source.tools(session);
      const whoami = defs.find((d) => d.name === 'whoami')!;
      const got = JSON.parse((await whoami.execute({}, ctx)) as string);
      const seen = JSON.parse((await defs.find((d) => d.name === 'seen')!.execute({}, ctx)) as string);
      return { got, seen };
    });
    const call = finished('tools/call whoami')[0];
    expect(call.kind).toBe(2); // CLIENT
    expect(parentOf(call)).toBe(agent.spanContext().spanId);
    expect(call.spanContext().traceId).toBe(agent.spanContext().traceId);
    // The server read the call span's own context in its request's _meta.
    expect(seen.got.traceparent).toBe(traceparentOf(call));
    expect(call.attributes).toEqual({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'whoami',
      'gen_ai.operation.name': 'execute_tool',
      'jsonrpc.request.id': expect.stringMatching(/^\d+$/),
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'pipe',
    });
    expect(call.status.code).toBe(SpanStatusCode.UNSET);

    const init = only('initialize');
    const list = only('tools/list');
    for (const span of [init, list]) {
      expect(parentOf(span)).toBe(agent.spanContext().spanId);
      expect(span.kind).toBe(2);
      expect(span.attributes['mcp.protocol.version']).toBe('2025-11-25');
      expect(span.attributes['network.transport']).toBe('pipe');
      expect(span.attributes['jsonrpc.request.id']).toMatch(/^\d+$/);
    }
    expect(seen.seen).toEqual([
      { method: 'initialize', traceparent: traceparentOf(init) },
      { method: 'tools/list', traceparent: traceparentOf(list) },
    ]);

    const [histogram] = await durations();
    expect(histogram.descriptor.unit).toBe('s');
    const points = histogram.dataPoints as any[];
    const methods = points.map((p) => p.attributes['mcp.method.name']);
    expect(methods).toEqual(expect.arrayContaining(['initialize', 'tools/list', 'tools/call']));
    const callPoint = points.find((p) => p.attributes['gen_ai.tool.name'] === 'whoami');
    expect(callPoint.attributes).toEqual({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'whoami',
      'gen_ai.operation.name': 'execute_tool',
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'pipe',
    });
    expect(callPoint.value.count).toBe(1);
    expect(callPoint.value.buckets.boundaries).toEqual([0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300]);
  });

  it('errors: isError is tool_error, a JSON-RPC error its code, a timeout, a server that died, an abort', async () => {
    const source = keep(mcp(stdio('trace-server.mjs', { timeouts: { callMs: 300 } })));
    const defs = await source.tools(session);
    const def = (name: string) => defs.find((d) => d.name === name)!;
    await rejection(def('fail').execute({ text: 'x' }, ctx));
    await rejection(def('broken').execute({ text: 'x' }, ctx));
    await rejection(def('slow').execute({}, ctx));
    const aborted = new AbortController();
    const pending = def('slow').execute({}, { ...ctx, signal: aborted.signal });
    aborted.abort();
    await rejection(pending);
    await rejection(def('exit').execute({}, ctx));
    const typeOf = (name: string) => finished(`tools/call ${name}`).map((s) => [s.attributes['error.type'], s.status.code]);
    expect(typeOf('fail')).toEqual([['tool_error', SpanStatusCode.ERROR]]);
    expect(typeOf('broken')).toEqual([['-32050', SpanStatusCode.ERROR]]);
    expect(typeOf('slow').sort()).toEqual([
      ['cancelled', SpanStatusCode.ERROR],
      ['timeout', SpanStatusCode.ERROR],
    ]);
    expect(typeOf('exit')).toEqual([['connection_closed', SpanStatusCode.ERROR]]);
    // No server text in a status: the conventions' JSON-RPC message could repeat an argument.
    for (const span of spans.getFinishedSpans()) expect(span.status.message).toBeUndefined();
    const points = (await durations())[0].dataPoints as any[];
    const failed = points.filter((p) => p.attributes['error.type'] !== undefined).map((p) => p.attributes['error.type']);
    expect(failed).toEqual(expect.arrayContaining(['tool_error', '-32050', 'timeout', 'cancelled', 'connection_closed']));
  });

  it('input refused before sending: the span says invalid_input, and no duration is recorded for it', async () => {
    const source = keep(mcp(stdio()));
    const echo = (await source.tools(session)).find((d) => d.name === 'echo')!;
    await rejection(echo.execute({ text: 42 }, ctx));
    expect(only('tools/call echo').attributes['error.type']).toBe('invalid_input');
    const points = (await durations())[0].dataPoints as any[];
    expect(points.some((p) => p.attributes['error.type'] === 'invalid_input')).toBe(false);
  });

  it("the engine's execute_tool span gets the MCP attributes; no second span; the server's parent is it", async () => {
    const source = keep(mcp(stdio()));
    const whoami = (await source.tools(session)).find((d) => d.name === 'whoami')!;
    spans.reset();
    const { span: engine, value } = await under('execute_tool whoami', async () => JSON.parse((await whoami.execute({}, ctx)) as string), {
      'gen_ai.operation.name': 'execute_tool',
      'gen_ai.tool.name': 'whoami',
    });
    expect(finished('tools/call whoami')).toEqual([]);
    expect(spans.getFinishedSpans().map((s) => s.name)).toEqual(['execute_tool whoami']);
    const recorded = only('execute_tool whoami');
    expect(recorded.attributes).toMatchObject({
      'mcp.method.name': 'tools/call',
      'gen_ai.tool.name': 'whoami',
      'jsonrpc.request.id': expect.stringMatching(/^\d+$/),
      'mcp.protocol.version': '2025-11-25',
      'network.transport': 'pipe',
    });
    expect(value.traceparent).toBe(traceparentOf(engine));

    // A span of another tool's execution is not this call's: it gets its own span under it.
    spans.reset();
    await under('execute_tool other', () => whoami.execute({}, ctx), { 'gen_ai.operation.name': 'execute_tool', 'gen_ai.tool.name': 'other' });
    expect(parentOf(only('tools/call whoami'))).toBe(only('execute_tool other').spanContext().spanId);
  });

  it('a failed call under the engine span sets error.type on it, and the span is left to the engine to end', async () => {
    const source = keep(mcp(stdio()));
    const fail = (await source.tools(session)).find((d) => d.name === 'fail')!;
    spans.reset();
    await under('execute_tool fail', async (span) => {
      await rejection(fail.execute({ text: 'x' }, ctx));
      expect(span.isRecording()).toBe(true);
    });
    const engine = only('execute_tool fail');
    expect(engine.attributes['error.type']).toBe('tool_error');
    expect(engine.status.code).toBe(SpanStatusCode.UNSET);
  });

  it('a modern (2026-07-28) connection carries the trace context beside its envelope', async () => {
    const source = keep(mcp(stdio('trace-modern.mjs')));
    const { value } = await under('agent', async () => {
      const whoami = (await source.tools(session)).find((d) => d.name === 'whoami')!;
      return JSON.parse((await whoami.execute({}, ctx)) as string);
    });
    const call = only('tools/call whoami');
    expect(value.traceparent).toBe(traceparentOf(call));
    expect(value.envelope).toContain('io.modelcontextprotocol/protocolVersion');
    expect(call.attributes['mcp.protocol.version']).toBe('2026-07-28');
    // The 2025 opening was refused with a JSON-RPC error, then discovery spoke 2026.
    expect(only('initialize').attributes['error.type']).toMatch(/^-?\d+$/);
    expect(only('server/discover').attributes['mcp.protocol.version']).toBe('2026-07-28');
    expect(only('tools/list').attributes['mcp.protocol.version']).toBe('2026-07-28');
  });

  it('streamable HTTP (stateful): tcp, the server address and port, the session id', async () => {
    const server = keep(await serveHttp(traceServer, true));
    const source = keep(mcp({ transport: 'streamable-http', url: server.url }));
    const whoami = (await source.tools(session)).find((d) => d.name === 'whoami')!;
    const got = JSON.parse((await whoami.execute({}, ctx)) as string);
    const call = only('tools/call whoami');
    expect(got.traceparent).toBe(traceparentOf(call));
    const sessionId = server.requests.map((r) => r.headers['mcp-session-id']).find((id) => typeof id === 'string');
    expect(sessionId).toBeTruthy();
    expect(call.attributes).toMatchObject({
      'network.transport': 'tcp',
      'network.protocol.name': 'http',
      'server.address': '127.0.0.1',
      'server.port': Number(new URL(server.url).port),
      'mcp.session.id': sessionId,
    });
    expect(only('tools/list').attributes['mcp.session.id']).toBe(sessionId);
  });

  it('in-process: the same spans and context, transport inproc', async () => {
    const source = keep(mcp({ transport: 'inprocess', server: traceServer() }));
    const { span: agent, value } = await under('agent', async () => {
      const defs = await source.tools(session);
      const got = JSON.parse((await defs.find((d) => d.name === 'whoami')!.execute({}, ctx)) as string);
      const seen = JSON.parse((await defs.find((d) => d.name === 'seen')!.execute({}, ctx)) as string);
      return { got, seen };
    });
    const call = only('tools/call whoami');
    expect(parentOf(call)).toBe(agent.spanContext().spanId);
    expect(value.got.traceparent).toBe(traceparentOf(call));
    expect(call.attributes['network.transport']).toBe('inproc');
    expect(value.seen).toEqual([
      { method: 'initialize', traceparent: traceparentOf(only('initialize')) },
      { method: 'tools/list', traceparent: traceparentOf(only('tools/list')) },
    ]);
  });

  it('no argument, result, header or env value in any attribute, span or metric', async () => {
    const secret = 'sk-live-0123456789abcdef';
    const server = keep(await serveHttp(traceServer, true));
    const source = keep(
      mcp({
        transport: 'streamable-http',
        url: `${server.url}?token=query-secret-value`,
        http: { headers: { authorization: 'Bearer header-secret-value', 'x-api-key': 'another-header-secret' } },
      }),
    );
    const defs = await source.tools(session);
    const def = (name: string) => defs.find((d) => d.name === name)!;
    expect(await def('echo').execute({ text: secret }, ctx)).toContain(secret);
    await rejection(def('fail').execute({ text: secret }, ctx));
    await rejection(def('broken').execute({ text: secret }, ctx));
    const stdioSource = keep(mcp(stdio('trace-server.mjs', { env: { PATH: process.env.PATH, API_TOKEN: 'env-secret-value' } })));
    await (await stdioSource.tools(session)).find((d) => d.name === 'echo')!.execute({ text: secret }, ctx);

    const values: string[] = [];
    for (const span of spans.getFinishedSpans()) {
      values.push(span.name, String(span.status.message ?? ''));
      for (const v of Object.values(span.attributes)) values.push(String(v));
    }
    for (const m of await durations()) for (const p of m.dataPoints as any[]) for (const v of Object.values(p.attributes)) values.push(String(v));
    expect(spans.getFinishedSpans().length).toBeGreaterThan(5);
    for (const leak of [secret, 'query-secret-value', 'header-secret-value', 'another-header-secret', 'env-secret-value', 'Bearer']) {
      expect(values.filter((v) => v.includes(leak))).toEqual([]);
    }
  });

  it('createMcp({ telemetry: false }): no spans and no trace context on the wire', async () => {
    const quiet = createMcp({ ConfigError: Error, telemetry: false });
    const source = keep(quiet(stdio()));
    const { value } = await under('agent', async () => {
      const whoami = (await source.tools(session)).find((d) => d.name === 'whoami')!;
      return JSON.parse((await whoami.execute({}, ctx)) as string);
    });
    expect(value.traceparent).toBeUndefined();
    expect(spans.getFinishedSpans().map((s) => s.name)).toEqual(['agent']);
  });
});

describe('OpenTelemetry absent', () => {
  // The package's JS and addon, copied where `@opentelemetry/api` cannot be resolved; the stdio
  // server runs from the repository, with its own SDK.
  const root = fileURLToPath(new URL('..', import.meta.url));
  const probe = `
    const { mcp } = require('./lib/index.js');
    let resolvable = true;
    try { require.resolve('@opentelemetry/api'); } catch { resolvable = false; }
    (async () => {
      const source = mcp({ transport: 'stdio', command: process.execPath, args: [${JSON.stringify(fixture('trace-server.mjs'))}] });
      const whoami = (await source.tools({ runId: 'r' })).find((d) => d.name === 'whoami');
      const got = JSON.parse(await whoami.execute({}, { runId: 'r' }));
      await source.close();
      const loaded = Object.keys(require.cache).filter((k) => k.includes('opentelemetry'));
      console.log(JSON.stringify({ resolvable, loaded, keys: got.keys }));
    })().catch((e) => { console.error(e); process.exit(1); });`;
  const run = (cwd: string) => JSON.parse(execFileSync(process.execPath, ['-e', probe], { cwd, encoding: 'utf8' }).trim());

  it('nothing is required, and calls go out without trace members', () => {
    const dir = mkdtempSync(join(tmpdir(), 'rulvar-no-otel-'));
    cpSync(join(root, 'lib'), join(dir, 'lib'), { recursive: true });
    copyFileSync(join(root, 'index.js'), join(dir, 'index.js'));
    copyFileSync(join(root, 'package.json'), join(dir, 'package.json'));
    for (const addon of readdirSync(root).filter((f) => f.endsWith('.node'))) symlinkSync(join(root, addon), join(dir, addon));
    expect(run(dir)).toEqual({ resolvable: false, loaded: [], keys: [] });
    // The same probe where the API resolves: it is loaded, so the check above could fail.
    expect(run(root).loaded.length).toBeGreaterThan(0);
  });
});
