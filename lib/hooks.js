'use strict';

// The JS side's callbacks for one native source (the generated binding's SourceHooks): the host's
// functions of the config, wrapped so the native side always gets a Promise of text, and the
// plumbing of the source itself (its wake-up, the in-process bridge, the asks, the tracer); and
// the port every native source calls them through.

/** @typedef {import('../binding.js').SourceHooks} SourceHooks */
/**
 * The functions behind one source's hooks, as the port calls them (by name in PORT_HOOKS).
 * @typedef {object} HookFns
 * @property {() => void} wake finished calls are waiting in a batch
 * @property {() => Promise<string>} [headers] `http.headers` as a function
 * @property {() => Promise<string>} [attach] the in-process bridge connects the host's server...
 * @property {(text: string) => unknown} [toServer] ...hands it a message...
 * @property {() => Promise<string>} [detach] ...detaches it...
 * @property {(text: string) => unknown} [toServerSoon] ...and hands it one on the JS thread
 * @property {(text: string) => Promise<string>} [oauthAuthorize] `{ url, reason }` to a redirect URL
 * @property {(key: string) => Promise<string>} [oauthLoad] the store's value as JSON text
 * @property {(text: string) => Promise<string>} [oauthSave] `{ key, value }`
 * @property {(name: string) => Promise<string>} [oauthCredential] `assertion` or `subjectToken`
 * @property {(text: string) => Promise<string>} [ask] what a server asks (lib/asks.js)
 * @property {(text: string) => Promise<string>} [trace] the request tracer (lib/telemetry.js)
 * @property {(text: string) => void} [listed] a big import's ToolDefs, page by page (lib/source.js)
 * @property {(text: string) => void} [pipe] a stdio child's stdout, for Node to read (lib/pipe.js)
 */
/** @typedef {import('../index.js').McpConfig} McpConfig */
/** @typedef {import('../index.js').OAuthConfig} OAuthConfig */
/** @typedef {import('./calls.js').Calls} Calls */

const { makeInprocessBridge } = require('./inprocess.js');
const { makeAsk } = require('./asks.js');
const { readPipe } = require('./pipe.js');
const { READS_PIPES_ON_JS_THREAD } = require('./runtime.js');
const binding = require('./native.js');

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
 * @returns {Pick<HookFns, 'oauthAuthorize' | 'oauthLoad' | 'oauthSave' | 'oauthCredential'>}
 */
function wrapOAuth(oauth, signalOf) {
  if (oauth === null || typeof oauth !== 'object') return {};
  /** @type {Pick<HookFns, 'oauthAuthorize' | 'oauthLoad' | 'oauthSave' | 'oauthCredential'>} */
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
 * @param {(text: string) => void} listed
 * @returns {HookFns}
 */
function sourceHooks(config, transport, calls, closing, otel, listed) {
  const http = config.http;
  const settle = (text) => calls.settle(text);
  const bridge = transport === 'inprocess' && config.server != null ? makeInprocessBridge(config.server, () => calls.native, settle) : null;
  // A call's request goes to the server as soon as the call is registered (Calls.execute).
  calls.bridge = bridge;
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
    // The ToolDefs of a big import, parsed page by page while the server lists the next.
    listed,
    // stdio: the child's stdout, read by this thread's loop where the runtime can take the
    // pipe (lib/runtime.js); elsewhere a native thread reads it.
    pipe: transport === 'stdio' && READS_PIPES_ON_JS_THREAD ? (text) => readPipe(text, new WeakRef(calls)) : undefined,
  };
}

/**
 * Every hook the port can call, once each: the generated binding's `Hook` (src/node/source_hooks.rs)
 * as the keys, so the compiler refuses a name missing, unknown or misspelled here, and each
 * name's function in `HookFns` as the value. `toServerSoon` is no port hook: it is called
 * directly, on the JS thread.
 * @type {{ [K in import('../binding.js').Hook]: K & keyof HookFns }}
 */
const PORT_HOOKS = {
  wake: 'wake',
  headers: 'headers',
  attach: 'attach',
  toServer: 'toServer',
  detach: 'detach',
  oauthAuthorize: 'oauthAuthorize',
  oauthLoad: 'oauthLoad',
  oauthSave: 'oauthSave',
  oauthCredential: 'oauthCredential',
  ask: 'ask',
  trace: 'trace',
  listed: 'listed',
  pipe: 'pipe',
};
// In the order the port numbers a source's hooks.
const HOOKS = Object.values(PORT_HOOKS);

/**
 * The port: one thread-safe function through which every native source calls its hooks here,
 * found by the source's key (a thread-safe function per hook was a libuv handle each, alive
 * until its source was collected, and the loop walks every live one at each wake-up). A
 * source's entry goes when its native wrapper is collected.
 * @type {Map<number, Array<(text: string) => unknown>>}
 */
const registry = new Map();
const forget = new FinalizationRegistry((/** @type {number} */ key) => registry.delete(key));
let lastKey = 0;
/** @param {number} key @param {number} which @param {string} text @param {number} reply */
function dispatch(key, which, text, reply) {
  // Key 0 is no source's: native tasks polled on this thread were woken (src/node/jsthread/executor.rs),
  // or dead sources' memory was freed here and the allocator should let go of it (port.rs, `tidy_later`).
  if (key === 0) return which === 0 ? port.drain() : port.tidy();
  const hook = registry.get(key)?.[which];
  if (reply !== 0) return answer(reply, hook, text);
  // A source gone answers nothing, which the native side takes as a failed hook.
  return hook === undefined ? undefined : hook(text);
}

// How an awaited hook's answer is settled (src/node/jsthread/port.rs).
const FULFILLED = 0;
const REJECTED = 1;
const COLLECTED = 2;
// A promise V8 collects unsettled can never settle: its waiter is told so.
const unsettled = new FinalizationRegistry((/** @type {number} */ reply) => port.settle(reply, COLLECTED, undefined));

/**
 * Calls an awaited hook and hands what it settles with to the native side under `reply`. Never
 * throws: a throw in the port's dispatch would be an uncaught exception.
 * @param {number} reply @param {((text: string) => unknown) | undefined} hook @param {string} text
 */
function answer(reply, hook, text) {
  let out;
  try {
    out = hook === undefined ? undefined : hook(text);
  } catch (err) {
    port.settle(reply, REJECTED, err);
    return;
  }
  if (!(out instanceof Promise)) {
    port.settle(reply, FULFILLED, out);
    return;
  }
  // The promise is its own unregister token: the registry holds it weakly.
  unsettled.register(out, reply, out);
  out.then(
    (value) => {
      unsettled.unregister(out);
      port.settle(reply, FULFILLED, value);
    },
    (err) => {
      unsettled.unregister(out);
      port.settle(reply, REJECTED, err);
    },
  );
}
/** It also holds Node's event loop while any source has calls in flight (lib/calls.js). */
const port = new binding.NativePort(dispatch, dispatch);

/**
 * The hooks as the native source holds them (its key in the port's registry and the names of
 * the hooks it has), with the lock text of `config`. The registry keeps each hook alive as long
 * as the native source's wrapper lives, and that wrapper lives as long as the source's own
 * closures: hooks that reached the source strongly would make a cycle no collection can break,
 * and every source ever made would stay in memory. So each hook reaches `target` through a
 * WeakRef; the source's closures alone hold it (`Calls.hooks`, while calls are in flight). Once
 * it is collected a hook answers undefined, which the native side takes as a failed hook.
 * `attached(native)` registers the native source made with them, `dropped()` forgets them when
 * none could be made.
 * @param {HookFns} target
 * @param {McpConfig} config
 */
function nativeHooks(target, config) {
  const ref = new WeakRef(target);
  /** @param {keyof HookFns} name */
  const weak = (name) => (/** @type {string} */ arg) => {
    const live = ref.deref();
    return live === undefined ? undefined : /** @type {(arg: string) => unknown} */ (live[name])(arg);
  };
  /** @type {Array<import('../binding.js').Hook>} */
  const names = [];
  /** @type {Array<(text: string) => unknown>} */
  const fns = [];
  for (const name of HOOKS) {
    if (typeof target[name] !== 'function') continue;
    names.push(name);
    fns.push(weak(name));
  }
  do lastKey = lastKey >= 0xffffffff ? 1 : lastKey + 1;
  while (registry.has(lastKey));
  const key = lastKey;
  registry.set(key, fns);
  /** @type {SourceHooks} */
  const hooks = {
    key,
    hooks: names,
    toServerSoon: typeof target.toServerSoon === 'function' ? weak('toServerSoon') : undefined,
    lockText: lockTextFor(config),
  };
  return {
    port,
    hooks,
    /** @param {object} native */
    attached: (native) => forget.register(native, key),
    dropped: () => registry.delete(key),
  };
}

module.exports = { sourceHooks, nativeHooks, port };
