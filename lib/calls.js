'use strict';

// The calls of a source in flight: what starts one, what settles each when its outcome arrives
// in a batch from the native side, the abort and progress plumbing, and the hold on Node's
// event loop while any is in flight. One Calls object per source, one Call object per call; the
// classes are made once, here, not per source.

/** @typedef {import('../binding.js').NativeSource} NativeSource */
/** @typedef {import('../binding.js').NativeSnapshot} NativeSnapshot */
/** @typedef {import('../index.js').ToolContext} ToolContext */

const { callFailure } = require('./errors.js');
const { port } = require('./hooks.js');
const { outputCheck } = require('./outputcheck.js');
// The kinds of entry in a batch from takeCompletions(), as the native side writes them, and the
// native side's words for the refusals made here before a call reaches it.
const { COMPLETION_PROGRESS, COMPLETION_RESULT, COMPLETION_ERROR_TYPE, abortedMessage, inputNotJsonMessage } = require('./native.js');

// MCP's log levels as the engine's four.
/** @type {Record<string, 'debug' | 'info' | 'warn' | 'error'>} */
const SERVER_LEVELS = { debug: 'debug', info: 'info', notice: 'info', warning: 'warn', error: 'error', critical: 'error', alert: 'error', emergency: 'error' };

/** What a call in flight reports to its caller's `ctx.log`: a server log, a task status, or progress. */
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

const SETTLED = Promise.resolve();

// Each snapshot's starter (`NativeSnapshot.starter()`, a plain N-API function: a method call
// would pay napi-rs's bookkeeping on every call), made at its first call.
/** @type {WeakMap<NativeSnapshot, ReturnType<NativeSnapshot['starter']>>} */
const starters = new WeakMap();
/** @param {NativeSnapshot} snapshot */
function starterOf(snapshot) {
  let starter = starters.get(snapshot);
  if (starter === undefined) starters.set(snapshot, (starter = snapshot.starter()));
  return starter;
}

// Sources with calls in flight: held here while nothing else may hold them (a host that awaits
// a call after dropping its source and ToolDefs must still see the call settle).
/** @type {Set<Calls>} */
const busy = new Set();

/** The calls in flight of one source, by id. */
class Calls {
  /** @param {ReturnType<typeof import('./telemetry.js').forSource>} otel the source's telemetry, or null */
  constructor(otel) {
    this.otel = otel;
    /** @type {string | undefined} The source's id, once its native side is made (what a server's error answer names). */
    this.source = undefined;
    /** @type {NativeSource | null} The native source, once it is made. */
    this.native = null;
    /**
     * The native source's reader of its stdio pipes (`NativeSource.feeder()`), made at the
     * first read (lib/pipe.js).
     * @type {ReturnType<NativeSource['feeder']> | null}
     */
    this.feed = null;
    /** Whether the source's sandbox may have a warning to tell (`onUnsupported: 'warn'`). */
    this.warnsOfSandbox = false;
    /**
     * The hooks the native source reaches only through a WeakRef (lib/hooks.js): held here, so
     * that while `busy` holds this object they still answer.
     * @type {object | null}
     */
    this.hooks = null;
    /** @type {Map<number, Call>} What settles each call when its outcome arrives. */
    this.waiting = new Map();
    /**
     * Calls that share one signal (an engine's run-level signal handed to every call of a run)
     * share one 'abort' listener on it per source, however many are in flight: a listener per
     * call would pile up (Node warns past 10) and each would cost an add and a remove.
     * @type {Map<AbortSignal, { calls: Set<Call>, listener: () => void }>}
     */
    this.aborters = new Map();
    /**
     * An in-process source's bridge (lib/inprocess.js): what a call sends while it is started
     * reaches the server once the call is registered (at once when it is the only call in flight).
     * @type {{ hold(): void, flush(alone: boolean): void } | null}
     */
    this.bridge = null;
    /** Whether the last call started was the only one in flight. */
    this.alone = false;
    this.held = false;
    this.releaseQueued = false;
    // Let go of the event loop once nothing is in flight, checked after the settled callers'
    // continuations ran: a caller that awaits one call and starts the next keeps the hold
    // without a native round trip per call. Made once, for queueMicrotask.
    this.release = () => {
      this.releaseQueued = false;
      if (this.waiting.size === 0) this.hold(false);
    };
  }

  /** @param {boolean} on */
  hold(on) {
    if (this.held === on) return;
    this.held = on;
    if (on) busy.add(this);
    else busy.delete(this);
    // The port holds the loop while any source has calls in flight (a no-op when unchanged).
    port.hold(busy.size > 0);
  }

  releaseIfIdle() {
    if (this.releaseQueued || this.waiting.size !== 0) return;
    this.releaseQueued = true;
    // A reaction of a settled promise, not queueMicrotask, which makes an async resource and a
    // bound function for every callback: the same queue, in the same order.
    SETTLED.then(this.release);
  }

  /** Settles what one segment of a batch (`takeCompletions()`'s text) finished. */
  settle(batchText) {
    if (batchText == null) return;
    for (const [id, kind, value] of JSON.parse(batchText)) {
      const call = this.waiting.get(id);
      if (call === undefined) continue; // aborted already
      if (kind === COMPLETION_PROGRESS) {
        report(call.log, value);
        continue;
      }
      if (kind === COMPLETION_ERROR_TYPE) {
        call.errorType = value;
        continue;
      }
      this.waiting.delete(id);
      if (kind === COMPLETION_RESULT && call.check !== null && !call.check(value)) {
        // Not accepted by the JS side's check of the output: the native validator decides.
        const refusal = call.snapshot.recheck(call.index, batchText, id);
        if (refusal !== null) {
          call.errorType = refusal[0];
          call.settle(false, refusal[1]);
          continue;
        }
      }
      call.settle(kind === COMPLETION_RESULT, value);
    }
    this.releaseIfIdle();
  }

  /** The native side's wake-up: a busy source's batch comes in segments, taken until there is none. */
  wake() {
    const native = /** @type {NativeSource} */ (this.native);
    const first = native.takeCompletions();
    if (first == null) return;
    this.settle(first);
    for (let next = native.takeCompletions(); next !== null; next = native.takeCompletions()) this.settle(next);
  }

  /**
   * A ToolDef's `execute`: tool `index` of `snapshot` called with `input`. Refused here, with a
   * rejection and never a throw, when its signal aborted already or the input cannot be JSON.
   * @param {NativeSnapshot} snapshot
   * @param {{ name: string }} def
   * @param {number} index
   * @param {unknown} input
   * @param {Partial<ToolContext> | undefined} ctx
   * @param {unknown} traits the tool's telemetry traits (lib/telemetry.js), when traced
   * @returns {Promise<unknown>}
   */
  execute(snapshot, def, index, input, ctx, traits) {
    if (this.warnsOfSandbox) this.tellSandbox(ctx);
    const bridge = this.bridge;
    if (bridge === null) return this.begin(snapshot, def, index, input, ctx, traits);
    bridge.hold();
    try {
      return this.begin(snapshot, def, index, input, ctx, traits);
    } finally {
      // One at a time: this call, and the one before it, each the only one in flight.
      const alone = this.waiting.size <= 1;
      bridge.flush(alone && this.alone);
      this.alone = alone;
    }
  }

  /**
   * What the system could not enforce of the source's `sandbox` (`onUnsupported: 'warn'`),
   * told once, to the first call's `ctx.log` that can hear it.
   * @param {Partial<ToolContext> | undefined} ctx
   */
  tellSandbox(ctx) {
    if (typeof ctx?.log !== 'function') return;
    const warning = this.native?.sandboxWarning();
    if (warning == null) return;
    this.warnsOfSandbox = false;
    try {
      ctx.log('warn', warning);
    } catch {
      // A host logger that throws must not take the process down.
    }
  }

  /**
   * `execute` itself: the call refused, or sent and registered.
   * @param {NativeSnapshot} snapshot
   * @param {{ name: string }} def
   * @param {number} index
   * @param {unknown} input
   * @param {Partial<ToolContext> | undefined} ctx
   * @param {unknown} traits
   * @returns {Promise<unknown>}
   */
  begin(snapshot, def, index, input, ctx, traits) {
    const signal = ctx != null && ctx.signal != null ? ctx.signal : undefined;
    if (signal?.aborted) {
      return Promise.reject(new Error(abortedMessage(`${def.name}`)));
    }
    let text;
    try {
      text = JSON.stringify(input ?? {});
    } catch (err) {
      return Promise.reject(new Error(inputNotJsonMessage(`${def.name}`, `${/** @type {any} */ (err).message}`)));
    }
    const log = ctx != null && typeof ctx.log === 'function' ? ctx.log : undefined;
    const op = this.otel === null ? null : this.otel.startCall(traits);
    // The structured result is checked here when its schema compiles to a check (lib/outputcheck.js).
    const check = outputCheck(snapshot, index);
    let started;
    try {
      started = starterOf(snapshot)(index, text, log !== undefined, check !== null, op === null ? undefined : op.carrier);
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
    return this.start(snapshot, def.name, started, ctx, log, signal, op, index, check);
  }

  /**
   * The promise of call `started` (tool `name`'s), settled from a batch of completions.
   * @param {NativeSnapshot} snapshot
   * @param {string} name
   * @param {number} started
   * @param {Partial<ToolContext> | undefined} ctx
   * @param {ToolContext['log'] | undefined} log
   * @param {AbortSignal | undefined} signal
   * @param {any} op its telemetry (lib/telemetry.js), or null
   * @param {number} index the tool's index in `snapshot`
   * @param {((value: unknown) => boolean) | null} check the JS side's check of its structured result, if any
   * @returns {Promise<unknown>}
   */
  start(snapshot, name, started, ctx, log, signal, op, index, check) {
    return new Promise((resolve, reject) => {
      const call = new Call(this, resolve, reject, ctx, log, signal, started, name, snapshot, op, index, check);
      if (signal !== undefined) this.watch(signal, call);
      this.waiting.set(started, call);
      this.hold(true);
    });
  }

  /** @param {AbortSignal} signal @param {Call} call */
  watch(signal, call) {
    let entry = this.aborters.get(signal);
    if (entry === undefined) {
      const calls = new Set();
      const listener = () => {
        this.aborters.delete(signal);
        for (const call of calls) call.abort();
      };
      entry = { calls, listener };
      this.aborters.set(signal, entry);
      signal.addEventListener('abort', listener, { once: true });
    }
    entry.calls.add(call);
  }

  /** @param {AbortSignal} signal @param {Call} call */
  unwatch(signal, call) {
    const entry = this.aborters.get(signal);
    if (entry === undefined) return;
    entry.calls.delete(call);
    if (entry.calls.size === 0) {
      this.aborters.delete(signal);
      signal.removeEventListener('abort', entry.listener);
    }
  }
}

// A call in flight: what settles it, and what undoes its abort watch. One object per call, no
// closures: the in-process path runs at the speed of the server, so every allocation shows up
// in its latency.
class Call {
  /**
   * @param {Calls} calls the source's calls in flight, this one among them
   * @param {(value: unknown) => void} resolve
   * @param {(error: Error) => void} reject
   * @param {Partial<ToolContext> | undefined} ctx
   * @param {ToolContext['log'] | undefined} log
   * @param {AbortSignal | undefined} signal
   * @param {number} id
   * @param {string} name
   * @param {NativeSnapshot} snapshot
   * @param {any} op
   * @param {number} index
   * @param {((value: unknown) => boolean) | null} check
   */
  constructor(calls, resolve, reject, ctx, log, signal, id, name, snapshot, op, index, check) {
    this.calls = calls;
    this.resolve = resolve;
    this.ctx = ctx;
    /** @type {Array<() => void> | undefined} What runs when the call ends (the signal of a hook answering for it), if anything. */
    this.ended = undefined;
    this.reject = reject;
    this.log = log;
    this.signal = signal;
    this.id = id;
    this.name = name;
    this.snapshot = snapshot;
    this.index = index;
    // The JS side's check of its structured result (lib/outputcheck.js), or null: a result it
    // does not accept is asked of the native validator again (Calls.settle).
    this.check = check;
    // Its telemetry (lib/telemetry.js), or null; `errorType` arrives just before a failure.
    this.op = op;
    /** @type {string | undefined} */
    this.errorType = undefined;
  }

  /** @param {boolean} ok @param {any} value */
  settle(ok, value) {
    if (this.signal !== undefined) this.calls.unwatch(this.signal, this);
    if (this.ended !== undefined) for (const end of this.ended) end();
    if (this.op !== null) this.op.end(ok ? undefined : (this.errorType ?? '_OTHER'));
    if (ok) this.resolve(value);
    else this.reject(callFailure(value, this.name, this.calls.source));
  }

  /** @param {() => void} end */
  whenEnded(end) {
    (this.ended ??= []).push(end);
  }

  // The call's ctx.signal aborted (through the one listener per signal, see watch()).
  abort() {
    const calls = this.calls;
    if (calls.waiting.get(this.id) !== this) return;
    this.errorType = 'cancelled';
    this.settle(false, abortedMessage(`${this.name}`));
    calls.waiting.delete(this.id);
    calls.releaseIfIdle();
    this.snapshot.cancel(this.id);
  }
}

module.exports = { Calls };
