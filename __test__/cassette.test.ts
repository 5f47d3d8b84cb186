// Record and replay (`cassette`): a suite recorded against real servers (server-everything over
// stdio and streamable HTTP, a 2026-07-28 server built with the SDK 2.x that asks back through
// input_required, a 2026-07-28 task server), then replayed with no server at all: the command
// replaced by one that does not exist, the HTTP listener stopped. Results, logs, names and the
// toolset hash are the same; the file holds no secret of the config; re-recording a server
// that answers the same writes the same bytes; what was not recorded fails typed.
import { existsSync, mkdtempSync, readFileSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { CassetteError, ConfigError, mcp, toolsetHash } from '../lib/index.js';
import { cassettePath, readCassette, withCassette } from '../lib/testing.js';
import { rejection, session, thrown } from './helpers/common.js';
import { fixture, liveChildren } from './helpers/harness.js';
import { everythingHttp, referenceBin } from './helpers/servers.js';

const SECRET = 'sk-live-4f9a2c7e1b3d5f60';
const MISSING = '/nonexistent/bin/mcp-server';
const dir = mkdtempSync(join(tmpdir(), 'rulvar-cassettes-'));
let n = 0;
const freshPath = () => join(dir, `c${++n}.json`);

type Source = ReturnType<typeof mcp>;
type Logged = Array<[string, string, unknown]>;

/** Runs `suite` against `source` and closes it: what a host's test would assert on. */
async function run(source: Source, suite: (by: Record<string, any>, ctx: any) => Promise<unknown[]>) {
  const logged: Logged = [];
  // A progress token is this client's own, different each run; everything else must match.
  const ctx = { runId: 'r', log: (level: string, msg: string, data: any) => logged.push([level, msg, withoutToken(data)]) };
  try {
    const defs = await source.tools(session);
    const by = Object.fromEntries(defs.map((d: any) => [d.name, d]));
    const results = await suite(by, ctx);
    const again = await source.tools(session);
    return { names: again.map((d: any) => d.name), hash: toolsetHash(again as any), results, logged };
  } finally {
    await source.close();
  }
}

function withoutToken(data: any) {
  if (data === null || typeof data !== 'object') return data;
  const { progressToken: _, ...rest } = data;
  return rest;
}

const cassetteOf = (path: string) => JSON.parse(readFileSync(path, 'utf8'));

let before: Set<number>;
afterEach(() => {
  delete process.env.RULVAR_CASSETTE_MODE;
});

describe('server-everything over stdio', () => {
  const bin = referenceBin('everything');
  const source = (path: string, mode: string, command = process.execPath, extra: Record<string, unknown> = {}) =>
    mcp({
      transport: 'stdio',
      command,
      args: [bin, 'stdio'],
      env: { API_KEY: SECRET },
      stderr: 'ignore',
      cassette: { path, mode },
      ...extra,
    } as any);
  const suite = async (by: Record<string, any>, ctx: any) => [
    await by.echo.execute({ message: 'hi' }, ctx),
    await by['get-sum'].execute({ a: 2, b: 3 }, ctx),
    await by['get-structured-content'].execute({ location: 'Chicago' }, ctx),
    await by['trigger-long-running-operation'].execute({ duration: 0.2, steps: 2 }, ctx),
    await by['get-env'].execute({}, ctx),
  ];

  it('replays the recorded suite with no process: the same results, progress, names and toolset hash', async () => {
    const path = freshPath();
    const recorded = await run(source(path, 'record'), suite);
    expect(recorded.names.length).toBe(13);
    expect(recorded.logged.filter(([, msg]) => msg.startsWith('progress')).length).toBe(2);
    const file = cassetteOf(path);
    expect(file).toMatchObject({ rulvarCassette: 1, protocol: '2025-11-25', server: { name: expect.stringMatching(/everything/) } });
    expect(file.toolsetHash).toBe(recorded.hash);

    before = new Set(liveChildren());
    const replayed = await run(source(path, 'replay', MISSING), suite);
    expect(liveChildren().filter((pid) => !before.has(pid))).toEqual([]);
    expect(replayed.hash).toBe(recorded.hash);
    expect(replayed.names).toEqual(recorded.names);
    // get-env echoes the server's environment, the secret among it: replayed as recorded,
    // which is redacted. Every other result is the server's, unchanged.
    expect(replayed.results.slice(0, 4)).toEqual(recorded.results.slice(0, 4));
    expect(String(recorded.results[4])).toContain(SECRET);
    expect(String(replayed.results[4])).not.toContain(SECRET);
    expect(String(replayed.results[4])).toContain('"API_KEY": "[redacted]"');
    expect(replayed.logged).toEqual(recorded.logged);
    // A replay writes nothing; a second one gives the same, byte for byte.
    const text = readFileSync(path, 'utf8');
    const second = await run(source(path, 'replay', MISSING), suite);
    expect(JSON.stringify(second)).toBe(JSON.stringify(replayed));
    expect(readFileSync(path, 'utf8')).toBe(text);
  }, 30_000);

  it('keeps no secret of the config: env values are redacted wherever the server echoed them', async () => {
    const path = freshPath();
    await run(source(path, 'record'), async (by, ctx) => [await by['get-env'].execute({}, ctx), await by.echo.execute({ message: `key ${SECRET}` }, ctx)]);
    const text = readFileSync(path, 'utf8');
    expect(text).not.toContain(SECRET);
    expect(text).toContain('[redacted]');
    // The echoed secret in the call's own arguments is matched redacted, so the call replays.
    const replayed = await run(source(path, 'replay', MISSING), async (by, ctx) => [await by.echo.execute({ message: `key ${SECRET}` }, ctx)]);
    expect(replayed.results).toEqual(['Echo: key [redacted]']);
  }, 30_000);

  it('fails a call that was not recorded with a CassetteError naming the tool and the first difference', async () => {
    const path = freshPath();
    await run(source(path, 'record'), async (by, ctx) => [await by['get-sum'].execute({ a: 2, b: 3 }, ctx)]);
    const replay = source(path, 'replay', MISSING);
    try {
      const by = Object.fromEntries((await replay.tools(session)).map((d: any) => [d.name, d]));
      const err: any = await rejection(by['get-sum'].execute({ a: 2, b: 4 }, session));
      expect(err).toBeInstanceOf(CassetteError);
      expect(err.message).toBe(
        `mcp: cassette '${path}': no recorded call of tool 'get-sum' matches; it differs from the nearest recorded call at /arguments/b`,
      );
      expect(err.toWire()).toEqual({ code: 'cassette', message: err.message, retryable: false, tool: 'get-sum', pointer: '/arguments/b' });
      const never: any = await rejection(by.echo.execute({ message: 'x' }, session));
      expect(never.message).toBe(`mcp: cassette '${path}': no call of tool 'echo' was recorded`);
      expect(never.pointer).toBeUndefined();
      // Served once, as recorded: the same call again is not invented.
      expect(await by['get-sum'].execute({ a: 2, b: 3 }, session)).toBe('The sum of 2 and 3 is 5.');
      const twice: any = await rejection(by['get-sum'].execute({ a: 2, b: 3 }, session));
      expect(twice.message).toMatch(/tool 'get-sum' was called 2 times with these arguments; the cassette recorded 1$/);
    } finally {
      await replay.close();
    }
  }, 30_000);

  it('matches without the ignored argument paths', async () => {
    const path = freshPath();
    await run(source(path, 'record'), async (by, ctx) => [await by.echo.execute({ message: 'at 10:00' }, ctx)]);
    const replay = mcp({ transport: 'stdio', command: MISSING, args: [bin, 'stdio'], cassette: { path, ignore: { echo: ['/message'] } } } as any);
    const out = await run(replay, async (by, ctx) => [await by.echo.execute({ message: 'at 11:30' }, ctx)]);
    expect(out.results).toEqual(['Echo: at 10:00']);
  }, 30_000);

  it("mode 'auto' records once, then replays; RULVAR_CASSETTE_MODE=replay refuses to record", async () => {
    const path = freshPath();
    process.env.RULVAR_CASSETTE_MODE = 'replay';
    const err = await rejection(source(path, 'auto').tools(session));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(
      `mcp: cassette '${path}' does not exist (RULVAR_CASSETTE_MODE=replay: nothing is recorded); record it with mode 'record' or 'auto'`,
    );
    expect(existsSync(path)).toBe(false);
    delete process.env.RULVAR_CASSETTE_MODE;
    const first = await run(source(path, 'auto'), async (by, ctx) => [await by.echo.execute({ message: 'a' }, ctx)]);
    expect(existsSync(path)).toBe(true);
    const second = await run(source(path, 'auto', MISSING), async (by, ctx) => [await by.echo.execute({ message: 'a' }, ctx)]);
    expect(second.results).toEqual(first.results);
    // Forced to record, the same source starts the (missing) command again.
    process.env.RULVAR_CASSETTE_MODE = 'record';
    expect((await rejection(source(path, 'replay', MISSING).tools(session))).message).toMatch(/ENOENT|No such file|not found/i);
  }, 30_000);
});

describe('server-everything over streamable HTTP', () => {
  it('replays with the listener gone', async () => {
    const server = await everythingHttp();
    const path = freshPath();
    const suite = async (by: Record<string, any>, ctx: any) => [
      await by.echo.execute({ message: 'over http' }, ctx),
      await by['get-sum'].execute({ a: 40, b: 2 }, ctx),
      await by['trigger-long-running-operation'].execute({ duration: 0.2, steps: 2 }, ctx),
    ];
    let recorded: Awaited<ReturnType<typeof run>>;
    try {
      const source = mcp({
        transport: 'streamable-http',
        url: server.url,
        http: { headers: { authorization: `Bearer ${SECRET}` } },
        cassette: { path, mode: 'record' },
      });
      recorded = await run(source, suite);
    } finally {
      await server.stop();
    }
    expect(readFileSync(path, 'utf8')).not.toContain(SECRET);
    const replay = mcp({
      transport: 'streamable-http',
      url: server.url,
      http: { headers: { authorization: `Bearer ${SECRET}` } },
      cassette: { path, mode: 'replay' },
    });
    const replayed = await run(replay, suite);
    expect(replayed.results).toEqual(recorded.results);
    expect(replayed.logged).toEqual(recorded.logged);
    expect(replayed.hash).toBe(recorded.hash);
    expect(replayed.names).toEqual(recorded.names);
  }, 30_000);
});

describe('2026-07-28 servers', () => {
  const asking = (path: string, mode: string, command = process.execPath, hooks: Record<string, unknown> = {}) =>
    mcp({
      transport: 'stdio',
      command,
      args: [fixture('modern-asking.mjs')],
      env: { LEGACY: 'reject' },
      stderr: 'ignore',
      elicit: () => ({ action: 'accept', content: { confirm: true } }),
      sample: () => ({ role: 'assistant', content: { type: 'text', text: 'brief' }, model: 'm-2' }),
      roots: () => [{ uri: 'file:///srv' }],
      cassette: { path, mode },
      ...hooks,
    } as any);
  const asks = async (by: Record<string, any>, ctx: any) => [
    await by.deploy.execute({ env: 'prod' }, ctx),
    await by.brief.execute({}, ctx),
    await by.seen.execute({}, ctx),
  ];

  it('an SDK 2.x server asking through input_required: the hooks are asked again and the rounds replay', async () => {
    const path = freshPath();
    const recorded = await run(asking(path, 'record'), asks);
    expect(cassetteOf(path).protocol).toBe('2026-07-28');
    expect(JSON.parse(recorded.results[2] as string)).toEqual({ deploys: 1, retries: 1, stateEchoed: 1 });
    const asked: unknown[] = [];
    const replayed = await run(
      asking(path, 'replay', MISSING, {
        elicit: (request: unknown) => {
          asked.push(request);
          return { action: 'accept', content: { confirm: true } };
        },
      }),
      asks,
    );
    expect(replayed.results).toEqual(recorded.results);
    expect(replayed.hash).toBe(recorded.hash);
    expect(asked).toEqual([expect.objectContaining({ mode: 'form', message: 'Deploy to prod?' })]);
    // A different answer from the host is a different round: not recorded, refused.
    const other = asking(path, 'replay', MISSING, { elicit: () => ({ action: 'decline' }) });
    try {
      const by = Object.fromEntries((await other.tools(session)).map((d: any) => [d.name, d]));
      const err: any = await rejection(by.deploy.execute({ env: 'prod' }, session));
      expect(err).toBeInstanceOf(CassetteError);
      expect(err.pointer).toMatch(/^\/inputResponses\/confirm\//);
    } finally {
      await other.close();
    }
  }, 30_000);

  it('re-recording an unchanged server writes the same bytes', async () => {
    const [a, b] = [freshPath(), freshPath()];
    await run(asking(a, 'record'), asks);
    await run(asking(b, 'record'), asks);
    expect(readFileSync(b, 'utf8')).toBe(readFileSync(a, 'utf8'));
  }, 30_000);

  it('a task polled to its end replays with its status changes, its timestamps normalized', async () => {
    const tasks = (path: string, mode: string, command = process.execPath) =>
      mcp({ transport: 'stdio', command, args: [fixture('task-server.mjs')], stderr: 'ignore', tasks: true, cassette: { path, mode } } as any);
    const build = async (by: Record<string, any>, ctx: any) => [await by.build.execute({ target: 'app' }, ctx)];
    const [a, b] = [freshPath(), freshPath()];
    const recorded = await run(tasks(a, 'record'), build);
    expect(recorded.results).toEqual(['built app']);
    await run(tasks(b, 'record'), build);
    expect(readFileSync(b, 'utf8')).toBe(readFileSync(a, 'utf8'));
    expect(readFileSync(a, 'utf8')).not.toMatch(/20\d\d-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+Z/);
    const replayed = await run(tasks(a, 'replay', MISSING), build);
    expect(replayed.results).toEqual(recorded.results);
    expect(replayed.logged).toEqual(recorded.logged);
    expect(replayed.logged.map(([level, msg]) => `${level} ${msg}`)).toContain('info task task-1: completed');
  }, 30_000);
});

describe('a cassette that cannot be replayed is refused typed', () => {
  const replay = (path: string, extra: Record<string, unknown> = {}) =>
    mcp({ transport: 'stdio', command: MISSING, cassette: { path, mode: 'replay' }, ...extra } as any);
  const legacy = () => {
    const path = freshPath();
    writeFileSync(path, JSON.stringify({ rulvarCassette: 1, protocol: '2025-11-25', server: null, interactions: [] }));
    return path;
  };

  it('of the other era than the source pins', async () => {
    const path = legacy();
    const err = await rejection(replay(path, { protocol: '2026-07-28' }).tools(session));
    expect(err).toBeInstanceOf(ConfigError);
    expect(err.message).toBe(`mcp: cassette '${path}' was recorded in protocol 2025-11-25; this source pins 'protocol: 2026-07-28'`);
  });

  it('broken by hand, of another format, or missing', async () => {
    const cases: Array<[string, string]> = [
      ['{"rulvarCassette": 1, "protocol": ', 'is not JSON'],
      ['{"rulvarCassette": 2, "protocol": "2025-11-25", "interactions": []}', 'is of format 2; this version reads format 1'],
      ['{"lockVersion": 1}', "has no 'rulvarCassette' format number"],
      [
        '{"rulvarCassette": 1, "protocol": "2025-11-25", "interactions": [{"method": "tools/list", "answer": [{"what": 1}]}]}',
        "has a message at /interactions/0/answer/0 that is not one it can replay: it needs 'result', 'error', 'reply' or a string 'method'",
      ],
    ];
    for (const [text, why] of cases) {
      const path = freshPath();
      writeFileSync(path, text);
      const err = await rejection(replay(path).tools(session));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toContain(`mcp: cassette '${path}' ${why}`);
    }
    const err = await rejection(replay(join(dir, 'absent.json')).tools(session));
    expect(err.message).toMatch(/does not exist; record it with mode 'record' or 'auto'$/);
  });

  it('an empty recording answers nothing: the opening itself is not invented', async () => {
    const path = legacy();
    const err: any = await rejection(replay(path, { timeouts: { connectMs: 2000 } }).tools(session));
    expect(err).toBeInstanceOf(CassetteError);
    expect(err.message).toBe(`mcp: cassette '${path}': no call of 'initialize' was recorded`);
  });

  it("over 256 MiB, or nested past the parser's depth", async () => {
    const huge = freshPath();
    writeFileSync(huge, '');
    truncateSync(huge, 300 * 1024 * 1024);
    const big = await rejection(replay(huge).tools(session));
    expect(big).toBeInstanceOf(ConfigError);
    expect(big.message).toBe(`mcp: cassette '${huge}' is 314572800 bytes, over the 256 MiB a cassette may be`);
    const deep = freshPath();
    writeFileSync(deep, `${'['.repeat(10_000)}${']'.repeat(10_000)}`);
    const nested = await rejection(replay(deep).tools(session));
    expect(nested).toBeInstanceOf(ConfigError);
    expect(nested.message).toMatch(/is not JSON \(recursion limit exceeded/);
  });

  it('the config is checked before any I/O', () => {
    const refused = (cassette: unknown, extra: Record<string, unknown> = {}) =>
      thrown(() => mcp({ transport: 'stdio', command: 'x', cassette, ...extra } as any)).message;
    expect(refused('c.json')).toBe("mcp: 'cassette' must be an object { path, mode?, ignore? }, got the string 'c.json'");
    expect(refused({ path: '' })).toMatch(/^mcp: 'cassette.path' must be the path of the cassette file/);
    expect(refused({ path: 'c.json', mode: 'rewind' })).toBe("mcp: 'cassette.mode' must be 'record', 'replay' or 'auto', got 'rewind'");
    expect(refused({ path: 'c.json', ignore: { echo: ['message'] } })).toBe(
      "mcp: 'cassette.ignore.echo' holds the string 'message', which is not a JSON pointer ('/name/0', ...)",
    );
    expect(refused({ path: 'c.json', every: 1 })).toMatch(/^mcp: unknown config key 'cassette.every'/);
    const inprocess = thrown(() => mcp({ transport: 'inprocess', server: { connect() {} }, cassette: { path: 'c.json' } } as any));
    expect(inprocess.message).toMatch(/cassette/);
  });
});

describe('hostile and concurrent', () => {
  it('a server that floods while recorded: the recording stops, nothing is written, the import fails typed', async () => {
    const path = freshPath();
    const source = mcp({
      transport: 'stdio',
      command: process.execPath,
      args: [fixture('hostile-stdio.mjs')],
      env: { MODE: 'flood' },
      stderr: 'ignore',
      cassette: { path, mode: 'record' },
    } as any);
    try {
      const err = await rejection(source.tools(session));
      expect(err).toBeInstanceOf(ConfigError);
      expect(err.message).toBe(`mcp: cassette '${path}' was not written: the server sent more than 50000 messages, more than a recording holds`);
    } finally {
      await source.close();
    }
    expect(existsSync(path)).toBe(false);
  }, 30_000);

  // As a recording that ended mid-call holds it: the calls' requests, no answers.
  async function cutOff(): Promise<string> {
    const path = freshPath();
    const recorded = mcp({ ...everything, command: process.execPath, cassette: { path, mode: 'record' } } as any);
    await run(recorded, async (by, ctx) => [await by.echo.execute({ message: 'a' }, ctx)]);
    const file = cassetteOf(path);
    for (const i of file.interactions) if (i.method === 'tools/call') i.answer = [];
    writeFileSync(path, JSON.stringify(file));
    return path;
  }
  const everything = { transport: 'stdio', args: [referenceBin('everything'), 'stdio'], stderr: 'ignore' };

  it('a recorded call cut off before its answer settles at callMs', async () => {
    const path = await cutOff();
    const replay = mcp({ ...everything, command: MISSING, timeouts: { callMs: 300 }, cassette: { path, mode: 'replay' } } as any);
    try {
      const echo = (await replay.tools(session)).find((d: any) => d.name === 'echo')!;
      expect((await rejection(echo.execute({ message: 'a' }, session))).message).toBe("mcp: tool 'echo' timed out after 300ms (timeouts.callMs)");
    } finally {
      await replay.close();
    }
  }, 30_000);

  it('a recorded call cut off before its answer settles at close()', async () => {
    const path = await cutOff();
    const replay = mcp({ ...everything, command: MISSING, cassette: { path, mode: 'replay' } } as any);
    const echo = (await replay.tools(session)).find((d: any) => d.name === 'echo')!;
    const outcome = echo.execute({ message: 'a' }, session).then(
      () => 'answered',
      () => 'settled',
    );
    await replay.close();
    expect(await Promise.race([outcome, new Promise((r) => setTimeout(() => r('hung'), 5000))])).toBe('settled');
  }, 30_000);

  it('concurrent calls replay each to its own answer, and identical ones in the order recorded', async () => {
    const path = freshPath();
    const bin = referenceBin('everything');
    const config = (command: string, mode: string) =>
      mcp({ transport: 'stdio', command, args: [bin, 'stdio'], stderr: 'ignore', cassette: { path, mode } } as any);
    const inputs = Array.from({ length: 24 }, (_, i) => ({ a: i % 6, b: 1 }));
    const all = async (by: Record<string, any>, ctx: any) => Promise.all(inputs.map((input) => by['get-sum'].execute(input, ctx)));
    const recorded = await run(config(process.execPath, 'record'), all);
    const replayed = await run(config(MISSING, 'replay'), all);
    expect(replayed.results).toEqual(recorded.results);
    expect(new Set(replayed.results).size).toBe(6);
  }, 30_000);
});

describe('@rulvar/mcp-native/testing and the CLI', () => {
  it("names a test's cassette, adds it to a config, and reads one back", async () => {
    expect(cassettePath('books a table > for two / at 8', 'fixtures')).toBe(join('fixtures', 'books-a-table-for-two-at-8.json'));
    expect(cassettePath('é')).toBe(join('__cassettes__', 'e.json'));
    const path = freshPath();
    const config = { transport: 'stdio' as const, command: process.execPath, args: [referenceBin('everything'), 'stdio'], stderr: 'ignore' as const };
    expect(withCassette(config, path).cassette).toEqual({ path, mode: 'auto' });
    const recorded = await run(mcp(withCassette(config, { path, mode: 'record' })), async (by, ctx) => [await by.echo.execute({ message: 'x' }, ctx)]);
    const held = readCassette(path);
    expect(held.protocol).toBe('2025-11-25');
    expect(held.toolsetHash).toBe(recorded.hash);
    expect(held.interactions.find((i) => i.tool === 'echo')).toMatchObject({
      method: 'tools/call',
      outcome: 'result',
      params: { name: 'echo', arguments: { message: 'x' } },
    });
    writeFileSync(path, '{}');
    expect(() => readCassette(path)).toThrow(ConfigError);
    // The package's export map names the entry.
    const entry = createRequire(import.meta.url)('@rulvar/mcp-native/testing');
    expect(Object.keys(entry).sort()).toEqual(['DEFAULT_DIR', 'cassettePath', 'readCassette', 'withCassette']);
  }, 30_000);

  it('rulvar-mcp record writes a cassette a source replays, and rulvar-mcp cassette shows it', async () => {
    const cli = fileURLToPath(new URL('../bin/rulvar-mcp.js', import.meta.url));
    const exec = (args: string[]) =>
      new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
        execFile(process.execPath, [cli, ...args], { timeout: 20_000 }, (err: any, stdout, stderr) =>
          resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr }),
        );
      });
    const path = join(dir, 'cli', 'everything.json');
    const stdio = `${process.execPath} ${referenceBin('everything')} stdio`;
    const recorded = await exec([
      'record',
      '--stdio',
      stdio,
      '--stderr',
      'ignore',
      '--out',
      path,
      '--call',
      'get-sum {"a":2,"b":3}',
      '--call',
      'echo {"message":"hi"}',
      '--call',
      'get-sum {"a":"x"}',
    ]);
    // A call that fails (here before it is sent: its input is not valid) is told, and the rest recorded.
    expect(recorded.stderr).toMatch(/^rulvar-mcp: get-sum failed: /);
    expect(recorded.stdout).toMatch(new RegExp(`^wrote ${path}: \\d+ request\\(s\\) of mcp:stdio:.*, protocol 2025-11-25, toolsetHash [0-9a-f]{64}\n$`));
    expect(recorded.code).toBe(0);
    const shown = await exec(['cassette', path]);
    expect(shown.stdout).toContain('tools/call get-sum -> result');
    expect(shown.stdout).toContain('tools/call echo -> result');
    const replay = mcp({ transport: 'stdio', command: MISSING, args: [], cassette: { path, mode: 'replay' } } as any);
    try {
      const sum = (await replay.tools(session)).find((d: any) => d.name === 'get-sum')!;
      expect(await sum.execute({ a: 2, b: 3 }, session as any)).toBe('The sum of 2 and 3 is 5.');
    } finally {
      await replay.close();
    }
    expect((await exec(['record', '--stdio', stdio])).stderr).toMatch(/record needs --out FILE/);
    expect((await exec(['cassette', join(dir, 'none.json')])).code).toBe(2);
  }, 30_000);
});
