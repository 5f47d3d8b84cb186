'use strict';

// The code the native side gives a typed refusal.
const { CONFIG_CODE } = require('../index.js');

/**
 * The package's own typed refusal: `name` 'ConfigError', `code` 'config', `retryable` false,
 * `toWire()`. Hosts may substitute theirs via createMcp.
 */
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

/**
 * Rebuilds a native typed refusal with the host's class; anything else is returned unchanged.
 * Only the message and the cause carry over: the new error's stack is where it was rebuilt.
 */
function adopt(ErrorClass, err) {
  if (err === null || typeof err !== 'object' || err.code !== CONFIG_CODE) return err;
  const options = err.cause === undefined ? {} : { cause: err.cause };
  return new ErrorClass(err.message, options);
}

module.exports = { ConfigError, adopt };
