// The floor: a bare JSON-RPC client in Node with no SDK, no validation and no tool objects
// beyond a name and an execute. It shows how fast the pipe and the server allow any Node
// client to go, so a ratio against the baseline can be read against what is possible.
import { spawn } from 'node:child_process';
import http from 'node:http';

function stdioRpc(target) {
  const child = spawn(target.command, target.args, { env: target.env, stdio: ['pipe', 'pipe', 'inherit'] });
  const pending = new Map();
  let buf = '';
  child.stdout.setEncoding('utf8');
  child.stdout.on('data', (d) => {
    buf += d;
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const m = JSON.parse(buf.slice(0, i));
      buf = buf.slice(i + 1);
      const settle = pending.get(m.id);
      if (settle !== undefined) {
        pending.delete(m.id);
        settle(m);
      }
    }
  });
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

export function rawSource(target) {
  const rpc = target.kind === 'stdio' ? stdioRpc(target) : httpRpc(target);
  return {
    async tools() {
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
