// A minimal newline-delimited JSON-RPC server without the SDK: client overhead dominates.
import { createInterface } from 'node:readline';
import { callResult, listPage, makeTools } from './tools.mjs';

const tools = makeTools(Number(process.env.TOOLS ?? 10));
const out = [];
let scheduled = false;
const send = (obj) => {
  out.push(JSON.stringify(obj));
  if (!scheduled) {
    scheduled = true;
    setImmediate(() => {
      scheduled = false;
      process.stdout.write(`${out.join('\n')}\n`);
      out.length = 0;
    });
  }
};
createInterface({ input: process.stdin }).on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  switch (msg.method) {
    case 'initialize':
      return send({ jsonrpc: '2.0', id: msg.id, result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'fast', version: '1' } } });
    case 'tools/list':
      return send({ jsonrpc: '2.0', id: msg.id, result: listPage(tools, msg.params?.cursor) });
    case 'tools/call':
      return send({ jsonrpc: '2.0', id: msg.id, result: callResult(msg.params.name, msg.params.arguments) });
    default:
      return send({ jsonrpc: '2.0', id: msg.id, result: {} });
  }
});
