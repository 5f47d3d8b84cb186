'use strict';

// The hand-written entry over the generated loader (../index.js, through native.js): host error classes and
// the sugar the native layer cannot offer (see source.js, calls.js and hooks.js).
const native = require('./native.js');
const { CassetteError, ConfigError, OAuthError, adopt } = require('./errors.js');
const { createSource, unvalidatedReasons, importedAs, lockTextOf, protocolOf, leftOutOf, resumeTask } = require('./source.js');
const { makeResolveToolset } = require('./toolset.js');
const { makeToolsetHash } = require('./hashing.js');

function createMcp(options) {
  const HostConfigError = options?.ConfigError || ConfigError;
  if (typeof HostConfigError !== 'function') {
    throw new TypeError('createMcp: options.ConfigError must be an error class');
  }

  // `telemetry: false` keeps this mcp()'s sources out of OpenTelemetry even when the
  // application installed @opentelemetry/api (docs/telemetry.md).
  const traced = !(options && options.telemetry === false);
  return function mcp(config) {
    return createSource(native, HostConfigError, config, traced);
  };
}

/** Wraps a native sync export so its typed refusals are the package's ConfigError. */
function typed(fn) {
  return (...args) => {
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
  toolsetHash: typed(makeToolsetHash(native)),
  toolsetAuthorityHash: typed(native.toolsetAuthorityHash),
};

module.exports = {
  mcp: createMcp({ ConfigError }),
  createMcp,
  ConfigError,
  OAuthError,
  CassetteError,
  ...hashing,
  resolveToolset: makeResolveToolset(hashing, ConfigError),
  validateJson: typed(native.validateJson),
  unvalidatedReasons,
  importedAs,
  protocolOf,
  leftOutOf,
  lockText: lockTextOf,
  resumeTask,
};
