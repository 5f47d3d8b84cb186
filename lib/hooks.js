'use strict';

// The JS side's callbacks for one native source (the generated binding's SourceHooks): the host's
// functions of the config, wrapped so the native side always gets a Promise of text, and the
// plumbing of the source itself (its wake-up, the in-process bridge, the asks, the tracer).

/** @typedef {import('../binding.js').SourceHooks} SourceHooks */
/** @typedef {import('../index.js').McpConfig} McpConfig */
/** @typedef {import('../index.js').OAuthConfig} OAuthConfig */
/** @typedef {import('./calls.js').Calls} Calls */

const { makeInprocessBridge } = require('./inprocess.js');
const { makeAsk } = require('./asks.js');

/** @param {() => unknown} hook */
function wrapHeaderHook(hook) {
  // Always a Promise of JSON text, whatever the host's hook returns or throws.
  return async () => JSON.stringify(await hook());
}

/**
 * `http.oauth`'s callbacks, wrapped so the native side always gets a Promise of text. The
 * authorize callback gets `signal`, aborted when the source is closed.
 * @param {OAuthConfig | undefined} oauth
 * @param {() => AbortSignal} signalOf
 * @returns {Pick<SourceHooks, 'oauthAuthorize' | 'oauthLoad' | 'oauthSave' | 'oauthCredential'>}
 */
function wrapOAuth(oauth, signalOf) {
  if (oauth === null || typeof oauth !== 'object') return {};
  /** @type {Pick<SourceHooks, 'oauthAuthorize' | 'oauthLoad' | 'oauthSave' | 'oauthCredential'>} */
  const out = {};
  if (typeof oauth.authorize === 'function') {
    out.oauthAuthorize = async (text) => {
      const { url, reason } = JSON.parse(text);
      // Read when called, as a method of the host's object.
      const authorize = /** @type {NonNullable<OAuthConfig['authorize']>} */ (oauth.authorize);
      const redirect = await authorize.call(oauth, { url, reason, signal: signalOf() });
      if (redirect instanceof URL) return redirect.href;
      if (typeof redirect !== 'string') throw new Error('the authorize callback did not resolve with a redirect URL string');
      return redirect;
    };
  }
  // `assertion` and `tokenExchange.subjectToken` given as functions: called each time a token
  // is asked for (a workload's token rotates), each resolving with a non-empty string.
  /** @type {Record<string, unknown>} */
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

/** `lock` given as the parsed object: its JSON text for the native side (a path is read there). */
function lockTextFor(config) {
  const lock = config.lock;
  if (lock === null || typeof lock !== 'object' || Array.isArray(lock)) return undefined;
  try {
    return JSON.stringify(lock);
  } catch {
    // The native side refuses an object lock that came without its text.
    return undefined;
  }
}

/**
 * The hooks of one source, grouped by what they serve. `config` is one the core accepted
 * (`NativeConfig`), whose `transport` is `transport`; `calls` the source's calls in flight,
 * `closing()` its own signal (aborted by close()), `otel` its telemetry or null.
 * @param {McpConfig} config
 * @param {'stdio' | 'streamable-http' | 'inprocess'} transport
 * @param {Calls} calls
 * @param {() => AbortSignal} closing
 * @param {ReturnType<typeof import('./telemetry.js').forSource>} otel
 * @returns {Omit<SourceHooks, 'lockText'>}
 */
function sourceHooks(config, transport, calls, closing, otel) {
  const http = config.http;
  const settle = (text) => calls.settle(text);
  const bridge = transport === 'inprocess' && config.server != null ? makeInprocessBridge(config.server, () => calls.native, settle) : null;
  return {
    // Finished calls are waiting in a batch.
    wake: () => calls.wake(),
    // streamable-http: `http.headers` as a function, and `http.oauth`'s callbacks.
    headers: http != null && typeof http.headers === 'function' ? wrapHeaderHook(http.headers) : undefined,
    ...(transport === 'streamable-http' && http != null ? wrapOAuth(http.oauth, closing) : {}),
    // inprocess: the bridge to the host's server object.
    attach: bridge?.attach,
    toServer: bridge?.toServer,
    detach: bridge?.detach,
    toServerSoon: bridge?.toServerSoon,
    // What a server asks back goes to the calling tool's context, found by the call's id.
    ask: makeAsk(config, (callId) => calls.waiting.get(callId), closing),
    // The request tracer, while tracing.
    trace: otel?.hook,
  };
}

// The hooks' names, every function member of SourceHooks.
/** @type {Array<Exclude<keyof SourceHooks, 'lockText'>>} */
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

/**
 * The hooks as the native source holds them, with the lock text of `config`. It keeps each hook
 * alive as long as it lives itself (a thread-safe function holds its JS function strongly), and
 * it lives as long as its JS wrapper, which the source's own closures hold: hooks that reached
 * the source strongly would make a cycle no collection can break, and every source ever made
 * would stay in memory. So each hook reaches `target` through a WeakRef; the source's closures
 * alone hold it (`Calls.hooks`, while calls are in flight). Once it is collected a hook answers
 * undefined, which the native side takes as a failed hook.
 * @param {Omit<SourceHooks, 'lockText'>} target
 * @param {McpConfig} config
 * @returns {SourceHooks}
 */
function nativeHooks(target, config) {
  const ref = new WeakRef(target);
  /** @type {Record<string, (arg: any) => any>} */
  const hooks = {};
  for (const name of HOOKS) {
    if (typeof target[name] !== 'function') continue;
    hooks[name] = (arg) => {
      const live = ref.deref();
      return live === undefined ? undefined : /** @type {(arg: any) => any} */ (live[name])(arg);
    };
  }
  return /** @type {SourceHooks} */ ({ ...hooks, lockText: lockTextFor(config) });
}

module.exports = { sourceHooks, nativeHooks };
