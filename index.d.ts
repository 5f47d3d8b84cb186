// Public types of @rulvar/mcp-native: the surface of the engine's TypeScript mcp(), so a host
// swaps only the import. Hand-written; checked by a type test.

export type ToolRisk = 'read' | 'write' | 'network' | 'execute' | 'destructive';

export type HeaderRecord = Record<string, string>;
export type HeaderHook = () => HeaderRecord | Promise<HeaderRecord>;

export interface McpTimeouts {
  /** Whole handshake: spawn/attach plus initialize. */
  connectMs?: number;
  /** Each tools/list page request. */
  listMs?: number;
  /** Each tools/call request. */
  callMs?: number;
  /** Wall clock of a whole tools/list sweep. */
  discoveryMs?: number;
}

interface McpCommonConfig {
  allow?: string[];
  deny?: string[];
  prefix?: string;
  approval?: boolean | Record<string, boolean>;
  risk?: Record<string, ToolRisk>;
  maxTools?: number;
  maxPages?: number;
  maxSchemaBytes?: number;
  timeouts?: McpTimeouts;
  requireBounds?: boolean;
  drift?: 'rekey' | 'refuse';
}

export interface McpStdioConfig extends McpCommonConfig {
  transport: 'stdio';
  command: string;
  args?: string[];
  /** Added to the default environment allow-list (HOME, LOGNAME, PATH, SHELL, TERM, USER). */
  env?: Record<string, string>;
  cwd?: string;
  stderr?: 'inherit' | 'ignore' | 'pipe';
  url?: never;
  server?: never;
  http?: never;
}

export interface McpHttpConfig extends McpCommonConfig {
  transport: 'streamable-http';
  url: string;
  http?: { headers?: HeaderRecord | HeaderHook };
  command?: never;
  args?: never;
  server?: never;
  env?: never;
  cwd?: never;
  stderr?: never;
}

/** Anything with the SDK server's `connect(transport)`: a `Server` or `McpServer`. */
export interface InProcessServer {
  connect(transport: any): Promise<void>;
}

export interface McpInProcessConfig extends McpCommonConfig {
  transport: 'inprocess';
  server: InProcessServer;
  command?: never;
  args?: never;
  url?: never;
  http?: never;
  env?: never;
  cwd?: never;
  stderr?: never;
}

export type McpConfig = McpStdioConfig | McpHttpConfig | McpInProcessConfig;

export interface ToolContext {
  runId: string;
  spanId?: string;
  agent?: string;
  cwd?: string;
  isolation?: unknown;
  signal?: AbortSignal;
  log?: (level: 'debug' | 'info' | 'warn' | 'error', message: string, data?: unknown) => void;
}

export interface ToolDef<I = any, O = unknown> {
  kind: 'tool';
  name: string;
  description: string;
  parameters: unknown;
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
  close(): Promise<void>;
  describeRegulatedPosture(): McpSourceRegulatedPosture;
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

export type ConfigErrorClass = new (message: string, options?: { cause?: unknown }) => Error;

export declare function mcp(config: McpConfig): McpToolSource;
export declare function createMcp(options: { ConfigError: ConfigErrorClass }): typeof mcp;

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
