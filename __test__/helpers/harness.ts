// Runs one server factory behind each transport the addon speaks, so a behaviour is tested
// the same way in-process, as a stdio child, and over HTTP (stateless and stateful).
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { scenarioServer } from '../fixtures/scenarios.mjs';

export type Mode = 'inprocess' | 'stdio' | 'http-stateless' | 'http-stateful';
export const MODES: Mode[] = ['inprocess', 'stdio', 'http-stateless', 'http-stateful'];

export const fixture = (name: string) => fileURLToPath(new URL(`../fixtures/${name}`, import.meta.url));
export const example = (name: string) => fileURLToPath(new URL(`../../examples/${name}`, import.meta.url));

export interface Served {
  config: Record<string, unknown>;
  listCalls(): number;
  /** Every request the HTTP server saw: method and headers. */
  requests: Array<{ method: string; headers: http.IncomingHttpHeaders }>;
  stop(): Promise<void>;
}

export interface HttpServer {
  url: string;
  requests: Array<{ method: string; headers: http.IncomingHttpHeaders }>;
  /** Sessions the server holds open (stateful only). */
  sessions(): number;
  stop(): Promise<void>;
}

/** An SDK server over streamable HTTP on 127.0.0.1 (an ephemeral port). */
export async function serveHttp(factory: () => any, stateful: boolean): Promise<HttpServer> {
  const requests: HttpServer['requests'] = [];
  const sessions = new Map<string, StreamableHTTPServerTransport>();
  const servers: any[] = [];
  const server = http.createServer(async (req, res) => {
    requests.push({ method: req.method ?? '', headers: req.headers });
    try {
      if (!stateful) {
        if (req.method !== 'POST') {
          res.writeHead(405).end();
          return;
        }
        const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
        const mcpServer = factory();
        servers.push(mcpServer);
        res.on('close', () => {
          void transport.close();
          void mcpServer.close();
          servers.splice(servers.indexOf(mcpServer) >>> 0, 1);
        });
        await mcpServer.connect(transport);
        await transport.handleRequest(req, res);
        return;
      }
      const sid = req.headers['mcp-session-id'];
      let transport = typeof sid === 'string' ? sessions.get(sid) : undefined;
      if (transport === undefined) {
        if (typeof sid === 'string') {
          res.writeHead(404).end();
          return;
        }
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (id) => sessions.set(id, created),
        });
        const mcpServer = factory();
        servers.push(mcpServer);
        await mcpServer.connect(created);
        // After connect: the server installed its own onclose, which this one chains.
        const serverOnClose = created.onclose;
        created.onclose = () => {
          serverOnClose?.();
          if (created.sessionId) sessions.delete(created.sessionId);
          servers.splice(servers.indexOf(mcpServer) >>> 0, 1);
        };
        transport = created;
      }
      await transport.handleRequest(req, res);
    } catch (err) {
      if (!res.headersSent) res.writeHead(500).end(String(err));
    }
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    requests,
    sessions: () => sessions.size,
    async stop() {
      for (const t of sessions.values()) await t.close().catch(() => {});
      for (const s of servers) await s.close().catch(() => {});
      server.closeAllConnections();
      await new Promise<void>((r) => server.close(() => r()));
    },
  };
}

/** Serves a scenario of fixtures/scenarios.mjs behind `mode`. */
export async function serveScenario(mode: Mode, scenario: string): Promise<Served> {
  let calls = 0;
  const count = () => ++calls;
  const factory = () => scenarioServer(scenario, count);
  if (mode === 'inprocess') {
    return {
      config: { transport: 'inprocess', server: factory() },
      listCalls: () => calls,
      requests: [],
      stop: async () => {},
    };
  }
  if (mode === 'stdio') {
    const countFile = join(mkdtempSync(join(tmpdir(), 'rulvar-')), 'count');
    return {
      config: {
        transport: 'stdio',
        command: process.execPath,
        args: [fixture('scenarios.mjs')],
        env: { SCENARIO: scenario, COUNT_FILE: countFile },
        stderr: 'ignore',
      },
      listCalls: () => (existsSync(countFile) ? readFileSync(countFile, 'utf8').split('\n').filter(Boolean).length : 0),
      requests: [],
      stop: async () => {},
    };
  }
  // A stateless server is built afresh per request, so all of them share one counter.
  const served = await serveHttp(factory, mode === 'http-stateful');
  return {
    config: { transport: 'streamable-http', url: served.url },
    listCalls: () => calls,
    requests: served.requests,
    stop: served.stop,
  };
}

/** True while a process exists and is not a zombie. */
export function running(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * This process's direct children that are still running. A child is listed under the thread
 * that forked it, and the addon forks on threads of its own, so every thread's list is read.
 */
export function liveChildren(pid = process.pid): number[] {
  const found = new Set<number>();
  for (const task of readdirSync(`/proc/${pid}/task`)) {
    let listed = '';
    try {
      listed = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      continue; // the thread ended while we looked
    }
    for (const child of listed.split(' ').filter(Boolean).map(Number)) found.add(child);
  }
  return [...found].filter(running);
}

export async function waitFor(check: () => boolean, ms = 3000): Promise<boolean> {
  const end = Date.now() + ms;
  while (!check() && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
  return check();
}

export interface Host {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  /** The exit code (null when killed), or null after `ms` (the host is then killed). */
  exited(ms?: number): Promise<number | null>;
}

/**
 * A fresh Node process running `body` (an async function body, CommonJS) with the package's
 * `mcp` in scope: what a host script sees, its own event loop, exit and stderr included.
 */
export function startHost(body: string, options: { env?: NodeJS.ProcessEnv } = {}): Host {
  const lib = fileURLToPath(new URL('../../lib/index.js', import.meta.url));
  const script = `
    const { mcp } = require(${JSON.stringify(lib)});
    (async () => { ${body} })().catch((e) => { console.error(e); process.exitCode = 1; });
  `;
  const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'pipe'], env: options.env ?? process.env });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d) => (out += d));
  child.stderr!.on('data', (d) => (err += d));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return {
    child,
    stdout: () => out,
    stderr: () => err,
    exited: (ms = 5000) =>
      Promise.race([
        exit,
        new Promise<null>((resolve) =>
          setTimeout(() => {
            child.kill('SIGKILL');
            resolve(null);
          }, ms),
        ),
      ]),
  };
}

/** Runs `body` in a fresh host to its end: exit code, time, stdout and stderr together. */
export async function runHost(body: string, ms = 5000): Promise<{ code: number | null; ms: number; out: string; err: string }> {
  const started = Date.now();
  const host = startHost(body);
  const code = await host.exited(ms);
  return { code, ms: Date.now() - started, out: host.stdout() + host.stderr(), err: host.stderr() };
}
