// http.oauth against a local protected MCP server with its own authorization server: refresh
// under a parallel burst of 401s (one refresh, every call goes through), a refresh token rotated
// by another process (taken from the store, never reused), the typed errors, and no secret in
// any error text. The conformance suite's auth/* scenarios (conformance.test.ts) cover discovery,
// registration, PKCE, scopes and step-up.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { describe, expect, it } from 'vitest';
import { ConfigError, OAuthError, mcp } from '../lib/index.js';
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
  /** What the token endpoint answers to an authorization_code grant (an error, say). */
  codeAnswer?: { status: number; body: unknown };
  /** When set, every tools/call is refused as insufficient_scope, asking for this scope. */
  stepUp?: string;
  refreshToken(rt: string): { access_token: string; refresh_token: string } | undefined;
  stop(): Promise<void>;
}

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
    if (req.method === 'GET' && path === '/.well-known/oauth-protected-resource/mcp') {
      return json(res, 200, { resource: state.url, authorization_servers: [state.base] });
    }
    if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server') {
      return json(res, 200, {
        issuer: state.base,
        authorization_endpoint: `${state.base}/authorize`,
        token_endpoint: `${state.base}/token`,
        response_types_supported: ['code'],
        code_challenge_methods_supported: ['S256'],
        token_endpoint_auth_methods_supported: ['client_secret_post'],
      });
    }
    if (req.method === 'POST' && path === '/token') {
      let text = '';
      for await (const chunk of req) text += chunk;
      const form = new URLSearchParams(text);
      if (form.get('client_secret') !== CLIENT_SECRET) return json(res, 401, { error: 'invalid_client' });
      if (form.get('grant_type') === 'refresh_token') {
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
            'www-authenticate': `Bearer error="invalid_token", resource_metadata="${state.base}/.well-known/oauth-protected-resource/mcp"`,
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
    const source = closing(
      mcp(oauthConfig(served, { store, authorize: (r: any) => (asked++, authorize(r)) }) as any),
    );
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
    const source = closing(
      mcp(oauthConfig(served, { authorize: async (r: any) => (redirect = await authorize(r)) }) as any),
    );
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
    let err = thrown(() =>
      mcp({ ...base, http: { headers: { Authorization: 'Bearer x' }, oauth: { redirectUri: 'http://l/cb' } } } as any),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/static 'Authorization' header, which 'http.oauth' replaces/);
    err = thrown(() => mcp({ ...base, http: { oauth: { redirectUri: 'http://l/cb', scopes: 'a' } } } as any));
    expect(err.message).toMatch(/^mcp: unknown config key 'http.oauth.scopes'/);
    err = thrown(() => mcp({ ...base, http: { oauth: { grant: 'client_credentials', clientId: 'c' } } } as any));
    expect(err.message).toMatch(/'client_credentials' grant of 'http.oauth' requires/);
    err = thrown(() => mcp({ ...base, http: { oauth: { redirectUri: 'http://l/cb', authorize: 'yes' } } } as any));
    expect(err.message).toMatch(/'http.oauth.authorize' must be a \(possibly async\) function/);
    err = thrown(() =>
      mcp({ ...base, http: { oauth: { grant: 'client_credentials', clientId: 'c', clientSecret: 42424242 } } } as any),
    );
    expect(err.message).not.toContain('42424242');
  });
});
