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
const cliLogin = join(root, '__test__', 'conformance', 'cli-login.mjs');

function scenario(name: string, command = client): Promise<{ code: number; out: string }> {
  const output = mkdtempSync(join(tmpdir(), 'rulvar-conformance-'));
  const args = ['--import', register, cli, 'client', '--command', `"${process.execPath}" "${command}"`, '--scenario', name, '-o', output];
  return new Promise((resolve) => {
    execFile(process.execPath, args, { cwd: output, timeout: 60_000 }, (err: any, stdout, stderr) => {
      resolve({ code: err ? (err.code ?? 1) : 0, out: `${stdout}${stderr}` });
    });
  });
}

// The suite's 21 `auth/*` client scenarios (0.1.16), through `http.oauth`: discovery (RFC 9728,
// RFC 8414, OpenID, the 2025-03-26 fallbacks), client metadata documents, dynamic and
// pre-registration, the token endpoint's auth methods, scope selection and step-up, the retry
// limit, the resource check, offline_access, and client_credentials (secret and private_key_jwt).
const AUTH_SCENARIOS = [
  'auth/metadata-default',
  'auth/metadata-var1',
  'auth/metadata-var2',
  'auth/metadata-var3',
  'auth/basic-cimd',
  'auth/scope-from-www-authenticate',
  'auth/scope-from-scopes-supported',
  'auth/scope-omitted-when-undefined',
  'auth/scope-step-up',
  'auth/scope-retry-limit',
  'auth/token-endpoint-auth-basic',
  'auth/token-endpoint-auth-post',
  'auth/token-endpoint-auth-none',
  'auth/pre-registration',
  'auth/2025-03-26-oauth-metadata-backcompat',
  'auth/2025-03-26-oauth-endpoint-fallback',
  'auth/resource-mismatch',
  'auth/offline-access-scope',
  'auth/offline-access-not-supported',
  'auth/client-credentials-jwt',
  'auth/client-credentials-basic',
];

describe('conformance (client scenarios)', () => {
  for (const name of ['initialize', 'tools_call', 'sse-retry', ...AUTH_SCENARIOS]) {
    it(name, async () => {
      const { code, out } = await scenario(name);
      expect(out).toMatch(/OVERALL: PASSED/);
      expect(out).toMatch(/, 0 failed, 0 warnings/);
      expect(code).toBe(0);
    }, 90_000);
  }

  // `rulvar-mcp inspect --http URL --oauth`: the printed URL opened, the redirect taken on the
  // loopback listener, the tools imported, the token file readable by its owner only.
  it('auth/metadata-default through the CLI login', async () => {
    const { code, out } = await scenario('auth/metadata-default', cliLogin);
    expect(out).toMatch(/OVERALL: PASSED/);
    expect(out).toMatch(/, 0 failed, 0 warnings/);
    expect(code).toBe(0);
  }, 90_000);
});
