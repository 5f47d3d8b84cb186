// rulvar-mcp inspect / call against the embedded server, a stdio server and an HTTP server.
import { execFile, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildServer } from '../examples/server.mjs';
import { example, fixture, serveHttp, type HttpServer } from './helpers/harness.js';

const cli = fileURLToPath(new URL('../bin/rulvar-mcp.js', import.meta.url));

function run(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [cli, ...args], { timeout: 20_000 }, (err: any, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 1) : 0, stdout, stderr });
    });
  });
}

const HEX64 = /^[0-9a-f]{64}$/;
let http: HttpServer;
beforeAll(async () => {
  http = await serveHttp(buildServer, true);
});
afterAll(async () => {
  await http.stop();
});

describe('inspect', () => {
  it('lists the embedded server by default, with hashes and posture', async () => {
    const r = await run(['inspect', '--prefix', 'demo', '--risk', 'echo=read', '--approval=fail']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/4 tool\(s\) admitted/);
    expect(r.stdout).toMatch(/demo_echo\s+echo\s+read\s+no\s+\d+ B\s+[0-9a-f]{12}/);
    expect(r.stdout).toMatch(/demo_fail\s+fail\s+-\s+yes/);
    expect(r.stdout).toMatch(/toolsetHash\s+[0-9a-f]{64}/);
    expect(r.stdout).toMatch(/authorityHash\s+[0-9a-f]{64}/);
    expect(r.stdout).toMatch(/posture\s+\{"regulatedPosture":1/);
    expect(r.stdout).toMatch(/protocol\s+2025-11-25/);
    expect(r.stderr).toBe('');
  });

  it('--json is machine-readable', async () => {
    const r = await run([
      'inspect',
      '--json',
      '--deny',
      'picture',
      '--max-tools',
      '10',
      '--max-pages',
      '2',
      '--max-schema-bytes',
      '4096',
      '--discovery-ms',
      '5000',
    ]);
    expect(r.code).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.tools.map((t: any) => t.name)).toEqual(['echo', 'double', 'fail']);
    expect(report.tools[0]).toMatchObject({ original: 'echo', risk: null, needsApproval: false });
    expect(report.tools[0].schemaBytes).toBeGreaterThan(10);
    expect(report.toolsetHash).toMatch(HEX64);
    expect(report.authorityHash).toMatch(HEX64);
    expect(report.posture.bounds).toEqual({ declared: true, maxTools: 10, maxPages: 2, maxSchemaBytes: 4096, discoveryMs: 5000 });
  });

  it('a stdio server given as a command line', async () => {
    const r = await run(['inspect', '--json', '--stdio', `"${process.execPath}" "${example('server.mjs')}"`, '--allow', 'echo,double']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).tools.map((t: any) => t.name)).toEqual(['echo', 'double']);
  });

  it('names the tools that run without a validator, and why', async () => {
    const server = `"${process.execPath}" "${fixture('hostile-stdio.mjs')}"`;
    const r = await run(['inspect', '--stdio', server, '--env', 'MODE=badPattern']);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/2 tool\(s\) admitted/);
    expect(r.stdout).toMatch(/^  strict: input not validated: .*regex/m);
    expect(r.stdout).not.toMatch(/echo: input not validated/);
    const json = await run(['inspect', '--stdio', server, '--env', 'MODE=badPattern', '--json']);
    const tools = JSON.parse(json.stdout).tools;
    expect(tools.find((t: any) => t.name === 'strict').unvalidated.input).toMatch(/regex/);
    expect(tools.find((t: any) => t.name === 'echo').unvalidated).toBeNull();
  });

  it('an HTTP server, with headers', async () => {
    const before = http.requests.length;
    const r = await run(['inspect', '--json', '--http', http.url, '--header', 'x-token=abc']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout).source).toBe(`mcp:http:${http.url}`);
    const seen = http.requests.slice(before);
    expect(seen.length).toBeGreaterThan(0);
    expect(seen.every((q) => q.headers['x-token'] === 'abc')).toBe(true);
  });
});

describe('call', () => {
  it('prints the mapped result', async () => {
    const r = await run(['call', 'echo', '{"text":"hello"}']);
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe('hello');
  });

  it('--json over stdio and HTTP', async () => {
    const stdio = await run(['call', 'double', '{"n":21}', '--json', '--stdio', `"${process.execPath}" "${example('server.mjs')}"`]);
    expect(JSON.parse(stdio.stdout)).toEqual({ tool: 'double', result: { doubled: 42 } });
    const overHttp = await run(['call', 'picture', '--json', '--http', http.url]);
    expect(JSON.parse(overHttp.stdout).result[1]).toEqual({ type: 'image', data: 'iVBORw0KGgo=', mimeType: 'image/png' });
  });

  it('a tool error is exit 1 with one line', async () => {
    const r = await run(['call', 'fail']);
    expect(r.code).toBe(1);
    expect(r.stderr.trim()).toBe('rulvar-mcp: it broke');
  });
});

describe('a person at a terminal', () => {
  it('sees a progress line on stderr while connecting, cleared afterwards', async () => {
    // util-linux `script` gives the CLI a pseudo-terminal, so stderr.isTTY is true.
    const out = await new Promise<string>((resolve) => {
      execFile('script', ['-qec', `"${process.execPath}" "${cli}" inspect`, '/dev/null'], { timeout: 20_000 }, (_e, stdout) => resolve(stdout));
    });
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the line is erased with the terminal's ESC [K
    expect(out).toMatch(/connecting to mcp:stdio:[^\r\n]*\.\.\.\r\x1b\[K/);
    expect(out).toMatch(/4 tool\(s\) admitted/);
  });

  it('piped stderr stays quiet', async () => {
    const r = await run(['inspect']);
    expect(r.stderr).toBe('');
  });
});

describe('exit codes', () => {
  it('a refused config is exit 2 with a one-line error', async () => {
    const r = await run(['inspect', '--max-tools', '0']);
    expect(r.code).toBe(2);
    expect(r.stderr.trim()).toBe("rulvar-mcp: mcp: 'maxTools' must be a positive integer, got 0");
    expect(r.stdout).toBe('');
  });

  it('a discovery bound is exit 2', async () => {
    const r = await run(['inspect', '--max-tools', '2']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/over the declared maxTools 2/);
  });

  it('a failed connect is exit 1', async () => {
    const missing = await run(['inspect', '--stdio', '/nonexistent/mcp-server']);
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toMatch(/^rulvar-mcp: mcp: could not start '\/nonexistent\/mcp-server'/);
    const slow = await run(['inspect', '--stdio', 'sleep 30', '--connect-ms', '100']);
    expect(slow.code).toBe(1);
    expect(slow.stderr.trim()).toBe("rulvar-mcp: mcp: connect to 'mcp:stdio:sleep' timed out after 100ms");
  });

  it('usage errors are exit 2', async () => {
    expect((await run(['frobnicate'])).code).toBe(2);
    expect((await run(['inspect', '--no-such-flag'])).code).toBe(2);
    expect((await run(['call'])).code).toBe(2);
  });
});

describe('call, when the tool asks the user something', () => {
  const asking = ['--stdio', `${process.execPath} ${fixture('asking-server.mjs')}`];

  it('declines when stdin is not a terminal: nobody is there to ask', async () => {
    const r = await run(['call', 'confirm', '{"what":"the deploy"}', ...asking]);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({ action: 'decline' });
  });

  it('asks each field of the form on the terminal, then sends it', async () => {
    // A terminal of its own (util-linux `script` gives the CLI a pty); each answer is typed
    // when its prompt shows, as a person would; a refused value gets its prompt again.
    const { spawn } = await import('node:child_process');
    const command = [
      process.execPath,
      cli,
      'call',
      'confirm',
      `'{"what":"the deploy"}'`,
      '--stdio',
      `'${process.execPath} ${fixture('asking-server.mjs')}'`,
    ].join(' ');
    const child = spawn('script', ['-qec', command, '/dev/null'], { stdio: ['pipe', 'pipe', 'ignore'] });
    const stuck = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const answers = ['maybe', 'y', '', 'me@example.com', ''];
    let out = '';
    let typed = 0;
    child.stdout.on('data', (d) => {
      out += d;
      const prompts = (out.match(/\]: |cancel\] /g) ?? []).length;
      while (typed < Math.min(prompts, answers.length)) child.stdin.write(`${answers[typed++]}\r`);
    });
    const code = await new Promise((resolve) => child.on('exit', resolve));
    clearTimeout(stuck);
    expect(code, out).toBe(0);
    expect(out).toMatch(/mcp:stdio:\S+ asks: Confirm the deploy\?/);
    expect(out).toContain('not a boolean');
    expect(out).toMatch(/name \[string; default "anonymous"; optional\]/);
    const result = out.slice(out.lastIndexOf('{"action"')).trim();
    expect(JSON.parse(result)).toEqual({ action: 'accept', content: { ok: true, email: 'me@example.com', name: 'anonymous' } });
  }, 30_000);
});

describe('a server cannot fool the person at the terminal', () => {
  it('escapes what the server wrote, asks one question at a time, names the source, sets the host apart', async () => {
    // util-linux `script` gives the CLI a pseudo-terminal on stdin and stderr.
    const server = `${process.execPath} ${fixture('hostile-asks.mjs')}`;
    const child = spawn('script', ['-qec', `"${process.execPath}" "${cli}" call trick --stdio "${server}"`, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = new Promise<number | null>((r) => child.on('exit', r));
    const until = async (check: () => boolean) => {
      for (let i = 0; i < 1500 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
      return check();
    };
    try {
      // On a failure, what the CLI wrote is in the message.
      await until(() => out.includes('Send?'));
      expect(out).toContain('Send?');
      // The second question waits for the first: one keystroke answers one form.
      await new Promise((r) => setTimeout(r, 300));
      expect(out).not.toContain('Done?');
      child.stdin.write('y\r');
      expect(await until(() => out.includes('Done?'))).toBe(true);
      child.stdin.write('n\r');
      expect(await exited).toBe(0);
    } finally {
      child.kill();
    }
    // biome-ignore lint/suspicious/noControlCharactersInRegex: the server's own sequences must not reach the terminal
    expect(out).not.toMatch(/\u001b\]8;;|\u001b\[1A|\u001b\[2K/);
    expect(out).toContain('<U+001B>]8;;https://evil.example/<U+0007>https://github.com/login<U+001B>]8;;<U+0007>');
    expect(out).toMatch(/mcp:stdio:\S+ asks: Allow/);
    // The URL as the client checked it, its host on a line of its own.
    expect(out).toContain('It asks you to open a page on evil.example:');
    expect(out).toContain('https://evil.example/login');
    expect(out).not.toContain('HTTPS://EVIL');
    expect(out).toContain('{"form":"accept","url":"decline"}');
  }, 60_000);
});
