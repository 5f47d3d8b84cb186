'use strict';

// The JS half of an McpToolSource: single-flight decided synchronously at call time, and one JS
// array per snapshot, so a cached tools() and every sharer of a sweep get the very same array;
// ToolDef objects whose `execute` is an own property, so `{ ...def }` keeps it; abort and
// progress plumbing for calls.
const { adopt, callFailure } = require('./errors.js');
const { describePosture } = require('./posture.js');
const { makeInprocessBridge } = require('./inprocess.js');
const { makeAsk } = require('./asks.js');
const telemetry = require('./telemetry.js');
// The kinds of entry in a batch from takeCompletions(), as the native side writes them.
const { COMPLETION_PROGRESS, COMPLETION_RESULT, COMPLETION_ERROR_TYPE } = require('./native.js');

function wrapHeaderHook(hook) {
  // Always a Promise of JSON text, whatever the host's hook returns or throws.
  return async () => JSON.stringify(await hook());
}

// `http.oauth`'s callbacks, wrapped so the native side always gets a Promise of text. The
// authorize callback gets `signal`, aborted when the source is closed.
function wrapOAuth(oauth, signalOf) {
  if (oauth === null || typeof oauth !== 'object') return {};
  const out = {};
  if (typeof oauth.authorize === 'function') {
    out.oauthAuthorize = async (text) => {
      const { url, reason } = JSON.parse(text);
      const redirect = await oauth.authorize({ url, reason, signal: signalOf() });
      if (redirect instanceof URL) return redirect.href;
      if (typeof redirect !== 'string') throw new Error('the authorize callback did not resolve with a redirect URL string');
      return redirect;
    };
  }
  // `assertion` and `tokenExchange.subjectToken` given as functions: called each time a token
  // is asked for (a workload's token rotates), each resolving with a non-empty string.
  const suppliers = {
    assertion: oauth.assertion,
    subjectToken: oauth.tokenExchange !== null && typeof oauth.tokenExchange === 'object' ? oauth.tokenExchange.subjectToken : undefined,
  };
  if (Object.values(suppliers).some((f) => typeof f === 'function')) {
    out.oauthCredential = async (name) => {
      const f = suppliers[name];
      const value = typeof f === 'function' ? await f() : undefined;
      if (typeof value !== 'string' || value === '') throw new Error(`the ${name} function did not resolve with a non-empty string`);
      return value;
    };
  }
  const store = oauth.store;
  if (store !== null && typeof store === 'object' && typeof store.load === 'function' && typeof store.save === 'function') {
    out.oauthLoad = async (key) => JSON.stringify((await store.load(key)) ?? null);
    out.oauthSave = async (text) => {
      const { key, value } = JSON.parse(text);
      await store.save(key, value);
      return '';
    };
  }
  return out;
}

// MCP's log levels as the engine's four.
const SERVER_LEVELS = { debug: 'debug', info: 'info', notice: 'info', warning: 'warn', error: 'error', critical: 'error', alert: 'error', emergency: 'error' };

function report(log, p) {
  if (log === undefined) return;
  try {
    if (p.log !== undefined) {
      // A log message of the server's (`serverLogs`), at the engine's nearest level.
      const { level, logger, data } = p.log;
      const text = typeof data === 'string' ? data : JSON.stringify(data);
      log(SERVER_LEVELS[level] ?? 'info', `server${typeof logger === 'string' ? ` ${logger}` : ''}: ${text}`, p.log);
      return;
    }
    if (p.task !== undefined) {
      // A call that runs as a task: its id and each status it passes through.
      const { taskId, status, statusMessage } = p.task;
      log('info', `task ${taskId}: ${status}${statusMessage ? `: ${statusMessage}` : ''}`, p);
      return;
    }
    const of = p.total === undefined ? '' : `/${p.total}`;
    log('debug', `progress ${p.progress}${of}${p.message ? `: ${p.message}` : ''}`, p);
  } catch {
    // A host logger that throws must not take the process down.
  }
}

// Tools whose schema could not be compiled into a validator, and why: the values they take
// or return then pass unchecked. Kept beside the ToolDef, whose own properties are the
// engine's; `rulvar-mcp inspect` shows it.
const unvalidated = new WeakMap();

// The protocol revision each source's latest import was listed in, beside the source object,
// whose members are the engine's.
const protocols = new WeakMap();

/** The protocol revision `source`'s latest import was listed in; undefined before one. */
function protocolOf(source) {
  return protocols.get(source)?.protocol;
}

/** The tools `source`'s latest import left out, each with why (`[{ name, reason }]`). */
function leftOutOf(source) {
  const latest = protocols.get(source);
  return latest === undefined ? undefined : JSON.parse(latest.snapshot.leftOut());
}

/** `{ input?, output? }`: why a tool's input or output runs without a validator, if it does. */
function unvalidatedReasons(def) {
  return unvalidated.get(def);
}

// The hooks' names, as SourceHooks (index.d.ts's binding types) has them.
const HOOKS = [
  'wake',
  'headers',
  'attach',
  'toServer',
  'detach',
  'toServerSoon',
  'oauthAuthorize',
  'oauthLoad',
  'oauthSave',
  'oauthCredential',
  'ask',
  'trace',
];

// Sources with calls in flight: held here while nothing else may hold them (a host that awaits
// a call after dropping its source and ToolDefs must still see the call settle).
const busy = new Set();

/**
 * The hooks as the native source holds them. It keeps each one alive as long as it lives
 * itself (a thread-safe function holds its JS function strongly), and it lives as long as its
 * JS wrapper, which the source's own closures hold: hooks that closed over the source would
 * make a cycle no collection can break, and every source ever made would stay in memory. So
 * each hook reaches `target` through a WeakRef; the source's closures alone hold it (they
 * share one scope, in which `hold` names the hooks).
 */
function weakHooks(target) {
  const ref = new WeakRef(target);
  const hooks = {};
  for (const name of HOOKS) {
    if (typeof target[name] !== 'function') continue;
    hooks[name] = (arg) => {
      const live = ref.deref();
      return live === undefined ? undefined : live[name](arg);
    };
  }
  return hooks;
}

// Each source's way to the lock text of its current import (`rulvar-mcp lock`), kept off the
// source object, whose members are the engine's.
const lockWriters = new WeakMap();

// Each source's way to follow a task of an earlier run (`resumeTask`), off the source object.
const resumers = new WeakMap();

/**
 * Follows task `taskId` of tool `toolName` (its name as imported) to its end, as the call that
 * started it would have: an engine that kept the id from `ctx.log` resumes after a restart.
 * Needs `tasks: true`.
 */
function resumeTask(source, toolName, taskId, ctx) {
  const resume = resumers.get(source);
  if (resume === undefined) return Promise.reject(new TypeError('resumeTask: not a source made by mcp()'));
  return resume(toolName, taskId, ctx);
}

/** The lock file's text for what `source` imports now (it imports first if it has not). */
function lockTextOf(source) {
  const write = lockWriters.get(source);
  if (write === undefined) return Promise.reject(new TypeError('lockText: not a source made by mcp()'));
  return write();
}

/** `lock` given as the parsed object: its JSON text for the native side (a path is read there). */
function lockTextFor(config) {
  if (config === null || typeof config !== 'object') return undefined;
  const lock = config.lock;
  if (lock === null || typeof lock !== 'object' || Array.isArray(lock)) return undefined;
  try {
    return JSON.stringify(lock);
  } catch {
    // The native side refuses an object lock that came without its text.
    return undefined;
  }
}

function createSource(native, HostConfigError, config, traced) {
  let nativeSource = null;
  const isObject = config !== null && typeof config === 'object';
  // null unless @opentelemetry/api is installed and the host left tracing on.
  const otel = telemetry.forSource(config, traced);
  const headers = isObject && config.http != null && typeof config.http.headers === 'function' ? wrapHeaderHook(config.http.headers) : undefined;
  let aborter = new AbortController();
  const oauthHooks = isObject && config.transport === 'streamable-http' && config.http != null ? wrapOAuth(config.http.oauth, () => aborter.signal) : {};
  // Calls in flight, by id: what settles each one when its outcome arrives in a batch.
  const waiting = new Map();
  let held = false;
  const hold = (on) => {
    if (held === on) return;
    held = on;
    if (on) busy.add(hooks);
    else busy.delete(hooks);
    nativeSource.hold(on);
  };
  // Let go of the event loop once nothing is in flight, checked after the settled callers'
  // continuations ran: a caller that awaits one call and starts the next keeps the hold
  // without a native round trip per call.
  let releaseQueued = false;
  const release = () => {
    releaseQueued = false;
    if (waiting.size === 0) hold(false);
  };
  const releaseIfIdle = () => {
    if (releaseQueued || waiting.size !== 0) return;
    releaseQueued = true;
    queueMicrotask(release);
  };
  const settle = (batchText) => {
    if (batchText == null) return;
    for (const [id, kind, value] of JSON.parse(batchText)) {
      const call = waiting.get(id);
      if (call === undefined) continue; // aborted already
      if (kind === COMPLETION_PROGRESS) {
        report(call.log, value);
        continue;
      }
      if (kind === COMPLETION_ERROR_TYPE) {
        call.errorType = value;
        continue;
      }
      waiting.delete(id);
      call.settle(kind === COMPLETION_RESULT, value);
    }
    releaseIfIdle();
  };
  // A busy source's batch comes in segments: take until there is none.
  const settleAll = (first) => {
    if (first == null) return;
    settle(first);
    for (let next = nativeSource.takeCompletions(); next !== null; next = nativeSource.takeCompletions()) settle(next);
  };
  const wake = () => settleAll(nativeSource.takeCompletions());
  const bridge = isObject && config.transport === 'inprocess' && config.server != null ? makeInprocessBridge(config.server, () => nativeSource, settle) : null;

  const hooks = {
    wake,
    headers,
    attach: bridge?.attach,
    toServer: bridge?.toServer,
    detach: bridge?.detach,
    toServerSoon: bridge?.toServerSoon,
    trace: otel?.hook,
    ...oauthHooks,
    // What a server asks back goes to the calling tool's context, found by the call's id.
    ask: makeAsk(
      config,
      (callId) => waiting.get(callId),
      () => aborter.signal,
    ),
  };
  try {
    nativeSource = new native.NativeSource(config, { ...weakHooks(hooks), lockText: lockTextFor(config) });
  } catch (err) {
    throw adopt(HostConfigError, err);
  }
  const id = nativeSource.id;

  let cache = null;
  let inflight = null;

  // Calls that share one signal (an engine's run-level signal handed to every call of a run)
  // share one 'abort' listener on it per source, however many are in flight: a listener per
  // call would pile up (Node warns past 10) and each would cost an add and a remove.
  const aborters = new Map();
  function watch(signal, call) {
    let entry = aborters.get(signal);
    if (entry === undefined) {
      const calls = new Set();
      const listener = () => {
        aborters.delete(signal);
        for (const call of calls) call.abort();
      };
      entry = { calls, listener };
      aborters.set(signal, entry);
      signal.addEventListener('abort', listener, { once: true });
    }
    entry.calls.add(call);
  }
  function unwatch(signal, call) {
    const entry = aborters.get(signal);
    if (entry === undefined) return;
    entry.calls.delete(call);
    if (entry.calls.size === 0) {
      aborters.delete(signal);
      signal.removeEventListener('abort', entry.listener);
    }
  }

  // A call in flight: what settles it, and what undoes its abort watch. One object per call,
  // no closures: the in-process path runs at the speed of the server, so every allocation
  // shows up in its latency.
  class Call {
    constructor(resolve, reject, ctx, log, signal, id, name, snapshot, op) {
      this.resolve = resolve;
      this.ctx = ctx;
      // What runs when the call ends (the signal of a hook answering for it), if anything.
      this.ended = undefined;
      this.reject = reject;
      this.log = log;
      this.signal = signal;
      this.id = id;
      this.name = name;
      this.snapshot = snapshot;
      // Its telemetry (lib/telemetry.js), or null; `errorType` arrives just before a failure.
      this.op = op;
      this.errorType = undefined;
    }

    settle(ok, value) {
      if (this.signal !== undefined) unwatch(this.signal, this);
      if (this.ended !== undefined) for (const end of this.ended) end();
      if (this.op !== null) this.op.end(ok ? undefined : (this.errorType ?? '_OTHER'));
      if (ok) this.resolve(value);
      else this.reject(callFailure(value));
    }

    whenEnded(end) {
      (this.ended ??= []).push(end);
    }

    // The call's ctx.signal aborted (through the one listener per signal, see watch()).
    abort() {
      if (waiting.get(this.id) !== this) return;
      this.errorType = 'cancelled';
      this.settle(false, `mcp: tool '${this.name}' was aborted`);
      waiting.delete(this.id);
      releaseIfIdle();
      this.snapshot.cancel(this.id);
    }
  }

  function execute(snapshot, def, index, input, ctx, traits) {
    const signal = ctx != null && ctx.signal != null ? ctx.signal : undefined;
    if (signal?.aborted) {
      return Promise.reject(new Error(`mcp: tool '${def.name}' was aborted`));
    }
    let text;
    try {
      text = JSON.stringify(input ?? {});
    } catch (err) {
      return Promise.reject(new Error(`mcp: the input of tool '${def.name}' is not JSON: ${err.message}`));
    }
    const log = ctx != null && typeof ctx.log === 'function' ? ctx.log : undefined;
    const op = otel === null ? null : otel.startCall(traits);
    let started;
    try {
      started = op === null ? snapshot.call(index, text, log !== undefined) : snapshot.call(index, text, log !== undefined, op.carrier);
    } catch (err) {
      op?.end('invalid_input', false);
      // The environment is going away: still a rejection, never a throw from execute().
      return Promise.reject(err);
    }
    if (typeof started === 'string') {
      // Refused before anything was sent: no request, so no duration either.
      op?.end('invalid_input', false);
      return Promise.reject(new Error(started));
    }
    op?.sent(started);
    return settled(snapshot, def, started, ctx, log, signal, op);
  }

  // The promise of call `started`, settled from a batch of completions.
  function settled(snapshot, def, started, ctx, log, signal, op) {
    return new Promise((resolve, reject) => {
      const call = new Call(resolve, reject, ctx, log, signal, started, def.name, snapshot, op);
      if (signal !== undefined) watch(signal, call);
      waiting.set(started, call);
      hold(true);
    });
  }

  // A task kept from an earlier run, followed to its end as a call of `toolName` would be.
  async function resume(toolName, taskId, ctx) {
    if (typeof taskId !== 'string' || taskId === '') throw new TypeError('resumeTask: the task id must be a non-empty string');
    const defs = await tools();
    const index = defs.findIndex((d) => d.name === toolName);
    if (index < 0) throw new Error(`mcp: no tool '${toolName}' was admitted from ${id}`);
    const snapshot = cache.snapshot;
    const signal = ctx != null && ctx.signal != null ? ctx.signal : undefined;
    if (signal?.aborted) throw new Error(`mcp: tool '${toolName}' was aborted`);
    const log = ctx != null && typeof ctx.log === 'function' ? ctx.log : undefined;
    const started = snapshot.resume(index, taskId, log !== undefined);
    if (typeof started === 'string') throw new HostConfigError(started);
    return settled(snapshot, defs[index], started, ctx, log, signal, null);
  }

  function buildDefs(snapshot) {
    const listed = JSON.parse(snapshot.json());
    // What a traced call's span says of its connection, read once per snapshot.
    const connection = otel === null ? undefined : { protocol: snapshot.protocol ?? undefined, session: snapshot.sessionId ?? undefined };
    return listed.map((tool, index) => {
      const def = {
        kind: 'tool',
        name: tool.name,
        description: tool.description,
        parameters: tool.parameters,
        executor: 'inprocess',
        needsApproval: tool.needsApproval,
      };
      if (tool.risk !== undefined) def.risk = tool.risk;
      if (otel === null) {
        def.execute = (input, ctx) => execute(snapshot, def, index, input, ctx, undefined);
      } else {
        // Made at the tool's first call: an import of thousands of tools makes none up front.
        const names = { name: tool.name, original: tool.original ?? tool.name };
        let traits = null;
        def.execute = (input, ctx) => execute(snapshot, def, index, input, ctx, (traits ??= otel.callTraits(names, connection)));
      }
      if (tool.inputUnvalidated !== undefined || tool.outputUnvalidated !== undefined) {
        unvalidated.set(def, { input: tool.inputUnvalidated, output: tool.outputUnvalidated });
      }
      return def;
    });
  }

  async function sweep() {
    const snapshot = await (otel === null ? nativeSource.tools() : otel.around(() => nativeSource.tools()));
    protocols.set(source, { protocol: snapshot.protocol ?? undefined, snapshot });
    if (cache !== null && cache.key === snapshot.key) return cache.defs;
    const defs = buildDefs(snapshot);
    cache = { key: snapshot.key, defs, snapshot };
    return defs;
  }

  function tools() {
    // Decided synchronously: concurrent callers share one sweep and one array.
    if (inflight !== null) return inflight;
    if (cache !== null && nativeSource.cachedKey() === cache.key) return Promise.resolve(cache.defs);
    const run = sweep().catch((err) => {
      throw adopt(HostConfigError, err);
    });
    inflight = run;
    const clear = () => {
      if (inflight === run) inflight = null;
    };
    run.then(clear, clear);
    return run;
  }

  async function close() {
    cache = null;
    inflight = null;
    // An authorization waiting for the user is abandoned; a later tools() starts afresh.
    aborter.abort(new Error('mcp: the source was closed'));
    aborter = new AbortController();
    await nativeSource.close();
  }

  // Methods are closures, never `this`-bound: a Proxy of the source or
  // `source.tools.apply(other, ...)` behaves the same.
  const source = {
    id,
    tools() {
      return tools();
    },
    close() {
      return close();
    },
    describeRegulatedPosture() {
      return describePosture(config, id);
    },
    // What the latest import's check against `lock` (and for poisoning signs) found; null
    // before any import, or when neither `lock` nor `strict` is set. Touches no wire.
    lockReport() {
      const text = nativeSource.lockReport();
      return text == null ? null : JSON.parse(text);
    },
  };
  resumers.set(source, resume);
  lockWriters.set(source, async () => {
    const defs = await tools();
    if (cache === null || cache.defs !== defs) throw new Error(`mcp: the tool list of '${id}' changed while its lock was written`);
    try {
      return cache.snapshot.lockText();
    } catch (err) {
      throw adopt(HostConfigError, err);
    }
  });
  // So `await using source = mcp(config)` closes it when the block ends. Node defines the symbol
  // from 20.4 on; on a runtime without it the member is left out rather than named "undefined".
  if (typeof Symbol.asyncDispose === 'symbol') {
    source[Symbol.asyncDispose] = () => close();
  }
  return source;
}

module.exports = { createSource, unvalidatedReasons, protocolOf, leftOutOf, lockTextOf, resumeTask };
