'use strict';

// Logging in with OAuth from the terminal (--oauth): the token store in a file only the user
// can read, and the loopback listener the authorization server redirects to.
const path = require('node:path');
const fs = require('node:fs');
const http = require('node:http');
const os = require('node:os');
const crypto = require('node:crypto');
const { UsageError } = require('./args.js');

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
  /** @type {any} */
  let waiting = null;
  // Its port, once it listens.
  const portOf = () => /** @type {import('node:net').AddressInfo} */ (server.address()).port;
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', `http://127.0.0.1:${portOf()}`);
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
    server.listen(port, '127.0.0.1', () => resolve(undefined));
  });
  server.unref();
  return {
    redirectUri: `http://127.0.0.1:${portOf()}/callback`,
    authorize: ({ url, signal }) =>
      new Promise((resolve, reject) => {
        process.stderr.write(`\nOpen this URL to authorize rulvar-mcp:\n\n  ${url}\n\nwaiting for the redirect on 127.0.0.1:${portOf()}...\n`);
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

module.exports = { fileStore, addOAuth };
