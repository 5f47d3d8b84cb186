// http.oauth against a local protected MCP server with its own authorization server: refresh
// under a parallel burst of 401s (one refresh, every call goes through), a refresh token rotated
// by another process (taken from the store, never reused), the typed errors, and no secret in
// any error text. The conformance suite's auth/* scenarios (conformance.test.ts) cover discovery,
// registration, PKCE, scopes and step-up.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { ConfigError, OAuthError, lockText, mcp } from '../lib/index.js';
import { buildServer } from '../examples/server.mjs';
import { closeAfterEach, ctx, rejection, session, thrown } from './helpers/common.js';

const closing = closeAfterEach();

const CLIENT_ID = 'client-1';
const CLIENT_SECRET = 'client-secret-value-42';

interface Protected {
  url: string;
  base: string;
  valid: Set<string>;
  refreshes: number;
  /** Refresh tokens presented after they had been rotated away. */
  reused: string[];
  codes: string[];
  /** Every form posted to the token endpoint. */
  tokenForms: URLSearchParams[];
  /** What the token endpoint answers to an authorization_code grant (an error, say). */
  codeAnswer?: { status: number; body: unknown };
  /** When set, every tools/call is refused as insufficient_scope, asking for this scope. */
  stepUp?: string;
  /** What the protected resource metadata says instead of the honest document. */
  prm?: () => unknown;
  /** What the authorization server metadata says instead of the honest document. */
  asMetadata?: () => unknown;
  /** The `WWW-Authenticate` field(s) of a 401 instead of the honest one. */
  challenge?: string | string[];
  /** Where the protected resource metadata is served instead of the path-aware well-known URL. */
  prmPath?: string;
  /** Called with the refresh token of each refresh grant before it is answered. */
  beforeRefresh?: (refreshToken: string) => void;
  refreshToken(rt: string): { access_token: string; refresh_token: string } | undefined;
  stop(): Promise<void>;
}

/** The authorization server metadata an honest server at `base` publishes. */
const honestMetadata = (base: string) => ({
  issuer: base,
  authorization_endpoint: `${base}/authorize`,
  token_endpoint: `${base}/token`,
  response_types_supported: ['code'],
  code_challenge_methods_supported: ['S256'],
  token_endpoint_auth_methods_supported: ['client_secret_post'],
});

async function serveProtected(): Promise<Protected> {
  let n = 0;
  const live = new Set<string>(); // refresh tokens that may be used
  const spent = new Set<string>();
  const state: Protected = {
    url: '',
    base: '',
    valid: new Set(),
    refreshes: 0,
    reused: [],
    codes: [],
    tokenForms: [],
    refreshToken(rt) {
      if (!live.has(rt)) {
        if (spent.has(rt)) state.reused.push(rt);
        return undefined;
      }
      live.delete(rt);
      spent.add(rt);
      state.refreshes++;
      n++;
      const tokens = { access_token: `access-${n}-abcdef`, refresh_token: `refresh-${n}-abcdef` };
      state.valid.add(tokens.access_token);
      live.add(tokens.refresh_token);
      return tokens;
    },
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const issue = () => {
    n++;
    const tokens = { access_token: `access-${n}-abcdef`, refresh_token: `refresh-${n}-abcdef` };
    state.valid.add(tokens.access_token);
    live.add(tokens.refresh_token);
    return tokens;
  };
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', state.base).pathname;
    if (req.method === 'GET' && path === (state.prmPath ?? '/.well-known/oauth-protected-resource/mcp')) {
      if (state.prm) return json(res, 200, state.prm());
      return json(res, 200, { resource: state.url, authorization_servers: [state.base] });
    }
    if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server') {
      return json(res, 200, state.asMetadata ? state.asMetadata() : honestMetadata(state.base));
    }
    if (req.method === 'POST' && path === '/token') {
      let text = '';
      for await (const chunk of req) text += chunk;
      const form = new URLSearchParams(text);
      state.tokenForms.push(form);
      if (form.get('client_secret') !== CLIENT_SECRET) return json(res, 401, { error: 'invalid_client' });
      if (form.get('grant_type') === 'refresh_token') {
        state.beforeRefresh?.(form.get('refresh_token') ?? '');
        const tokens = state.refreshToken(form.get('refresh_token') ?? '');
        if (!tokens) return json(res, 400, { error: 'invalid_grant', error_description: 'refresh token was used already' });
        return json(res, 200, { ...tokens, token_type: 'Bearer', expires_in: 3600 });
      }
      state.codes.push(form.get('code') ?? '');
      if (state.codeAnswer) return json(res, state.codeAnswer.status, state.codeAnswer.body);
      return json(res, 200, { ...issue(), token_type: 'Bearer', expires_in: 3600 });
    }
    if (path === '/mcp') {
      const auth = req.headers.authorization ?? '';
      const token = auth.startsWith('Bearer ') ? auth.slice(7) : '';
      if (!state.valid.has(token)) {
        res
          .writeHead(401, {
            'www-authenticate': state.challenge ?? `Bearer error="invalid_token", resource_metadata="${state.base}/.well-known/oauth-protected-resource/mcp"`,
            'content-type': 'application/json',
          })
          .end(JSON.stringify({ error: 'invalid_token', echoed: auth }));
        return;
      }
      if (req.method !== 'POST') return void res.writeHead(405).end();
      let text = '';
      for await (const chunk of req) text += chunk;
      const body = JSON.parse(text);
      if (state.stepUp !== undefined && body.method === 'tools/call') {
        res
          .writeHead(403, {
            'www-authenticate': `Bearer error="insufficient_scope", scope="${state.stepUp}", resource_metadata="${state.base}/.well-known/oauth-protected-resource/mcp"`,
          })
          .end();
        return;
      }
      const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
      const mcpServer = buildServer();
      res.on('close', () => {
        void transport.close();
        void mcpServer.close();
      });
      await mcpServer.connect(transport);
      await transport.handleRequest(req, res, body);
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  state.base = `http://127.0.0.1:${port}`;
  state.url = `${state.base}/mcp`;
  return state;
}

interface AuthServer {
  base: string;
  /** Every request it got: method, path, the form of a POST and its authorization header. */
  requests: Array<{ method: string; path: string; form: Record<string, string>; authorization?: string }>;
  /** What its metadata says instead of the honest document (with a registration endpoint). */
  metadata?: () => unknown;
  stop(): Promise<void>;
}

// A second authorization server (honest or hostile, as the test makes it): registers any
// client, issues tokens the protected server takes (they go into `valid`), refreshes only its
// own refresh tokens, and records every request. `host` may be a non-loopback address.
async function serveAuthServer(valid: Set<string>, host = '127.0.0.1'): Promise<AuthServer> {
  let n = 0;
  const live = new Set<string>();
  const state: AuthServer = {
    base: '',
    requests: [],
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const json = (res: http.ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  };
  const issue = () => {
    n++;
    const tokens = { access_token: `other-access-${n}-${port}`, refresh_token: `other-refresh-${n}-${port}` };
    valid.add(tokens.access_token);
    live.add(tokens.refresh_token);
    return { ...tokens, token_type: 'Bearer', expires_in: 3600 };
  };
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', state.base).pathname;
    let text = '';
    for await (const chunk of req) text += chunk;
    let form: Record<string, string> = {};
    try {
      form = req.headers['content-type']?.includes('json') ? JSON.parse(text) : Object.fromEntries(new URLSearchParams(text));
    } catch {}
    state.requests.push({ method: req.method ?? '', path, form, authorization: req.headers.authorization });
    if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server') {
      return json(
        res,
        200,
        state.metadata
          ? state.metadata()
          : {
              ...honestMetadata(state.base),
              registration_endpoint: `${state.base}/register`,
              token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
            },
      );
    }
    if (req.method === 'POST' && path === '/register') return json(res, 201, { client_id: `client-of-${port}` });
    if (req.method === 'POST' && path === '/token') {
      if (form.grant_type === 'refresh_token') {
        if (!live.delete(form.refresh_token)) return json(res, 400, { error: 'invalid_grant' });
      }
      return json(res, 200, issue());
    }
    res.writeHead(404).end();
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const { port } = server.address() as AddressInfo;
  state.base = `http://${host}:${port}`;
  return state;
}

/** An address of this machine that is not loopback, when it has one. */
const NON_LOOPBACK = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

function memoryStore(initial: Record<string, unknown> = {}) {
  const data = new Map<string, unknown>(Object.entries(initial));
  return {
    data,
    load: async (key: string) => structuredClone(data.get(key)),
    save: async (key: string, value: unknown) => {
      data.set(key, structuredClone(value));
    },
  };
}

// The user's browser: the authorization server redirects at once with a fixed code.
function browser(code = 'code-xyz-123456') {
  return async ({ url }: { url: string }) => {
    const u = new URL(url);
    const back = new URL(u.searchParams.get('redirect_uri')!);
    back.searchParams.set('code', code);
    back.searchParams.set('state', u.searchParams.get('state')!);
    return back.href;
  };
}

const oauthConfig = (served: Protected, extra: Record<string, unknown>) => ({
  transport: 'streamable-http' as const,
  url: served.url,
  http: {
    oauth: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: 'http://127.0.0.1:9/cb', ...extra },
  },
});

describe('http.oauth', () => {
  it('authorizes once, then sends the bearer on every request', async () => {
    const served = closing(await serveProtected());
    let asked = 0;
    const authorize = browser();
    const store = memoryStore();
    const source = closing(mcp(oauthConfig(served, { store, authorize: (r: any) => (asked++, authorize(r)) }) as any));
    const defs = await source.tools(session);
    expect(await defs[0].execute({ text: 'hi' }, ctx)).toBe('hi');
    expect(asked).toBe(1);
    expect(served.codes).toEqual(['code-xyz-123456']);
    const saved = store.data.get(`oauth:tokens:${served.url}`) as any;
    expect(served.valid.has(saved.access_token)).toBe(true);
  });

  it('a burst of parallel 401s makes one refresh, and every call goes through', async () => {
    const served = closing(await serveProtected());
    const store = memoryStore();
    const source = closing(mcp(oauthConfig(served, { store, authorize: browser() }) as any));
    const defs = await source.tools(session);
    served.valid.clear(); // every access token expires on the server's side at once
    const before = served.refreshes;
    const results = await Promise.all(Array.from({ length: 12 }, (_, i) => defs[0].execute({ text: `c${i}` }, ctx)));
    expect(results).toEqual(Array.from({ length: 12 }, (_, i) => `c${i}`));
    expect(served.refreshes - before).toBe(1);
    expect(served.reused).toEqual([]);
  });

  it('takes a token another process saved (after rotating the refresh token) instead of refreshing', async () => {
    const served = closing(await serveProtected());
    const store = memoryStore();
    const source = closing(mcp(oauthConfig(served, { store, authorize: browser() }) as any));
    const defs = await source.tools(session);
    // Another process refreshes with the same stored refresh token and saves the result.
    const key = `oauth:tokens:${served.url}`;
    const mine = store.data.get(key) as any;
    const theirs = served.refreshToken(mine.refresh_token)!;
    store.data.set(key, { ...theirs, expires_at: Date.now() + 3_600_000 });
    served.valid.delete(mine.access_token);
    const refreshes = served.refreshes;
    expect(await defs[0].execute({ text: 'after' }, ctx)).toBe('after');
    expect(served.refreshes).toBe(refreshes); // no refresh of ours
    expect(served.reused).toEqual([]); // the rotated-away refresh token was never sent
  });

  it('refreshes with a stored refresh token without asking the user', async () => {
    const served = closing(await serveProtected());
    const seed = served.refreshToken('none'); // nothing live yet: undefined
    expect(seed).toBeUndefined();
    // A first source authorizes and stores; a second one (another process) starts from the store.
    const store = memoryStore();
    const first = mcp(oauthConfig(served, { store, authorize: browser() }) as any);
    await first.tools(session);
    await first.close();
    served.valid.clear();
    const second = closing(mcp(oauthConfig(served, { store }) as any)); // no authorize callback
    const defs = await second.tools(session);
    expect(await defs[0].execute({ text: 'x' }, ctx)).toBe('x');
    expect(served.reused).toEqual([]);
  });

  it('authorization required without an authorize callback is a typed error', async () => {
    const served = closing(await serveProtected());
    const source = closing(mcp(oauthConfig(served, {}) as any));
    const err = await rejection(source.tools(session));
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({ name: 'OAuthError', code: 'oauth', kind: 'authorization_required', retryable: false });
    expect(err.error).toBeUndefined();
    expect(err.message).toMatch(/mcp: oauth: '.*' requires authorization and 'http\.oauth\.authorize' is not set/);
    expect(err.toWire()).toEqual({ code: 'oauth', kind: 'authorization_required', message: err.message, retryable: false });
  });

  it('a call that needs a new authorization without an authorize callback rejects with the typed error', async () => {
    const served = closing(await serveProtected());
    const store = memoryStore();
    const first = mcp(oauthConfig(served, { store, authorize: browser() }) as any);
    await first.tools(session);
    await first.close();
    const source = closing(mcp(oauthConfig(served, { store }) as any)); // no authorize callback
    const defs = await source.tools(session);
    // The server forgets every token and the refresh token is spent elsewhere: only a new
    // authorization could help, and there is no one to ask.
    const stored = store.data.get(`oauth:tokens:${served.url}`) as any;
    served.refreshToken(stored.refresh_token);
    served.valid.clear();
    const err = await rejection(defs[0].execute({ text: 'x' }, ctx));
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({ code: 'oauth', kind: 'authorization_required' });
    expect(err.message).toMatch(/^mcp: tool 'echo' failed: mcp: oauth: '.*' requires authorization/);
  });

  it('step-up merges the scopes asked for, and after 3 authorizations the call fails typed', async () => {
    const served = closing(await serveProtected());
    const scopes: string[] = [];
    const authorize = browser();
    const source = closing(
      mcp(
        oauthConfig(served, {
          scope: 'tools:read',
          authorize: (r: any) => (scopes.push(new URL(r.url).searchParams.get('scope')!), authorize(r)),
        }) as any,
      ),
    );
    const defs = await source.tools(session);
    expect(scopes).toEqual(['tools:read']);
    served.stepUp = 'tools:write';
    const err = await rejection(defs[0].execute({ text: 'x' }, ctx));
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({ code: 'oauth', kind: 'step_up_exhausted' });
    expect(err.message).toMatch(/mcp: oauth: step-up exhausted: '.*' still refuses the token as insufficient_scope after 3 authorizations/);
    // The first authorization, then exactly 3 step-ups, each asking for both scopes.
    expect(scopes).toEqual(['tools:read', 'tools:read tools:write', 'tools:read tools:write', 'tools:read tools:write']);
  });

  it("a refusal in the authorization redirect is typed with the server's error code", async () => {
    const served = closing(await serveProtected());
    const authorize = async ({ url }: { url: string }) => {
      const u = new URL(url);
      const back = new URL(u.searchParams.get('redirect_uri')!);
      back.searchParams.set('error', 'access_denied');
      back.searchParams.set('error_description', 'the user said no');
      back.searchParams.set('state', u.searchParams.get('state')!);
      return back.href;
    };
    const source = closing(mcp(oauthConfig(served, { authorize }) as any));
    const err = await rejection(source.tools(session));
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({ code: 'oauth', kind: 'refused', error: 'access_denied' });
    expect(err.message).not.toContain('the user said no');
  });

  it("the authorization server's refusal shows its code, and no secret reaches the error text", async () => {
    const served = closing(await serveProtected());
    served.codeAnswer = {
      status: 400,
      body: { error: 'invalid_grant', error_description: `bad code code-xyz-123456 for ${CLIENT_SECRET}` },
    };
    let redirect = '';
    const authorize = browser();
    const source = closing(mcp(oauthConfig(served, { authorize: async (r: any) => (redirect = await authorize(r)) }) as any));
    const err = await rejection(source.tools(session));
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({ code: 'oauth', kind: 'refused', error: 'invalid_grant' });
    expect(err.toWire()).toMatchObject({ kind: 'refused', error: 'invalid_grant' });
    expect(err.message).toMatch(/refused the token request \(invalid_grant, HTTP 400\)/);
    const state = new URL(redirect).searchParams.get('state')!;
    for (const secret of [CLIENT_SECRET, 'code-xyz-123456', redirect, state, 'bad code']) {
      expect(err.message).not.toContain(secret);
    }
  });

  it('an authorize callback that throws is an error with its state redacted', async () => {
    const served = closing(await serveProtected());
    let state = '';
    const source = closing(
      mcp(
        oauthConfig(served, {
          authorize: async ({ url }: { url: string }) => {
            state = new URL(url).searchParams.get('state')!;
            throw new Error(`user closed the window at ${url}`);
          },
        }) as any,
      ),
    );
    const err = await rejection(source.tools(session));
    expect(err.message).toMatch(/mcp: oauth: the http\.oauth\.authorize callback failed/);
    expect(state.length).toBeGreaterThan(20);
    expect(err.message).not.toContain(state);
  });

  it('config: refusals name the key', () => {
    const base = { transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp' };
    let err = thrown(() => mcp({ ...base, http: { headers: { Authorization: 'Bearer x' }, oauth: { redirectUri: 'http://localhost/cb' } } } as any));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/static 'Authorization' header, which 'http.oauth' replaces/);
    err = thrown(() => mcp({ ...base, http: { oauth: { redirectUri: 'http://localhost/cb', scopes: 'a' } } } as any));
    expect(err.message).toMatch(/^mcp: unknown config key 'http.oauth.scopes'/);
    err = thrown(() => mcp({ ...base, http: { oauth: { grant: 'client_credentials', clientId: 'c' } } } as any));
    expect(err.message).toMatch(/'client_credentials' grant of 'http.oauth' requires/);
    err = thrown(() => mcp({ ...base, http: { oauth: { redirectUri: 'http://localhost/cb', authorize: 'yes' } } } as any));
    expect(err.message).toMatch(/'http.oauth.authorize' must be a \(possibly async\) function/);
    err = thrown(() => mcp({ ...base, http: { oauth: { grant: 'client_credentials', clientId: 'c', clientSecret: 42424242 } } } as any));
    expect(err.message).not.toContain('42424242');
  });
});

// Every URL, scheme, origin and issuer a server hands over is untrusted until checked.
describe('http.oauth: a hostile server cannot steer it', () => {
  const counting = (calls: string[]) => {
    const authorize = browser();
    return (r: any) => (calls.push(r.url), authorize(r));
  };

  it('refuses authorization server metadata whose issuer is not the one it was found for (mix-up)', async () => {
    const served = closing(await serveProtected());
    const evil = closing(await serveAuthServer(served.valid));
    // The hostile document claims the honest issuer, with its own token endpoint.
    evil.metadata = () => ({ ...honestMetadata(evil.base), issuer: served.base });
    served.prm = () => ({ resource: served.url, authorization_servers: [evil.base] });
    const asked: string[] = [];
    const source = closing(mcp(oauthConfig(served, { authorize: counting(asked) }) as any));
    const err = await rejection(source.tools(session));
    expect(err).toBeInstanceOf(OAuthError);
    expect(err).toMatchObject({ code: 'oauth', kind: 'untrusted' });
    expect(err.message).toMatch(/issuer/);
    expect(asked).toEqual([]);
    expect(evil.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it("never fetches a challenge's resource_metadata on another origin (SSRF)", async () => {
    const served = closing(await serveProtected());
    const metadataService = closing(await serveAuthServer(new Set()));
    served.challenge = `Bearer error="invalid_token", resource_metadata="${metadataService.base}/latest/meta-data/iam"`;
    const source = closing(mcp(oauthConfig(served, { authorize: browser() }) as any));
    const err = await rejection(source.tools(session));
    expect(err).toMatchObject({ code: 'oauth', kind: 'untrusted' });
    expect(err.message).toMatch(/origin/);
    expect(metadataService.requests).toEqual([]);
  });

  it.skipIf(!NON_LOOPBACK)('never sends a client secret to a non-loopback http:// authorization server or endpoint', async () => {
    const served = closing(await serveProtected());
    const evil = closing(await serveAuthServer(served.valid, NON_LOOPBACK));
    const config = {
      transport: 'streamable-http' as const,
      url: served.url,
      http: { oauth: { grant: 'client_credentials', clientId: CLIENT_ID, clientSecret: CLIENT_SECRET } },
    };
    // The protected resource names an http:// authorization server that is not loopback.
    served.prm = () => ({ resource: served.url, authorization_servers: [evil.base] });
    let err = await rejection(closing(mcp(config as any)).tools(session));
    expect(err).toMatchObject({ code: 'oauth', kind: 'untrusted' });
    expect(err.message).toMatch(/https/);
    expect(evil.requests).toEqual([]);
    // A loopback authorization server whose token endpoint is such a URL.
    served.prm = undefined;
    served.asMetadata = () => ({ ...honestMetadata(served.base), token_endpoint: `${evil.base}/token` });
    err = await rejection(closing(mcp(config as any)).tools(session));
    expect(err).toMatchObject({ code: 'oauth', kind: 'untrusted' });
    expect(err.message).toMatch(/token_endpoint/);
    expect(evil.requests).toEqual([]);
    expect(err.message).not.toContain(CLIENT_SECRET);
  });

  it('hands the authorize callback only https: (or loopback http:) authorization URLs', async () => {
    const bad = ['javascript:alert(document.domain)//', 'file:///etc/passwd', 'ms-msdt:/id PCWDiagnostic /skip force'];
    if (NON_LOOPBACK) bad.push(`http://${NON_LOOPBACK}:9/authorize`);
    for (const endpoint of bad) {
      const served = closing(await serveProtected());
      served.asMetadata = () => ({ ...honestMetadata(served.base), authorization_endpoint: endpoint });
      const asked: string[] = [];
      const err = await rejection(closing(mcp(oauthConfig(served, { authorize: counting(asked) }) as any)).tools(session));
      expect(err, endpoint).toMatchObject({ code: 'oauth', kind: 'untrusted' });
      expect(err.message).toMatch(/authorization_endpoint/);
      expect(asked, endpoint).toEqual([]);
    }
  });

  it('the issuer pin: configured credentials never go to another authorization server', async () => {
    const served = closing(await serveProtected());
    const source = closing(
      mcp({
        transport: 'streamable-http',
        url: served.url,
        http: {
          oauth: { grant: 'client_credentials', clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, issuer: 'http://127.0.0.1:1' },
        },
      } as any),
    );
    const err = await rejection(source.tools(session));
    expect(err).toMatchObject({ code: 'oauth', kind: 'untrusted' });
    expect(err.message).toMatch(/http\.oauth\.issuer/);
    expect(served.tokenForms).toEqual([]);
  });

  it('configured credentials stay with the authorization server they were first used with', async () => {
    const served = closing(await serveProtected());
    const store = memoryStore();
    const config = {
      transport: 'streamable-http' as const,
      url: served.url,
      http: { oauth: { grant: 'client_credentials', clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, store } },
    };
    const defs = await closing(mcp(config as any)).tools(session);
    expect(served.tokenForms.length).toBe(1);
    // The protected resource now names another (honest-looking) authorization server.
    const other = closing(await serveAuthServer(served.valid));
    served.prm = () => ({ resource: served.url, authorization_servers: [other.base] });
    served.challenge = `Bearer error="invalid_token", resource_metadata="${served.base}/.well-known/oauth-protected-resource/mcp?moved=1"`;
    served.valid.clear();
    const err = await rejection(defs[0].execute({ text: 'x' }, ctx));
    expect(err).toMatchObject({ code: 'oauth', kind: 'untrusted' });
    expect(other.requests.filter((r) => r.method === 'POST')).toEqual([]);
    // A new process with the same store refuses too.
    const again = await rejection(closing(mcp(config as any)).tools(session));
    expect(again).toMatchObject({ code: 'oauth', kind: 'untrusted' });
    expect(other.requests.filter((r) => r.method === 'POST')).toEqual([]);
  });

  it('a new authorization server gets no old refresh token: the client registers with it anew', async () => {
    const served = closing(await serveProtected());
    const a = closing(await serveAuthServer(served.valid));
    const b = closing(await serveAuthServer(served.valid));
    let current = a;
    served.prm = () => ({ resource: served.url, authorization_servers: [current.base] });
    const store = memoryStore();
    const source = closing(
      mcp({
        transport: 'streamable-http',
        url: served.url,
        http: { oauth: { redirectUri: 'http://127.0.0.1:9/cb', authorize: browser(), store } },
      } as any),
    );
    const defs = await source.tools(session);
    const saved = store.data.get(`oauth:tokens:${served.url}`) as any;
    expect(saved.issuer).toBe(a.base);
    // The resource moves to b: its metadata (named by a new challenge) lists b alone.
    current = b;
    served.challenge = `Bearer error="invalid_token", resource_metadata="${served.base}/.well-known/oauth-protected-resource/mcp?moved=1"`;
    served.valid.clear();
    expect(await defs[0].execute({ text: 'moved' }, ctx)).toBe('moved');
    expect(b.requests.filter((r) => r.form.grant_type === 'refresh_token')).toEqual([]);
    expect(b.requests.filter((r) => r.path === '/register').length).toBe(1);
    const code = b.requests.find((r) => r.form.grant_type === 'authorization_code');
    expect(code?.form.client_id).toBe(`client-of-${new URL(b.base).port}`);
    expect((store.data.get(`oauth:tokens:${served.url}`) as any).issuer).toBe(b.base);
    expect(store.data.has(`oauth:client:${b.base}`)).toBe(true);
  });
});

describe('http.oauth config: the trust boundary', () => {
  const oauth = { redirectUri: 'http://127.0.0.1:9/cb' };
  it('requires https: for the server URL (http: on loopback only), and a loopback or https redirectUri', () => {
    let err = thrown(() => mcp({ transport: 'streamable-http', url: 'http://mcp.example.com/mcp', http: { oauth } } as any));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/^mcp: 'url' must be an https:\/\/ URL when 'http.oauth' is set/);
    for (const url of ['https://mcp.example.com/mcp', 'http://localhost:1/mcp', 'http://127.8.9.10:1/mcp', 'http://[::1]:1/mcp']) {
      void closing(mcp({ transport: 'streamable-http', url, http: { oauth } } as any));
    }
    for (const redirectUri of ['http://evil.example/cb', 'javascript:alert(1)', 'file:///tmp/cb']) {
      err = thrown(() => mcp({ transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp', http: { oauth: { redirectUri } } } as any));
      expect(err, redirectUri).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/'http.oauth.redirectUri' must be an https:\/\/ URL or an http:\/\/ URL of a loopback host/);
    }
    void closing(mcp({ transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp', http: { oauth: { redirectUri: 'https://app.example/cb' } } } as any));
  });

  it("'http.oauth.issuer' is an https: (or loopback http:) URL", () => {
    for (const issuer of [42, '', 'ftp://as.example', 'http://as.example', 'https://as.example/#x']) {
      const err = thrown(() => mcp({ transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp', http: { oauth: { ...oauth, issuer } } } as any));
      expect(err, String(issuer)).toBeInstanceOf(ConfigError);
      expect(err.message).toMatch(/^mcp: 'http.oauth.issuer' must be/);
    }
    void closing(
      mcp({ transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp', http: { oauth: { ...oauth, issuer: 'https://as.example/tenant' } } } as any),
    );
  });
});

describe('http.oauth: tokens are bound to their issuer', () => {
  it('a new process whose resource moved posts the old refresh token nowhere but where it came from', async () => {
    const served = closing(await serveProtected());
    const a = closing(await serveAuthServer(served.valid));
    const b = closing(await serveAuthServer(served.valid));
    let current = a;
    served.prm = () => ({ resource: served.url, authorization_servers: [current.base] });
    const store = memoryStore();
    const config = {
      transport: 'streamable-http' as const,
      url: served.url,
      http: { oauth: { redirectUri: 'http://127.0.0.1:9/cb', authorize: browser(), store } },
    };
    const first = mcp(config as any);
    await first.tools(session);
    await first.close();
    current = b;
    served.valid.clear();
    const defs = await closing(mcp(config as any)).tools(session);
    expect(await defs[0].execute({ text: 'moved' }, ctx)).toBe('moved');
    expect(b.requests.filter((r) => r.form.grant_type === 'refresh_token')).toEqual([]);
    expect(b.requests.filter((r) => r.path === '/register').length).toBe(1);
    expect((store.data.get(`oauth:tokens:${served.url}`) as any).issuer).toBe(b.base);
  });
});

describe('http.oauth: the lesser deviations', () => {
  it("an unregistered error code is 'unknown' in the message, OAuthError.error and toWire()", async () => {
    const served = closing(await serveProtected());
    served.codeAnswer = { status: 400, body: { error: 'sk_live_leaky_value_123' } };
    let err = await rejection(closing(mcp(oauthConfig(served, { authorize: browser() }) as any)).tools(session));
    expect(err).toMatchObject({ code: 'oauth', kind: 'refused', error: 'unknown' });
    expect(err.toWire()).toMatchObject({ kind: 'refused', error: 'unknown' });
    expect(err.message).toMatch(/refused the token request \(unknown, HTTP 400\)/);
    expect(err.message).not.toContain('sk_live');
    // The same in the authorization redirect.
    const refusing = async ({ url }: { url: string }) => {
      const u = new URL(url);
      const back = new URL(u.searchParams.get('redirect_uri')!);
      back.searchParams.set('error', 'ghp_leakyerrorcode');
      back.searchParams.set('state', u.searchParams.get('state')!);
      return back.href;
    };
    err = await rejection(closing(mcp(oauthConfig(served, { authorize: refusing }) as any)).tools(session));
    expect(err).toMatchObject({ kind: 'refused', error: 'unknown' });
    expect(err.message).not.toContain('ghp_');
  });

  it('reads the Bearer challenge among others, in one field or in several', async () => {
    for (const challenge of [
      (base: string) => `Basic realm="api, v2", Bearer error="invalid_token", resource_metadata="${base}/custom/prm"`,
      (base: string) => ['Basic realm="api"', `Bearer resource_metadata="${base}/custom/prm"`],
    ]) {
      const served = closing(await serveProtected());
      const a = closing(await serveAuthServer(served.valid));
      // Only the challenge leads to the metadata, and only it names the authorization server
      // that registers clients (the server's own offers no registration).
      served.prmPath = '/custom/prm';
      served.prm = () => ({ resource: served.url, authorization_servers: [a.base] });
      served.challenge = challenge(served.base);
      const source = closing(
        mcp({
          transport: 'streamable-http',
          url: served.url,
          http: { oauth: { redirectUri: 'http://127.0.0.1:9/cb', authorize: browser() } },
        } as any),
      );
      const defs = await source.tools(session);
      expect(await defs[0].execute({ text: 'hi' }, ctx)).toBe('hi');
      const registration = a.requests.find((r) => r.path === '/register');
      // A public client asks for no client authentication (RFC 8252 §8.4).
      expect(registration?.form.token_endpoint_auth_method).toBe('none');
    }
  });

  it('refuses authorization server metadata that does not advertise PKCE S256', async () => {
    for (const methods of [undefined, ['plain']]) {
      const served = closing(await serveProtected());
      served.asMetadata = () => ({ ...honestMetadata(served.base), code_challenge_methods_supported: methods });
      const asked: string[] = [];
      const authorize = browser();
      const err = await rejection(closing(mcp(oauthConfig(served, { authorize: (r: any) => (asked.push(r.url), authorize(r)) }) as any)).tools(session));
      expect(err.message).toMatch(/does not advertise PKCE with S256/);
      expect(asked).toEqual([]);
    }
  });

  it('sends resource (the server URL) without protected resource metadata', async () => {
    const served = closing(await serveProtected());
    served.prmPath = '/nowhere';
    const urls: string[] = [];
    const authorize = browser();
    const source = closing(mcp(oauthConfig(served, { authorize: (r: any) => (urls.push(r.url), authorize(r)) }) as any));
    await source.tools(session);
    expect(new URL(urls[0]).searchParams.get('resource')).toBe(served.url);
    expect(served.tokenForms[0].get('resource')).toBe(served.url);
  });

  it('a refresh refused with invalid_grant takes the token another process just rotated in', async () => {
    const served = closing(await serveProtected());
    const store = memoryStore();
    const first = mcp(oauthConfig(served, { store, authorize: browser() }) as any);
    await first.tools(session);
    await first.close();
    const source = closing(mcp(oauthConfig(served, { store }) as any)); // no authorize callback
    const defs = await source.tools(session);
    const key = `oauth:tokens:${served.url}`;
    const mine = store.data.get(key) as any;
    // Another process refreshes with the same refresh token just before ours arrives.
    served.beforeRefresh = (rt) => {
      served.beforeRefresh = undefined;
      const theirs = served.refreshToken(rt)!;
      store.data.set(key, { ...theirs, expires_at: Date.now() + 3_600_000, issuer: mine.issuer });
    };
    served.valid.delete(mine.access_token);
    expect(await defs[0].execute({ text: 'raced' }, ctx)).toBe('raced');
    expect(served.reused).toEqual([mine.refresh_token]); // ours lost the race, once
  });
});

describe('rulvar-mcp --oauth (the CLI login)', () => {
  const cli = fileURLToPath(new URL('../bin/rulvar-mcp.js', import.meta.url));
  const login = (served: Protected, store: string) => {
    const child = spawn(process.execPath, [cli, 'inspect', '--json', '--oauth', '--oauth-store', store, '--http', served.url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    const printed = new Promise<string>((resolve) => {
      child.stderr.on('data', (c) => {
        stderr += c;
        const m = /^\s+(https?:\/\/\S+)$/m.exec(stderr);
        if (m) resolve(m[1]);
      });
    });
    const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.on('exit', (code) => resolve({ code, stdout, stderr })),
    );
    closing.defer(() => child.kill());
    return { printed, exited };
  };
  const publicServer = async () => {
    const served = closing(await serveProtected());
    const a = closing(await serveAuthServer(served.valid));
    served.prm = () => ({ resource: served.url, authorization_servers: [a.base] });
    return served;
  };

  it('a /callback with another state gets 400 and the login keeps waiting', async () => {
    const served = await publicServer();
    const store = join(mkdtempSync(join(tmpdir(), 'rulvar-oauth-')), 'oauth.json');
    const { printed, exited } = login(served, store);
    const u = new URL(await printed);
    const back = new URL(u.searchParams.get('redirect_uri')!);
    back.searchParams.set('code', 'attacker-code');
    back.searchParams.set('state', 'not-the-state');
    expect((await fetch(back)).status).toBe(400);
    back.searchParams.delete('state');
    expect((await fetch(back)).status).toBe(400);
    back.searchParams.set('code', 'code-of-the-user');
    back.searchParams.set('state', u.searchParams.get('state')!);
    expect((await fetch(back)).status).toBe(200);
    const r = await exited;
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).tools.length).toBeGreaterThan(0);
    const saved = JSON.parse(readFileSync(store, 'utf8'));
    expect(saved[`oauth:tokens:${served.url}`].access_token).toMatch(/^other-access-/);
    expect(readdirSync(dirname(store)).sort()).toEqual(['oauth.json']); // no temp or lock file left
  });

  it('refuses to overwrite a store it cannot parse', async () => {
    const served = await publicServer();
    const store = join(mkdtempSync(join(tmpdir(), 'rulvar-oauth-')), 'oauth.json');
    writeFileSync(store, '{"oauth:tokens:x": {"access_token": "half-writ');
    const { exited } = login(served, store);
    const r = await exited;
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/the OAuth store '.*' is not a JSON object; it is left as it is/);
    expect(readFileSync(store, 'utf8')).toBe('{"oauth:tokens:x": {"access_token": "half-writ');
  });
});

describe('credentials in the server URL', () => {
  const SECRETS = ['pa55-w0rd-secret', 'alice-the-user', 'ak-live-123456', 'tok-987654321'];
  const withCredentials = (url: string) => {
    const u = new URL(url);
    u.username = 'alice-the-user';
    u.password = 'pa55-w0rd-secret';
    u.search = '?api_key=ak-live-123456&v=2&access_token=tok-987654321';
    return u.href;
  };
  const clean = (text: string) => {
    for (const s of SECRETS) expect(text).not.toContain(s);
  };

  it('show nowhere: not in source.id, the posture or an error text', async () => {
    const url = withCredentials('http://127.0.0.1:1/mcp');
    const source = closing(mcp({ transport: 'streamable-http', url, timeouts: { connectMs: 5_000 } } as any));
    expect(source.id).toBe('mcp:http:http://127.0.0.1:1/mcp?api_key=[redacted]&v=2&access_token=[redacted]');
    clean(JSON.stringify(source.describeRegulatedPosture()));
    const err = await rejection(source.tools(session));
    expect(err.message).toMatch(/^mcp: /);
    clean(err.message);
    // An OAuth error naming the server, and a config refusal quoting the URL.
    const served = closing(await serveProtected());
    const oauthSource = closing(mcp({ ...oauthConfig(served, {}), url: withCredentials(served.url) } as any));
    const oauthErr = await rejection(oauthSource.tools(session));
    expect(oauthErr).toMatchObject({ kind: 'authorization_required' });
    clean(oauthErr.message);
    const refused = thrown(() =>
      mcp({
        transport: 'streamable-http',
        url: withCredentials('http://mcp.example.com/mcp'),
        http: { oauth: { redirectUri: 'http://127.0.0.1:9/cb' } },
      } as any),
    );
    expect(refused).toBeInstanceOf(ConfigError);
    clean(refused.message);
  });
});

describe('the CLI file store', () => {
  it('loses no key when several processes save at once', async () => {
    const cli = fileURLToPath(new URL('../bin/rulvar-mcp.js', import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), 'rulvar-oauth-'));
    const store = join(dir, 'oauth.json');
    const writer = (n: number) =>
      new Promise<number | null>((resolve) => {
        const script = `const { fileStore } = require(${JSON.stringify(cli)});
          const s = fileStore(${JSON.stringify(store)});
          for (let i = 0; i < 40; i++) s.save('k-${n}-' + i, { v: i });`;
        spawn(process.execPath, ['-e', script], { stdio: 'ignore' }).on('exit', resolve);
      });
    expect(await Promise.all([0, 1, 2, 3].map(writer))).toEqual([0, 0, 0, 0]);
    const saved = JSON.parse(readFileSync(store, 'utf8'));
    expect(Object.keys(saved).length).toBe(160);
    expect(readdirSync(dir)).toEqual(['oauth.json']);
  });
});

describe('http.oauth: the 2025-03-26 root document', () => {
  it("may name an issuer on the server's own origin only", async () => {
    const served = closing(await serveProtected());
    served.prmPath = '/nowhere'; // no resource metadata: the 2025-03-26 rules
    served.asMetadata = () => ({ ...honestMetadata(served.base), issuer: 'https://honest-idp.example' });
    const asked: string[] = [];
    const authorize = browser();
    const err = await rejection(closing(mcp(oauthConfig(served, { authorize: (r: any) => (asked.push(r.url), authorize(r)) }) as any)).tools(session));
    expect(err).toMatchObject({ code: 'oauth', kind: 'untrusted' });
    expect(asked).toEqual([]);
    expect(served.tokenForms).toEqual([]);
    // An issuer with a path on the server's origin is that server's (the suite's backcompat case).
    served.asMetadata = () => ({ ...honestMetadata(served.base), issuer: `${served.base}/oauth` });
    const defs = await closing(mcp(oauthConfig(served, { authorize: browser() }) as any)).tools(session);
    expect(defs.length).toBeGreaterThan(0);
  });
});

describe('http.oauth: a resource that moves under the same metadata URL', () => {
  it('is discovered afresh when it refuses a token, and the new authorization server is used', async () => {
    const served = closing(await serveProtected());
    const a = closing(await serveAuthServer(served.valid));
    const b = closing(await serveAuthServer(served.valid));
    let current = a;
    served.prm = () => ({ resource: served.url, authorization_servers: [current.base] });
    const source = closing(
      mcp({
        transport: 'streamable-http',
        url: served.url,
        http: { oauth: { redirectUri: 'http://127.0.0.1:9/cb', authorize: browser() } },
      } as any),
    );
    const defs = await source.tools(session);
    current = b; // same challenge, same metadata URL, new content
    served.valid.clear();
    expect(await defs[0].execute({ text: 'moved' }, ctx)).toBe('moved');
    expect(a.requests.filter((r) => r.form.grant_type === 'refresh_token')).toEqual([]);
    expect(b.requests.filter((r) => r.form.grant_type === 'refresh_token')).toEqual([]);
    expect(b.requests.filter((r) => r.path === '/register').length).toBe(1);
  });
});

// A toolset lock of an OAuth source names the authorization server the login used: the same
// URL behind another issuer is another trust root, whose tools the lock says nothing about.
describe('the toolset lock of an OAuth source', () => {
  it("records the login's issuer, and an import through another issuer is refused typed", async () => {
    const served = closing(await serveProtected());
    const store = memoryStore();
    const writer = closing(mcp(oauthConfig(served, { store, authorize: browser() }) as any));
    await writer.tools(session);
    const lock = JSON.parse(await lockText(writer));
    expect(lock.source).toEqual({ transport: 'streamable-http', url: served.url, oauth: true, oauthIssuer: served.base });
    // The same lock holds for a source that logs in through the same issuer.
    const same = closing(mcp({ ...oauthConfig(served, { store, authorize: browser() }), lock } as any));
    expect((await same.tools(session)).length).toBeGreaterThan(0);
    // A lock that names another issuer is refused once the login shows which one is used.
    const other = { ...lock, source: { ...lock.source, oauthIssuer: 'https://as.example' } };
    const refused = closing(mcp({ ...oauthConfig(served, { store, authorize: browser() }), lock: other } as any));
    const e = await rejection(refused.tools(session));
    expect(e).toBeInstanceOf(ConfigError);
    expect(e.message).toMatch(/^mcp: the lock is for another source than 'mcp:http:.*' \(source\.oauthIssuer/);
  });
});
