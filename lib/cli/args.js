'use strict';

// The CLI's words: its usage, its flags, and the config and target the flags give.
const { parseArgs } = require('node:util');
const path = require('node:path');

const USAGE = `usage: rulvar-mcp inspect|call <tool> [json]|lock|diff <lockfile>|record|cassette <file> [options]
  lock                        writes the toolset lock of the import (stdout, or --out FILE)
  diff <lockfile>             what the import changes from the lock, field by field (exit 1
                              when it differs); the same lines mcp({ lock }) refuses with
  record --out FILE           records the import, and each --call "tool {json}" in order, into
                              a cassette that mcp({ cassette }) replays (docs/testing-hosts.md)
  cassette <file>             what a cassette holds, one line per recorded request
targets (default: the embedded example server, examples/server.mjs, over stdio):
  --stdio "<cmd> <args...>"   spawn a stdio server (no shell; quotes group words)
  --http <url>                a streamable-HTTP server; --header K=V (repeatable)
  --oauth                     log in with OAuth: prints the authorization URL and takes the
                              redirect on a loopback listener; --oauth-store file (tokens, mode
                              0600; default ~/.config/rulvar-mcp/oauth.json), --oauth-port N,
                              --oauth-client-id id, --oauth-scope "a b"
config:
  --allow a,b  --deny a,b  --prefix p  --risk name=label  --approval[=a,b]
  --max-tools N  --max-pages N  --max-schema-bytes N  --require-bounds
  --connect-ms N  --list-ms N  --call-ms N  --discovery-ms N  --drift rekey|refuse
  --env K=V  --cwd dir  --stderr inherit|ignore|pipe  --strict
sandbox (stdio; Linux enforces it, docs/sandbox.md):
  --sandbox-read dir          readable (repeatable); with any --sandbox-* flag the server is
  --sandbox-write dir         confined: writable (repeatable)
  --sandbox-net deny|allow|host:port,...   TCP it may connect to (default deny)
  --sandbox-warn              start with what can be enforced instead of refusing
output:
  --out FILE                  lock: write the lock to FILE; record: the cassette
  --json                      machine-readable output on stdout`;

/** @satisfies {import('node:util').ParseArgsConfig['options']} */
const OPTIONS = {
  stdio: { type: 'string' },
  call: { type: 'string', multiple: true },
  http: { type: 'string' },
  header: { type: 'string', multiple: true },
  oauth: { type: 'boolean' },
  'oauth-store': { type: 'string' },
  'oauth-port': { type: 'string' },
  'oauth-client-id': { type: 'string' },
  'oauth-scope': { type: 'string' },
  allow: { type: 'string', multiple: true },
  deny: { type: 'string', multiple: true },
  prefix: { type: 'string' },
  risk: { type: 'string', multiple: true },
  approval: { type: 'string' },
  'max-tools': { type: 'string' },
  'max-pages': { type: 'string' },
  'max-schema-bytes': { type: 'string' },
  'require-bounds': { type: 'boolean' },
  'connect-ms': { type: 'string' },
  'list-ms': { type: 'string' },
  'call-ms': { type: 'string' },
  'discovery-ms': { type: 'string' },
  drift: { type: 'string' },
  env: { type: 'string', multiple: true },
  cwd: { type: 'string' },
  stderr: { type: 'string' },
  'sandbox-read': { type: 'string', multiple: true },
  'sandbox-write': { type: 'string', multiple: true },
  'sandbox-net': { type: 'string' },
  'sandbox-warn': { type: 'boolean' },
  strict: { type: 'boolean' },
  out: { type: 'string' },
  json: { type: 'boolean' },
  help: { type: 'boolean', short: 'h' },
};

class UsageError extends Error {}

/** Splits a command line on whitespace; single or double quotes group words. No shell. */
function splitCommand(line) {
  const words = [];
  const re = /"([^"]*)"|'([^']*)'|(\S+)/g;
  let m;
  while ((m = re.exec(line)) !== null) words.push(m[1] ?? m[2] ?? m[3]);
  return words;
}

function pairs(list, flag) {
  const out = {};
  for (const item of list ?? []) {
    const i = item.indexOf('=');
    if (i <= 0) throw new UsageError(`${flag} takes KEY=VALUE, got '${item}'`);
    out[item.slice(0, i)] = item.slice(i + 1);
  }
  return out;
}

const names = (list) => (list ?? []).flatMap((v) => v.split(',')).filter(Boolean);

// A bound is passed as given when it is not a number, so mcp() refuses it with its own message.
const number = (v) => (v === undefined ? undefined : v.trim() !== '' && !Number.isNaN(Number(v)) ? Number(v) : v);

/** The `sandbox` the --sandbox-* flags declare, or undefined when none is given. */
function sandboxOf(v) {
  const flags = ['sandbox-read', 'sandbox-write', 'sandbox-net', 'sandbox-warn'];
  if (flags.every((f) => v[f] === undefined)) return undefined;
  const net = v['sandbox-net'];
  return {
    fs: { read: v['sandbox-read'] ?? [], write: v['sandbox-write'] ?? [] },
    // A list of host:port (or ports) is the connect list; the config refuses what is neither.
    net: net === undefined || net === 'deny' || net === 'allow' ? (net ?? 'deny') : { connect: net.split(',').map((e) => (/^\d+$/.test(e) ? Number(e) : e)) },
    onUnsupported: v['sandbox-warn'] ? 'warn' : 'refuse',
  };
}

/** @returns {any} the config: a plain object mcp() checks */
function buildConfig(v) {
  /** @type {any} */
  let config;
  if (v.stdio !== undefined && v.http !== undefined) throw new UsageError('give one target: --stdio or --http');
  if (v.http !== undefined) {
    if (sandboxOf(v) !== undefined) throw new UsageError('the --sandbox-* flags confine a stdio server: give them with --stdio');
    config = { transport: 'streamable-http', url: v.http };
    if (v.header) config.http = { headers: pairs(v.header, '--header') };
  } else {
    const words = v.stdio !== undefined ? splitCommand(v.stdio) : [process.execPath, path.join(__dirname, '..', '..', 'examples', 'server.mjs')];
    if (words.length === 0) throw new UsageError('--stdio needs a command');
    config = { transport: 'stdio', command: words[0], args: words.slice(1) };
    if (v.env) config.env = pairs(v.env, '--env');
    if (v.cwd !== undefined) config.cwd = v.cwd;
    if (v.stderr !== undefined) config.stderr = v.stderr;
    const sandbox = sandboxOf(v);
    if (sandbox !== undefined) config.sandbox = sandbox;
  }
  if (v.allow) config.allow = names(v.allow);
  if (v.deny) config.deny = names(v.deny);
  if (v.prefix !== undefined) config.prefix = v.prefix;
  if (v.risk) config.risk = pairs(v.risk, '--risk');
  if (v.approval !== undefined) {
    const listed = names([v.approval]);
    config.approval = v.approval === '' || v.approval === 'true' ? true : Object.fromEntries(listed.map((n) => [n, true]));
  }
  const bounds = { maxTools: 'max-tools', maxPages: 'max-pages', maxSchemaBytes: 'max-schema-bytes' };
  for (const [key, flag] of Object.entries(bounds)) if (v[flag] !== undefined) config[key] = number(v[flag]);
  const timeouts = { connectMs: 'connect-ms', listMs: 'list-ms', callMs: 'call-ms', discoveryMs: 'discovery-ms' };
  for (const [key, flag] of Object.entries(timeouts)) {
    if (v[flag] !== undefined) (config.timeouts ??= {})[key] = number(v[flag]);
  }
  if (v['require-bounds']) config.requireBounds = true;
  if (v.drift !== undefined) config.drift = v.drift;
  if (v.strict) config.strict = true;
  return config;
}

function parse(argv) {
  // `--approval` alone means "every tool": give it an empty value before parseArgs sees it.
  const args = argv.map((a) => (a === '--approval' ? '--approval=' : a));
  const { values, positionals } = parseArgs({ args, options: OPTIONS, allowPositionals: true, strict: true });
  return { values, positionals };
}

module.exports = { USAGE, UsageError, parse, buildConfig };
