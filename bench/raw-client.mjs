// The floor: a bare JSON-RPC client in Node with no SDK, no validation and no tool objects
// beyond a name and an execute. It shows how fast the pipe (or, in-process, the server alone)
// allows any Node client to go, so a ratio against the baseline can be read against what is
// possible.
import { spawn } from 'node:child_process';
import http from 'node:http';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';

/**
 * A `data` handler calling `onLine` with each line of the text stream, without its newline:
 * lines are read where they lie in each chunk, from a moving offset, so what is left of a chunk
 * is never copied again; only a line split across chunks is joined, once its end arrives.
 */
export function lines(onLine) {
  let partial = '';
  return (chunk) => {
    let start = 0;
    let end = chunk.indexOf('\n');
    if (end < 0) {
      partial += chunk;
      return;
    }
    if (partial !== '') {
      onLine(partial + chunk.slice(0, end));
      partial = '';
      start = end + 1;
      end = chunk.indexOf('\n', start);
    }
    while (end >= 0) {
      onLine(chunk.slice(start, end));
      start = end + 1;
      end = chunk.indexOf('\n', start);
    }
    if (start < chunk.length) partial = chunk.slice(start);
  };
}

function stdioRpc(target) {
  const child = spawn(target.command, target.args, { env: target.env, stdio: ['pipe', 'pipe', 'inherit'] });
  const pending = new Map();
  const settle = (line) => {
    const m = JSON.parse(line);
    const resolve = pending.get(m.id);
    if (resolve !== undefined) {
      pending.delete(m.id);
      resolve(m);
    }
  };
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', lines(settle));
  let id = 0;
  return {
    request: (method, params) =>
      new Promise((resolve) => {
        id += 1;
        pending.set(id, resolve);
        child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', id, method, params })}\n`);
      }),
    notify: (method, params) => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', method, params })}\n`),
    close: () => child.kill(),
  };
}

function httpRpc(target) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: Infinity });
  const headers = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
  let id = 0;
  const post = (body) =>
    new Promise((resolve, reject) => {
      const req = http.request(target.url, { method: 'POST', agent, headers }, (res) => {
        const sid = res.headers['mcp-session-id'];
        if (sid !== undefined) headers['mcp-session-id'] = sid;
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (text += d));
        res.on('end', () => {
          const data = text.startsWith('{')
            ? text
            : text
                .split('\n')
                .find((l) => l.startsWith('data: '))
                ?.slice(6);
          resolve(data === undefined ? undefined : JSON.parse(data));
        });
      });
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
  return {
    request: (method, params) => post({ jsonrpc: '2.0', id: ++id, method, params }),
    notify: (method, params) => post({ jsonrpc: '2.0', method, params }),
    close: () => agent.destroy(),
  };
}

// In-process: the server object connected to one end of the SDK's linked pair, the requests
// handed to it as objects and its replies taken as they come, with no text in between.
function inMemoryRpc(target) {
  const [client, end] = InMemoryTransport.createLinkedPair();
  const connected = target.server.connect(end);
  const pending = new Map();
  client.onmessage = (m) => {
    const resolve = pending.get(m.id);
    if (resolve !== undefined) {
      pending.delete(m.id);
      resolve(m);
    }
  };
  let id = 0;
  return {
    connected,
    request: (method, params) =>
      new Promise((resolve) => {
        id += 1;
        pending.set(id, resolve);
        client.send({ jsonrpc: '2.0', id, method, params });
      }),
    notify: (method, params) => client.send({ jsonrpc: '2.0', method, params }),
    close: () => client.close(),
  };
}

export function rawSource(target) {
  const rpc = target.kind === 'stdio' ? stdioRpc(target) : target.kind === 'http' ? httpRpc(target) : inMemoryRpc(target);
  return {
    async tools() {
      await rpc.connected;
      await rpc.request('initialize', { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } });
      await rpc.notify('notifications/initialized', {});
      const listed = [];
      let cursor;
      do {
        const page = (await rpc.request('tools/list', cursor === undefined ? {} : { cursor })).result;
        listed.push(...page.tools);
        cursor = page.nextCursor;
      } while (cursor !== undefined);
      return listed.map((t) => ({
        name: t.name,
        parameters: t.inputSchema,
        async execute(input) {
          const { result } = await rpc.request('tools/call', { name: t.name, arguments: input ?? {} });
          return result.structuredContent ?? result.content.map((c) => c.text).join('');
        },
      }));
    },
    async close() {
      rpc.close();
    },
  };
}
