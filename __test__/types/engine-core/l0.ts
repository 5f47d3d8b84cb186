// The engine's public tool types, shaped like @rulvar/core 1.248.0 (o-stepper/rulvar
// packages/core/src/l0/json.ts, l0/messages.ts, l0/schema.ts, l0/spi/toolsource.ts,
// l0/spi/isolation.ts, l0/spi/regulated-posture.ts, l0/errors.ts, vendor/standard-schema.d.ts):
// the declarations the drop-in recipe has to satisfy. Mirrored, not imported, so the suite needs
// no engine checkout.

export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

export type JsonSchema = { [key: string]: unknown };

// vendor/standard-schema.d.ts (@standard-schema/spec 1.1.0), the part Out<S> reads.
export interface StandardSchemaV1<Input = unknown, Output = Input> {
  readonly '~standard': StandardSchemaV1.Props<Input, Output>;
}
export declare namespace StandardSchemaV1 {
  interface Props<Input = unknown, Output = Input> {
    readonly version: 1;
    readonly vendor: string;
    readonly types?: Types<Input, Output> | undefined;
    readonly validate: (value: unknown) => Result<Output> | Promise<Result<Output>>;
  }
  type Result<Output> = { readonly value: Output; readonly issues?: undefined } | { readonly issues: ReadonlyArray<{ readonly message: string }> };
  interface Types<Input = unknown, Output = Input> {
    readonly input: Input;
    readonly output: Output;
  }
  type InferOutput<Schema extends StandardSchemaV1> = NonNullable<Schema['~standard']['types']>['output'];
}

export type SchemaPair<T = unknown> = {
  jsonSchema: JsonSchema;
  validate: (value: unknown) => value is T;
};

export type SchemaSpec<T = unknown> = StandardSchemaV1<unknown, T> | SchemaPair<T> | JsonSchema;

export type Out<S> = S extends StandardSchemaV1 ? StandardSchemaV1.InferOutput<S> : S extends { validate: (value: unknown) => value is infer T } ? T : unknown;

export type IsolationSpec = 'none' | 'readonly' | { kind: 'worktree'; ref?: string };

export type ToolRisk = 'read' | 'write' | 'network' | 'execute' | 'destructive';

export interface ToolContext {
  runId: string;
  spanId: string;
  agent: { agentType: string; label?: string };
  cwd: string;
  isolation: IsolationSpec;
  signal: AbortSignal;
  log(level: 'debug' | 'info' | 'warn' | 'error', msg: string, data?: Json): void;
}

export type ToolExecutor = 'inprocess' | 'subprocess' | 'container';

export interface ToolDef<S extends SchemaSpec = SchemaSpec> {
  readonly kind: 'tool';
  readonly name: string;
  readonly description: string;
  readonly parameters: S;
  readonly version?: string;
  readonly executor: ToolExecutor;
  readonly executorSpec?: Json;
  readonly needsApproval: boolean;
  readonly risk?: ToolRisk;
  execute: (input: Out<S>, ctx: ToolContext) => Promise<unknown>;
}

export interface ToolSourceSession {
  runId: string;
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

export interface AiSdkBridgeRegulatedPosture {
  regulatedPosture: 1;
  kind: 'ai-sdk-bridge';
  name: string;
  providerExecutedTools: 'allow' | 'deny';
}

export type RegulatedPostureDescriptor = McpSourceRegulatedPosture | AiSdkBridgeRegulatedPosture;

export interface ToolSource {
  id: string;
  tools(session: ToolSourceSession): Promise<ToolDef[]>;
  describeRegulatedPosture?(): RegulatedPostureDescriptor;
}

export class ConfigError extends Error {
  readonly code = 'config' as const;
  constructor(message: string, opts?: { data?: Json; cause?: unknown }) {
    super(message, opts);
    this.name = 'ConfigError';
  }
}
