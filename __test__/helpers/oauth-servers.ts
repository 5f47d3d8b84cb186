// The OAuth peers of the http.oauth tests, real HTTP servers on 127.0.0.1:
// - `serveProtected`: an MCP server (the example server) protected by its own authorization
//   server (metadata, registration, authorization code with PKCE, refresh with rotation),
//   with hooks a test turns hostile (what its metadata and challenges say);
// - `serveAuthServer`: a second authorization server, honest or hostile, whose tokens the
//   protected server takes;
// - `serveWorkload`: an MCP server that is its own authorization server (and enterprise IdP)
//   for the extensions: DPoP proofs it verifies, the jwt_bearer grant, token exchange.
// A test closes what it starts (`closing` of helpers/common.js).
import { createHash, createPublicKey, verify } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { buildServer } from '../../examples/server.mjs';

/** The example MCP server, stateless, answering this one request (`body` read already). */
async function serveMcp(req: http.IncomingMessage, res: http.ServerResponse, body: unknown) {
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  const mcpServer = buildServer();
  res.on('close', () => {
    void transport.close();
    void mcpServer.close();
  });
  await mcpServer.connect(transport);
  await transport.handleRequest(req, res, body);
}

/** Listens on 127.0.0.1 at a port of the system's choosing; `base` and `url` name it. */
async function listenOnLoopback(server: http.Server, state: { base: string; url: string }) {
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  state.base = `http://127.0.0.1:${port}`;
  state.url = `${state.base}/mcp`;
}

export const CLIENT_ID = 'client-1';
export const CLIENT_SECRET = 'client-secret-value-42';

export interface Protected {
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
export const honestMetadata = (base: string) => ({
  issuer: base,
  authorization_endpoint: `${base}/authorize`,
  token_endpoint: `${base}/token`,
  response_types_supported: ['code'],
  code_challenge_methods_supported: ['S256'],
  token_endpoint_auth_methods_supported: ['client_secret_post'],
});

export async function serveProtected(): Promise<Protected> {
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
      await serveMcp(req, res, body);
      return;
    }
    res.writeHead(404).end();
  });
  await listenOnLoopback(server, state);
  return state;
}

export interface AuthServer {
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
export async function serveAuthServer(valid: Set<string>, host = '127.0.0.1'): Promise<AuthServer> {
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
export const NON_LOOPBACK = Object.values(networkInterfaces())
  .flat()
  .find((i) => i && i.family === 'IPv4' && !i.internal)?.address;

export function memoryStore(initial: Record<string, unknown> = {}) {
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
export function browser(code = 'code-xyz-123456') {
  return async ({ url }: { url: string }) => {
    const u = new URL(url);
    const back = new URL(u.searchParams.get('redirect_uri')!);
    back.searchParams.set('code', code);
    back.searchParams.set('state', u.searchParams.get('state')!);
    return back.href;
  };
}

export const oauthConfig = (served: Protected, extra: Record<string, unknown>) => ({
  transport: 'streamable-http' as const,
  url: served.url,
  http: {
    oauth: { clientId: CLIENT_ID, clientSecret: CLIENT_SECRET, redirectUri: 'http://127.0.0.1:9/cb', ...extra },
  },
});

export const ASSERTION = 'eyJ.workload-assertion-secret.sig';
export const SUBJECT_TOKEN = 'eyJ.user-id-token-secret.sig';
export const ID_JAG = 'eyJ.id-jag-secret.sig';

export type Claims = Record<string, any>;

export interface Proof {
  header: Claims;
  claims: Claims;
  /** The signature verifies with the proof's own `jwk`. */
  verified: boolean;
}

export interface Server {
  base: string;
  url: string;
  /** The token endpoint's forms, with the DPoP proof each carried. */
  tokenRequests: Array<{ form: URLSearchParams; proof?: Proof; authorization?: string }>;
  /** Every /mcp request: its Authorization scheme and DPoP proof. */
  mcpRequests: Array<{ scheme: string; token: string; proof?: Proof }>;
  idpRequests: URLSearchParams[];
  /** The token endpoint's DPoP nonce, when it wants one. */
  asNonce?: string;
  /** What the MCP server wants: nothing, a fixed nonce, a new one every time, or a value that is no nonce. */
  rsNonce?: 'fixed' | 'rotate' | 'invalid';
  /** The `token_type` of the token endpoint's answers. */
  tokenType?: string;
  /** `dpop_signing_alg_values_supported` (absent when undefined). */
  dpopAlgs?: string[];
  /** The token endpoint refuses the grant, echoing what it was sent. */
  refuse?: boolean;
  /** The IdP refuses, echoing the subject token; or answers with another token type. */
  idpAnswer?: 'refuse' | 'not-a-jag';
  stop(): Promise<void>;
}

export const b64json = (s: string) => JSON.parse(Buffer.from(s, 'base64url').toString('utf8'));

export function readProof(value: string | string[] | undefined): Proof | undefined {
  if (typeof value !== 'string') return undefined;
  const [h, c, sig] = value.split('.');
  const header = b64json(h);
  const claims = b64json(c);
  let verified = false;
  try {
    const key = createPublicKey({ key: header.jwk, format: 'jwk' });
    const options = header.alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' as const } : key;
    verified = verify('sha256', Buffer.from(`${h}.${c}`), options, Buffer.from(sig, 'base64url'));
  } catch {
    verified = false;
  }
  return { header, claims, verified };
}

export const thumbprint = (jwk: Claims) => {
  const members = jwk.kty === 'EC' ? { crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y } : { e: jwk.e, kty: jwk.kty, n: jwk.n };
  return createHash('sha256').update(JSON.stringify(members)).digest('base64url');
};

export async function serveWorkload(): Promise<Server> {
  let n = 0;
  let rsNonces = 0;
  // Each token the server issued, with the thumbprint it is bound to ('' for a bearer one).
  const issued = new Map<string, string>();
  const state: Server = {
    base: '',
    url: '',
    tokenRequests: [],
    mcpRequests: [],
    idpRequests: [],
    async stop() {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    },
  };
  const json = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));
  };
  const form = async (req: http.IncomingMessage) => {
    let text = '';
    for await (const chunk of req) text += chunk;
    return new URLSearchParams(text);
  };
  const rsNonce = () => (state.rsNonce === 'rotate' ? `rotating-${++rsNonces}` : state.rsNonce === 'invalid' ? 'no "nonce" here' : 'rs-nonce-1');
  const server = http.createServer(async (req, res) => {
    const path = new URL(req.url ?? '/', state.base).pathname;
    const prm = `${state.base}/.well-known/oauth-protected-resource/mcp`;
    if (req.method === 'GET' && path === '/.well-known/oauth-protected-resource/mcp') {
      return json(res, 200, { resource: state.url, authorization_servers: [state.base] });
    }
    if (req.method === 'GET' && path === '/.well-known/oauth-authorization-server') {
      return json(res, 200, {
        issuer: state.base,
        token_endpoint: `${state.base}/token`,
        grant_types_supported: ['urn:ietf:params:oauth:grant-type:jwt-bearer'],
        token_endpoint_auth_methods_supported: ['none', 'client_secret_basic'],
        ...(state.dpopAlgs ? { dpop_signing_alg_values_supported: state.dpopAlgs } : {}),
      });
    }
    if (req.method === 'POST' && path === '/idp/token') {
      const f = await form(req);
      state.idpRequests.push(f);
      if (state.idpAnswer === 'refuse') return json(res, 400, { error: 'invalid_grant', error_description: `bad ${f.get('subject_token')}` });
      return json(res, 200, {
        access_token: ID_JAG,
        issued_token_type: state.idpAnswer === 'not-a-jag' ? 'urn:ietf:params:oauth:token-type:access_token' : 'urn:ietf:params:oauth:token-type:id-jag',
        token_type: 'N_A',
      });
    }
    if (req.method === 'POST' && path === '/token') {
      const f = await form(req);
      const proof = readProof(req.headers.dpop);
      state.tokenRequests.push({ form: f, proof, authorization: req.headers.authorization });
      if (state.refuse) {
        return json(res, 400, { error: 'invalid_grant', error_description: `refused ${f.get('assertion')} ${req.headers.authorization ?? ''}` });
      }
      if (proof && state.asNonce && proof.claims.nonce !== state.asNonce) {
        return json(res, 400, { error: 'use_dpop_nonce' }, { 'dpop-nonce': state.asNonce });
      }
      const token = `access-${++n}-abcdef`;
      const type = state.tokenType ?? (proof?.verified ? 'DPoP' : 'Bearer');
      issued.set(token, type === 'DPoP' && proof ? thumbprint(proof.header.jwk) : '');
      return json(res, 200, { access_token: token, token_type: type, expires_in: 3600 });
    }
    if (path === '/mcp') {
      const auth = req.headers.authorization ?? '';
      const [scheme, token = ''] = auth.split(' ');
      const proof = readProof(req.headers.dpop);
      if (auth) state.mcpRequests.push({ scheme, token, proof });
      const bound = issued.get(token);
      const challenge = `DPoP resource_metadata="${prm}", algs="ES256 RS256"`;
      if (bound === undefined) return json(res, 401, { error: 'invalid_token' }, { 'www-authenticate': challenge });
      if (bound !== '') {
        // RFC 9449 §7: the DPoP scheme, a proof for this very request, by the token's key.
        const ok =
          scheme === 'DPoP' &&
          proof?.verified === true &&
          proof.header.typ === 'dpop+jwt' &&
          proof.claims.htm === req.method &&
          proof.claims.htu === state.url &&
          proof.claims.ath === createHash('sha256').update(token).digest('base64url') &&
          thumbprint(proof.header.jwk) === bound;
        if (!ok) return json(res, 401, { error: 'invalid_dpop_proof' }, { 'www-authenticate': `DPoP error="invalid_dpop_proof"` });
        // `fixed` takes its nonce; `rotate` and `invalid` never take any.
        if (state.rsNonce && (state.rsNonce !== 'fixed' || proof.claims.nonce !== 'rs-nonce-1')) {
          return json(res, 401, { error: 'use_dpop_nonce' }, { 'www-authenticate': `DPoP error="use_dpop_nonce"`, 'dpop-nonce': rsNonce() });
        }
      }
      if (req.method !== 'POST') return void res.writeHead(405).end();
      let text = '';
      for await (const chunk of req) text += chunk;
      await serveMcp(req, res, JSON.parse(text));
      return;
    }
    res.writeHead(404).end();
  });
  await listenOnLoopback(server, state);
  return state;
}
