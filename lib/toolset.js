'use strict';

const NAME = /^[a-zA-Z0-9_-]{1,64}$/;

function isToolSource(entry) {
  return entry !== null && typeof entry === 'object' && typeof entry.tools === 'function';
}

function contractOf(tool) {
  const contract = { name: tool.name, description: tool.description, parameters: tool.parameters };
  if (tool.version !== undefined) contract.version = tool.version;
  return contract;
}

/**
 * Expands sources in order and refuses names the engine cannot carry: one outside
 * ^[a-zA-Z0-9_-]{1,64}$, or a name already in the toolset.
 * Hashing itself is native; this is only the walk over host objects.
 */
function makeResolveToolset(native, ConfigError) {
  return async function resolveToolset(entries, session) {
    const tools = [];
    const seen = new Set();
    for (const entry of entries) {
      const expanded = isToolSource(entry) ? await entry.tools(session) : [entry];
      for (const tool of expanded) {
        if (typeof tool.name !== 'string' || !NAME.test(tool.name)) {
          throw new ConfigError(
            `imported tool name '${tool.name}' must match ^[a-zA-Z0-9_-]{1,64}$; namespace it with the source prefix option`,
          );
        }
        if (seen.has(tool.name)) {
          throw new ConfigError(
            `duplicate tool name '${tool.name}' in one toolset; disambiguate with the MCP prefix option`,
          );
        }
        seen.add(tool.name);
        tools.push(tool);
      }
    }
    const contracts = tools.map(contractOf);
    return {
      tools,
      contracts,
      hash: native.toolsetHash(contracts),
      authorityHash: native.toolsetAuthorityHash(tools),
    };
  };
}

module.exports = { makeResolveToolset };
