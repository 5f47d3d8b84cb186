// http.oauth against a local protected MCP server with its own authorization server
// (helpers/oauth-servers.ts): refresh under a parallel burst of 401s (one refresh, every call goes
// through), a refresh token rotated by another process (taken from the store, never reused), the
// typed errors, no secret in any error text, and the lesser deviations of servers. The
// conformance suite's auth/* scenarios (conformance.test.ts) cover discovery, registration,
// PKCE, scopes and step-up; oauth-trust.test.ts what a hostile server tries; oauth-cli.test.ts
// the CLI's login.
import { describe, expect, it } from 'vitest';
import { ConfigError, OAuthError, lockText, mcp } from '../lib/index.js';
import { closeAfterEach, ctx, rejection, session, thrown } from './helpers/common.js';
import { CLIENT_SECRET, browser, honestMetadata, memoryStore, oauthConfig, serveAuthServer, serveProtected } from './helpers/oauth-servers.js';

const closing = closeAfterEach();

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
