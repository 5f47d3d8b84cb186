'use strict';

// The host's answers to what a server asks back in the middle of a call (`elicit`, `sample`,
// `roots` as a function), behind the one callback the native side calls. The native side
// decides what reaches a hook and checks what it answers (src/core/asks.rs); this side picks
// the hook, hands it the calling tool's context with a signal that aborts when the call can no
// longer use an answer, and always resolves: `{ answer }`, or `{ failed: 'threw' | 'aborted' }`.
// What a hook threw goes to the calling tool's log, never into a message the server or an
// error text could carry.

const HOOK_OF_METHOD = {
  'elicitation/create': 'elicit',
  'sampling/createMessage': 'sample',
  'roots/list': 'roots',
};

function handlerOf(value) {
  if (typeof value === 'function') return value;
  if (value !== null && typeof value === 'object' && typeof value.handler === 'function') return value.handler;
  return undefined;
}

const ABORTED = Symbol('aborted');

// setTimeout's longest delay; a longer one fires at once (with a TimeoutOverflowWarning). A
// wait that long is left to the native side, which ends every ask at its call's deadline.
const LONGEST_TIMER_MS = 2 ** 31 - 1;

function tell(log, name, err) {
  if (typeof log !== 'function') return;
  try {
    log('warn', `mcp: the ${name} hook failed: ${err instanceof Error ? err.message : String(err)}`);
  } catch {
    // A host logger that throws must not take the process down.
  }
}

/**
 * The `ask` callback for the native source, or undefined when the config sets no hook.
 * `callOf(id)` gives the call in flight (undefined when it is unknown or over): its `ctx`, and
 * `whenEnded(f)`; `closing()` gives the source's own signal, aborted by close().
 */
function makeAsk(config, callOf, closing) {
  if (config === null || typeof config !== 'object') return undefined;
  const hooks = {
    elicit: handlerOf(config.elicit),
    sample: handlerOf(config.sample),
    roots: typeof config.roots === 'function' ? config.roots : undefined,
  };
  if (hooks.elicit === undefined && hooks.sample === undefined && hooks.roots === undefined) return undefined;
  // The asks in flight, ended together when the source closes: one listener on the source's
  // signal (close() hands out a new one), not one per ask.
  /** @type {Set<() => void>} */
  const inFlight = new Set();
  /** @type {AbortSignal | null} */
  let watched = null;
  const watchClosing = () => {
    const signal = closing();
    if (signal == null || signal === watched || typeof signal.addEventListener !== 'function') return signal;
    watched = signal;
    const ending = inFlight;
    signal.addEventListener(
      'abort',
      () => {
        for (const abort of [...ending]) abort();
      },
      { once: true },
    );
    return signal;
  };
  return async (text) => {
    const { call, method, params, ms } = JSON.parse(text);
    const name = HOOK_OF_METHOD[method];
    const hook = name === undefined ? undefined : hooks[name];
    if (hook === undefined) return JSON.stringify({ failed: 'threw' });
    const calling = call == null ? undefined : callOf(call);
    const ctx = calling?.ctx;
    const controller = new AbortController();
    const abort = () => controller.abort(new Error(`mcp: the ${name} hook's call ended`));
    // The call ending (its callMs, its caller's signal) ends the wait for an answer.
    calling?.whenEnded(abort);
    const closingSignal = watchClosing();
    if (closingSignal?.aborted) abort();
    inFlight.add(abort);
    const signals = [ctx?.signal].filter((s) => s != null && typeof s.addEventListener === 'function');
    for (const s of signals) {
      if (s.aborted) abort();
      else s.addEventListener('abort', abort, { once: true });
    }
    // Node's timer has unref() (the DOM types tsc reads lib/ with say a number).
    /** @type {(ReturnType<typeof setTimeout> & { unref?: () => void }) | undefined} */
    const timer = ms <= LONGEST_TIMER_MS ? setTimeout(abort, Math.max(0, ms)) : undefined;
    if (typeof timer?.unref === 'function') timer.unref();
    /** @type {(() => void) | undefined} set by the executor below, which runs at once */
    let onAbort;
    const aborted = new Promise((_, reject) => {
      onAbort = () => reject(ABORTED);
      if (controller.signal.aborted) onAbort();
      else controller.signal.addEventListener('abort', onAbort, { once: true });
    });
    try {
      const request = method === 'elicitation/create' ? { ...params, mode: params?.mode ?? 'form' } : (params ?? {});
      const answering = Promise.resolve().then(() => hook(request, { ...(ctx ?? {}), signal: controller.signal }));
      const answer = await Promise.race([answering, aborted]);
      return JSON.stringify({ answer: answer === undefined ? null : answer });
    } catch (err) {
      if (err === ABORTED || controller.signal.aborted) return JSON.stringify({ failed: 'aborted' });
      tell(ctx?.log, name, err);
      return JSON.stringify({ failed: 'threw' });
    } finally {
      inFlight.delete(abort);
      clearTimeout(timer);
      controller.signal.removeEventListener('abort', /** @type {() => void} */ (onAbort));
      for (const s of signals) s.removeEventListener('abort', abort);
    }
  };
}

module.exports = { makeAsk };
