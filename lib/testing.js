'use strict';

// @rulvar/mcp-native/testing: what a host's test suite (vitest, node:test) needs to run its
// agents against recorded MCP servers. A source given a `cassette` records its exchange with the
// server to a file on the first run and replays it on the next, with no process and no socket
// (docs/testing-hosts.md); these helpers name the files and read them back.

const path = require('node:path');
const native = require('./native.js');
const { ConfigError } = require('./errors.js');

/** The directory cassettes go in when none is given, relative to the working directory. */
const DEFAULT_DIR = '__cassettes__';

/**
 * The cassette file for a test called `name` (vitest: `expect.getState().currentTestName`; node:test:
 * the test context's `fullName`): the name made a file name in `dir`.
 * @param {string} name
 * @param {string} [dir]
 * @returns {string}
 */
function cassettePath(name, dir = DEFAULT_DIR) {
  if (typeof name !== 'string' || name.trim() === '') throw new ConfigError('cassettePath: the test name must be a non-empty string');
  const file = name
    .normalize('NFKD')
    .replace(/[^A-Za-z0-9._-]+/g, '-')
    .replace(/^[-.]+|-+$/g, '')
    .slice(0, 120);
  return path.join(dir, `${file === '' ? 'cassette' : file}.json`);
}

/**
 * `config` with a cassette: `options` is the file's path, or `{ name?, path?, dir?, mode?, ignore? }`
 * (`name` a test's name, made a path in `dir` by `cassettePath`; `mode` 'auto' by default:
 * replays when the file exists, records when it does not; RULVAR_CASSETTE_MODE overrides it).
 * @template {object} C
 * @param {C} config
 * @param {string | { name?: string, path?: string, dir?: string, mode?: 'record' | 'replay' | 'auto', ignore?: Record<string, string[]> }} options
 * @returns {C & { cassette: { path: string, mode: 'record' | 'replay' | 'auto', ignore?: Record<string, string[]> } }}
 */
function withCassette(config, options) {
  const o = typeof options === 'string' ? { path: options } : (options ?? {});
  const file = o.path ?? (o.name !== undefined ? cassettePath(o.name, o.dir) : undefined);
  if (file === undefined) throw new ConfigError('withCassette: give the cassette a path or a test name');
  /** @type {{ path: string, mode: 'record' | 'replay' | 'auto', ignore?: Record<string, string[]> }} */
  const cassette = { path: file, mode: o.mode ?? 'auto' };
  if (o.ignore !== undefined) cassette.ignore = o.ignore;
  return Object.assign({}, config, { cassette });
}

/**
 * What the cassette at `file` holds, read and checked as a replay reads it (a `ConfigError` when
 * a replay would refuse it): its protocol revision, the server's info, the toolset hash of its
 * last import, and each recorded request with what came back for it.
 * @param {string} file
 * @returns {import('../testing').CassetteSummary}
 */
function readCassette(file) {
  let text;
  try {
    text = native.cassetteSummary(file);
  } catch (err) {
    throw require('./errors.js').adopt(ConfigError, err);
  }
  return JSON.parse(text);
}

module.exports = { cassettePath, withCassette, readCassette, DEFAULT_DIR };
