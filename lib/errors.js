'use strict';

// The codes the native side gives a typed refusal and an OAuth failure.
const { CONFIG_CODE, OAUTH_CODE } = require('./native.js');

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
 * An `http.oauth` failure a host can act on: `code` 'oauth', `kind` 'authorization_required'
 * (no `authorize` callback, and no stored token could be used), 'refused' (the authorization
 * server said no; `error` is its registered error code or 'unknown', never its description),
 * 'step_up_exhausted' or 'authorization_exhausted' (the server still refused after the last of
 * 3 authorizations in a row), 'untrusted' (what a server handed over failed a trust check;
 * nothing was sent to it), `retryable` false, `toWire()`.
 */
class OAuthError extends Error {
  constructor(message, options = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'OAuthError';
    this.code = 'oauth';
    this.kind = options.kind;
    if (options.error !== undefined) this.error = options.error;
    this.retryable = false;
  }

  toWire() {
    const wire = { code: this.code, kind: this.kind, message: this.message, retryable: this.retryable };
    if (this.error !== undefined) wire.error = this.error;
    return wire;
  }
}

// The kind of a rebuilt refusal the native side told apart from the others (src/node/errors.rs:
// `connect_timeout`), kept off the error, whose members are the host class's.
/** @type {WeakMap<object, string>} */
const refusalKinds = new WeakMap();

/**
 * Rebuilds a native typed refusal with the host's class, and a native OAuth failure as an
 * `OAuthError`; anything else is returned unchanged. Only the message, the cause (and an OAuth
 * failure's kind and error code) carry over: the new error's stack is where it was rebuilt.
 */
function adopt(ErrorClass, err) {
  if (err === null || typeof err !== 'object') return err;
  if (err.code === CONFIG_CODE) {
    const refusal = new ErrorClass(err.message, err.cause === undefined ? {} : { cause: err.cause });
    if (typeof err.kind === 'string') refusalKinds.set(refusal, err.kind);
    return refusal;
  }
  if (err.code === OAUTH_CODE) return new OAuthError(err.message, err);
  return err;
}

/** A failed call's outcome from the native batch: its message, or an OAuth failure's fields. */
function callFailure(value) {
  return typeof value === 'string' ? new Error(value) : new OAuthError(value.message, value);
}

/** `'connect_timeout'` for a refusal of a connect that timed out; undefined for any other error. */
function refusalKindOf(err) {
  return err !== null && typeof err === 'object' ? refusalKinds.get(err) : undefined;
}

module.exports = { ConfigError, OAuthError, adopt, callFailure, refusalKindOf };
