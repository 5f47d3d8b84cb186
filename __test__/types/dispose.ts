// `await using` on a source, for a consumer whose lib has Symbol.asyncDispose (esnext.disposable):
// the package's own declaration of the symbol (for libs without it) must merge with the lib's.
import { mcp, type McpToolSource } from '@rulvar/mcp-native';

export async function importedNames(): Promise<string[]> {
  await using source = mcp({ transport: 'stdio', command: 'github-mcp-server' });
  return (await source.tools({ runId: 'r1' })).map((def) => def.name);
}

export function asDisposable(source: McpToolSource): AsyncDisposable {
  return source;
}
