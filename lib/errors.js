'use strict';

/** The package's own typed refusal (contract §1). Hosts may substitute theirs via createMcp. */
class ConfigError extends Error {
  constructor(message, options) {
    super(message, options);
    this.name = 'ConfigError';
    this.code = 'config';
    this.retryable = false;
  }

  toWire() {
    return { code: this.code, message: this.message, retryable: this.retryable };
  }
}

const CONFIG_CODE = 'RULVAR_CONFIG';

/**
 * Rebuilds a native typed refusal with the host's class; anything else is rethrown unchanged.
 * The native error's stack is the useful one for a refusal raised inside a call, so it is kept.
 */
function adopt(ErrorClass, err) {
  if (err === null || typeof err !== 'object' || err.code !== CONFIG_CODE) return err;
  const options = err.cause === undefined ? {} : { cause: err.cause };
  return new ErrorClass(err.message, options);
}

module.exports = { ConfigError, adopt };
