// A minimal newline-delimited JSON-RPC server without the SDK: client overhead dominates.
// MODERN=1: it speaks only 2026-07-28 (refuses initialize, answers server/discover, marks every
// result `resultType: 'complete'`), the same tools and answers otherwise.
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
const modern = process.env.MODERN === '1';
createInterface({ input: process.stdin }).on('line', (line) => {
  const msg = JSON.parse(line);
  if (msg.id === undefined) return;
  if (modern) return answerModern(msg);
  switch (msg.method) {
    case 'initialize':
      return send({
        jsonrpc: '2.0',
        id: msg.id,
        result: { protocolVersion: msg.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'fast', version: '1' } },
      });
    case 'tools/list':
      return send({ jsonrpc: '2.0', id: msg.id, result: listPage(tools, msg.params?.cursor) });
    case 'tools/call':
      return send({ jsonrpc: '2.0', id: msg.id, result: callResult(msg.params.name, msg.params.arguments) });
    default:
      return send({ jsonrpc: '2.0', id: msg.id, result: {} });
  }
});

function answerModern(msg) {
  const done = (result) => send({ jsonrpc: '2.0', id: msg.id, result: { resultType: 'complete', ...result } });
  switch (msg.method) {
    case 'initialize':
      return send({ jsonrpc: '2.0', id: msg.id, error: { code: -32022, message: 'Unsupported protocol version', data: { supported: ['2026-07-28'] } } });
    case 'server/discover':
      return done({ supportedVersions: ['2026-07-28'], capabilities: { tools: {} }, serverInfo: { name: 'fast', version: '1' } });
    case 'tools/list':
      return done({ ...listPage(tools, msg.params?.cursor), ttlMs: 0, cacheScope: 'private' });
    case 'tools/call':
      return done(callResult(msg.params.name, msg.params.arguments));
    default:
      return done({});
  }
}
