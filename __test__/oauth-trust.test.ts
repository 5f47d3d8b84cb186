// http.oauth's trust boundary against real servers (helpers/oauth-servers.ts): what a hostile
// resource or authorization server hands over (issuers, URLs, origins, challenges) cannot steer
// the client; the config's own checks; tokens bound to the issuer that issued them; credentials
// in the server URL.
import { describe, expect, it } from 'vitest';
import { ConfigError, OAuthError, mcp } from '../lib/index.js';
import { closeAfterEach, ctx, rejection, session, thrown } from './helpers/common.js';
import {
  CLIENT_ID,
  CLIENT_SECRET,
  NON_LOOPBACK,
  browser,
  honestMetadata,
  memoryStore,
  oauthConfig,
  serveAuthServer,
  serveProtected,
} from './helpers/oauth-servers.js';

const closing = closeAfterEach();

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
