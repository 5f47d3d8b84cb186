// The runtime matrix: the package under Node 20 (this machine's), Node 22 and 24, Bun and Deno,
// each installed from its npm package into a tool folder of its own (pinned by
// __test__/runtimes/package-lock.json; nothing is downloaded from outside the registry), each
// running __test__/runtimes/smoke.mjs: the public entry points, stdio, HTTP and in-process,
// tools(), a result, a refusal and an abort, close() with no child left, a worker thread, and
// the process ending by itself.
import { execFileSync, spawn } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../examples/server.mjs';
import { type HttpServer, serveHttp } from './helpers/harness.js';
import { installRuntimes, NODE_18, RUNTIMES } from './runtimes/install.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const smoke = join(root, '__test__', 'runtimes', 'smoke.mjs');

/** Runs the smoke under one runtime: its exit code (null when it had to be killed) and output. */
function run(command: string[], url: string): Promise<{ code: number | null; out: string; err: string }> {
  return new Promise((resolve) => {
    const child = spawn(command[0], [...command.slice(1), smoke], {
      env: { ...process.env, SMOKE_NODE: process.execPath, SMOKE_URL: url, NO_COLOR: '1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    // Ending by itself is part of the check: a process still there after this is killed.
    const stuck = setTimeout(() => child.kill('SIGKILL'), 45_000);
    child.on('exit', (code) => {
      clearTimeout(stuck);
      resolve({ code, out, err });
    });
  });
}

let http: HttpServer;
beforeAll(async () => {
  installRuntimes();
  http = await serveHttp(buildServer, false);
}, 300_000);
afterAll(async () => {
  await http?.stop();
});

describe('every supported runtime', () => {
  for (const [name, command] of RUNTIMES as Array<[string, string[]]>) {
    it(`${name}: stdio, HTTP, in-process and a worker; the process ends by itself`, async () => {
      const { code, out, err } = await run(command, http.url);
      expect(code, `${out}\n${err}`).toBe(0);
      const seen = JSON.parse(out.trim().split('\n').pop() ?? '{}');
      expect(seen.sameEntry).toBe(true);
      for (const transport of ['stdio', 'http', 'inprocess']) {
        expect(seen[transport], transport).toEqual({
          tools: 4,
          result: { doubled: 42 },
          refusal: expect.stringMatching(/^mcp: invalid input for tool 'double'/),
          aborted: "mcp: tool 'echo' was aborted",
        });
      }
      expect(seen.childrenAfterClose).toBe(0);
      expect(seen.worker).toEqual({ tools: 4, result: { doubled: 4 } });
    }, 60_000);
  }
});

describe('an unsupported runtime', () => {
  it('Node 18 is refused at load by an error that names it, at once', () => {
    let failed = '';
    try {
      execFileSync(NODE_18, ['-e', `require(${JSON.stringify(join(root, 'lib', 'index.js'))})`], { stdio: 'pipe', timeout: 10_000 });
    } catch (err: any) {
      failed = String(err.stderr);
    }
    expect(failed).toContain('Error: @rulvar/mcp-native needs Node 20 or later, Bun 1.4 or later, or Deno 2.9 or later; this is node 18.20.8');
  });
});
