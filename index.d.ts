// Public types of @rulvar/mcp-native: the surface of the engine's TypeScript mcp(), so a host
// swaps only the import. Hand-written; checked by a type test.

export type ToolRisk = 'read' | 'write' | 'network' | 'execute' | 'destructive';

/** A JSON value (the engine's `Json`). */
export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** A JSON Schema object (the engine's `JsonSchema`). */
export type JsonSchema = { [key: string]: unknown };

export type HeaderRecord = Record<string, string>;
export type HeaderHook = () => HeaderRecord | Promise<HeaderRecord>;

/** Why `authorize` is called: no token yet, the token was refused, or more scope is needed. */
export type OAuthReason = 'authorization_required' | 'token_rejected' | 'insufficient_scope';

/**
 * Persists tokens and client registrations across processes (keys `oauth:tokens:<url>`,
 * `oauth:client:<issuer>` and `oauth:credentials:<url>`, the issuer the configured credentials
 * are bound to; values are JSON objects holding secrets: keep them where only the user can
 * read them).
 */
export interface OAuthStore {
  load(key: string): unknown | Promise<unknown>;
  save(key: string, value: unknown): void | Promise<void>;
}

/** A secret given as text, or as a function called each time it is needed (a token that rotates). */
export type OAuthSupplied = string | (() => string | Promise<string>);

/**
 * `http.oauth.dpop`: DPoP (RFC 9449). `true` makes a P-256 key for the source (its tokens are
 * bound to this process); an object gives a PKCS#8 PEM key of its own, so stored tokens stay
 * usable across processes.
 */
export type OAuthDpop = boolean | { privateKey: string; /** @default 'ES256' */ signingAlgorithm?: 'ES256' | 'RS256' };

/**
 * `http.oauth.tokenExchange`: enterprise-managed authorization. The user's identity assertion
 * is exchanged at the enterprise IdP (RFC 8693) for an ID-JAG, which the `jwt_bearer` grant
 * presents to the MCP server's authorization server.
 */
export interface OAuthTokenExchange {
  /** The IdP's token endpoint: an `https:` URL (`http:` on loopback). */
  tokenEndpoint: string;
  /** This client at the IdP. */
  clientId: string;
  /** Its secret at the IdP, if it has one. Never shown in an error. */
  clientSecret?: string;
  /** The user's ID token (or SAML assertion). Never shown in an error. */
  subjectToken: OAuthSupplied;
  /** @default 'id_token' */
  subjectTokenType?: 'id_token' | 'saml2';
}

/** `http.oauth`: OAuth 2.1 as the MCP specification's authorization section describes it. */
export interface OAuthConfig {
  /**
   * `'authorization_code'` (PKCE, a user authorizes), `'client_credentials'` (a machine), or
   * `'jwt_bearer'` (RFC 7523: `assertion` or `tokenExchange`, with `clientId`).
   * @default 'authorization_code'
   */
  grant?: 'authorization_code' | 'client_credentials' | 'jwt_bearer';
  /** A pre-registered client id (used before a client metadata document or registration). */
  clientId?: string;
  /** The pre-registered client's secret. Never shown in an error. */
  clientSecret?: string;
  /** A PKCS#8 PEM private key: the token endpoint is authenticated with `private_key_jwt`. */
  privateKey?: string;
  /** @default 'ES256' */
  signingAlgorithm?: 'ES256' | 'RS256';
  /** An https URL of this client's metadata document (SEP-991), used where the server supports it. */
  clientMetadataUrl?: string;
  /** The client name sent in a dynamic registration. @default 'rulvar-mcp' */
  clientName?: string;
  /**
   * Where the authorization server sends the user back (required for `authorization_code`): an
   * `https:` URL, or `http:` on a loopback host (127.0.0.0/8, `[::1]`, `localhost`).
   */
  redirectUri?: string;
  /** Scopes asked for when neither the server's challenge nor its metadata names any. */
  scope?: string;
  /** The RFC 8707 `resource`: a URL to send instead of the discovered one, or `false` to send none. */
  resource?: string | false;
  /**
   * The issuer identifier (RFC 8414) of the only authorization server this source uses: any
   * other the server names is refused (`OAuthError` `'untrusted'`) before anything is sent to
   * it. Without it the configured `clientSecret` / `privateKey` are bound to the first issuer
   * they are used with. An `https:` URL (`http:` on loopback) without a query or fragment.
   */
  issuer?: string;
  /** Shows the user `url`, resolves with the redirect URL the browser then reached. */
  authorize?: (request: { url: string; reason: OAuthReason; signal: AbortSignal }) => string | URL | Promise<string | URL>;
  /** Where tokens and registrations are kept; in memory for the source's life when absent. */
  store?: OAuthStore;
  /** DPoP-bound tokens and a proof on every request (RFC 9449). @default false */
  dpop?: OAuthDpop;
  /** `jwt_bearer`: the assertion presented as it is (a workload identity JWT). Never shown in an error. */
  assertion?: OAuthSupplied;
  /** `jwt_bearer`: the assertion is an ID-JAG from this token exchange. */
  tokenExchange?: OAuthTokenExchange;
}

/** Milliseconds, each a positive finite number. */
export interface McpTimeouts {
  /**
   * Whole handshake: spawn/attach plus initialize.
   * @default 60000 (the SDK's default)
   */
  connectMs?: number;
  /**
   * Each tools/list page request.
   * @default 60000 (the SDK's default)
   */
  listMs?: number;
  /**
   * Each tools/call request.
   * @default 60000 (the SDK's default)
   */
  callMs?: number;
  /**
   * Wall clock of a whole tools/list sweep.
   * @default unbounded
   */
  discoveryMs?: number;
}

/** The keys every transport takes. A key set to `undefined` counts as absent. */
interface McpCommonConfig {
  /**
   * Server tool names (before `prefix`) to import; the others are dropped.
   * @default every tool is admitted
   */
  allow?: string[];
  /**
   * Server tool names (before `prefix`) never to import; wins over `allow`.
   * @default none
   */
  deny?: string[];
  /**
   * Final names become `prefix_name`; every final name must match `^[a-zA-Z0-9_-]{1,64}$`.
   * @default none: the server's names as they are
   */
  prefix?: string;
  /**
   * `needsApproval` of the imported tools: `true` for all, or per server tool name (absent: `false`).
   * @default false
   */
  approval?: boolean | Record<string, boolean>;
  /**
   * Risk label per server tool name; a tool without one has no `risk`.
   * @default none
   */
  risk?: Record<string, ToolRisk>;
  /**
   * At most this many tools listed in one sweep, counted before allow/deny (a positive integer).
   * @default unbounded
   */
  maxTools?: number;
  /**
   * At most this many tools/list pages in one sweep (a positive integer).
   * @default unbounded
   */
  maxPages?: number;
  /**
   * At most this many bytes of schema (input plus output, as `JSON.stringify` writes them) per
   * admitted tool (a positive integer).
   * @default unbounded
   */
  maxSchemaBytes?: number;
  /** @default connectMs, listMs and callMs 60000 each; discoveryMs unbounded */
  timeouts?: McpTimeouts;
  /**
   * Refuse the config unless every discovery bound (maxTools, maxPages, maxSchemaBytes,
   * timeouts.discoveryMs) is declared.
   * @default false
   */
  requireBounds?: boolean;
  /**
   * On `listChanged`: `'rekey'` imports the changed list at the next `tools()` (a new toolset
   * hash); `'refuse'` holds the source closed until `close()`.
   * @default 'rekey'
   */
  drift?: 'rekey' | 'refuse';
  /**
   * The protocol era. `'auto'` opens with the 2025-11-25 handshake and speaks 2026-07-28 to a
   * server that refuses it (over stdio and in-process); a revision pins it, and a server that
   * refuses the pinned revision is a `ConfigError` naming both sides' versions.
   * @default 'auto'
   */
  protocol?: 'auto' | '2025-11-25' | '2026-07-28';
  /**
   * A toolset lock (`rulvar-mcp lock` writes one): its file path (read once, at construction) or
   * the parsed object. Every import (the first and each after a `listChanged`) is checked against
   * it under `lockPolicy`; a lock of another source identity is refused with a `ConfigError`.
   * @default none: imports are not checked
   */
  lock?: string | ToolsetLock;
  /**
   * What an import that differs from `lock` does: `'refuse'` (a `ConfigError` naming every
   * change), `'allow-additions'` (new tools admitted; a changed, renamed or removed tool refuses),
   * `'report'` (the import proceeds; {@link McpToolSource.lockReport} has the changes).
   * @default 'refuse'
   */
  lockPolicy?: 'refuse' | 'allow-additions' | 'report';
  /**
   * Refuse an import that shows a poisoning sign in a title or description (invisible or
   * bidirectional characters, an HTML comment, naming another admitted tool, names differing
   * only by case or separators). Signs are reported whenever `lock` or `strict` is set.
   * @default false
   */
  strict?: boolean;
  /**
   * Answers a server's elicitation (a question for the person behind the agent), in the middle
   * of a call: a function (form mode) or `{ handler, form?, url? }` to choose the modes
   * offered. Absent: no elicitation capability is declared. See {@link ElicitHook}.
   */
  elicit?: ElicitHook | { handler: ElicitHook; form?: boolean; url?: boolean };
  /**
   * Answers a server's sampling request (a model completion), in the middle of a call: a
   * function, or `{ handler, tools?, maxMessages?, maxBytes? }` (sampling with tool use, and
   * the bounds on a request: 100 messages and 1 MiB by default).
   */
  sample?: SampleHook | { handler: SampleHook; tools?: boolean; maxMessages?: number; maxBytes?: number };
  /** The roots a server may list: a fixed list of `file://` roots, or a hook. */
  roots?: McpRoot[] | RootsHook;
  /**
   * How many `input_required` rounds (MCP 2026-07-28) one call may take before it ends with an
   * error.
   * @default 10
   */
  maxInputRounds?: number;
  /**
   * Let a 2025 server's own requests (elicitation, sampling, roots from a hook) reach the hooks
   * while none of this source's tool calls is in flight (at connect, between calls). Off, they
   * are refused: a hook calls a person or a paid model. A fixed `roots` list always answers.
   * @default false
   */
  asksOutsideCalls?: boolean;
  /**
   * A tool name (after `prefix`) outside the engine's `^[a-zA-Z0-9_-]{1,64}$`, as 2026-07-28
   * allows (dots, up to 128 characters): `'refuse'` refuses the import, as the original does;
   * `'map'` imports it under an engine-legal name, the same every time (each other character
   * becomes `_`; past 64 characters, the first 55, `_` and 8 hex digits of the name's SHA-256),
   * and refuses two tools that would share a name.
   * @default 'refuse'
   */
  names?: 'refuse' | 'map';
  /**
   * Tools (by the server's names) whose calls are safe to send twice. On a 2026-07-28
   * connection a call whose answer is lost with its stream is sent again once when its tool is
   * listed here or has `risk: 'read'`; any other ends with an error saying the outcome is
   * unknown.
   */
  idempotent?: string[];
  /**
   * Hear the server's log messages from this level up, in the calling tool's `ctx.log`
   * (`'server <logger>: <data>'`, at the engine's nearest level, the message as `data`): a
   * 2025 server is asked with `logging/setLevel` once connected, a 2026-07-28 one in every
   * request's `_meta`. A message arriving while several calls are in flight goes to none.
   */
  serverLogs?: 'debug' | 'info' | 'notice' | 'warning' | 'error' | 'critical' | 'alert' | 'emergency';
}

/**
 * What a hook for a server's ask is handed: the calling tool's context (its `signal` aborts when
 * the call ends: `callMs`, the caller's signal, or `close()`), or, when a 2025 server's request
 * cannot be tied to one call (several in flight), the source's own (`signal` only).
 */
export type AskContext = Partial<ToolContext> & { signal: AbortSignal };

/** An elicitation as the server sent it (`mode` filled in: `'form'` when it named none). */
export type ElicitRequest =
  | { mode: 'form'; message: string; requestedSchema: JsonSchema; [key: string]: unknown }
  | { mode: 'url'; message: string; url: string; elicitationId?: string; [key: string]: unknown };
/**
 * The person's answer. An `accept` of a form is completed with the schema's defaults and
 * checked against `requestedSchema` before the server sees it; `content` of any other action is
 * dropped. A hook that throws declines; one that outlives the call cancels.
 */
export type ElicitResult =
  | { action: 'accept'; content?: Record<string, JsonValue> }
  | { action: 'decline' | 'cancel' };
export type ElicitHook = (request: ElicitRequest, ctx: AskContext) => ElicitResult | Promise<ElicitResult>;

/** A `sampling/createMessage` request's params as the server sent them (`maxTokens` required). */
export type SampleRequest = { messages: JsonValue[]; maxTokens: number; [key: string]: unknown };
/** A model's completion: `role: 'assistant'`, its `content` and the `model` that wrote it. */
export type SampleResult = { role: 'assistant'; content: JsonValue; model: string; stopReason?: string; [key: string]: unknown };
export type SampleHook = (request: SampleRequest, ctx: AskContext) => SampleResult | Promise<SampleResult>;

export interface McpRoot {
  /** A `file://` URI. */
  uri: string;
  name?: string;
}
export type RootsHook = (request: Record<string, unknown>, ctx: AskContext) => McpRoot[] | { roots: McpRoot[] } | Promise<McpRoot[] | { roots: McpRoot[] }>;

/** A toolset lock file as `rulvar-mcp lock` writes it (sorted keys, one tool per block). */
export interface ToolsetLock {
  lockVersion: 1;
  /** The protocol era the contracts were listed in. */
  era: string;
  /** Who the lock is for: command, args and env keys (stdio); URL and OAuth issuer (HTTP). */
  source: Record<string, unknown>;
  /** The config that shaped the import: allow, deny, prefix, risk, approval. */
  config: Record<string, unknown>;
  toolsetHash: string;
  tools: Array<{
    name: string;
    original: string;
    contractHash: string;
    /** As the server sent it: name (original), title, description, schemas, annotations. */
    contract: Record<string, unknown>;
  }>;
}

/** One difference between an import and its lock; `text` is the line refusals and `rulvar-mcp diff` show. */
export interface LockChange {
  kind: 'added' | 'removed' | 'changed' | 'renamed' | 'config';
  /** The tool's final name (the new one for a rename); null for a config change. */
  tool: string | null;
  text: string;
}

/** `cassette`: where the exchange with the server is recorded, or replayed from. */
export interface McpCassette {
  /** The cassette file (created with its directories when recorded). */
  path: string;
  /** @default 'auto' (replay when the file exists, record when not) */
  mode?: 'record' | 'replay' | 'auto';
  /**
   * JSON pointers into a tool's arguments that matching leaves out (timestamps, random ids),
   * per tool as the server names it; `'*'` for every tool.
   */
  ignore?: Record<string, string[]>;
}

/** A stdio server's confinement (`sandbox`). */
export interface McpSandbox {
  /** Absolute paths: `read` readable (and runnable), `write` readable and writable. */
  fs?: { read?: string[]; write?: string[] };
  /**
   * `'deny'` (the default): no TCP connect or bind; `'allow'`: unconfined; `{ connect }`: TCP
   * connect to these ports only (`'*:5432'` or `5432`; a named host cannot be enforced by
   * port-based Landlock and counts as unsupported).
   */
  net?: 'deny' | 'allow' | { connect: Array<string | number> };
  /**
   * What a right the system cannot enforce does: `'refuse'` fails the connect, typed;
   * `'warn'` starts the server with what is enforced and tells the first call's `ctx.log`.
   * @default 'refuse'
   */
  onUnsupported?: 'refuse' | 'warn';
  /**
   * Resource limits set in the child before it execs: `openFiles` (descriptors at once) and
   * `addressSpaceMb` (virtual memory; V8 reserves gigabytes up front, so be generous for Node).
   */
  limits?: { openFiles?: number; addressSpaceMb?: number };
}

/** A sign of tool poisoning in an imported title or description; reported, never altered. */
export interface PoisoningSign {
  tool: string;
  field: 'title' | 'description' | 'name';
  kind: 'invisible-character' | 'html-comment' | 'names-other-tool' | 'confusable-name';
  text: string;
}

/** What the latest import's check found. */
export interface LockReport {
  /** The lock policy; null when only `strict` is set. */
  policy: 'refuse' | 'allow-additions' | 'report' | null;
  changes: LockChange[];
  /** The first 1,000 signs of the import. */
  signs: PoisoningSign[];
  /** How many more signs were found and not kept; absent when none were left out. */
  signsOmitted?: number;
}

/**
 * The strict stdio config: one member of {@link McpStrictConfig}. Keys of the other transports are
 * typed `never`, so a crossed key does not compile.
 */
export interface McpStdioConfig extends McpCommonConfig {
  transport: 'stdio';
  /** The server process to spawn (required). */
  command: string;
  /** @default [] */
  args?: string[];
  /**
   * Added to the default environment allow-list (HOME, LOGNAME, PATH, SHELL, TERM, USER); the
   * host's other variables are not passed on.
   * @default none: only the allow-list
   */
  env?: Record<string, string>;
  /** @default the host's working directory */
  cwd?: string;
  /**
   * The child's stderr: copied on to the host's as it arrives (`'inherit'`), only kept
   * (`'pipe'`), or `/dev/null` (`'ignore'`). Except with `'ignore'`, its last lines end every
   * error about the process ending or failing to start.
   * @default 'inherit'
   */
  stderr?: 'inherit' | 'ignore' | 'pipe';
  /**
   * Confine the server (Linux: Landlock, applied between fork and exec, so wrappers and every
   * grandchild are confined too): it reads only the system's runtime, its command's install
   * tree and `fs.read`, writes only `fs.write`, and reaches the network as `net` says. Part of
   * the source's identity (the toolset lock). Absent: unconfined. docs/sandbox.md.
   */
  sandbox?: McpSandbox;
  /**
   * Record the exchange with the server to a file, or replay it from one with no process and no
   * socket (a host's test suite). `mode` 'auto' (the default) replays when the file exists and
   * records when not; `RULVAR_CASSETTE_MODE` overrides it. A request the cassette has no answer
   * for fails with a {@link CassetteError}. docs/testing-hosts.md.
   */
  cassette?: McpCassette;
  url?: never;
  server?: never;
  http?: never;
}

/** The strict streamable-HTTP config: one member of {@link McpStrictConfig}. */
export interface McpHttpConfig extends McpCommonConfig {
  transport: 'streamable-http';
  /** The server endpoint, `http://` or `https://` (required). */
  url: string;
  /**
   * Headers of every request: a record, or a (possibly async) hook called before each request,
   * so a rotated token reaches the very next one.
   * @default none
   */
  http?: { headers?: HeaderRecord | HeaderHook; oauth?: OAuthConfig };
  command?: never;
  args?: never;
  server?: never;
  env?: never;
  cwd?: never;
  stderr?: never;
  sandbox?: never;
  /**
   * Record the exchange with the server to a file, or replay it from one with no process and no
   * socket (a host's test suite). `mode` 'auto' (the default) replays when the file exists and
   * records when not; `RULVAR_CASSETTE_MODE` overrides it. A request the cassette has no answer
   * for fails with a {@link CassetteError}. docs/testing-hosts.md.
   */
  cassette?: McpCassette;
}

/**
 * Anything with the SDK server's `connect(transport)`: a `Server` or `McpServer`. The transport it
 * is handed is the package's in-memory one (the SDK's `Transport` shape); `connect` is a method, so
 * a server whose `connect` takes the SDK's `Transport` type is accepted.
 */
export interface InProcessServer {
  connect(transport: unknown): Promise<void>;
}

/** The strict in-process config: one member of {@link McpStrictConfig}. */
export interface McpInProcessConfig extends McpCommonConfig {
  transport: 'inprocess';
  /** The SDK server object to connect to (required). */
  server: InProcessServer;
  command?: never;
  args?: never;
  url?: never;
  http?: never;
  env?: never;
  cwd?: never;
  stderr?: never;
  sandbox?: never;
  cassette?: never;
}

/**
 * The strict config, one member per transport: a key of another transport (`url` on stdio, `env`
 * over HTTP, `http` in-process) does not compile. Recommended for code that imports this package
 * directly: `const cfg = { ... } satisfies McpStrictConfig` (or annotate with it), then `mcp(cfg)`.
 * Every `McpStrictConfig` is an {@link McpConfig}.
 */
export type McpStrictConfig = McpStdioConfig | McpHttpConfig | McpInProcessConfig;

/**
 * The flat config `mcp()` accepts: the engine's own `McpConfig` shape (every key optional except
 * `transport`), plus the stdio extension keys. Crossed keys compile here and are refused at run
 * time with a `ConfigError` ("'url' is not a config key of the 'stdio' transport"), exactly as the
 * engine's tests expect; use {@link McpStrictConfig} to refuse them at compile time instead.
 */
export interface McpConfig extends McpCommonConfig {
  transport: 'stdio' | 'streamable-http' | 'inprocess';
  /** stdio: the server process to spawn (required there). */
  command?: string;
  /**
   * stdio only.
   * @default []
   */
  args?: string[];
  /**
   * stdio only: added to the default environment allow-list (HOME, LOGNAME, PATH, SHELL, TERM,
   * USER); the host's other variables are not passed on.
   * @default none: only the allow-list
   */
  env?: Record<string, string>;
  /**
   * stdio only.
   * @default the host's working directory
   */
  cwd?: string;
  /**
   * stdio only: the child's stderr copied on to the host's (`'inherit'`), only kept (`'pipe'`),
   * or `/dev/null` (`'ignore'`).
   * @default 'inherit'
   */
  stderr?: 'inherit' | 'ignore' | 'pipe';
  /**
   * Confine the server (Linux: Landlock, applied between fork and exec, so wrappers and every
   * grandchild are confined too): it reads only the system's runtime, its command's install
   * tree and `fs.read`, writes only `fs.write`, and reaches the network as `net` says. Part of
   * the source's identity (the toolset lock). Absent: unconfined. docs/sandbox.md.
   */
  sandbox?: McpSandbox;
  /** stdio and streamable-http: record to a file or replay from one. docs/testing-hosts.md. */
  cassette?: McpCassette;
  /** streamable-http: the server endpoint, `http://` or `https://` (required there). */
  url?: string;
  /**
   * streamable-http only: headers of every request, a record or a (possibly async) hook called
   * before each request; `oauth`, the addon's own OAuth 2.1 client.
   * @default none
   */
  http?: { headers?: HeaderRecord | HeaderHook; oauth?: OAuthConfig };
  /**
   * inprocess: the server instance (required there), anything with `connect(transport)` (an
   * {@link InProcessServer}). `unknown` here because the engine's config types it so; checked at
   * run time.
   */
  server?: unknown;
}

/** Log levels of {@link ToolContext.log}. */
export type ToolLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** The spawn's declared isolation (the engine's `IsolationSpec`). Not read by this package. */
export type ToolIsolation = 'none' | 'readonly' | { kind: 'worktree'; ref?: string };

/**
 * What `execute` is handed: the engine's `ToolContext` is assignable to it. Only `signal` (abort)
 * and `log` (progress notifications, at 'debug' with the progress object as data) are read; the
 * rest is optional so a direct caller can pass `{ runId }`.
 */
export interface ToolContext {
  runId: string;
  spanId?: string;
  agent?: { agentType: string; label?: string };
  cwd?: string;
  isolation?: ToolIsolation;
  signal?: AbortSignal;
  log?: (level: ToolLogLevel, msg: string, data?: JsonValue) => void;
}

/**
 * An imported tool. Assignable to the engine's `ToolDef` (whose `execute` takes `unknown` input for
 * a JSON Schema `parameters`), which is why `I` defaults to `unknown`: any JSON value is sent as
 * the call's arguments (`undefined` as `{}`); the engine validates it against `parameters` first.
 */
export interface ToolDef<I = unknown, O = unknown> {
  kind: 'tool';
  name: string;
  description: string;
  /** The tool's input JSON Schema, as the server declared it. */
  parameters: JsonSchema;
  executor: 'inprocess';
  needsApproval: boolean;
  risk?: ToolRisk;
  version?: string;
  execute(input: I, ctx: ToolContext): Promise<O>;
}

export interface ToolSourceSession {
  runId: string;
}

export interface ToolSource {
  id: string;
  tools(session: ToolSourceSession): Promise<ToolDef[]>;
  close?(): Promise<void>;
}

export interface McpSourceRegulatedPosture {
  regulatedPosture: 1;
  kind: 'mcp-source';
  name: string;
  drift: 'rekey' | 'refuse';
  bounds: {
    declared: boolean;
    maxTools?: number;
    maxPages?: number;
    maxSchemaBytes?: number;
    discoveryMs?: number;
  };
}

export interface McpToolSource extends ToolSource {
  id: string;
  tools(session: ToolSourceSession): Promise<ToolDef[]>;
  /** Idempotent; resolves once the connection (and any child process) is gone. */
  close(): Promise<void>;
  describeRegulatedPosture(): McpSourceRegulatedPosture;
  /**
   * What the latest import's check against `lock` (and for poisoning signs) found, a refused
   * import included; null before any import and when neither `lock` nor `strict` is set.
   */
  lockReport(): LockReport | null;
  /** `close()`, so `await using source = mcp(config)` closes the source when the block ends. */
  [Symbol.asyncDispose](): Promise<void>;
}

declare global {
  interface SymbolConstructor {
    /**
     * Declared as `lib.esnext.disposable` (and `@types/node`) declare it, so this file type-checks
     * under a `lib` without it; the declarations merge where it is there too.
     */
    readonly asyncDispose: unique symbol;
  }
}

export interface ToolContract {
  name: string;
  description: string;
  parameters: unknown;
  version?: string;
}

export interface ResolvedToolset {
  tools: ToolDef[];
  contracts: ToolContract[];
  hash: string;
  authorityHash: string;
}

export declare class ConfigError extends Error {
  constructor(message: string, options?: { cause?: unknown });
  readonly name: 'ConfigError';
  readonly code: 'config';
  readonly retryable: false;
  toWire(): { code: 'config'; message: string; retryable: false };
}

/**
 * An `http.oauth` failure a host can act on (from `tools()` or a tool's `execute`):
 * `'authorization_required'` (no `authorize` callback and no stored token could be used),
 * `'refused'` (the authorization server said no; `error` is its RFC 6749 error code),
 * `'step_up_exhausted'` / `'authorization_exhausted'` (still refused after 3 authorizations),
 * `'untrusted'` (what the server or its authorization server handed over failed a trust check:
 * an issuer that is not where its metadata was found, a URL that is not https, metadata on
 * another origin, an authorization server other than the pinned or bound one; nothing was sent).
 */
export declare class OAuthError extends Error {
  constructor(
    message: string,
    options?: { kind?: OAuthErrorKind; error?: string; cause?: unknown },
  );
  readonly name: 'OAuthError';
  readonly code: 'oauth';
  readonly kind: OAuthErrorKind;
  /**
   * The authorization server's error code (`invalid_grant`, `access_denied`, ...), for
   * `'refused'`: a registered code, or `'unknown'`.
   */
  readonly error?: string;
  readonly retryable: false;
  toWire(): { code: 'oauth'; kind: OAuthErrorKind; message: string; retryable: false; error?: string };
}

/**
 * What a replayed source (`cassette`) rejects with when its cassette has no recorded answer
 * for a request: `tool` names the tool of a call, `pointer` the JSON pointer (into the request's
 * params: `/arguments/...`) of its first difference from the nearest recorded request of that
 * tool, when one was recorded. Nothing is made up.
 */
export declare class CassetteError extends Error {
  constructor(message: string, options?: { tool?: string; pointer?: string });
  readonly name: 'CassetteError';
  readonly code: 'cassette';
  readonly tool?: string;
  readonly pointer?: string;
  readonly retryable: false;
  toWire(): { code: 'cassette'; message: string; retryable: false; tool?: string; pointer?: string };
}

/**
 * What `execute` (and `tools()`) rejects with when the server answers with a JSON-RPC error:
 * what the MCP SDK 1.x client throws there (its `McpError`), which the TypeScript original let
 * through. `message` is `MCP error <code>: <message>` with the server's message (header and env
 * values redacted), `code` the server's (-32603 when it sent none a JS number holds exactly),
 * `data` the server's when it sent one within 16 KiB of JSON (redacted too). `instanceof` the
 * SDK's class is false: no class of the SDK's is loaded. Where it happened rides in
 * non-enumerable members, so the error's own enumerable members are the SDK error's.
 */
export interface McpServerError extends Error {
  readonly name: 'McpError';
  readonly code: number;
  readonly data: unknown;
  /** The source's id. */
  readonly source?: string;
  /** The tool whose call it answered (its name as imported). */
  readonly tool?: string;
  /** The last lines of a stdio server's stderr, when the answer refused the opening. */
  readonly stderr?: string;
}

export type OAuthErrorKind =
  | 'authorization_required'
  | 'refused'
  | 'step_up_exhausted'
  | 'authorization_exhausted'
  | 'untrusted';

export type ConfigErrorClass = new (message: string, options?: { cause?: unknown }) => Error;

/** Accepts the flat {@link McpConfig}; every {@link McpStrictConfig} is one. */
export declare function mcp(config: McpConfig): McpToolSource;
/**
 * `mcp` building its typed refusals with the host's `ConfigError` class. The result is assignable
 * to an engine's `(cfg: McpConfig) => McpToolSource` whether the engine keeps its own `McpConfig`
 * and `McpToolSource` declarations or re-exports this package's.
 */
export declare function createMcp(options: CreateMcpOptions): (config: McpConfig) => McpToolSource;

export interface CreateMcpOptions {
  /** The class typed refusals are built with. */
  ConfigError: ConfigErrorClass;
  /**
   * `false` keeps the sources of this `mcp` out of OpenTelemetry (no spans, no duration
   * histogram, no trace context in `params._meta`) even when the application installed
   * `@opentelemetry/api`. Without that optional peer there is nothing to turn off.
   * @default true
   */
  telemetry?: boolean;
}

export declare function jcsSerialize(value: unknown): string;
export declare function canonicalizeSchema(schema: unknown): unknown;
export declare function schemaHash(schema: unknown): string;
export declare function toolContractHash(contract: ToolContract): string;
export declare function toolsetHash(contracts: ToolContract[]): string;
export declare function toolsetAuthorityHash(
  tools: Array<ToolContract & { needsApproval?: boolean; executor?: string; risk?: ToolRisk }>,
): string;
export declare function resolveToolset(
  entries: Array<ToolDef | ToolSource>,
  session: ToolSourceSession,
): Promise<ResolvedToolset>;

export type ValidationResult =
  | { valid: true }
  | { valid: false; issues: Array<{ message: string; path?: string }> };
export declare function validateJson(schema: unknown, value: unknown): ValidationResult;

/**
 * Why a tool's input or output runs without a validator, when it does: its schema could not be
 * compiled (the original then sends the input unchecked too). `undefined` for a tool whose
 * schemas are both validated, and for a ToolDef this package did not make.
 */
export declare function unvalidatedReasons(def: object): { input?: string; output?: string } | undefined;

/**
 * What a ToolDef of a source was imported from, as the import admitted it: `original`, the name
 * the server gives the tool (before `prefix` and `names: 'map'`), and `schemaBytes`, the bytes of
 * input and output schema it declares as `maxSchemaBytes` counts them. Undefined for any other
 * object.
 */
export declare function importedAs(def: object): { original: string; schemaBytes: number } | undefined;
/**
 * The protocol revision a source's latest import was listed in (`'2025-11-25'` after the
 * legacy handshake, `'2026-07-28'` on a modern connection); undefined before any import.
 */
export declare function protocolOf(source: McpToolSource): string | undefined;
/**
 * The tools a source's latest import left out, each with why (on a 2026-07-28 connection, a
 * tool whose `x-mcp-header` declarations break the rules); undefined before any import.
 */
export declare function leftOutOf(source: McpToolSource): Array<{ name: string; reason: string }> | undefined;
/**
 * Follows a task of an earlier run to its end, as the call of `toolName` (its imported name)
 * that started it would have: the result, or the call's error. The id is the one `ctx.log`
 * told (`data.task.taskId`); needs `tasks: true`. `ctx` as for `execute` (its `signal` cancels
 * the task, its `log` hears each status).
 */
export declare function resumeTask(source: McpToolSource, toolName: string, taskId: string, ctx?: Partial<ToolContext>): Promise<unknown>;

/**
 * The toolset lock's text (what `rulvar-mcp lock` writes) for what `source` imports now; it
 * imports first when it has not yet. Pass the text's file path, or the parsed object, as `lock`.
 */
export declare function lockText(source: McpToolSource): Promise<string>;
