'use strict';

// MCP client spans and the `mcp.client.operation.duration` histogram, as the OpenTelemetry MCP
// semantic conventions describe them, through `@opentelemetry/api`, an optional peer: when the
// application has not installed it, the require below fails once, nothing else is loaded, and
// every source runs exactly as it would without this file (`forSource` answers null).
//
// What is recorded: method names, tool names, request ids, protocol versions, session ids,
// transport words and low-cardinality `error.type` words. Never arguments, results, header
// values or a server's message text: the span status carries no description for that reason.
// docs/telemetry.md is the reader's account of all of it.
let api = null;
try {
  api = require('@opentelemetry/api');
  if (api.trace === undefined || api.context === undefined || api.propagation === undefined || api.metrics === undefined) api = null;
} catch {
  api = null;
}

// The slot on globalThis the API registers every provider and propagator in,
// `Symbol.for('opentelemetry.js.api.<major>')` of its own major version; undefined when its
// package.json cannot be read, and then every check takes the full path (dormant()).
const registry = api === null ? undefined : registryKey();

const SCOPE = '@rulvar/mcp-native';
const SCOPE_VERSION = require('../package.json').version;
const { shownText } = require('./native.js');
// The boundaries the conventions ask the histogram to advise.
const BOUNDARIES = [0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300];
// The `_meta` members trace context travels in (the native side keeps only these as well).
const CARRIED = ['traceparent', 'tracestate', 'baggage'];
const now = () => performance.now();

// The tracer is the API's proxy, which follows a provider registered later; a meter is not,
// so the histogram is made again whenever the global meter provider changed.
const tracer = api === null ? null : api.trace.getTracer(SCOPE, SCOPE_VERSION);
let meterProvider = null;
let histogram = null;
function duration() {
  const provider = api.metrics.getMeterProvider();
  if (provider !== meterProvider) {
    meterProvider = provider;
    histogram = provider.getMeter(SCOPE, SCOPE_VERSION).createHistogram('mcp.client.operation.duration', {
      unit: 's',
      description: 'The duration of the MCP request as observed on the sender from the time it was sent until the response or ack is received.',
      advice: { explicitBucketBoundaries: BOUNDARIES },
    });
  }
  return histogram;
}

// Engine spans of a tool's execution that an MCP call in flight has taken over, so a second
// call under the same span opens its own instead of overwriting the first one's attributes.
const adopted = new WeakSet();

/**
 * Whether `span` is the engine's span of this tool's execution, which the conventions ask an
 * MCP instrumentation to add its attributes to rather than open a second span: a recording
 * span whose `gen_ai.operation.name` is `execute_tool` or whose name starts with
 * `execute_tool` (the GenAI span name `execute_tool {gen_ai.tool.name}`), and whose
 * `gen_ai.tool.name`, when it has one, names this tool (as the engine or the server calls it).
 * Name and attributes are read as the OpenTelemetry SDK's spans expose them; a span that
 * exposes neither is never taken for the tool's.
 */
function isToolExecution(span, names) {
  if (typeof span.isRecording !== 'function' || !span.isRecording() || adopted.has(span)) return false;
  const attributes = span.attributes !== null && typeof span.attributes === 'object' ? span.attributes : {};
  const named = typeof span.name === 'string' && span.name.startsWith('execute_tool');
  if (attributes['gen_ai.operation.name'] !== 'execute_tool' && !named) return false;
  const tool = attributes['gen_ai.tool.name'];
  return tool === undefined || tool === names.name || tool === names.original;
}

/** The attributes every operation of a source shares, from its config alone. */
function transportAttributes(config) {
  switch (config.transport) {
    case 'stdio':
      return { 'network.transport': 'pipe' };
    case 'inprocess':
      // Not a network: the word the earlier `net.transport` attribute had for it.
      return { 'network.transport': 'inproc' };
    case 'streamable-http': {
      const out = { 'network.transport': 'tcp', 'network.protocol.name': 'http' };
      try {
        // Host and port only: a URL's user, password, path and query stay out.
        const url = new URL(config.url);
        out['server.address'] = url.hostname.replace(/^\[|\]$/g, '');
        out['server.port'] = Number(url.port || (url.protocol === 'https:' ? 443 : 80));
      } catch {
        // The native side refuses the config with its own words.
      }
      return out;
    }
    default:
      return {};
  }
}

/**
 * Whether nothing is registered behind the API: no tracer provider behind its proxy, the no-op
 * meter provider, a propagator that writes nothing (the API installed as some other package's
 * dependency, with no SDK). A call then has nothing to record or carry and is not traced at
 * all, and neither are a sweep's requests (`live`), which would otherwise each wait for the
 * `trace` hook's round trip to this thread. Known by the API's own class names: a build that
 * names them otherwise only takes the full path, which records nothing either.
 */
function dormant() {
  // Nothing ever registered: the API has not made its slot. A tenth of the full check's cost,
  // which every call pays while the API is installed with no SDK behind it (as a dependency of
  // some other package brings it along).
  if (registry !== undefined && globalThis[registry] === undefined) return true;
  const traces = api.trace.getTracerProvider();
  return (
    typeof traces.getDelegate === 'function' &&
    traces.getDelegate().constructor?.name === 'NoopTracerProvider' &&
    api.metrics.getMeterProvider().constructor?.name === 'NoopMeterProvider' &&
    api.propagation.fields().length === 0
  );
}

/** The API's global slot, from the major version its package.json names; undefined if not found. */
function registryKey() {
  try {
    const { readFileSync } = require('node:fs');
    const { dirname, join } = require('node:path');
    // Its entry point lies a few folders below its package.json (build/src/index.js).
    let dir = dirname(require.resolve('@opentelemetry/api'));
    for (let up = 0; up < 4; up++, dir = dirname(dir)) {
      let manifest;
      try {
        manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      } catch {
        continue;
      }
      if (manifest?.name !== '@opentelemetry/api') continue;
      const major = typeof manifest.version === 'string' ? /^(\d+)\./.exec(manifest.version) : null;
      return major === null ? undefined : Symbol.for(`opentelemetry.js.api.${major[1]}`);
    }
  } catch {
    // No resolvable entry point (a bundle): the full check on every call.
  }
  return undefined;
}

/** Whether the registered propagator writes any member `_meta` carries (the API's default writes none). */
function propagated() {
  const fields = api.propagation.fields();
  for (let i = 0; i < fields.length; i++) if (CARRIED.includes(fields[i])) return true;
  return false;
}

/** The trace context of `ctx` as the propagator writes it, as JSON text; undefined if none. */
function carrierOf(ctx) {
  const carrier = {};
  api.propagation.inject(ctx, carrier);
  let out;
  for (const key of CARRIED) {
    if (typeof carrier[key] === 'string') (out ??= {})[key] = carrier[key];
  }
  return out === undefined ? undefined : JSON.stringify(out);
}

function fail(span, errorType) {
  span.setAttribute('error.type', errorType);
  span.setStatus({ code: api.SpanStatusCode.ERROR });
}

function record(started, attributes, errorType) {
  const seconds = (now() - started) / 1000;
  const out = errorType === undefined ? attributes : { ...attributes, 'error.type': errorType };
  duration().record(seconds, out);
}

/**
 * One operation: an MCP client span of its own, or the engine's span it adds its attributes
 * to; ended once, with the `error.type` it failed with, if any.
 */
class Operation {
  constructor(span, engine, metric, carrier) {
    this.span = span;
    this.engine = engine;
    this.metric = metric;
    this.carrier = carrier;
    this.started = now();
    this.done = false;
  }

  /** The JSON-RPC id the request went out with. */
  sent(id) {
    try {
      (this.span ?? this.engine).setAttribute('jsonrpc.request.id', String(id));
    } catch {
      // execute() must not throw for a tracing backend's sake.
    }
  }

  /** Attributes learnt at the end (the version an initialize agreed, the session it got). */
  learnt(attributes) {
    for (const [key, value] of Object.entries(attributes)) {
      this.metric[key] = value;
      (this.span ?? this.engine).setAttribute(key, value);
    }
  }

  /** Ends it; `sent` false for a call refused before any request (it has no duration). */
  end(errorType, sent = true) {
    if (this.done) return;
    this.done = true;
    try {
      if (sent) record(this.started, this.metric, errorType);
      if (this.span !== null) {
        if (errorType !== undefined) fail(this.span, errorType);
        this.span.end();
      } else {
        adopted.delete(this.engine);
        // The engine records its own outcome; an error type of its own is left as it is.
        if (errorType !== undefined && this.engine.attributes?.['error.type'] === undefined) {
          this.engine.setAttribute('error.type', errorType);
        }
      }
    } catch {
      // A tracing backend that throws must not change a call's outcome.
    }
  }
}

/**
 * The telemetry of one source, or null when there is none to do: the peer is absent, or the
 * host turned it off (`createMcp({ telemetry: false })`).
 */
function forSource(config, enabled) {
  if (api === null || enabled === false || config === null || typeof config !== 'object') return null;
  // Made whenever the API is there, as it is past the check above.
  const spans = /** @type {NonNullable<typeof tracer>} */ (tracer);
  const shared = transportAttributes(config);
  const { around, hook } = requestTracing(spans, shared);
  return {
    around,
    hook,
    /** Whether a sweep's requests are traced: asked before each (`NativeSource.traceLive`). */
    live() {
      try {
        return !dormant();
      } catch {
        return true;
      }
    },
    /**
     * What the spans and points of one tool's calls share, made once per snapshot: `names` is
     * `{ name, original }` (the ToolDef's name and the server's), `connection`
     * `{ protocol, session }` of the snapshot the tool came from.
     */
    callTraits: (names, connection) => callTraits(shared, names, connection),
    /** A tools/call about to be sent; null if tracing it failed (the call goes out untraced). */
    startCall: (traits) => startCall(spans, traits),
  };
}

/**
 * The spans of a source's own requests (its opening's and its sweeps'), as the native request
 * tracer starts and ends them.
 * @param {NonNullable<typeof tracer>} spans
 * @param {Record<string, string | number | undefined>} shared
 */
function requestTracing(spans, shared) {
  const CLIENT = api.SpanKind.CLIENT;
  // The context of the tools() call under way: the parent of its opening's and sweep's spans.
  let parent = null;
  const requests = new Map();

  function startRequest(method, id) {
    const ctx = parent ?? api.context.active();
    const attributes = { 'mcp.method.name': method, 'jsonrpc.request.id': String(id), ...shared };
    const span = spans.startSpan(method, { kind: CLIENT, attributes }, ctx);
    const metric = { 'mcp.method.name': method, ...shared };
    return new Operation(span, null, metric, carrierOf(api.trace.setSpan(ctx, span)));
  }

  return {
    /**
     * Runs `sweep` (a native tools()) with the caller's context as its requests' parent.
     * @template T
     * @param {() => Promise<T>} sweep
     * @returns {Promise<T>}
     */
    async around(sweep) {
      parent = api.context.active();
      try {
        return await sweep();
      } finally {
        parent = null;
      }
    },

    /**
     * The native request tracer's hook (`SourceHooks.trace`): `{ begin, id }` starts a span and
     * answers `{ meta }`, `{ end, error, protocol, session }` ends it. Never rejects: its end
     * calls are not awaited by anyone.
     * @param {string} text
     */
    async hook(text) {
      try {
        const message = JSON.parse(text);
        if (message.begin !== undefined) {
          const op = startRequest(String(message.begin), message.id);
          requests.set(message.id, op);
          return JSON.stringify({ meta: op.carrier === undefined ? {} : JSON.parse(op.carrier) });
        }
        const op = requests.get(message.end);
        if (op === undefined) return '';
        requests.delete(message.end);
        const learnt = {};
        if (typeof message.protocol === 'string') learnt['mcp.protocol.version'] = message.protocol;
        op.learnt(learnt);
        if (typeof message.session === 'string') op.span.setAttribute('mcp.session.id', message.session);
        op.end(typeof message.error === 'string' ? message.error : undefined);
      } catch {
        // Telemetry never fails a request.
      }
      return '';
    },
  };
}

/**
 * What the spans and points of one tool's calls share. The same objects serve every call (the
 * SDK copies attributes it keeps), so a call allocates no attribute record.
 * @param {Record<string, string | number | undefined>} shared
 * @param {{ name: string, original: string }} names
 * @param {any} connection `{ protocol, session }`
 */
function callTraits(shared, names, connection) {
  // The server's name for the tool, as any server-chosen text on a span: made visible and
  // bounded by the native rule (a name is up to 128 characters of a restricted set unless
  // `names: 'map'` let another through).
  const original = shownText(names.original, false).slice(0, 128);
  /** @type {Record<string, string | number | undefined>} */
  const attributes = {
    'mcp.method.name': 'tools/call',
    'gen_ai.tool.name': original,
    'gen_ai.operation.name': 'execute_tool',
    ...shared,
  };
  if (connection.protocol !== undefined) attributes['mcp.protocol.version'] = connection.protocol;
  const metric = { ...attributes };
  if (connection.session !== undefined) attributes['mcp.session.id'] = connection.session;
  const unnamed = { ...attributes };
  delete unnamed['gen_ai.tool.name'];
  return { names, metric, unnamed, attributes, options: { kind: api.SpanKind.CLIENT, attributes }, spanName: `tools/call ${original}` };
}

/**
 * A tools/call about to be sent: a span of its own, or the engine's tool-execution span adopted;
 * null if tracing it failed (the call goes out untraced).
 * @param {NonNullable<typeof tracer>} spans
 * @param {ReturnType<typeof callTraits>} traits
 */
function startCall(spans, traits) {
  try {
    if (dormant()) return null;
    const ctx = api.context.active();
    const active = api.trace.getSpan(ctx);
    if (active !== undefined && isToolExecution(active, traits.names)) {
      adopted.add(active);
      // The engine named the tool already, as the agent knows it: that name stays.
      active.setAttributes(active.attributes?.['gen_ai.tool.name'] === undefined ? traits.attributes : traits.unnamed);
      return new Operation(null, active, traits.metric, propagated() ? carrierOf(ctx) : undefined);
    }
    const span = spans.startSpan(traits.spanName, traits.options, ctx);
    return new Operation(span, null, traits.metric, propagated() ? carrierOf(api.trace.setSpan(ctx, span)) : undefined);
  } catch {
    return null;
  }
}

// `registryKey`: for the test that the slot it names is the one the API registers in.
module.exports = { forSource, registryKey };
