'use strict';

// The JS half of an McpToolSource: single-flight decided synchronously at call time, and one JS
// array per snapshot, so a cached tools() and every sharer of a sweep get the very same array;
// ToolDef objects whose `execute` is an own property, so `{ ...def }` keeps it. Their calls are
// lib/calls.js's, the native source's callbacks lib/hooks.js's.

/** @typedef {import('../binding.js').NativeSnapshot} NativeSnapshot */
/** @typedef {import('../index.js').McpConfig} McpConfig */
/** @typedef {import('../index.js').McpToolSource} McpToolSource */
/** @typedef {import('../index.js').ToolContext} ToolContext */
/** @typedef {import('../index.js').ToolDef} ToolDef */
/** @typedef {import('../index.js').ConfigErrorClass} ConfigErrorClass */

const { adopt } = require('./errors.js');
const { describePosture } = require('./posture.js');
const { Calls } = require('./calls.js');
const { sourceHooks, nativeHooks } = require('./hooks.js');
const { abortedMessage } = require('./native.js');
const telemetry = require('./telemetry.js');

// What the addon keeps of a ToolDef beyond the engine's members (`importedAs`,
// `unvalidatedReasons`), and of a source beyond the engine's (`protocolOf`, `leftOutOf`,
// `lockText`, `resumeTask`): a non-enumerable own member under a symbol of this module's, which
// what a host serializes, spreads, compares or lists by key never sees. Not a WeakMap beside
// them: its table held a slot for every ToolDef made since V8's last full collection, and each
// insertion cost about 0.7 µs against 0.16 for the member (a 5,000-tool import), and the
// open/list/close cycle's V8 heap grew about 0.75 MB more over 5,000 cycles.
const IMPORTED = Symbol('rulvar.imported');
const SOURCE = Symbol('rulvar.source');

/**
 * The record under `key` that `of` is an instance of, when it is `owner`'s own member; else
 * undefined. Never throws: a revoked Proxy, or one whose traps throw, is no ToolDef or source
 * (`lockText` and `resumeTask` reject rather than throw).
 */
function ownRecord(owner, key, of) {
  if (owner === null || (typeof owner !== 'object' && typeof owner !== 'function')) return undefined;
  try {
    const record = owner[key];
    return record instanceof of && Object.hasOwn(owner, key) ? record : undefined;
  } catch {
    return undefined;
  }
}

// Where to ask whether a ToolDef's schemas compiled into validators, and why not: the values
// it takes or returns then pass unchecked. `rulvar-mcp inspect` shows it. Validators are
// compiled when first needed, so asking compiles the tool's (once; the answer is kept).
class Imported {
  /** @param {NativeSnapshot} snapshot @param {number} index @param {string} original */
  constructor(snapshot, index, original) {
    this.snapshot = snapshot;
    this.index = index;
    this.original = original;
    /** @type {{ input?: string, output?: string } | null | undefined} */
    this.reasons = undefined;
  }
}

/** @returns {Imports | undefined} */
const importsOf = (source) => ownRecord(source, SOURCE, Imports);

/** The protocol revision `source`'s latest import was listed in; undefined before one. */
function protocolOf(source) {
  return importsOf(source)?.latest?.protocol;
}

/** The tools `source`'s latest import left out, each with why (`[{ name, reason }]`). */
function leftOutOf(source) {
  const latest = importsOf(source)?.latest;
  return latest == null ? undefined : JSON.parse(latest.leftOut);
}

/**
 * What a ToolDef was imported from, as the core admitted it: the name the server gives the tool
 * (before `prefix` and `names: 'map'`) and the bytes of schema it declares (what
 * `maxSchemaBytes` counts); undefined for an object that is no ToolDef of a source.
 * @returns {{ original: string, schemaBytes: number } | undefined}
 */
function importedAs(def) {
  const at = ownRecord(def, IMPORTED, Imported);
  if (at === undefined) return undefined;
  return { original: at.original, schemaBytes: at.snapshot.schemaBytes(at.index) ?? 0 };
}

/** `{ input?, output? }`: why a tool's input or output runs without a validator, if it does. */
function unvalidatedReasons(def) {
  const at = ownRecord(def, IMPORTED, Imported);
  if (at === undefined) return undefined;
  if (at.reasons === undefined) {
    const text = at.snapshot.unvalidated(at.index);
    const reasons = text === null ? null : JSON.parse(text);
    at.reasons = reasons === null ? null : { input: reasons.input, output: reasons.output };
  }
  return at.reasons ?? undefined;
}

/**
 * Follows task `taskId` of tool `toolName` (its name as imported) to its end, as the call that
 * started it would have: an engine that kept the id from `ctx.log` resumes after a restart.
 * Needs `tasks: true`.
 */
function resumeTask(source, toolName, taskId, ctx) {
  const imports = importsOf(source);
  if (imports === undefined) return Promise.reject(new TypeError('resumeTask: not a source made by mcp()'));
  return imports.resume(toolName, taskId, ctx);
}

/** The lock file's text for what `source` imports now (it imports first if it has not). */
function lockTextOf(source) {
  const imports = importsOf(source);
  if (imports === undefined) return Promise.reject(new TypeError('lockText: not a source made by mcp()'));
  return imports.lockText();
}

/**
 * The ToolDefs of a big import as the native side hands them over, page by page while the
 * server lists the next (`[sweep, start, tools]` each), so that their `JSON.parse` is done by
 * the time the last page is in; the snapshot then writes only what is not here yet. The pages
 * of one sweep arrive in order; anything else (a gap, another sweep's) is set aside, and the
 * snapshot's whole text is parsed instead.
 */
class Listed {
  constructor() {
    this.sweep = -1;
    /** The highest sweep already built or dropped: its late pages are not kept. */
    this.done = -1;
    /** @type {any[][]} */
    this.parts = [];
    this.count = 0;
  }

  /** @param {string} text */
  take(text) {
    try {
      const [sweep, start, tools] = JSON.parse(text);
      if (sweep <= this.done) return;
      if (sweep !== this.sweep) {
        this.sweep = sweep;
        this.parts = [];
        this.count = 0;
      }
      if (start !== this.count) {
        // Not the next page: nothing of this sweep is used.
        this.drop();
        return;
      }
      this.parts.push(tools);
      this.count += tools.length;
    } catch {
      // Called through the port, which must never see a throw; the snapshot's text is complete.
      this.drop();
    }
  }

  /** @param {NativeSnapshot} snapshot @returns {any[]} the snapshot's tools, as `json()` has them */
  of(snapshot) {
    const { sweep, parts, count } = this;
    const own = count > 0 && sweep === snapshot.sweep;
    this.done = Math.max(this.done, snapshot.sweep);
    this.drop();
    const rest = own ? snapshot.jsonFrom(sweep, count) : null;
    if (rest === null) return JSON.parse(snapshot.json());
    parts.push(JSON.parse(rest));
    return parts.flat();
  }

  /** Sets the current sweep's pages aside, and any that still come. */
  drop() {
    this.done = Math.max(this.done, this.sweep);
    this.sweep = -1;
    this.parts = [];
    this.count = 0;
  }
}

/**
 * `mcp(config)`: the core checks the config before anything here reads a key of it to pick
 * hooks, so a refused config is the core's typed refusal, rebuilt with `HostConfigError`.
 * @param {typeof import('./native.js')} native
 * @param {ConfigErrorClass} HostConfigError
 * @param {McpConfig} config
 * @param {boolean} traced
 * @returns {McpToolSource}
 */
function createSource(native, HostConfigError, config, traced) {
  let checked;
  try {
    checked = new native.NativeConfig(config);
  } catch (err) {
    throw adopt(HostConfigError, err);
  }
  // null unless @opentelemetry/api is installed and the host left tracing on.
  const otel = telemetry.forSource(config, traced);
  const calls = new Calls(otel);
  const imports = new Imports(HostConfigError, otel, calls, checked.sandboxDigest);
  calls.warnsOfSandbox = /** @type {any} */ (config).sandbox?.onUnsupported === 'warn';
  const nativeSource = openNative(native, HostConfigError, config, checked, imports);
  const id = nativeSource.id;
  calls.source = id;
  imports.opened(nativeSource, id);
  const source = sourceObject(config, imports);
  Object.defineProperty(source, SOURCE, { value: imports });
  return source;
}

/**
 * The native source of a checked config, with the hooks picked for it registered on the port.
 * @param {typeof import('./native.js')} native
 * @param {ConfigErrorClass} HostConfigError
 * @param {McpConfig} config
 * @param {import('../binding.js').NativeConfig} checked
 * @param {Imports} imports
 */
function openNative(native, HostConfigError, config, checked, imports) {
  const { calls, otel, listed } = imports;
  const hooks = sourceHooks(config, checked.transport, calls, imports.closing, otel, (text) => listed.take(text));
  calls.hooks = hooks;
  let nativeSource;
  const registered = nativeHooks(hooks, config);
  try {
    nativeSource = new native.NativeSource(checked, registered.port, registered.hooks);
  } catch (err) {
    registered.dropped();
    throw adopt(HostConfigError, err);
  }
  registered.attached(nativeSource);
  calls.native = nativeSource;
  return nativeSource;
}

/**
 * The source object the host holds. Methods are closures, never `this`-bound: a Proxy of the
 * source or `source.tools.apply(other, ...)` behaves the same.
 * @param {McpConfig} config
 * @param {Imports} imports
 * @returns {McpToolSource}
 */
function sourceObject(config, imports) {
  const id = imports.id;
  /** @type {Omit<McpToolSource, typeof Symbol.asyncDispose> & Partial<Pick<McpToolSource, typeof Symbol.asyncDispose>>} */
  const source = {
    id,
    tools() {
      return imports.tools();
    },
    close() {
      return imports.close();
    },
    describeRegulatedPosture() {
      return describePosture(config, id);
    },
    // What the latest import's check against `lock` (and for poisoning signs) found; null
    // before any import, or when neither `lock` nor `strict` is set. Touches no wire.
    lockReport() {
      const text = imports.native.lockReport();
      return text == null ? null : JSON.parse(text);
    },
  };
  // So `await using source = mcp(config)` closes it when the block ends. Node defines the symbol
  // from 20.4 on; on a runtime without it the member is left out rather than named "undefined".
  if (typeof Symbol.asyncDispose === 'symbol') {
    source[Symbol.asyncDispose] = () => imports.close();
  }
  return /** @type {McpToolSource} */ (source);
}

/**
 * One source's imports: single-flight decided synchronously at call time, and one array of
 * ToolDefs per snapshot, so a cached tools() and every sharer of a sweep get the very same
 * array.
 */
class Imports {
  /**
   * @param {ConfigErrorClass} HostConfigError
   * @param {ReturnType<typeof telemetry.forSource>} otel
   * @param {Calls} calls
   * @param {string | null | undefined} sandboxDigest
   */
  constructor(HostConfigError, otel, calls, sandboxDigest) {
    this.HostConfigError = HostConfigError;
    this.otel = otel;
    this.calls = calls;
    this.sandboxDigest = sandboxDigest;
    this.listed = new Listed();
    this.aborter = new AbortController();
    // The source's own signal, aborted by close(): an authorization waiting for the user is
    // abandoned.
    this.closing = () => this.aborter.signal;
    /** @type {import('../binding.js').NativeSource} */
    this.native = /** @type {any} */ (null);
    this.id = '';
    /**
     * The protocol revision the latest import was listed in and the tools it left out (as JSON
     * text). Not the snapshot itself: a source closed and kept would hold its last import's
     * tools after its ToolDefs went.
     * @type {{ protocol: string | undefined, leftOut: string } | null}
     */
    this.latest = null;
    /** @type {{ key: string, defs: ToolDef[], snapshot: NativeSnapshot } | null} */
    this.cache = null;
    /** @type {Promise<ToolDef[]> | null} */
    this.inflight = null;
  }

  /** @param {import('../binding.js').NativeSource} nativeSource @param {string} id */
  opened(nativeSource, id) {
    this.native = nativeSource;
    this.id = id;
  }

  /** @returns {Promise<ToolDef[]>} */
  tools() {
    // Decided synchronously: concurrent callers share one sweep and one array.
    if (this.inflight !== null) return this.inflight;
    const cache = this.cache;
    if (cache !== null && this.native.cachedKey() === cache.key) return Promise.resolve(cache.defs);
    const run = this.sweep().catch((err) => {
      this.listed.drop();
      throw adopt(this.HostConfigError, err, this.id);
    });
    this.inflight = run;
    const clear = () => {
      if (this.inflight === run) this.inflight = null;
    };
    run.then(clear, clear);
    return run;
  }

  async sweep() {
    const { native, otel } = this;
    if (otel !== null) native.traceLive(otel.live());
    const snapshot = await (otel === null ? native.tools() : otel.around(() => native.tools()));
    this.latest = { protocol: snapshot.protocol ?? undefined, leftOut: snapshot.leftOut() };
    if (this.cache !== null && this.cache.key === snapshot.key) return this.cache.defs;
    const defs = toolDefs(snapshot, this.listed.of(snapshot), this.calls, this.otel, this.sandboxDigest);
    this.cache = { key: snapshot.key, defs, snapshot };
    return defs;
  }

  async close() {
    this.cache = null;
    this.inflight = null;
    this.listed.drop();
    // An authorization waiting for the user is abandoned; a later tools() starts afresh.
    this.aborter.abort(new Error('mcp: the source was closed'));
    this.aborter = new AbortController();
    await this.native.close();
  }

  /**
   * A task kept from an earlier run, followed to its end as a call of `toolName` would be.
   * @param {string} toolName @param {string} taskId @param {Partial<ToolContext> | undefined} ctx
   */
  async resume(toolName, taskId, ctx) {
    if (typeof taskId !== 'string' || taskId === '') throw new TypeError('resumeTask: the task id must be a non-empty string');
    const defs = await this.tools();
    const index = defs.findIndex((d) => d.name === toolName);
    if (index < 0) throw new Error(`mcp: no tool '${toolName}' was admitted from ${this.id}`);
    const snapshot = /** @type {NonNullable<Imports['cache']>} */ (this.cache).snapshot;
    const signal = ctx != null && ctx.signal != null ? ctx.signal : undefined;
    if (signal?.aborted) throw new Error(abortedMessage(`${toolName}`));
    const log = ctx != null && typeof ctx.log === 'function' ? ctx.log : undefined;
    const started = snapshot.resume(index, taskId, log !== undefined);
    if (typeof started === 'string') throw new this.HostConfigError(started);
    return this.calls.start(snapshot, defs[index].name, started, ctx, log, signal, null, index, null);
  }

  /** The lock file's text for what the source imports now (it imports first if it has not). */
  async lockText() {
    const defs = await this.tools();
    const cache = this.cache;
    if (cache === null || cache.defs !== defs) throw new Error(`mcp: the tool list of '${this.id}' changed while its lock was written`);
    try {
      return cache.snapshot.lockText();
    } catch (err) {
      throw adopt(this.HostConfigError, err);
    }
  }
}

/**
 * The ToolDefs of a snapshot, from its tools as `json()` has them.
 * @param {NativeSnapshot} snapshot
 * @param {any[]} tools
 * @param {Calls} calls
 * @param {ReturnType<typeof telemetry.forSource>} otel
 * @param {string | null | undefined} sandboxDigest
 * @returns {ToolDef[]}
 */
function toolDefs(snapshot, tools, calls, otel, sandboxDigest) {
  // What a traced call's span says of its connection, read once per snapshot.
  const connection = otel === null ? undefined : { protocol: snapshot.protocol ?? undefined, session: snapshot.sessionId ?? undefined };
  return tools.map((tool, index) => {
    // `execute` is set last, an own property, so `{ ...def }` keeps it.
    /** @type {Omit<ToolDef, 'execute'> & { execute?: ToolDef['execute'] }} */
    const def = {
      kind: 'tool',
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      executor: 'inprocess',
      needsApproval: tool.needsApproval,
    };
    if (tool.risk !== undefined) def.risk = tool.risk;
    // A confined server's tools carry its policy's digest into the authority hash; not
    // enumerable, so the ToolDef's shape is the original's.
    if (sandboxDigest != null) Object.defineProperty(def, 'sandbox', { value: sandboxDigest, enumerable: false });
    if (otel === null) {
      def.execute = (input, ctx) => calls.execute(snapshot, def, index, input, ctx, undefined);
    } else {
      // Made at the tool's first call: an import of thousands of tools makes none up front.
      const names = { name: tool.name, original: tool.original ?? tool.name };
      let traits = null;
      def.execute = (input, ctx) => calls.execute(snapshot, def, index, input, ctx, (traits ??= otel.callTraits(names, connection)));
    }
    Object.defineProperty(def, IMPORTED, { value: new Imported(snapshot, index, tool.original ?? tool.name) });
    return /** @type {ToolDef} */ (def);
  });
}

module.exports = { createSource, unvalidatedReasons, importedAs, protocolOf, leftOutOf, lockTextOf, resumeTask };
