// packages/core/src/tools/mcp.ts with the README's recipe as its body, KEEPING core's own
// McpConfig and McpToolSource declarations (flat config, as in @rulvar/core 1.248.0).
import { createMcp } from '@rulvar/mcp-native';
import { ConfigError, type ToolRisk, type ToolSource } from './l0.js';

export interface McpConfig {
  transport: 'stdio' | 'streamable-http' | 'inprocess';
  command?: string;
  args?: string[];
  url?: string;
  server?: unknown;
  allow?: string[];
  deny?: string[];
  prefix?: string;
  approval?: boolean | Record<string, boolean>;
  risk?: Record<string, ToolRisk>;
  maxTools?: number;
  maxPages?: number;
  maxSchemaBytes?: number;
  timeouts?: { connectMs?: number; listMs?: number; callMs?: number; discoveryMs?: number };
  requireBounds?: boolean;
  http?: {
    headers?: Record<string, string> | (() => Record<string, string> | Promise<Record<string, string>>);
  };
  drift?: 'rekey' | 'refuse';
}

export interface McpToolSource extends ToolSource {
  close(): Promise<void>;
}

export const mcp: (cfg: McpConfig) => McpToolSource = createMcp({ ConfigError });
