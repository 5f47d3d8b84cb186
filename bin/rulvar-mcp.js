#!/usr/bin/env node
'use strict';

// rulvar-mcp: shows what an engine would import from an MCP server, and calls one tool.
//   rulvar-mcp inspect [target] [config flags] [--json]
//   rulvar-mcp call <tool> [json] [target] [config flags] [--json]
//   rulvar-mcp lock [target] [config flags] [--out FILE]
//   rulvar-mcp diff <lockfile> [target] [config flags] [--json]
//   rulvar-mcp record [target] [config flags] --out FILE [--call "tool {json}"]...
//   rulvar-mcp cassette <file> [--json]
// Exit codes: 0 done (diff: no change from the lock), 1 a failed connect or call (diff: the
// import differs from the lock), 2 a refused config (or usage, or a lock of another source).
const { parseArgs } = require('node:util');
const path = require('node:path');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const crypto = require('node:crypto');
const api = require('../lib/index.js');
const { unvalidatedReasons, lockTextOf } = require('../lib/source.js');
const { refusalKindOf } = require('../lib/errors.js');
const { terminalElicit, shown } = require('./terminal-elicit.js');
const cassette = require('../lib/cli/cassette.js');
const { shownText } = require('../lib/native.js');

// A server's text of several lines (a result, an error), shown line by line, escaped.
const shownLines = (/** @type {unknown} */ text) => shownText(String(text), true);

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

/**
 * Tokens and registrations in a JSON file only the user can read, read afresh on every load.
 * Two logins at once (two terminals, two sources) each write under a lock file, through a
 * temp file of their own (O_EXCL, a random name, mode 0600) renamed over the store, so neither
 * loses the other's key; a store that is there but is not JSON is never overwritten.
 */
function fileStore(file) {
  const read = () => {
    let text;
    try {
      text = fs.readFileSync(file, 'utf8');
    } catch (err) {
      if (err.code === 'ENOENT') return {};
      throw err;
    }
    let data;
    try {
      data = JSON.parse(text);
    } catch {
      data = undefined;
    }
    if (data === null || typeof data !== 'object' || Array.isArray(data)) {
      throw new Error(`rulvar-mcp: the OAuth store '${file}' is not a JSON object; it is left as it is (move it away to log in afresh)`);
    }
    return data;
  };
  const lockFile = `${file}.lock`;
  const withLock = (fn) => {
    const deadline = Date.now() + 10_000;
    for (;;) {
      try {
        fs.closeSync(fs.openSync(lockFile, 'wx', 0o600));
        break;
      } catch (err) {
        if (err.code !== 'EEXIST') throw err;
        // A lock older than 30 s is a crashed writer's: taken over.
        try {
          if (Date.now() - fs.statSync(lockFile).mtimeMs > 30_000) fs.rmSync(lockFile, { force: true });
        } catch {}
        if (Date.now() > deadline) throw new Error(`rulvar-mcp: the OAuth store '${file}' stayed locked ('${lockFile}')`);
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 25);
      }
    }
    try {
      return fn();
    } finally {
      fs.rmSync(lockFile, { force: true });
    }
  };
  return {
    load: (key) => read()[key] ?? null,
    save: (key, value) => {
      fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      withLock(() => {
        const data = { ...read(), [key]: value };
        const tmp = `${file}.${crypto.randomBytes(8).toString('hex')}.tmp`;
        const fd = fs.openSync(tmp, 'wx', 0o600);
        try {
          fs.writeFileSync(fd, JSON.stringify(data, null, 2));
          fs.fchmodSync(fd, 0o600);
        } finally {
          fs.closeSync(fd);
        }
        try {
          fs.renameSync(tmp, file);
        } catch (err) {
          fs.rmSync(tmp, { force: true });
          throw err;
        }
      });
    },
  };
}

/**
 * The loopback redirect listener (RFC 8252): `authorize` prints the URL and resolves with the
 * redirect the browser brings to http://127.0.0.1:<port>/callback.
 */
async function loopback(port) {
  let waiting = null;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${server.address().port}`);
    if (url.pathname !== '/callback' || waiting === null) {
      res.writeHead(404).end();
      return;
    }
    // Any page the browser visits can send it to this port: only the redirect that answers
    // this login's authorization request (its `state`) ends the wait.
    if (!waiting.state || url.searchParams.get('state') !== waiting.state) {
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8' }).end('rulvar-mcp: this is not the redirect of the login in progress.\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('rulvar-mcp: authorized; you can close this window.\n');
    const done = waiting;
    waiting = null;
    done.resolve(url.href);
  });
  await new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, '127.0.0.1', resolve);
  });
  server.unref();
  return {
    redirectUri: `http://127.0.0.1:${server.address().port}/callback`,
    authorize: ({ url, signal }) =>
      new Promise((resolve, reject) => {
        process.stderr.write(`\nOpen this URL to authorize rulvar-mcp:\n\n  ${url}\n\nwaiting for the redirect on 127.0.0.1:${server.address().port}...\n`);
        waiting = { resolve, reject, state: new URL(url).searchParams.get('state') };
        server.ref();
        signal?.addEventListener('abort', () => reject(signal.reason ?? new Error('aborted')), { once: true });
      }).finally(() => server.unref()),
    close: () => server.close(),
  };
}

async function addOAuth(config, v) {
  if (!v.oauth) {
    for (const flag of ['oauth-store', 'oauth-port', 'oauth-client-id', 'oauth-scope']) {
      if (v[flag] !== undefined) throw new UsageError(`--${flag} needs --oauth`);
    }
    return null;
  }
  if (config.transport !== 'streamable-http') throw new UsageError('--oauth needs --http');
  const port = v['oauth-port'] === undefined ? 0 : Number(v['oauth-port']);
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new UsageError(`--oauth-port takes a port number, got '${v['oauth-port']}'`);
  const listener = await loopback(port);
  const file = v['oauth-store'] ?? path.join(os.homedir(), '.config', 'rulvar-mcp', 'oauth.json');
  config.http = {
    ...config.http,
    oauth: {
      redirectUri: listener.redirectUri,
      clientName: 'rulvar-mcp',
      authorize: listener.authorize,
      store: fileStore(file),
      ...(v['oauth-client-id'] !== undefined ? { clientId: v['oauth-client-id'] } : {}),
      ...(v['oauth-scope'] !== undefined ? { scope: v['oauth-scope'] } : {}),
    },
  };
  // A person is logging in: the connect waits for them (five minutes unless --connect-ms says).
  if (v['connect-ms'] === undefined) (config.timeouts ??= {}).connectMs = 300_000;
  return listener;
}

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

function buildConfig(v) {
  let config;
  if (v.stdio !== undefined && v.http !== undefined) throw new UsageError('give one target: --stdio or --http');
  if (v.http !== undefined) {
    if (sandboxOf(v) !== undefined) throw new UsageError('the --sandbox-* flags confine a stdio server: give them with --stdio');
    config = { transport: 'streamable-http', url: v.http };
    if (v.header) config.http = { headers: pairs(v.header, '--header') };
  } else {
    const words = v.stdio !== undefined ? splitCommand(v.stdio) : [process.execPath, path.join(__dirname, '..', 'examples', 'server.mjs')];
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

function originalName(name, prefix) {
  return prefix !== undefined && name.startsWith(`${prefix}_`) ? name.slice(prefix.length + 1) : name;
}

async function inspect(source, config, json) {
  const session = { runId: 'rulvar-mcp' };
  const defs = await connecting(source, () => source.tools(session));
  const resolved = await api.resolveToolset(defs, session);
  const tools = defs.map((def) => ({
    name: def.name,
    original: originalName(def.name, config.prefix),
    risk: def.risk ?? null,
    needsApproval: def.needsApproval,
    schemaBytes: Buffer.byteLength(JSON.stringify(def.parameters)),
    contractHash: api.toolContractHash(def).slice(0, 12),
    description: def.description,
    // Why the tool's input or output is not validated (its schema could not be compiled).
    unvalidated: unvalidatedReasons(def) ?? null,
  }));
  const report = {
    source: source.id,
    tools,
    toolsetHash: resolved.hash,
    authorityHash: resolved.authorityHash,
    posture: source.describeRegulatedPosture(),
    protocol: api.protocolOf(source) ?? null,
    leftOut: api.leftOutOf(source) ?? [],
  };
  if (json) {
    console.log(JSON.stringify(report, null, 2));
    return;
  }
  console.log(`${source.id}: ${tools.length} tool(s) admitted`);
  const rows = [
    ['name', 'original', 'risk', 'approval', 'schema', 'contract'],
    ...tools.map((t) => [shown(t.name), shown(t.original), t.risk ?? '-', t.needsApproval ? 'yes' : 'no', `${t.schemaBytes} B`, t.contractHash]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const row of rows) console.log(`  ${row.map((c, i) => c.padEnd(widths[i])).join('  ')}`.trimEnd());
  for (const t of tools.filter((t) => t.unvalidated !== null)) {
    for (const side of ['input', 'output']) {
      if (t.unvalidated[side] !== undefined) console.log(`  ${shown(t.name)}: ${side} not validated: ${shown(t.unvalidated[side])}`);
    }
  }
  console.log(`toolsetHash    ${report.toolsetHash}`);
  console.log(`authorityHash  ${report.authorityHash}`);
  console.log(`posture        ${JSON.stringify(report.posture)}`);
  console.log(`protocol       ${report.protocol}`);
  for (const t of report.leftOut) console.log(`  left out: ${shown(t.name)}: ${shown(t.reason)}`);
}

async function call(source, toolName, inputText, json) {
  if (toolName === undefined) throw new UsageError('call needs a tool name');
  let input = {};
  if (inputText !== undefined) {
    try {
      input = JSON.parse(inputText);
    } catch (err) {
      throw new UsageError(`the input is not JSON: ${err.message}`);
    }
  }
  const session = { runId: 'rulvar-mcp' };
  const defs = await connecting(source, () => source.tools(session));
  const def = defs.find((d) => d.name === toolName);
  if (def === undefined) {
    const err = new Error(`no tool '${toolName}' was admitted from ${source.id} (have: ${defs.map((d) => shown(d.name)).join(', ')})`);
    err.exitCode = 1;
    throw err;
  }
  const result = await def.execute(input, { runId: 'rulvar-mcp', spanId: 'cli', agent: 'rulvar-mcp' });
  if (json) console.log(JSON.stringify({ tool: toolName, result }, null, 2));
  else console.log(shownLines(typeof result === 'string' ? result : JSON.stringify(result, null, 2)));
}

async function lock(source, out) {
  const text = await connecting(source, () => lockTextOf(source));
  if (out === undefined) {
    process.stdout.write(text);
    return;
  }
  fs.writeFileSync(out, text);
  const written = JSON.parse(text);
  console.log(`wrote ${out}: ${written.tools.length} tool(s) of ${source.id}, toolsetHash ${written.toolsetHash}`);
}

async function diff(source, lockFile, json) {
  await connecting(source, () => source.tools({ runId: 'rulvar-mcp' }));
  const report = source.lockReport();
  if (json) {
    console.log(JSON.stringify({ source: source.id, lock: lockFile, changes: report.changes, signs: report.signs }, null, 2));
  } else {
    if (report.changes.length === 0) console.log(`${source.id}: no change from ${lockFile}`);
    else console.log(`${source.id}: ${report.changes.length} change(s) from ${lockFile}`);
    for (const change of report.changes) console.log(`  ${shown(change.text)}`);
    for (const sign of report.signs) console.log(`  poisoning sign: ${shown(sign.text)}`);
  }
  return report.changes.length === 0 ? 0 : 1;
}

/** A progress line on stderr while connecting, only for a person at a terminal. */
async function connecting(source, work) {
  if (!process.stderr.isTTY) return work();
  process.stderr.write(`connecting to ${source.id}...`);
  try {
    return await work();
  } finally {
    process.stderr.write('\r\x1b[K');
  }
}

function exitCodeOf(err) {
  if (err instanceof UsageError) return 2;
  if (err.exitCode !== undefined) return err.exitCode;
  // A refused config, discovery bound or lock is 2 (a ConfigError, code 'config'); a connect
  // that failed (a plain Error) or timed out (the refusal of kind 'connect_timeout') is 1.
  if (err.code === 'config' && refusalKindOf(err) !== 'connect_timeout') return 2;
  return 1;
}

async function main(argv) {
  let parsed;
  try {
    parsed = parse(argv);
  } catch (err) {
    console.error(`rulvar-mcp: ${err.message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  let source;
  let listener = null;
  try {
    if (!['inspect', 'call', 'lock', 'diff', 'record', 'cassette'].includes(command)) throw new UsageError(`unknown command '${command}'`);
    if (values.out !== undefined && command !== 'lock' && command !== 'record') throw new UsageError('--out is an option of lock and record');
    if (values.call !== undefined && command !== 'record') throw new UsageError('--call is an option of record');
    if (command === 'cassette') {
      if (rest[0] === undefined) throw new UsageError('cassette needs the cassette file');
      console.log(cassette.show(rest[0], values.json === true));
      return 0;
    }
    const config = buildConfig(values);
    if (command === 'record') {
      if (values.out === undefined) throw new UsageError('record needs --out FILE');
      config.cassette = { path: values.out, mode: 'record' };
    }
    if (command === 'diff') {
      if (rest[0] === undefined) throw new UsageError('diff needs the lock file');
      config.lock = rest[0];
      config.lockPolicy = 'report';
    }
    listener = await addOAuth(config, values);
    // A tool that asks the user something mid-call asks the person at this terminal.
    if (command === 'call') {
      const io = { input: process.stdin, output: process.stderr };
      const id = () => source?.id ?? 'the server';
      config.elicit = { handler: (request, ctx) => terminalElicit(request, ctx, io, id()), form: true, url: true };
    }
    source = api.mcp(config);
    if (command === 'inspect') await inspect(source, config, values.json);
    else if (command === 'lock') await lock(source, values.out);
    else if (command === 'diff') return await diff(source, rest[0], values.json);
    else if (command === 'record') console.log(await cassette.record(source, values.call ?? [], values.out));
    else await call(source, rest[0], rest[1], values.json);
    return 0;
  } catch (err) {
    const code = exitCodeOf(err);
    if (err instanceof UsageError) console.error(`rulvar-mcp: ${err.message}\n${USAGE}`);
    else console.error(`rulvar-mcp: ${shownLines(String(err.message).split('\n')[0])}`);
    // A refusal that lists what it refuses (a lock's changes, poisoning signs) shows the list.
    if (!(err instanceof UsageError) && /\n  /.test(String(err.message))) {
      for (const line of String(err.message).split('\n').slice(1)) console.error(shownLines(line));
    }
    return code;
  } finally {
    if (source) await source.close();
    listener?.close();
  }
}

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
} else {
  // For the tests: the file store, driven by several processes at once.
  module.exports = { fileStore };
}
