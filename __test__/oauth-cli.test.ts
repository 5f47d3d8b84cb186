// rulvar-mcp --oauth: the CLI's login against a real protected server (helpers/oauth-servers.ts),
// through its loopback redirect listener, and its token file store driven by several processes.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { closeAfterEach } from './helpers/common.js';
import { type Protected, serveAuthServer, serveProtected } from './helpers/oauth-servers.js';

const closing = closeAfterEach();

describe('rulvar-mcp --oauth (the CLI login)', () => {
  const cli = fileURLToPath(new URL('../bin/rulvar-mcp.js', import.meta.url));
  const login = (served: Protected, store: string) => {
    const child = spawn(process.execPath, [cli, 'inspect', '--json', '--oauth', '--oauth-store', store, '--http', served.url], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    let stdout = '';
    child.stdout.on('data', (c) => (stdout += c));
    const printed = new Promise<string>((resolve) => {
      child.stderr.on('data', (c) => {
        stderr += c;
        const m = /^\s+(https?:\/\/\S+)$/m.exec(stderr);
        if (m) resolve(m[1]);
      });
    });
    const exited = new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) =>
      child.on('exit', (code) => resolve({ code, stdout, stderr })),
    );
    closing.defer(() => child.kill());
    return { printed, exited };
  };
  const publicServer = async () => {
    const served = closing(await serveProtected());
    const a = closing(await serveAuthServer(served.valid));
    served.prm = () => ({ resource: served.url, authorization_servers: [a.base] });
    return served;
  };

  it('a /callback with another state gets 400 and the login keeps waiting', async () => {
    const served = await publicServer();
    const store = join(mkdtempSync(join(tmpdir(), 'rulvar-oauth-')), 'oauth.json');
    const { printed, exited } = login(served, store);
    const u = new URL(await printed);
    const back = new URL(u.searchParams.get('redirect_uri')!);
    back.searchParams.set('code', 'attacker-code');
    back.searchParams.set('state', 'not-the-state');
    expect((await fetch(back)).status).toBe(400);
    back.searchParams.delete('state');
    expect((await fetch(back)).status).toBe(400);
    back.searchParams.set('code', 'code-of-the-user');
    back.searchParams.set('state', u.searchParams.get('state')!);
    expect((await fetch(back)).status).toBe(200);
    const r = await exited;
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).tools.length).toBeGreaterThan(0);
    const saved = JSON.parse(readFileSync(store, 'utf8'));
    expect(saved[`oauth:tokens:${served.url}`].access_token).toMatch(/^other-access-/);
    expect(readdirSync(dirname(store)).sort()).toEqual(['oauth.json']); // no temp or lock file left
  });

  it('refuses to overwrite a store it cannot parse', async () => {
    const served = await publicServer();
    const store = join(mkdtempSync(join(tmpdir(), 'rulvar-oauth-')), 'oauth.json');
    writeFileSync(store, '{"oauth:tokens:x": {"access_token": "half-writ');
    const { exited } = login(served, store);
    const r = await exited;
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(/the OAuth store '.*' is not a JSON object; it is left as it is/);
    expect(readFileSync(store, 'utf8')).toBe('{"oauth:tokens:x": {"access_token": "half-writ');
  });
});

describe('the CLI file store', () => {
  it('loses no key when several processes save at once', async () => {
    const cli = fileURLToPath(new URL('../bin/rulvar-mcp.js', import.meta.url));
    const dir = mkdtempSync(join(tmpdir(), 'rulvar-oauth-'));
    const store = join(dir, 'oauth.json');
    const writer = (n: number) =>
      new Promise<number | null>((resolve) => {
        const script = `const { fileStore } = require(${JSON.stringify(cli)});
          const s = fileStore(${JSON.stringify(store)});
          for (let i = 0; i < 40; i++) s.save('k-${n}-' + i, { v: i });`;
        spawn(process.execPath, ['-e', script], { stdio: 'ignore' }).on('exit', resolve);
      });
    expect(await Promise.all([0, 1, 2, 3].map(writer))).toEqual([0, 0, 0, 0]);
    const saved = JSON.parse(readFileSync(store, 'utf8'));
    expect(Object.keys(saved).length).toBe(160);
    expect(readdirSync(dir)).toEqual(['oauth.json']);
  });
});
