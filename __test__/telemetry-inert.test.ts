// OpenTelemetry's API installed with nothing registered, as when a dependency brought it along:
// no span of a request would be seen, so the native side sends the requests of a sweep without
// waiting for the tracing hook. What registers later is asked about before the next sweep: a
// tracer provider, a propagator or a meter provider, each alone, makes the requests traced again.
import { createRequire } from 'node:module';
import { metrics, propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { MeterProvider } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { afterEach, describe, expect, it } from 'vitest';
import { mcp } from '../lib/index.js';
import { closeAfterEach, ctx, session } from './helpers/common.js';
import { fixture } from './helpers/harness.js';

const { forSource, registryKey } = createRequire(import.meta.url)('../lib/telemetry.js');
const keep = closeAfterEach();
const stdio = () => ({ transport: 'stdio', command: process.execPath, args: [fixture('trace-server.mjs')] });

// `trace.disable()` leaves lib/telemetry.js's tracer behind on a proxy no provider reaches
// again: the import test runs first.
afterEach(() => {
  trace.disable();
  metrics.disable();
  propagation.disable();
});

/** What the trace server saw of each request before (its `_meta` trace members). */
async function seen(source: ReturnType<typeof mcp>) {
  const defs = await source.tools(session);
  return JSON.parse((await defs.find((d) => d.name === 'seen')!.execute({}, ctx)) as string);
}

describe('OpenTelemetry installed, nothing registered', () => {
  it('an import then goes out untraced; once a provider and a propagator are registered, the next sweep is traced', async () => {
    const source = keep(mcp(stdio()));
    expect(await seen(source)).toEqual([{ method: 'initialize' }, { method: 'tools/list' }]);

    const spans = new InMemorySpanExporter();
    trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] }));
    propagation.setGlobalPropagator(new W3CTraceContextPropagator());
    await source.close();
    const again = await seen(source);
    const names = spans.getFinishedSpans().map((s) => s.name);
    expect(names).toEqual(expect.arrayContaining(['initialize', 'tools/list']));
    const list = spans.getFinishedSpans().find((s) => s.name === 'tools/list')!;
    const { traceId, spanId } = list.spanContext();
    expect(again[1]).toEqual({ method: 'tools/list', traceparent: `00-${traceId}-${spanId}-01` });
  });

  it('a request span is live once anything would see it: a tracer provider, a propagator, a meter provider', () => {
    const otel = forSource(stdio(), true);
    expect(otel.live()).toBe(false);
    const registrations: Array<[() => unknown, () => void]> = [
      [() => trace.setGlobalTracerProvider(new BasicTracerProvider()), () => trace.disable()],
      [() => propagation.setGlobalPropagator(new W3CTraceContextPropagator()), () => propagation.disable()],
      [() => metrics.setGlobalMeterProvider(new MeterProvider()), () => metrics.disable()],
    ];
    for (const [register, unregister] of registrations) {
      register();
      expect(otel.live()).toBe(true);
      unregister();
      expect(otel.live()).toBe(false);
    }
  });

  it("a call's first look is the API's own global slot: the key read from its package.json names the slot a registration makes", () => {
    trace.setGlobalTracerProvider(new BasicTracerProvider());
    const key = registryKey();
    expect(typeof key).toBe('symbol');
    expect(Object.getOwnPropertySymbols(globalThis)).toContain(key);
  });
});
