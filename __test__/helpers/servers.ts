// Servers built with other SDKs, started as they are shipped: the npm reference servers (their
// package's bin) and the test server built with the official Rust SDK (`examples/rmcp_server.rs`,
// which `cargo test` builds). Each HTTP server listens on 127.0.0.1 at an ephemeral port.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { fixture } from './harness.js';

const require = createRequire(import.meta.url);
const root = fileURLToPath(new URL('../..', import.meta.url));

/** The script a reference server's package names as its bin. */
export function referenceBin(name: 'everything' | 'filesystem' | 'memory'): string {
  const pkg = require.resolve(`@modelcontextprotocol/server-${name}/package.json`);
  const bin = require(pkg).bin as Record<string, string>;
  return join(dirname(pkg), bin[`mcp-server-${name}`]);
}

/**
 * The rmcp test server binary. `cargo test` builds the examples into the cargo target directory
 * (CARGO_TARGET_DIR when set, else target/ here), as a debug build.
 */
export function rmcpServerBin(): string {
  const target = process.env.CARGO_TARGET_DIR ? resolve(root, process.env.CARGO_TARGET_DIR) : join(root, 'target');
  const bin = join(target, 'debug', 'examples', 'rmcp_server');
  if (!existsSync(bin)) {
    throw new Error(`${bin} is missing: run 'cargo test' (or 'cargo build --example rmcp_server') first`);
  }
  return bin;
}

export interface Listening {
  url: string;
  child: ChildProcess;
  /** What the server wrote to stdout and stderr so far (for failure messages). */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `command` and waits for the line that gives its port: `RULVAR_LISTENING <port>` (the
 * loopback preload, for Node servers) or `listening on http://127.0.0.1:<port>/mcp`.
 */
export async function listening(command: string, args: string[], env: NodeJS.ProcessEnv = {}, path = '/mcp'): Promise<Listening> {
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } });
  let output = '';
  const port = await new Promise<number>((resolvePort, reject) => {
    const timer = setTimeout(() => reject(new Error(`no port announced within 15s:\n${output}`)), 15_000);
    const seen = (d: Buffer) => {
      output += d;
      // Only a tail is kept: server-everything logs every request.
      if (output.length > 64 * 1024) output = output.slice(-32 * 1024);
      const m = /RULVAR_LISTENING (\d+)|listening on http:\/\/127\.0\.0\.1:(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolvePort(Number(m[1] ?? m[2]));
      }
    };
    child.stdout!.on('data', seen);
    child.stderr!.on('data', seen);
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the server exited with ${code} before listening:\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}${path}`,
    child,
    output: () => output,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** server-everything over streamable HTTP, bound to loopback by the preload. */
export function everythingHttp(): Promise<Listening> {
  const preload = pathToFileURL(fixture('loopback.mjs')).href;
  return listening(process.execPath, ['--import', preload, referenceBin('everything'), 'streamableHttp'], { PORT: '0' });
}

/** The local addresses (hex, as /proc/net lists them) on which something listens at `port`. */
export function listenAddresses(port: number): string[] {
  const found: string[] = [];
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text = '';
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue; // no IPv6 on this machine
    }
    for (const line of text.split('\n').slice(1)) {
      const [, local, , state] = line.trim().split(/\s+/);
      if (!local || state !== '0A') continue; // 0A: LISTEN
      const [address, hexPort] = local.split(':');
      if (parseInt(hexPort, 16) === port) found.push(address);
    }
  }
  return found;
}
