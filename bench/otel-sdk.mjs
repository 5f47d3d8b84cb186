// The OpenTelemetry SDK as an application registers it, for the "SDK installed" measurements:
// every span sampled and batched to an exporter that drops them (what is measured is the
// instrumentation, not an export), W3C propagation, an async-hooks context, and a meter provider
// whose reader collects the duration histogram.
import { context, metrics, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemoryMetricExporter, AggregationTemporality, MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, BatchSpanProcessor } from '@opentelemetry/sdk-trace-base';

const dropped = { export: (_spans, done) => done({ code: 0 }), shutdown: async () => {} };
context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
propagation.setGlobalPropagator(new W3CTraceContextPropagator());
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new BatchSpanProcessor(dropped)] }));
const reader = new PeriodicExportingMetricReader({ exporter: new InMemoryMetricExporter(AggregationTemporality.DELTA), exportIntervalMillis: 1000 });
metrics.setGlobalMeterProvider(new MeterProvider({ readers: [reader] }));

/** Runs `fn` under an active span, as an agent run's calls are: each call's span is its child. */
export function underSpan(fn) {
  return trace.getTracer('bench').startActiveSpan('agent', async (span) => {
    try {
      return await fn();
    } finally {
      span.end();
    }
  });
}
