// Packed the napi-rs way and installed offline into a fresh project: ESM and CJS both work.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const server = join(root, 'examples', 'server.mjs');
const npm = (args: string[], cwd: string) =>
  execFileSync('npm', args, { cwd, encoding: 'utf8', stdio: 'pipe', env: { ...process.env, npm_config_audit: 'false', npm_config_fund: 'false' } });

let project: string;

beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'rulvar-pack-'));
  // The platform package gets the binary the build produced, as `napi artifacts` would do.
  const platform = join(dir, 'platform');
  cpSync(join(root, 'npm', 'linux-x64-gnu'), platform, { recursive: true });
  cpSync(join(root, 'mcp-native.linux-x64-gnu.node'), join(platform, 'mcp-native.linux-x64-gnu.node'));
  npm(['pack', '--ignore-scripts', '--pack-destination', dir], root);
  npm(['pack', '--pack-destination', dir], platform);
  const tarballs = readdirSync(dir).filter((f) => f.endsWith('.tgz'));
  expect(tarballs.sort()).toEqual(['rulvar-mcp-native-0.1.0.tgz', 'rulvar-mcp-native-linux-x64-gnu-0.1.0.tgz']);
  project = join(dir, 'project');
  mkdirSync(project);
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'consumer', version: '1.0.0', private: true }));
  npm(['install', '--offline', ...tarballs.map((t) => join(dir, t))], project);
}, 120_000);

const body = `
  const source = mcp({ transport: 'stdio', command: process.execPath, args: [${JSON.stringify(server)}] });
  const defs = await source.tools({ runId: 'r' });
  const out = await defs.find((d) => d.name === 'double').execute({ n: 21 }, { runId: 'r' });
  console.log(JSON.stringify({ names: defs.map((d) => d.name), out }));
  await source.close();
`;

function run(file: string, code: string) {
  writeFileSync(join(project, file), code);
  const out = execFileSync(process.execPath, [file], { cwd: project, encoding: 'utf8', timeout: 20_000 });
  return JSON.parse(out);
}

describe('the packed packages', () => {
  it('the main package has no runtime dependencies; its platform packages are named at publish', async () => {
    const pkg = JSON.parse(readFileSync(join(project, 'node_modules', '@rulvar', 'mcp-native', 'package.json'), 'utf8'));
    expect(pkg.dependencies).toBeUndefined();
    // `napi prepublish` writes optionalDependencies (every platform package, at this version)
    // into the package it publishes; committed, they would break `npm ci`, since the lock file
    // cannot list packages not yet published. `npm run release:local` checks the published list.
    expect(pkg.optionalDependencies).toBeUndefined();
    const platforms = ['linux-x64-gnu', 'linux-arm64-gnu', 'linux-x64-musl', 'linux-arm64-musl', 'darwin-x64', 'darwin-arm64', 'win32-x64-msvc'];
    const { platformOf } = await import('../scripts/version.mjs');
    expect(pkg.napi.targets.map((t: string) => platformOf(t).name)).toEqual(platforms);
    for (const p of platforms) {
      const manifest = JSON.parse(readFileSync(join(root, 'npm', p, 'package.json'), 'utf8'));
      expect(manifest.name).toBe(`@rulvar/mcp-native-${p}`);
      expect(manifest.main).toBe(`mcp-native.${p}.node`);
    }
    const installed = readdirSync(join(project, 'node_modules', '@rulvar', 'mcp-native')).sort();
    expect(installed).toEqual(expect.arrayContaining(['index.d.ts', 'index.js', 'lib', 'bin', 'package.json']));
    expect(installed.some((f) => f.endsWith('.node'))).toBe(false);
  });

  it('imports and calls tools from ESM', () => {
    const result = run('esm.mjs', `import { mcp } from '@rulvar/mcp-native';\n${body}`);
    expect(result).toEqual({ names: ['echo', 'double', 'fail', 'picture'], out: { doubled: 42 } });
  });

  it('imports and calls tools from CJS', () => {
    const result = run('cjs.cjs', `const { mcp } = require('@rulvar/mcp-native');\n(async () => {${body}})();`);
    expect(result).toEqual({ names: ['echo', 'double', 'fail', 'picture'], out: { doubled: 42 } });
  });

  // The installed package on a platform no package is built for (the host pretends to be
  // FreeBSD before loading it): one error naming the supported platforms and the way to build
  // from source, the loader's attempts kept as its cause.
  it('a platform with no package gets one clear error', () => {
    writeFileSync(
      join(project, 'freebsd.cjs'),
      `Object.defineProperty(process, 'platform', { value: 'freebsd' });
try { require('@rulvar/mcp-native'); console.log('loaded'); } catch (e) { console.log(JSON.stringify({ message: e.message, cause: String(e.cause && e.cause.message) })); }`,
    );
    const out = JSON.parse(execFileSync(process.execPath, ['freebsd.cjs'], { cwd: project, encoding: 'utf8', timeout: 20_000 }));
    expect(out.message).toBe(
      `@rulvar/mcp-native has no build for freebsd-${process.arch}; the supported platforms are linux-x64-gnu, linux-x64-musl, linux-arm64-gnu, linux-arm64-musl, darwin-x64, darwin-arm64, win32-x64-msvc; to build it from source, install Rust (https://rustup.rs) and run \`npm install\` in a clone of the repository (it runs \`napi build\`), then use that folder as the package`,
    );
    expect(out.cause).toMatch(/native binding/);
  });

  // What `npm pack` puts in each package: only what it needs, within a size budget
  // (scripts/pack-check.mjs, which `npm run release:local` also runs on all eight packages).
  it('each package holds only what it needs, within its size budget', async () => {
    const { packProblems } = await import('../scripts/pack-check.mjs');
    const main = packProblems(root);
    expect(main.problems).toEqual([]);
    expect(main.files).toEqual(expect.arrayContaining(['index.js', 'index.d.ts', 'lib/index.js', 'lib/native.js', 'bin/rulvar-mcp.js', 'examples/server.mjs']));
    const native = packProblems(join(project, '..', 'platform'));
    expect(native.problems).toEqual([]);
    expect(native.files).toEqual(['README.md', 'mcp-native.linux-x64-gnu.node', 'package.json']);
  });

  // One command keeps the release's version numbers in step, and the committed platform
  // manifests are the ones `napi create-npm-dirs` writes (repository, license, engines, files).
  it('every version number and platform manifest is in step with package.json', () => {
    const out = execFileSync(process.execPath, [join(root, 'scripts', 'version.mjs')], { encoding: 'utf8' });
    expect(out).toMatch(/^version: 0\.1\.0 everywhere/);
    const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
    for (const p of ['linux-x64-gnu', 'win32-x64-msvc']) {
      const m = JSON.parse(readFileSync(join(root, 'npm', p, 'package.json'), 'utf8'));
      for (const key of ['license', 'engines', 'repository', 'publishConfig']) expect(m[key]).toEqual(pkg[key]);
      expect(m.files).toEqual([m.main]);
    }
  });
});
