'use strict';

// The hand-written entry over the generated loader (../index.js): host error classes,
// closures that survive Proxy and Function.prototype.apply, and the live posture read.
const native = require('../index.js');
const { ConfigError, adopt } = require('./errors.js');
const { describePosture } = require('./posture.js');
const { makeResolveToolset } = require('./toolset.js');

function createMcp(options) {
  const HostConfigError = (options && options.ConfigError) || ConfigError;
  if (typeof HostConfigError !== 'function') {
    throw new TypeError('createMcp: options.ConfigError must be an error class');
  }

  return function mcp(config) {
    let nativeSource;
    try {
      nativeSource = new native.NativeSource(config);
    } catch (err) {
      throw adopt(HostConfigError, err);
    }
    const id = nativeSource.id;

    // Methods are closures over the native half, never `this`-bound, so a Proxy of the source
    // or `source.tools.apply(other, ...)` behaves the same.
    return {
      id,
      async tools(session) {
        try {
          return await nativeSource.tools(session == null ? undefined : session.runId);
        } catch (err) {
          throw adopt(HostConfigError, err);
        }
      },
      async close() {
        try {
          await nativeSource.close();
        } catch (err) {
          throw adopt(HostConfigError, err);
        }
      },
      describeRegulatedPosture() {
        return describePosture(config, id);
      },
    };
  };
}

/** Wraps a native sync export so its typed refusals are the package's ConfigError. */
function typed(fn) {
  return function (...args) {
    try {
      return fn(...args);
    } catch (err) {
      throw adopt(ConfigError, err);
    }
  };
}

const hashing = {
  jcsSerialize: typed(native.jcsSerialize),
  canonicalizeSchema: typed(native.canonicalizeSchema),
  schemaHash: typed(native.schemaHash),
  toolContractHash: typed(native.toolContractHash),
  toolsetHash: typed(native.toolsetHash),
  toolsetAuthorityHash: typed(native.toolsetAuthorityHash),
};

module.exports = {
  mcp: createMcp({ ConfigError }),
  createMcp,
  ConfigError,
  ...hashing,
  resolveToolset: makeResolveToolset(hashing, ConfigError),
  validateJson: typed(native.validateJson),
};
