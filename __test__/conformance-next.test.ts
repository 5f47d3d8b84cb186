// The conformance suite 0.2 (@modelcontextprotocol/conformance@0.2.0-alpha.12), run as a spec
// revision's requirement set (`--requirements`) against __test__/conformance/client.mjs, beside
// the 0.1.16 scenarios of conformance.test.ts (which stay until 0.2 covers them).
//
// 0.2 needs Node 22 and the project's devDependencies can hold one version of the suite, so
// both live in a tool folder of their own: __test__/conformance/next/ pins them (npm's `node`
// package brings the Node 22 binary; a devDependency would put its `node` first on the PATH of
// every npm script), and the first run installs that into node_modules/.cache with `npm ci`,
// again only when the lock file changed.
import { execFile } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';
import { installPinned } from './helpers/tool-folder.mjs';

const root = fileURLToPath(new URL('..', import.meta.url));
const pinned = join(root, '__test__', 'conformance', 'next');
const tools = join(root, 'node_modules', '.cache', 'rulvar-conformance-next');
const node22 = join(tools, 'node_modules', 'node', 'bin', 'node');
const cli = join(tools, 'node_modules', '@modelcontextprotocol', 'conformance', 'dist', 'index.js');
const client = join(root, '__test__', 'conformance', 'client.mjs');

function install(): void {
  installPinned(pinned, tools, [node22, cli]);
}

interface Run {
  code: number;
  out: string;
  /** Every scenario run: passed or not. */
  results: Map<string, boolean>;
  /** The folder holding each scenario's `checks.json`. */
  output: string;
}

function requirements(revision: string, baseline?: string): Promise<Run> {
  const output = mkdtempSync(join(tmpdir(), 'rulvar-conformance-next-'));
  const args = [cli, 'client', '--command', `"${node22}" "${client}"`, '--requirements', revision, '-o', output];
  if (baseline) args.push('--expected-failures', baseline);
  return new Promise((resolve) => {
    execFile(node22, args, { cwd: output, timeout: 240_000, maxBuffer: 64 * 1024 * 1024 }, (err: any, stdout, stderr) => {
      const out = `${stdout}${stderr}`;
      const results = new Map<string, boolean>();
      for (const m of out.matchAll(/^([✓✗]) (\S+): \d+ passed/gm)) results.set(m[2], m[1] === '✓');
      resolve({ code: err ? (err.code ?? 1) : 0, out, results, output });
    });
  });
}

/**
 * The client scenarios a revision's requirement set scores and those it runs without scoring,
 * from the package's own `requirements/<revision>.yaml` (two flat lists; read by line).
 */
function requirementSet(revision: string): { scored: string[]; notScored: string[] } {
  const text = readFileSync(join(tools, 'node_modules', '@modelcontextprotocol', 'conformance', 'requirements', `${revision}.yaml`), 'utf8');
  const scored: string[] = [];
  const notScored: string[] = [];
  let section = '';
  let entry = '';
  for (const line of text.split('\n')) {
    if (/^\S/.test(line)) section = line.replace(/:.*/, '');
    else if (section === 'client' && /^ {2}- /.test(line)) scored.push(line.slice(4).trim());
    else if (section === 'not_scored' && /^ {2}- scenario: /.test(line)) entry = line.replace(/^ {2}- scenario: /, '').trim();
    else if (section === 'not_scored' && /^ {4}leg: client/.test(line)) notScored.push(entry);
  }
  return { scored, notScored };
}

/** The checks a scenario's run wrote. */
function checks(run: Run, scenario: string): Array<{ id: string; status: string; errorMessage?: string }> {
  const [dir, name] = scenario.includes('/') ? scenario.split('/') : ['', scenario];
  const folder = join(run.output, dir);
  const found = readdirSync(folder).find((f) => f.startsWith(`${name}-`));
  if (!found) throw new Error(`no results for ${scenario} in ${folder}`);
  return JSON.parse(readFileSync(join(folder, found, 'checks.json'), 'utf8'));
}

// What --requirements 2025-11-25 scores for a client (the package's requirements/2025-11-25.yaml):
// the lifecycle, a tool call, SSE resumption, elicitation defaults and the 14 authorization
// scenarios of that revision.
const SCORED_2025_11_25 = [
  'initialize',
  'tools_call',
  'elicitation-sep1034-client-defaults',
  'sse-retry',
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
];
// Listed in expected-failures-2025-11-25.yml, which says why (none now).
const KNOWN_FAILING: string[] = [];

describe('conformance 0.2: --requirements 2025-11-25 (Node 22)', () => {
  let run: Run;
  beforeAll(async () => {
    install();
    run = await requirements('2025-11-25', join(pinned, 'expected-failures-2025-11-25.yml'));
  }, 540_000);

  it('scores the 18 scenarios of the set and runs its 7 others, and passes against the baseline', () => {
    const set = requirementSet('2025-11-25');
    expect(set.scored).toEqual(SCORED_2025_11_25);
    expect(set.notScored).toHaveLength(7);
    expect([...run.results.keys()].sort()).toEqual([...set.scored, ...set.notScored].sort());
    expect(run.out).toMatch(/Running requirements 2025-11-25/);
    expect(run.out).toMatch(/Baseline check passed: all failures are expected/);
    expect(run.code, run.out).toBe(0);
  });

  for (const scenario of SCORED_2025_11_25.filter((s) => !KNOWN_FAILING.includes(s))) {
    it(`${scenario} passes`, () => {
      expect(run.results.get(scenario), run.out).toBe(true);
      const failed = checks(run, scenario).filter((c) => c.status === 'FAILURE');
      expect(failed).toEqual([]);
    });
  }

  it('elicitation-sep1034-client-defaults: the elicit hook accepts an empty form and the schema defaults fill it', () => {
    const passed = checks(run, 'elicitation-sep1034-client-defaults').filter((c) => c.status === 'SUCCESS');
    expect(passed.map((c) => c.id).sort()).toEqual([
      'client-elicitation-sep1034-boolean-default',
      'client-elicitation-sep1034-enum-default',
      'client-elicitation-sep1034-integer-default',
      'client-elicitation-sep1034-number-default',
      'client-elicitation-sep1034-string-default',
    ]);
  });

  // Run, not scored: `client_credentials` with a secret and with private_key_jwt pass today.
  it('the client_credentials extensions pass', () => {
    expect(requirementSet('2025-11-25').notScored).toContain('auth/client-credentials-basic');
    expect(run.results.get('auth/client-credentials-basic')).toBe(true);
    expect(run.results.get('auth/client-credentials-jwt')).toBe(true);
  });

  extensionsPass(() => run, '2025-11-25');
});

// The authorization extensions the client maps to `http.oauth` keys (client.mjs): DPoP with and
// without server nonces (`dpop`), enterprise-managed authorization (`tokenExchange`) and
// workload identity federation (`assertion`), each with the jwt-bearer grant or the login.
// Each runs, not scored, in every requirement set; every check of it passes.
const EXTENSIONS = ['auth/dpop', 'auth/dpop-nonce', 'auth/enterprise-managed-authorization', 'auth/wif-jwt-bearer'];
// The checks that say the extension itself was done (beside the shared discovery and token
// checks): a scenario whose client never got that far would pass none of them.
const EXTENSION_CHECKS: Record<string, string[]> = {
  'auth/dpop': ['sep-1932-client-token-request-proof', 'sep-1932-client-dpop-auth-scheme', 'sep-1932-client-fresh-proof'],
  'auth/dpop-nonce': [
    'sep-1932-client-token-request-proof',
    'sep-1932-client-dpop-auth-scheme',
    'sep-1932-client-fresh-proof',
    'sep-1932-client-as-nonce',
    'sep-1932-client-rs-nonce',
  ],
  'auth/enterprise-managed-authorization': ['complete-flow-token-exchange', 'complete-flow-jwt-bearer'],
  'auth/wif-jwt-bearer': ['wif-assertion-verified'],
};

function extensionsPass(run: () => Run, revision: string): void {
  for (const scenario of EXTENSIONS) {
    it(`the ${scenario} extension passes, every check of it`, () => {
      expect(requirementSet(revision).notScored).toContain(scenario);
      expect(run().results.get(scenario), run().out).toBe(true);
      const all = checks(run(), scenario);
      expect(all.filter((c) => c.status !== 'SUCCESS' && c.status !== 'INFO')).toEqual([]);
      const passed = new Set(all.filter((c) => c.status === 'SUCCESS').map((c) => c.id));
      for (const id of EXTENSION_CHECKS[scenario]) expect([scenario, id, passed.has(id)]).toEqual([scenario, id, true]);
    });
  }
}

// What --requirements 2026-07-28 scores for a client: the modern wire (request metadata, the
// HTTP headers, x-mcp-header), schemas, Multi Round-Trip Requests, and its 25 authorization
// scenarios. The client pins the revision from MCP_CONFORMANCE_PROTOCOL_VERSION.
const KNOWN_FAILING_2026: string[] = [];

describe('conformance 0.2: --requirements 2026-07-28 (Node 22)', () => {
  let run: Run;
  beforeAll(async () => {
    install();
    run = await requirements('2026-07-28', join(pinned, 'expected-failures-2026-07-28.yml'));
  }, 540_000);

  it('scores the 32 scenarios of the set and passes against the baseline', () => {
    const set = requirementSet('2026-07-28');
    expect(set.scored).toHaveLength(32);
    expect([...run.results.keys()].sort()).toEqual([...set.scored, ...set.notScored].sort());
    expect(run.out).toMatch(/Running requirements 2026-07-28/);
    expect(run.out).toMatch(/Baseline check passed: all failures are expected/);
    expect(run.code, run.out).toBe(0);
  });

  it('every other scored scenario passes, every check of it', () => {
    const set = requirementSet('2026-07-28');
    for (const scenario of set.scored.filter((s) => !KNOWN_FAILING_2026.includes(s))) {
      expect([scenario, run.results.get(scenario)]).toEqual([scenario, true]);
      expect(checks(run, scenario).filter((c) => c.status === 'FAILURE')).toEqual([]);
    }
  });

  it('sep-2322-client-request-state: every Multi Round-Trip check passes', () => {
    const all = checks(run, 'sep-2322-client-request-state');
    expect(
      all
        .filter((c) => c.status === 'SUCCESS')
        .map((c) => c.id)
        .sort(),
    ).toEqual([
      'sep-2322-client-jsonrpc-id-different',
      'sep-2322-client-no-state-omitted',
      'sep-2322-client-parallel-isolation',
      'sep-2322-client-request-state-echoed',
      'sep-2322-default-result-type-complete',
    ]);
  });

  extensionsPass(() => run, '2026-07-28');

  it('request-metadata: every check passes, the retry after a refused first request among them', () => {
    const all = checks(run, 'request-metadata');
    expect(all.filter((c) => c.status !== 'SUCCESS' && c.status !== 'SKIPPED')).toEqual([]);
    expect(all.find((c) => c.id === 'sep-2575-client-retry-supported-version')?.status).toBe('SUCCESS');
  });
});
