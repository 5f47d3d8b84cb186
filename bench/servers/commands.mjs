// How each benchmark server is started: the command, arguments and whole environment, shared by
// bench/case.mjs (the Node clients) and bench/floor.mjs (the Rust floor), so both talk to the
// same server. `kind: 'http'`: the server prints its URL on stdout.
import { fileURLToPath } from 'node:url';

const here = (p) => fileURLToPath(new URL(p, import.meta.url));

/** `{ kind: 'stdio' | 'http', command, args, env }` for a transport of bench/case.mjs. */
export function serverCommand(transport, tools) {
  // The servers run on BENCH_SERVER_NODE when it is set (bench/runtimes.mjs: the same server
  // for a client on every runtime), on the client's own runtime otherwise.
  const runtime = process.env.BENCH_SERVER_NODE ?? process.execPath;
  const node = (script, env, kind = 'stdio') => ({ kind, command: runtime, args: [here(script)], env: { ...env, TOOLS: String(tools) } });
  switch (transport) {
    case 'stdio-fast':
      return node('./fast-stdio.mjs', { PATH: process.env.PATH });
    case 'stdio-fast-2026':
      return node('./fast-stdio.mjs', { PATH: process.env.PATH, MODERN: '1' });
    case 'stdio-sdk':
      return node('./sdk-server.mjs', { PATH: process.env.PATH });
    // Stateless: no session, every POST answered with JSON.
    case 'http-fast':
    case 'http-fast-2026':
      return node('./fast-http.mjs', { ...process.env, MODERN: transport === 'http-fast-2026' ? '1' : '0' }, 'http');
    // Stateful: the SDK's transport with a session per client, every POST answered as an event
    // stream.
    case 'http':
      return node('./sdk-server.mjs', { ...process.env, HTTP_PORT: '0' }, 'http');
  }
  return undefined;
}
