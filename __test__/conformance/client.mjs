// A conformance client built on the addon: the suite starts it with the server URL as its
// last argument (the scenario's name in MCP_CONFORMANCE_SCENARIO, its data in
// MCP_CONFORMANCE_CONTEXT). It imports the server's tools, calls each one, and closes. For the
// `auth/*` scenarios it sets `http.oauth`: its `authorize` plays the user's browser, fetching
// the authorization URL and handing back the authorization server's redirect. Its `elicit`
// plays a user who accepts each form as offered.
import { mcp } from '../../lib/index.mjs';

const url = process.argv[process.argv.length - 1];
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const context = process.env.MCP_CONFORMANCE_CONTEXT ? JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT) : {};
// The client metadata document URL the suite's CIMD scenarios expect (it need not resolve).
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';
const REDIRECT = 'http://localhost:3000/callback';

const argumentsFor = (def) => {
  const properties = def.parameters?.properties ?? {};
  // Numbers get small integers (add_numbers: 2 + 3); strings a word; the rest nothing.
  return Object.fromEntries(Object.entries(properties).map(([name, schema], i) => [name, schema.type === 'string' ? 'hello' : i + 2]));
};

// The user's browser: follows the authorization URL to the authorization server, which
// redirects at once (the suite's server authorizes without a login page).
async function authorize({ url: authorizationUrl, signal }) {
  const response = await fetch(authorizationUrl, { redirect: 'manual', signal });
  const location = response.headers.get('location');
  if (!location) throw new Error(`the authorization server answered ${response.status} without a redirect`);
  return new URL(location, authorizationUrl).href;
}

function oauthFor(name) {
  if (!name.startsWith('auth/')) return undefined;
  if (name === 'auth/client-credentials-basic') {
    return { grant: 'client_credentials', clientId: context.client_id, clientSecret: context.client_secret };
  }
  if (name === 'auth/client-credentials-jwt') {
    return {
      grant: 'client_credentials',
      clientId: context.client_id,
      privateKey: context.private_key_pem,
      signingAlgorithm: context.signing_algorithm ?? 'ES256',
    };
  }
  // Workload identity federation: the workload's JWT presented with the jwt-bearer grant (as
  // a function, the way a rotating token file is read).
  if (name === 'auth/wif-jwt-bearer') {
    return { grant: 'jwt_bearer', clientId: context.client_id, assertion: async () => context.valid_jwt };
  }
  // Enterprise-managed authorization: the IdP's ID token exchanged there for an ID-JAG, which
  // the jwt-bearer grant then presents at the MCP server's authorization server.
  if (name === 'auth/enterprise-managed-authorization') {
    return {
      grant: 'jwt_bearer',
      clientId: context.client_id,
      clientSecret: context.client_secret,
      tokenExchange: {
        tokenEndpoint: context.idp_token_endpoint,
        clientId: context.idp_client_id,
        subjectToken: context.idp_id_token,
      },
    };
  }
  if (name === 'auth/pre-registration') {
    return { clientId: context.client_id, clientSecret: context.client_secret, redirectUri: REDIRECT, authorize };
  }
  const login = { clientMetadataUrl: CIMD_URL, clientName: 'rulvar-conformance', redirectUri: REDIRECT, authorize };
  // DPoP-bound tokens, with a key made for the source.
  if (name === 'auth/dpop' || name === 'auth/dpop-nonce') return { ...login, dpop: true };
  return login;
}

const oauth = oauthFor(scenario);
// The suite names the revision a run is for; the client pins it (`protocol`).
const era = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION;
const source = mcp({
  transport: 'streamable-http',
  url,
  ...(era === '2026-07-28' || era === '2025-11-25' ? { protocol: era } : {}),
  timeouts: { callMs: 10_000 },
  ...(oauth ? { http: { oauth } } : {}),
  // The user accepts every form as it is offered: the schema's defaults fill it (SEP-1034).
  elicit: () => ({ action: 'accept', content: {} }),
});
let failed = false;
try {
  const defs = await source.tools({ runId: 'conformance' });
  // The addon opens its notification stream (a GET) just after the handshake. sse-retry times
  // the first GET after its tool stream closes, so let that stream open before the call,
  // or a slow machine makes the scenario mistake it for an early reconnect.
  await new Promise((resolve) => setTimeout(resolve, 200));
  // A scenario that names its calls (context.toolCalls) gets exactly those, in its order. A
  // `null` argument is left out: the addon validates input against the tool's schema first (as
  // the TypeScript mcp() does), and `null` is no boolean; an absent value is what the
  // scenario's header check (no Mcp-Param header for it) is about.
  const present = (args) => Object.fromEntries(Object.entries(args ?? {}).filter(([, v]) => v !== null));
  const calls = Array.isArray(context.toolCalls)
    ? context.toolCalls.map((c) => [defs.find((d) => d.name === c.name), present(c.arguments)]).filter(([d]) => d !== undefined)
    : defs.map((d) => [d, argumentsFor(d)]);
  // The schema-preservation scenario asks the client to pass back, through its echo tool, the
  // input schema it holds for the scenario's tool: exactly the ToolDef's `parameters`.
  const focal = defs.find((d) => d.name === 'json_schema_2020_12_tool');
  for (const call of calls) if (call[0].name === 'json_schema_echo' && focal) call[1] = { schema: focal.parameters };
  for (const [def, args] of calls) {
    try {
      const result = await def.execute(args, { runId: 'conformance' });
      console.log(`${def.name}: ${JSON.stringify(result)}`);
    } catch (err) {
      failed = true;
      console.log(`${def.name} failed: ${err.message}`);
    }
  }
} catch (err) {
  failed = true;
  console.log(`tools() failed: ${err.message}`);
} finally {
  await source.close();
}
process.exitCode = failed ? 1 : 0;
