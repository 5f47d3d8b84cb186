// The MCP conformance suite's client scenarios, driven against a client built on the addon.
import { execFile } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const cli = join(root, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const register = join(root, '__test__', 'conformance', 'register.mjs');
const client = join(root, '__test__', 'conformance', 'client.mjs');

function scenario(name: string): Promise<{ code: number; out: string }> {
  const output = mkdtempSync(join(tmpdir(), 'rulvar-conformance-'));
  const args = ['--import', register, cli, 'client', '--command', `"${process.execPath}" "${client}"`, '--scenario', name, '-o', output];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: output, timeout: 60_000 }, (err: any, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

describe('conformance (client scenarios)', () => {
  for (const name of ['initialize', 'tools_call', 'sse-retry']) {
    it(name, async () => {
      const { code, out } = await scenario(name);
      expect(out).toMatch(/OVERALL: PASSED/);
      expect(out).toMatch(/, 0 failed, 0 warnings/);
      expect(code).toBe(0);
    }, 90_000);
  }
});
