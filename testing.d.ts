// @rulvar/mcp-native/testing: record and replay MCP servers in a host's test suite.
// docs/testing-hosts.md.

/** How a cassette is used: replayed when its file exists and recorded when not (`'auto'`). */
export type CassetteMode = 'record' | 'replay' | 'auto';

export interface CassetteOptions {
  /** The cassette file; or give `name`. */
  path?: string;
  /** A test's name, made a file name in `dir` (`cassettePath`). */
  name?: string;
  /** Where `name`'s file goes; `__cassettes__` by default. */
  dir?: string;
  /** `'auto'` by default; `RULVAR_CASSETTE_MODE` overrides it for a whole suite. */
  mode?: CassetteMode;
  /** JSON pointers into a tool's arguments left out of matching, per tool (`'*'`: every tool). */
  ignore?: Record<string, string[]>;
}

/** The cassette file of a test called `name`, in `dir` (`__cassettes__` by default). */
export declare function cassettePath(name: string, dir?: string): string;

/** `config` with a `cassette` key: its path (or the options), mode `'auto'` unless given. */
export declare function withCassette<C extends object>(
  config: C,
  options: string | CassetteOptions,
): C & { cassette: { path: string; mode: CassetteMode; ignore?: Record<string, string[]> } };

export interface CassetteInteraction {
  method: string;
  /** The tool, for a `tools/call`. */
  tool?: string;
  /** The request's params as recorded (without `_meta`). */
  params?: unknown;
  /** How the request was answered; `null` when the recording ended first. */
  outcome: 'result' | 'error' | null;
  /** Notifications the server sent for it (progress, log lines, list changes). */
  notifications: number;
  /** Requests the server sent back during it (elicitation, sampling, roots). */
  asks: number;
}

export interface CassetteSummary {
  /** The protocol revision spoken: `'2025-11-25'`, ..., or `'2026-07-28'`. */
  protocol: string;
  /** The server's `serverInfo`, or null. */
  server: unknown;
  /** The toolset hash of the last import recorded; a replay reproduces it. */
  toolsetHash: string | null;
  interactions: CassetteInteraction[];
}

/** What the cassette at `file` holds; a `ConfigError` when a replay would refuse it. */
export declare function readCassette(file: string): CassetteSummary;

/** `__cassettes__`. */
export declare const DEFAULT_DIR: string;
