'use strict';

// The name rule is the native one (what admission applies), so an entry of any origin is held to
// exactly the rule an imported tool was, and refused in admission's words.
const { validToolName, toolNameRefusal } = require('./native.js');

function isToolSource(entry) {
  return entry !== null && typeof entry === 'object' && typeof entry.tools === 'function';
}

/** The members identity covers, each read once (as the strict native walk reads them). */
function contractOf(tool) {
  /** @type {import('../index.js').ToolContract} */
  const contract = { name: tool.name, description: tool.description, parameters: tool.parameters };
  const version = tool.version;
  if (version !== undefined) contract.version = version;
  return contract;
}

/**
 * Expands sources in order and refuses names the engine cannot carry: one outside the native
 * TOOL_NAME_PATTERN, or a name already in the toolset.
 * Hashing itself is native; this is only the walk over host objects.
 */
function makeResolveToolset(native, ConfigError) {
  return async function resolveToolset(entries, session) {
    const tools = [];
    const seen = new Set();
    for (const entry of entries) {
      const expanded = isToolSource(entry) ? await entry.tools(session) : [entry];
      for (const tool of expanded) {
        if (typeof tool.name !== 'string' || !validToolName(tool.name)) {
          throw new ConfigError(toolNameRefusal(`${tool.name}`));
        }
        if (seen.has(tool.name)) {
          throw new ConfigError(`duplicate tool name '${tool.name}' in one toolset; disambiguate with the MCP prefix option`);
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

module.exports = { makeResolveToolset, contractOf };
