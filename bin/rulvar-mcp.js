#!/usr/bin/env node
'use strict';

// rulvar-mcp: shows what an engine would import from an MCP server, and calls one tool.
//   rulvar-mcp inspect [target] [config flags] [--json]
//   rulvar-mcp call <tool> [json] [target] [config flags] [--json]
//   rulvar-mcp lock [target] [config flags] [--out FILE]
//   rulvar-mcp diff <lockfile> [target] [config flags] [--json]
//   rulvar-mcp record [target] [config flags] --out FILE [--call "tool {json}"]...
//   rulvar-mcp cassette <file> [--json]
// The commands live in lib/cli/ (main.js dispatches).
const { main } = require('../lib/cli/main.js');
const { fileStore } = require('../lib/cli/login.js');

if (require.main === module) {
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  });
} else {
  // For the tests: the file store, driven by several processes at once.
  module.exports = { fileStore };
}
