// Confined stdio servers (`sandbox`, Linux: Landlock applied between fork and exec), against
// real servers: the fixture of fixtures/sandbox/ (a file read, a write, a TCP connect to a
// loopback canary listener that counts what it accepts, a grandchild's read), started directly
// and through an npx-style wrapper, and the npm reference servers filesystem and memory under a
// policy that grants exactly their directories. Also: the policy in the lock's identity, the
// unsupported right refused or warned about once, and a denial that says a sandbox was in force.
import { closeSync, mkdirSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, lockText, mcp } from '../lib/index.js';
import { closeAfterEach, rejection, session, thrown } from './helpers/common.js';
import { referenceBin } from './helpers/servers.js';

const keep = closeAfterEach();
const here = fileURLToPath(new URL('./fixtures/sandbox/', import.meta.url));
const root = fileURLToPath(new URL('..', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'rulvar-sandbox-'));
const inside = join(work, 'granted');
const outside = join(work, 'secret');
mkdirSync(inside);
mkdirSync(outside);
writeFileSync(join(inside, 'note.txt'), 'inside');
writeFileSync(join(outside, 'canary.txt'), 'CANARY');

// A loopback listener that counts the connections it accepted.
let listener: net.Server;
let port = 0;
let accepted = 0;
beforeAll(async () => {
  listener = net.createServer((socket) => {
    accepted++;
    socket.destroy();
  });
  await new Promise<void>((r) => listener.listen(0, '127.0.0.1', r));
  port = (listener.address() as net.AddressInfo).port;
});
afterAll(() => listener.close());

const confined = (sandbox: Record<string, unknown>, args = [join(here, 'server.mjs')]) =>
  keep(mcp({ transport: 'stdio', command: process.execPath, args, stderr: 'pipe', sandbox: { fs: { read: [here, inside] }, ...sandbox } } as any));

function opens(path: string): boolean {
  try {
    closeSync(openSync(path, 'r'));
    return true;
  } catch {
    return false;
  }
}

async function toolsOf(source: any) {
  return Object.fromEntries((await source.tools(session)).map((d: any) => [d.name, d]));
}

describe.runIf(process.platform === 'linux')('a confined stdio server (Landlock)', () => {
  it('reads what fs.read grants and gets EACCES outside it; writes only where fs.write grants', async () => {
    const by = await toolsOf(confined({ fs: { read: [here, inside], write: [inside] } }));
    expect(await by.read.execute({ path: join(inside, 'note.txt') }, session)).toBe('inside');
    expect(await by.read.execute({ path: join(outside, 'canary.txt') }, session)).toBe('EACCES');
    expect(await by.read.execute({ path: '/etc/shadow' }, session)).toBe('EACCES');
    // Not /dev as a whole: a disk's blocks or the kernel's log are not the system's runtime.
    // The device taken is one this test process (unconfined) can open.
    const device = ['/dev/sda', '/dev/vda', '/dev/nvme0n1', '/dev/loop0', '/dev/kmsg'].find(opens);
    expect(device).toBeDefined();
    expect(await by.read.execute({ path: device }, session)).toBe('EACCES');
    expect(await by.write.execute({ path: join(inside, 'out.txt') }, session)).toBe('written');
    expect(await by.write.execute({ path: join(outside, 'out.txt') }, session)).toBe('EACCES');
  });

  it("net: 'deny' leaves the canary listener untouched; { connect: [its port] } reaches it", async () => {
    const before = accepted;
    const denied = await toolsOf(confined({ net: 'deny' }));
    expect(await denied.connect.execute({ port }, session)).toBe('EACCES');
    expect(accepted).toBe(before);
    const granted = await toolsOf(confined({ net: { connect: [port] } }));
    expect(await granted.connect.execute({ port }, session)).toBe('connected');
    await new Promise((r) => setTimeout(r, 50));
    expect(accepted).toBe(before + 1);
  });

  it('through an npx-style wrapper the server still starts, and it and its own children are confined alike', async () => {
    const by = await toolsOf(confined({}, [join(here, 'wrapper.mjs'), join(here, 'server.mjs')]));
    expect(await by.read.execute({ path: join(inside, 'note.txt') }, session)).toBe('inside');
    expect(await by.read.execute({ path: join(outside, 'canary.txt') }, session)).toBe('EACCES');
    expect(await by['child-read'].execute({ path: join(outside, 'canary.txt') }, session)).toBe('EACCES');
    expect(await by['child-read'].execute({ path: join(inside, 'note.txt') }, session)).toBe('inside');
  });

  it('server-filesystem cannot read outside its granted directory, even with its own allow-list widened to /', async () => {
    const source = keep(
      mcp({
        transport: 'stdio',
        command: process.execPath,
        args: [referenceBin('filesystem'), inside, '/'],
        stderr: 'pipe',
        sandbox: { fs: { read: [join(root, 'node_modules'), inside], write: [inside] } },
      } as any),
    );
    const by = await toolsOf(source);
    const read = by.read_text_file ?? by.read_file;
    expect(JSON.stringify(await read.execute({ path: join(inside, 'note.txt') }, session))).toContain('inside');
    const err = await rejection(read.execute({ path: join(outside, 'canary.txt') }, session));
    expect(err.message).toMatch(/EACCES|permission denied/i);
    expect(err.message).not.toContain('CANARY');
  });

  it('server-memory imports and answers, writing only its granted file', async () => {
    const source = keep(
      mcp({
        transport: 'stdio',
        command: process.execPath,
        args: [referenceBin('memory')],
        env: { MEMORY_FILE_PATH: join(inside, 'memory.jsonl') },
        stderr: 'pipe',
        sandbox: { fs: { read: [join(root, 'node_modules')], write: [inside] } },
      } as any),
    );
    const by = await toolsOf(source);
    await by.create_entities.execute({ entities: [{ name: 'a', entityType: 't', observations: ['o'] }] }, session);
    expect(JSON.stringify(await by.read_graph.execute({}, session))).toContain('"name":"a"');
  });

  it('limits.openFiles bounds the descriptors the server holds at once', async () => {
    const open = await toolsOf(confined({}));
    expect(await open['open-many'].execute({ path: join(inside, 'note.txt'), count: 200 }, session)).toBe('200');
    const limited = await toolsOf(confined({ limits: { openFiles: 64 } }));
    expect(await limited['open-many'].execute({ path: join(inside, 'note.txt'), count: 200 }, session)).toBe('EMFILE');
  });

  it('a denial says a sandbox was in force, and which policy, beside the stderr tail', async () => {
    // The server's own script is not granted: Node cannot read it and exits.
    const source = keep(
      mcp({ transport: 'stdio', command: process.execPath, args: [join(here, 'server.mjs')], stderr: 'pipe', sandbox: { fs: { read: [inside] } } } as any),
    );
    const err = await rejection(source.tools(session));
    expect(err.message).toMatch(/EACCES|permission denied/i);
    expect(err.message).toContain(`(a sandbox was in force: the server reads ${inside} (and the system's runtime), writes nothing, no network)`);
  });

  it('a right the kernel cannot confine (a host, not a port) is refused typed; with warn the server starts and the first call is told once', async () => {
    const refused = confined({ net: { connect: [`127.0.0.1:${port}`] } });
    const err = await rejection(refused.tools(session));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(
      `mcp: the sandbox cannot be enforced as declared on linux (connect to host '127.0.0.1' (TCP is confined by port only: '*:${port}')); loosen it, or set sandbox.onUnsupported: 'warn' to start the server with what can be enforced`,
    );
    const warned = confined({ net: { connect: [`127.0.0.1:${port}`] }, onUnsupported: 'warn' });
    const by = await toolsOf(warned);
    const logged: string[] = [];
    const ctx = { runId: 'r', log: (_level: string, msg: string) => logged.push(msg) };
    expect(await by.connect.execute({ port }, ctx)).toBe('connected');
    await by.read.execute({ path: join(inside, 'note.txt') }, ctx);
    expect(logged).toEqual([expect.stringMatching(/^mcp: 'mcp:stdio:.*': connect to host '127\.0\.0\.1'/)]);
  });

  it('the policy is part of the identity: a lock written under one refuses a looser one', async () => {
    const strict = confined({ net: 'deny' });
    await strict.tools(session);
    const lock = JSON.parse(await lockText(strict));
    expect(lock.source.sandbox).toEqual({ fs: { read: [here, inside].sort(), write: [] }, net: 'deny' });
    // Refused as the source is made, before any process starts.
    const err = thrown(() =>
      mcp({
        transport: 'stdio',
        command: process.execPath,
        args: [join(here, 'server.mjs')],
        stderr: 'pipe',
        lock,
        sandbox: { fs: { read: [here, inside] }, net: 'allow' },
      } as any),
    );
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toMatch(/^mcp: the lock is for another source than 'mcp:stdio:.*' \(source\.sandbox\.net changed \(was "deny", now "allow"\)\)/);
  });
});

describe('the policy in the authority hash', () => {
  it('tools of a confined source carry its digest (not enumerable); a looser policy is another authority', async () => {
    const { resolveToolset } = await import('../lib/index.js');
    const of = async (sandbox?: Record<string, unknown>) => {
      const source = keep(
        mcp({ transport: 'stdio', command: process.execPath, args: [join(here, 'server.mjs')], stderr: 'pipe', ...(sandbox ? { sandbox } : {}) } as any),
      );
      const defs = await source.tools(session);
      return { defs, resolved: await resolveToolset(defs, session) };
    };
    const open = await of();
    const strict = await of({ fs: { read: [here] }, net: 'deny' });
    const looser = await of({ fs: { read: [here] }, net: 'allow' });
    expect(Object.keys(strict.defs[0])).toEqual(Object.keys(open.defs[0]));
    expect((strict.defs[0] as any).sandbox).toMatch(/^[0-9a-f]{64}$/);
    expect((open.defs[0] as any).sandbox).toBeUndefined();
    // The same contracts: the toolset hash is the same; the authority is not.
    expect(strict.resolved.hash).toBe(open.resolved.hash);
    expect(new Set([open.resolved.authorityHash, strict.resolved.authorityHash, looser.resolved.authorityHash]).size).toBe(3);
  });
});

describe.runIf(process.platform === 'linux')('rulvar-mcp with --sandbox-*', () => {
  it('tries a server confined before it is wired into an engine', async () => {
    const { execFile } = await import('node:child_process');
    const cli = join(root, 'bin', 'rulvar-mcp.js');
    const run = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
        execFile(process.execPath, [cli, ...args], { timeout: 20_000 }, (err: any, stdout, stderr) =>
          resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr }),
        ),
      );
    const server = `"${process.execPath}" "${join(here, 'server.mjs')}"`;
    const outsideRead = await run(['call', 'read', JSON.stringify({ path: join(outside, 'canary.txt') }), '--stdio', server, '--sandbox-read', here]);
    expect(outsideRead.stdout.trim()).toBe('EACCES');
    const unconfined = await run(['call', 'read', JSON.stringify({ path: join(outside, 'canary.txt') }), '--stdio', server]);
    expect(unconfined.stdout.trim()).toBe('CANARY');
    const connect = await run(['call', 'connect', JSON.stringify({ port }), '--stdio', server, '--sandbox-read', here, '--sandbox-net', String(port)]);
    expect(connect.stdout.trim()).toBe('connected');
    const overHttp = await run(['inspect', '--http', 'http://127.0.0.1:1/mcp', '--sandbox-net', 'deny']);
    expect(overHttp.code).toBe(2);
    expect(overHttp.stderr).toContain('the --sandbox-* flags confine a stdio server: give them with --stdio');
  });
});
