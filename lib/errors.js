'use strict';

// The codes the native side gives a typed refusal, an OAuth failure and a server's error answer.
const { CASSETTE_CODE, CONFIG_CODE, OAUTH_CODE, SERVER_CODE } = require('./native.js');

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

/**
 * A server's JSON-RPC error answer, as the MCP SDK 1.x client throws it (its `McpError`, which
 * the original mcp() let through to the host and, from `execute`, to the model): `name`
 * 'McpError', the message `MCP error <code>: <message>` (the server's message, header and env
 * values redacted), `code`, and `data` (undefined when the server sent none), set as the SDK
 * sets them. What the addon knows beyond that (`source`, a call's `tool`, the `stderr` tail of a
 * stdio server whose answer ended the opening) is non-enumerable, so what a host serializes or
 * compares of the error is what it had from the SDK's.
 */
class McpError extends Error {
  /** @param {string} message @param {number} code @param {unknown} data */
  constructor(message, code, data) {
    super(message);
    this.code = code;
    this.data = data;
    this.name = 'McpError';
  }
}

/**
 * A replayed source's request that its cassette has no recorded answer for: `name`
 * 'CassetteError', `code` 'cassette', the `tool` of a call, and `pointer`, the JSON pointer (into
 * the request's params: `/arguments/...` for a call) of its first difference from the nearest
 * recorded request, when one of the same tool was recorded. `retryable` false, `toWire()`.
 */
class CassetteError extends Error {
  /** @param {string} message @param {{ tool?: string, pointer?: string }} [options] */
  constructor(message, options = {}) {
    super(message);
    this.name = 'CassetteError';
    this.code = 'cassette';
    if (options.tool !== undefined) this.tool = options.tool;
    if (options.pointer !== undefined) this.pointer = options.pointer;
    this.retryable = false;
  }

  toWire() {
    /** @type {Record<string, unknown>} */
    const wire = { code: this.code, message: this.message, retryable: this.retryable };
    if (this.tool !== undefined) wire.tool = this.tool;
    if (this.pointer !== undefined) wire.pointer = this.pointer;
    return wire;
  }
}

/**
 * `err` with where it happened: each present value a non-enumerable member.
 * @template {Error} E
 * @param {E} err
 * @param {Record<string, unknown>} context
 * @returns {E}
 */
function withContext(err, context) {
  for (const key of Object.keys(context)) {
    const value = context[key];
    if (value !== undefined) Object.defineProperty(err, key, { value, writable: true, configurable: true });
  }
  return err;
}

/**
 * A server's error answer to the opening or a list, from the native error's members: the JSON
 * text of its `data` is parsed here (the native side bounded and redacted it).
 * @param {any} err
 * @param {string | undefined} source
 */
function serverError(err, source) {
  const data = typeof err.data === 'string' ? JSON.parse(err.data) : undefined;
  return withContext(new McpError(err.message, err.rpcCode, data), { source, stderr: err.stderr });
}

// The kind of a rebuilt refusal the native side told apart from the others (src/node/errors.rs:
// `connect_timeout`), kept off the error, whose members are the host class's.
/** @type {WeakMap<object, string>} */
const refusalKinds = new WeakMap();

/**
 * Rebuilds a native typed refusal with the host's class, a native OAuth failure as an
 * `OAuthError`, and a server's error answer as an `McpError` (of source `source`, when given);
 * anything else is returned unchanged. Only the message, the cause (and an OAuth failure's kind
 * and error code, a server answer's code and data) carry over: the new error's stack is where it
 * was rebuilt.
 * @param {string} [source]
 */
function adopt(ErrorClass, err, source) {
  if (err === null || typeof err !== 'object') return err;
  if (err.code === CONFIG_CODE) {
    const refusal = new ErrorClass(err.message, err.cause === undefined ? {} : { cause: err.cause });
    if (typeof err.kind === 'string') refusalKinds.set(refusal, err.kind);
    return refusal;
  }
  if (err.code === OAUTH_CODE) return new OAuthError(err.message, err);
  if (err.code === SERVER_CODE) return serverError(err, source);
  if (err.code === CASSETTE_CODE) return new CassetteError(err.message, err);
  return err;
}

/**
 * A failed call's outcome from the native batch: its message, an OAuth failure's fields, or a
 * server answer's (`code`, `data`), which becomes an `McpError` of tool `tool` of `source`.
 * @param {any} value @param {string} tool @param {string | undefined} source
 */
function callFailure(value, tool, source) {
  if (typeof value === 'string') return new Error(value);
  if (value.cassette === true) return new CassetteError(value.message, value);
  if (typeof value.code === 'number') return withContext(new McpError(value.message, value.code, value.data), { tool, source });
  return new OAuthError(value.message, value);
}

/** `'connect_timeout'` for a refusal of a connect that timed out; undefined for any other error. */
function refusalKindOf(err) {
  return err !== null && typeof err === 'object' ? refusalKinds.get(err) : undefined;
}

module.exports = { CassetteError, ConfigError, OAuthError, adopt, callFailure, refusalKindOf };
