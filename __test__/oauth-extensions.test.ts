// http.oauth's extensions against a local MCP server that is its own authorization server (and,
// for enterprise-managed authorization, the enterprise IdP; helpers/oauth-servers.ts): DPoP
// (RFC 9449) proofs, nonces and token types, the jwt_bearer grant with a workload's assertion and
// with a token exchange for an ID-JAG. The server verifies every proof it gets with the JWK the
// proof carries, so a proof that is not what RFC 9449 asks for fails the call. Hostile variants:
// a nonce that is not one, a nonce asked for forever, token types the client never asked for,
// algorithms it cannot sign with, and refusals that echo the assertion or the subject token back.
import { generateKeyPairSync } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ConfigError, OAuthError, mcp } from '../lib/index.js';
import { closeAfterEach, ctx, rejection, session, thrown } from './helpers/common.js';
import { ASSERTION, ID_JAG, SUBJECT_TOKEN, type Server, serveWorkload, thumbprint } from './helpers/oauth-servers.js';

const closing = closeAfterEach();
const serve = async () => closing(await serveWorkload());

const workload = (s: Server, extra: Record<string, unknown> = {}, url = s.url) =>
  closing(
    mcp({
      transport: 'streamable-http',
      url,
      timeouts: { callMs: 10_000 },
      http: { oauth: { grant: 'jwt_bearer', clientId: 'workload-1', assertion: async () => ASSERTION, ...extra } },
    }),
  );

async function callEcho(source: ReturnType<typeof mcp>) {
  const defs = await source.tools(session);
  const echo = defs.find((d) => d.name === 'echo');
  return echo!.execute({ text: 'hi' }, ctx);
}

describe('http.oauth.dpop', () => {
  it('binds the token to a key of the source: DPoP scheme, a fresh proof per request (htu without the query), the nonces of both servers', async () => {
    const s = await serve();
    s.dpopAlgs = ['ES256', 'RS256'];
    s.asNonce = 'as-nonce-1';
    s.rsNonce = 'fixed';
    // A credential in the URL's query is no part of any proof.
    const source = workload(s, { dpop: true }, `${s.url}?api_key=url-secret-1`);
    expect(await callEcho(source)).toBe('hi');

    // The token request: a proof for the token endpoint, no ath, retried once with the nonce.
    expect(s.tokenRequests).toHaveLength(2);
    const [first, second] = s.tokenRequests.map((r) => r.proof!);
    expect(first.verified && second.verified).toBe(true);
    expect(first.claims).toMatchObject({ htm: 'POST', htu: `${s.base}/token` });
    expect(first.claims.nonce).toBeUndefined();
    expect(second.claims.nonce).toBe('as-nonce-1');
    expect(first.claims.ath).toBeUndefined();
    expect(first.claims.jti).not.toBe(second.claims.jti);
    expect(first.header.jwk.d).toBeUndefined();

    const bound = s.mcpRequests.filter((r) => r.token !== '');
    expect(bound.length).toBeGreaterThanOrEqual(3);
    expect(new Set(bound.map((r) => r.scheme))).toEqual(new Set(['DPoP']));
    for (const r of bound) {
      expect(r.proof?.verified).toBe(true);
      expect(r.proof?.claims.htu).toBe(s.url);
      expect(JSON.stringify(r.proof)).not.toContain('url-secret-1');
    }
    // One nonce challenge (the first bound request), every later proof carries the nonce.
    expect(bound[0].proof?.claims.nonce).toBeUndefined();
    expect(bound.slice(1).every((r) => r.proof?.claims.nonce === 'rs-nonce-1')).toBe(true);
    const jtis = bound.map((r) => r.proof?.claims.jti);
    expect(new Set(jtis).size).toBe(jtis.length);
    // One key throughout.
    expect(new Set([...s.tokenRequests, ...bound].map((r) => thumbprint(r.proof!.header.jwk))).size).toBe(1);
  });

  it('signs with a configured RS256 key', async () => {
    const s = await serve();
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
    const source = workload(s, { dpop: { privateKey: pem, signingAlgorithm: 'RS256' } });
    await callEcho(source);
    const proofs = [...s.tokenRequests, ...s.mcpRequests.filter((r) => r.token !== '')].map((r) => r.proof!);
    expect(proofs.every((p) => p.verified && p.header.alg === 'RS256' && p.header.jwk.kty === 'RSA')).toBe(true);
    expect(proofs[0].header.jwk).toEqual({ e: 'AQAB', kty: 'RSA', n: expect.any(String) });
  });

  it('a nonce that is not one is never sent back, and a server that asks for a new one forever is given up on', async () => {
    const s = await serve();
    s.rsNonce = 'invalid';
    const err = await rejection(workload(s, { dpop: true }).tools(session));
    expect(err.message).toMatch(/asks for a DPoP nonce \(use_dpop_nonce\) and its answer gave no new usable one in 'DPoP-Nonce'/);
    expect(s.mcpRequests.every((r) => r.proof?.claims.nonce === undefined)).toBe(true);

    const t = await serve();
    t.rsNonce = 'rotate';
    await rejection(workload(t, { dpop: true }).tools(session));
    // Bounded: the 401 loop's limit, not for ever.
    expect(t.mcpRequests.length).toBeLessThanOrEqual(6);
    expect(t.tokenRequests).toHaveLength(1);
  });

  it('takes a Bearer answer as bearer, refuses a type it never asked for, and without DPoP refuses a DPoP token as before', async () => {
    const s = await serve();
    s.tokenType = 'Bearer';
    await callEcho(workload(s, { dpop: true }));
    expect(s.mcpRequests.filter((r) => r.token !== '').every((r) => r.scheme === 'Bearer' && r.proof === undefined)).toBe(true);

    const t = await serve();
    t.tokenType = 'N_A';
    const err = await rejection(workload(t, { dpop: true }).tools(session));
    expect(err.message).toBe("mcp: oauth: the token endpoint issued a 'N_A' token; only Bearer and DPoP tokens are supported");

    const u = await serve();
    u.tokenType = 'DPoP';
    const off = await rejection(workload(u).tools(session));
    expect(off.message).toBe("mcp: oauth: the token endpoint issued a 'DPoP' token; only Bearer tokens are supported");
    // Without `dpop` nothing of DPoP is sent, and its challenge is not read (discovery by the
    // well-known URL still finds the metadata).
    expect(u.tokenRequests.every((r) => r.proof === undefined)).toBe(true);
  });

  it('sends no token request to an authorization server that does not take its algorithm', async () => {
    const s = await serve();
    s.dpopAlgs = ['EdDSA'];
    const err = await rejection(workload(s, { dpop: true }).tools(session));
    expect(err.message).toBe(
      "mcp: oauth: the authorization server does not take ES256 DPoP proofs ('dpop_signing_alg_values_supported'); no token was requested",
    );
    expect(s.tokenRequests).toHaveLength(0);
  });

  it('refuses a key that is not one, naming the key, never its value', () => {
    const pem = '-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbC0xMjM0\n-----END PRIVATE KEY-----';
    const err = thrown(() =>
      mcp({
        transport: 'streamable-http',
        url: 'https://x.example/mcp',
        http: { oauth: { grant: 'jwt_bearer', clientId: 'c', assertion: 'a', dpop: { privateKey: pem } } },
      }),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe("mcp: 'http.oauth.dpop.privateKey' is not a PKCS#8 P-256 private key (the key for 'ES256')");
    const typed = thrown(() =>
      mcp({
        transport: 'streamable-http',
        url: 'https://x.example/mcp',
        http: { oauth: { grant: 'jwt_bearer', clientId: 'c', assertion: 'a', dpop: 'on' as any } },
      }),
    );
    expect(typed.message).toBe("mcp: 'http.oauth.dpop' must be true, false or { privateKey, signingAlgorithm? }, got the string 'on'");
  });
});

describe("http.oauth grant 'jwt_bearer'", () => {
  it('presents the workload assertion (a function, called per token request) with the jwt-bearer grant', async () => {
    const s = await serve();
    let calls = 0;
    const source = workload(s, { assertion: async () => (calls++, ASSERTION) });
    await callEcho(source);
    expect(calls).toBe(1);
    expect(s.tokenRequests).toHaveLength(1);
    const f = s.tokenRequests[0].form;
    expect(f.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(f.get('assertion')).toBe(ASSERTION);
    expect(f.get('client_id')).toBe('workload-1');
    expect(f.get('resource')).toBe(s.url);
  });

  it('a refusal that echoes the assertion shows neither it nor the description, and is not retried', async () => {
    const s = await serve();
    s.refuse = true;
    const err = await rejection(workload(s).tools(session));
    expect(err).toBeInstanceOf(OAuthError);
    expect((err as any).kind).toBe('refused');
    expect((err as any).error).toBe('invalid_grant');
    expect(err.message).toBe('mcp: oauth: the authorization server refused the token request (invalid_grant, HTTP 400)');
    expect(JSON.stringify((err as any).toWire())).not.toContain('workload-assertion-secret');
    expect(s.tokenRequests).toHaveLength(1);
  });

  it('a function that does not resolve with a string fails the call, saying so', async () => {
    const s = await serve();
    const err = await rejection(workload(s, { assertion: async () => 42 }).tools(session));
    expect(err.message).toMatch(/the assertion function did not resolve with a non-empty string/);
    expect(s.tokenRequests).toHaveLength(0);
  });
});

describe('http.oauth.tokenExchange (enterprise-managed authorization)', () => {
  const enterprise = (s: Server, extra: Record<string, unknown> = {}) =>
    closing(
      mcp({
        transport: 'streamable-http',
        url: s.url,
        timeouts: { callMs: 10_000 },
        http: {
          oauth: {
            grant: 'jwt_bearer',
            clientId: 'mcp-client',
            clientSecret: 'mcp-client-secret',
            tokenExchange: { tokenEndpoint: `${s.base}/idp/token`, clientId: 'idp-client', subjectToken: SUBJECT_TOKEN, ...extra },
          },
        },
      }),
    );

  it('exchanges the ID token at the IdP for an ID-JAG for the validated issuer and the resource, then presents it', async () => {
    const s = await serve();
    await callEcho(enterprise(s));
    expect(s.idpRequests).toHaveLength(1);
    expect(Object.fromEntries(s.idpRequests[0])).toEqual({
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      requested_token_type: 'urn:ietf:params:oauth:token-type:id-jag',
      audience: s.base,
      resource: s.url,
      subject_token: SUBJECT_TOKEN,
      subject_token_type: 'urn:ietf:params:oauth:token-type:id_token',
      client_id: 'idp-client',
    });
    const t = s.tokenRequests[0];
    expect(t.form.get('grant_type')).toBe('urn:ietf:params:oauth:grant-type:jwt-bearer');
    expect(t.form.get('assertion')).toBe(ID_JAG);
    expect(t.authorization).toBe(`Basic ${Buffer.from('mcp-client:mcp-client-secret').toString('base64')}`);
  });

  it('an IdP refusal echoing the subject token shows none of it; an answer that is no ID-JAG is not presented', async () => {
    const s = await serve();
    s.idpAnswer = 'refuse';
    const err = await rejection(enterprise(s).tools(session));
    expect(err.message).toBe('mcp: oauth: the authorization server refused the token exchange (invalid_grant, HTTP 400)');
    expect(err.message + JSON.stringify((err as any).toWire())).not.toContain('user-id-token-secret');
    expect(s.tokenRequests).toHaveLength(0);

    const t = await serve();
    t.idpAnswer = 'not-a-jag';
    const other = await rejection(enterprise(t).tools(session));
    expect(other.message).toMatch(/the token exchange answered with no ID-JAG/);
    expect(t.tokenRequests).toHaveLength(0);
  });

  it('refuses an IdP endpoint that is not https', () => {
    const err = thrown(() =>
      mcp({
        transport: 'streamable-http',
        url: 'https://mcp.example/mcp',
        http: { oauth: { grant: 'jwt_bearer', clientId: 'c', tokenExchange: { tokenEndpoint: 'http://idp.example/token', clientId: 'i', subjectToken: 't' } } },
      }),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/^mcp: 'http.oauth.tokenExchange.tokenEndpoint' must be an https:\/\/ URL/);
  });
});
