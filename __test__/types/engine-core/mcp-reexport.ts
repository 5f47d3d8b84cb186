// packages/core/src/tools/mcp.ts with the README's recipe as its body, RE-EXPORTING the
// addon's McpConfig and McpToolSource instead of declaring its own.
import { createMcp, type McpConfig, type McpToolSource } from '@rulvar/mcp-native';
import { ConfigError } from './l0.js';

export type { McpConfig, McpToolSource };

export const mcp: (cfg: McpConfig) => McpToolSource = createMcp({ ConfigError });
