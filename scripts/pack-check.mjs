#!/usr/bin/env node
// What `npm pack` puts in a package of this release: only the files it needs, within a size
// budget. __test__/package.test.ts checks the main package and the host's platform package with
// it; `npm run release:local` checks all eight packages it publishes, with their real binaries.
//
//   node scripts/pack-check.mjs <package dir> ...   one line per package; exit 1 on a problem
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const KiB = 1024;
const MiB = 1024 * KiB;

// The main package is JS and types (about 47 KB packed, 160 KB unpacked); a platform package
// is its binary (12 to 16 MiB unpacked, under 6 MiB packed, the macOS builds the largest).
export const BUDGET = {
  main: { packed: 100 * KiB, unpacked: 320 * KiB },
  platform: { packed: 8 * MiB, unpacked: 20 * MiB },
};

// Everything the main package may hold; the files it must hold.
const MAIN_FILE = /^(README\.md|package\.json|index\.js|index\.d\.ts|testing\.d\.ts|examples\/server\.mjs|bin\/[^/]+\.js|lib\/(cli\/)?[^/]+\.(js|mjs))$/;
const MAIN_REQUIRED = [
  'package.json',
  'README.md',
  'index.js',
  'index.d.ts',
  'lib/index.js',
  'lib/index.mjs',
  'lib/native.js',
  'lib/testing.js',
  'testing.d.ts',
  'bin/rulvar-mcp.js',
  'examples/server.mjs',
];

/** `npm pack --dry-run --json` of a package folder: its name, files, packed and unpacked size. */
export function packed(dir) {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: dir,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' },
  });
  const [p] = JSON.parse(out);
  return { name: p.name, version: p.version, files: p.files.map((f) => f.path).sort(), size: p.size, unpackedSize: p.unpackedSize };
}

/** The problems with one package folder's pack (none: it holds what it needs, within budget). */
export function packProblems(dir) {
  const manifest = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const p = packed(dir);
  const problems = [];
  const isPlatform = manifest.napi === undefined;
  const budget = isPlatform ? BUDGET.platform : BUDGET.main;
  if (isPlatform) {
    const want = ['README.md', manifest.main, 'package.json'].sort();
    if (JSON.stringify(p.files) !== JSON.stringify(want)) problems.push(`holds ${p.files.join(', ')}; expected ${want.join(', ')}`);
    if (!/^mcp-native\.[a-z0-9-]+\.node$/.test(manifest.main ?? '')) problems.push(`main is ${manifest.main}, not a mcp-native.<platform>.node`);
  } else {
    const extra = p.files.filter((f) => !MAIN_FILE.test(f));
    if (extra.length > 0) problems.push(`holds files it does not need: ${extra.join(', ')}`);
    const missing = MAIN_REQUIRED.filter((f) => !p.files.includes(f));
    if (missing.length > 0) problems.push(`lacks ${missing.join(', ')}`);
  }
  if (p.size >= budget.packed) problems.push(`packed ${p.size} bytes, over the budget of ${budget.packed}`);
  if (p.unpackedSize >= budget.unpacked) problems.push(`unpacked ${p.unpackedSize} bytes, over the budget of ${budget.unpacked}`);
  return { ...p, budget, problems };
}

const fmt = (n) => (n >= MiB ? `${(n / MiB).toFixed(1)} MiB` : `${(n / KiB).toFixed(1)} KiB`);

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  let failed = 0;
  for (const dir of process.argv.slice(2)) {
    const r = packProblems(dir);
    const line = `${r.name}@${r.version}: ${r.files.length} files, ${fmt(r.size)} packed (budget ${fmt(r.budget.packed)}), ${fmt(r.unpackedSize)} unpacked (budget ${fmt(r.budget.unpacked)})`;
    console.log(r.problems.length === 0 ? `pack ok   ${line}` : `pack FAIL ${line}: ${r.problems.join('; ')}`);
    if (r.problems.length > 0) failed++;
  }
  process.exit(failed > 0 ? 1 : 0);
}
