'use strict';

// The JS half of an McpToolSource: single-flight and the snapshot's array (design hazard 13),
// ToolDef objects with an own `execute` (hazard 5), abort and progress plumbing for calls.
const { adopt } = require('./errors.js');
const { describePosture } = require('./posture.js');
const { makeInprocessBridge } = require('./inprocess.js');

function wrapHeaderHook(hook) {
  // Always a Promise of JSON text, whatever the host's hook returns or throws.
  return async () => JSON.stringify(await hook());
}

function createSource(native, HostConfigError, config) {
  let nativeSource = null;
  const isObject = config !== null && typeof config === 'object';
  const headers = isObject && config.http != null && typeof config.http.headers === 'function'
    ? wrapHeaderHook(config.http.headers)
    : undefined;
  const bridge = isObject && config.transport === 'inprocess' && config.server != null
    ? makeInprocessBridge(config.server, () => nativeSource)
    : null;
  const progressListeners = new Map();
  const onProgress = (callId, text) => {
    const log = progressListeners.get(callId);
    if (log === undefined) return;
    try {
      const p = JSON.parse(text);
      const of = p.total === undefined ? '' : `/${p.total}`;
      log('debug', `progress ${p.progress}${of}${p.message ? `: ${p.message}` : ''}`, p);
    } catch {
      // A host logger that throws must not take the process down.
    }
  };

  try {
    nativeSource = new native.NativeSource(
      config,
      headers,
      bridge && bridge.attach,
      bridge && bridge.toServer,
      bridge && bridge.detach,
      onProgress,
    );
  } catch (err) {
    throw adopt(HostConfigError, err);
  }
  const id = nativeSource.id;

  let cache = null;
  let inflight = null;
  let nextCallId = 1;

  function execute(snapshot, def, index, input, ctx) {
    const signal = ctx != null ? ctx.signal : undefined;
    if (signal != null && signal.aborted) {
      return Promise.reject(new Error(`mcp: tool '${def.name}' was aborted`));
    }
    let text;
    try {
      text = JSON.stringify(input ?? {});
    } catch (err) {
      return Promise.reject(new Error(`mcp: the input of tool '${def.name}' is not JSON: ${err.message}`));
    }
    const log = ctx != null && typeof ctx.log === 'function' ? ctx.log : undefined;
    // A call id only for a call that can be aborted or report progress; 0 registers nothing.
    let callId = 0;
    if (signal != null || log !== undefined) {
      callId = nextCallId;
      nextCallId = nextCallId >= 0x7fffffff ? 1 : nextCallId + 1;
    }
    if (log !== undefined) progressListeners.set(callId, log);
    const pending = snapshot.call(index, text, callId, log !== undefined);
    if (signal == null) {
      if (log === undefined) return pending.then(JSON.parse);
      return pending.then(JSON.parse).finally(() => progressListeners.delete(callId));
    }
    return new Promise((resolve, reject) => {
      const onAbort = () => {
        nativeSource.cancel(callId);
        reject(new Error(`mcp: tool '${def.name}' was aborted`));
      };
      signal.addEventListener('abort', onAbort, { once: true });
      const settle = () => {
        signal.removeEventListener('abort', onAbort);
        progressListeners.delete(callId);
      };
      pending.then(
        (value) => {
          settle();
          resolve(JSON.parse(value));
        },
        (err) => {
          settle();
          reject(err);
        },
      );
    });
  }

  function buildDefs(snapshot) {
    const listed = JSON.parse(snapshot.json());
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
      def.execute = (input, ctx) => execute(snapshot, def, index, input, ctx);
      return def;
    });
  }

  async function sweep() {
    const snapshot = await nativeSource.tools();
    if (cache !== null && cache.key === snapshot.key) return cache.defs;
    const defs = buildDefs(snapshot);
    cache = { key: snapshot.key, defs };
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

  // Methods are closures, never `this`-bound: a Proxy of the source or
  // `source.tools.apply(other, ...)` behaves the same.
  return {
    id,
    tools() {
      return tools();
    },
    async close() {
      cache = null;
      inflight = null;
      await nativeSource.close();
    },
    describeRegulatedPosture() {
      return describePosture(config, id);
    },
  };
}

module.exports = { createSource };
