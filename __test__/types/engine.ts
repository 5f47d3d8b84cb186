// Uses the package the way an engine does; `tsc --noEmit` with strict on must accept it.
import {
  ConfigError,
  OAuthError,
  createMcp,
  mcp,
  lockText,
  resolveToolset,
  toolsetHash,
  validateJson,
  type McpConfig,
  type McpServerError,
  type McpStrictConfig,
  type McpSourceRegulatedPosture,
  type LockReport,
  type McpToolSource,
  type ToolsetLock,
  type ResolvedToolset,
  type ToolContext,
  type ToolDef,
} from '@rulvar/mcp-native';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';

class EngineConfigError extends Error {
  readonly code = 'config' as const;
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ConfigError';
  }
}

// The drop-in recipe.
export const engineMcp: typeof mcp = createMcp({ ConfigError: EngineConfigError });

export const stdio: McpStrictConfig = {
  transport: 'stdio',
  command: 'github-mcp-server',
  args: ['stdio'],
  env: { GITHUB_TOKEN: 't' },
  cwd: '/srv',
  stderr: 'ignore',
  prefix: 'gh',
  allow: ['search'],
  deny: ['delete_repo'],
  risk: { search: 'read', push: 'write' },
  approval: { push: true },
  maxTools: 100,
  maxPages: 5,
  maxSchemaBytes: 65536,
  timeouts: { connectMs: 5000, listMs: 1000, callMs: 30000, discoveryMs: 5000 },
  requireBounds: true,
  drift: 'refuse',
};

export const http: McpStrictConfig = {
  transport: 'streamable-http',
  url: 'https://mcp.example.com/mcp',
  http: { headers: async () => ({ authorization: 'Bearer rotated' }) },
  approval: true,
};

export const staticHeaders: McpStrictConfig = {
  transport: 'streamable-http',
  url: 'https://mcp.example.com/mcp',
  http: { headers: { authorization: 'Bearer fixed' } },
};

export const inprocess: McpStrictConfig = {
  transport: 'inprocess',
  server: { connect: async (_transport: unknown) => {} },
};

// What the README recommends to direct users: a strict config, then mcp().
const recommended = { transport: 'stdio', command: 'github-mcp-server', prefix: 'gh' } satisfies McpStrictConfig;
export const recommendedSource: McpToolSource = mcp(recommended);

// @ts-expect-error a typo'd key must not compile
export const typo: McpConfig = { transport: 'stdio', command: 'x', maxtools: 5 };

// The SDK's own servers are in-process servers as they are.
export const sdkMcpServer: McpStrictConfig = {
  transport: 'inprocess',
  server: new McpServer({ name: 'demo', version: '1.0.0' }),
};
export const sdkServer: McpStrictConfig = {
  transport: 'inprocess',
  server: new Server({ name: 'demo', version: '1.0.0' }, { capabilities: { tools: {} } }),
};

// Every strict config is a flat one (what mcp() takes).
export const flat: McpConfig[] = [stdio, http, staticHeaders, inprocess];

// The flat config (the engine's shape) takes a crossed key; the run time refuses it.
export const crossedFlat: McpConfig = { transport: 'stdio', command: 'x', url: 'https://x' };

// @ts-expect-error a key of another transport must not compile (strict config)
export const crossed: McpStrictConfig = { transport: 'stdio', command: 'x', url: 'https://x' };

// @ts-expect-error stdio extension keys are stdio-only (strict config)
export const envOverHttp: McpStrictConfig = { transport: 'streamable-http', url: 'https://x', env: { A: 'b' } };

// The toolset lock: a path or the parsed lock, a policy, strict.
export const locked: McpStrictConfig = { transport: 'stdio', command: 'x', lock: 'tools.lock.json', lockPolicy: 'allow-additions', strict: true };
export function lockedByObject(lock: ToolsetLock): McpStrictConfig {
  return { transport: 'streamable-http', url: 'https://x', lock, lockPolicy: 'report' };
}
export async function lockOf(source: McpToolSource): Promise<string[]> {
  const text: string = await lockText(source);
  const report: LockReport | null = source.lockReport();
  return [text, ...(report?.changes.map((c) => `${c.kind}: ${c.text}`) ?? []), ...(report?.signs.map((s) => s.kind) ?? [])];
}

// The OAuth extensions: DPoP, and the jwt-bearer grant with a workload's assertion or a token
// exchange for an ID-JAG.
export const dpop: McpStrictConfig = {
  transport: 'streamable-http',
  url: 'https://mcp.example.com/mcp',
  http: { oauth: { redirectUri: 'http://127.0.0.1:8765/callback', authorize: async ({ url }) => url, dpop: true } },
};
export const workload: McpStrictConfig = {
  transport: 'streamable-http',
  url: 'https://mcp.example.com/mcp',
  http: { oauth: { grant: 'jwt_bearer', clientId: 'w', assertion: async () => 'jwt', dpop: { privateKey: 'pem', signingAlgorithm: 'ES256' } } },
};
export const enterprise: McpStrictConfig = {
  transport: 'streamable-http',
  url: 'https://mcp.example.com/mcp',
  http: {
    oauth: {
      grant: 'jwt_bearer',
      clientId: 'c',
      clientSecret: 's',
      tokenExchange: { tokenEndpoint: 'https://idp.example/token', clientId: 'i', subjectToken: () => 'id-token', subjectTokenType: 'id_token' },
    },
  },
};
export const badDpop: McpStrictConfig = {
  transport: 'streamable-http',
  url: 'https://x',
  // @ts-expect-error DPoP signs with ES256 or RS256 only
  http: { oauth: { grant: 'jwt_bearer', clientId: 'c', assertion: 'a', dpop: { privateKey: 'k', signingAlgorithm: 'HS256' } } },
};

// @ts-expect-error lock policies are a closed set
export const badPolicy: McpConfig = { transport: 'stdio', command: 'x', lock: 'f', lockPolicy: 'warn' };

// @ts-expect-error risk labels are a closed set
export const badRisk: McpConfig = { transport: 'stdio', command: 'x', risk: { a: 'dangerous' } };

export async function runEngine(source: McpToolSource, signal: AbortSignal): Promise<ResolvedToolset> {
  const defs: ToolDef[] = await source.tools({ runId: 'r1' });
  const def = defs[0];
  const kind: 'tool' = def.kind;
  const name: string = def.name;
  const description: string = def.description;
  const parameters: { [key: string]: unknown } = def.parameters;
  const executor: 'inprocess' = def.executor;
  const needsApproval: boolean = def.needsApproval;
  const risk: 'read' | 'write' | 'network' | 'execute' | 'destructive' | undefined = def.risk;
  void [kind, name, description, parameters, executor, needsApproval, risk];
  const ctx: ToolContext = {
    runId: 'r1',
    spanId: 's1',
    agent: { agentType: 'a', label: 'l' },
    isolation: 'none',
    cwd: '/',
    signal,
    log: (_level, _message) => {},
  };
  const out: unknown = await def.execute({ q: 'x' }, ctx);
  void out;
  const posture: McpSourceRegulatedPosture = source.describeRegulatedPosture();
  const declared: boolean = posture.bounds.declared;
  const drift: 'rekey' | 'refuse' = posture.drift;
  void [declared, drift];
  const resolved = await resolveToolset([source, def], { runId: 'r1' });
  const hash: string = toolsetHash(resolved.contracts);
  void hash;
  const check = validateJson({ type: 'object' }, {});
  if (!check.valid) console.log(check.issues.map((i) => i.message));
  await source.close();
  return resolved;
}

export function wire(err: ConfigError): { code: 'config'; message: string; retryable: false } {
  return err.toWire();
}

/** A host reading a server's JSON-RPC error answer as it read the SDK client's `McpError`. */
export function serverAnswer(err: unknown): string | undefined {
  if (!(err instanceof Error) || err.name !== 'McpError') return undefined;
  const answered = err as McpServerError;
  const code: number = answered.code;
  return `${code} ${answered.message} ${JSON.stringify(answered.data)} ${answered.tool ?? ''} ${answered.source ?? ''}`;
}

/** An engine telling an OAuth failure apart by its kind, and reading the server's code. */
export function oauthAction(err: unknown): string {
  if (!(err instanceof OAuthError)) return 'other';
  const kind: 'authorization_required' | 'refused' | 'step_up_exhausted' | 'authorization_exhausted' | 'untrusted' = err.kind;
  const code: 'oauth' = err.toWire().code;
  return `${code}:${kind}:${err.error ?? ''}`;
}
