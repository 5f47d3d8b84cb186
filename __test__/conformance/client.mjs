// A conformance client built on the addon: the suite starts it with the server URL as its
// last argument (the scenario's name in MCP_CONFORMANCE_SCENARIO, its data in
// MCP_CONFORMANCE_CONTEXT). It imports the server's tools, calls each one, and closes. For the
// `auth/*` scenarios it sets `http.oauth`: its `authorize` plays the user's browser, fetching
// the authorization URL and handing back the authorization server's redirect.
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
  return Object.fromEntries(
    Object.entries(properties).map(([name, schema], i) => [name, schema.type === 'string' ? 'hello' : i + 2]),
  );
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
  if (name === 'auth/pre-registration') {
    return { clientId: context.client_id, clientSecret: context.client_secret, redirectUri: REDIRECT, authorize };
  }
  return { clientMetadataUrl: CIMD_URL, clientName: 'rulvar-conformance', redirectUri: REDIRECT, authorize };
}

const oauth = oauthFor(scenario);
const source = mcp({
  transport: 'streamable-http',
  url,
  timeouts: { callMs: 10_000 },
  ...(oauth ? { http: { oauth } } : {}),
});
let failed = false;
try {
  const defs = await source.tools({ runId: 'conformance' });
  // The addon opens its notification stream (a GET) just after the handshake. sse-retry times
  // the first GET after its tool stream closes, so let that stream open before the call,
  // or a slow machine makes the scenario mistake it for an early reconnect.
  await new Promise((resolve) => setTimeout(resolve, 200));
  for (const def of defs) {
    try {
      const result = await def.execute(argumentsFor(def), { runId: 'conformance' });
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
