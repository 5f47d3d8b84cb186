// A dependency-free MCP stdio server for the cross-target smoke test (scripts/cross/smoke.js):
// newline-delimited JSON-RPC on stdin/stdout, tools `double` and `pids`. It starts a
// grandchild that keeps it alive after its stdin ends, so the client's close() has to go
// through the whole escalation (process group on Unix, job on Windows) to end the tree.
'use strict';
const { spawn } = require('child_process');
const grandchild = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
const send = (m) => process.stdout.write(JSON.stringify(m) + '\n');
let buf = '';
process.stdin.on('data', (chunk) => {
  buf += chunk;
  let i;
  while ((i = buf.indexOf('\n')) >= 0) {
    const line = buf.slice(0, i).trim();
    buf = buf.slice(i + 1);
    if (line) handle(JSON.parse(line));
  }
});
// Stdin's end is ignored on purpose (the grandchild keeps this process alive).
process.stdin.on('end', () => {});
function handle(m) {
  if (m.id === undefined) return;
  const ok = (result) => send({ jsonrpc: '2.0', id: m.id, result });
  const obj = { type: 'object', properties: {} };
  switch (m.method) {
    case 'initialize':
      return ok({
        protocolVersion: m.params.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'smoke', version: '1.0.0' },
      });
    case 'tools/list':
      return ok({
        tools: [
          { name: 'double', inputSchema: { type: 'object', properties: { n: { type: 'number' } }, required: ['n'] } },
          { name: 'pids', inputSchema: obj },
        ],
      });
    case 'tools/call': {
      const { name, arguments: args } = m.params;
      const data = name === 'double'
        ? { doubled: args.n * 2 }
        : { server: process.pid, grandchild: grandchild.pid, platform: process.platform, arch: process.arch };
      return ok({ content: [{ type: 'text', text: JSON.stringify(data) }], structuredContent: data });
    }
    default:
      return send({ jsonrpc: '2.0', id: m.id, error: { code: -32601, message: 'no such method' } });
  }
}
