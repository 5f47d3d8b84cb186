#!/usr/bin/env node
// Keeps every version number of the release in step with package.json's, and every platform
// package's manifest equal to the one `napi create-npm-dirs` writes from the root package.json.
//
//   node scripts/version.mjs            check only: exit 1 with one line per place out of step
//   node scripts/version.mjs 1.2.3      set 1.2.3 everywhere (then run it again to check)
//
// The places: package.json's `version`, package-lock.json's root entries,
// npm/<platform>/package.json (the whole manifest), and the generated loader index.js, which
// refuses a platform package of another version when NAPI_RS_ENFORCE_VERSION_CHECK is set and
// is committed (the publish job ships the checked-in loader, not one a build regenerated).
import { readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const SEMVER = /^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/;

const readJson = (file) => JSON.parse(readFileSync(join(root, file), 'utf8'));
const writeJson = (file, value) => writeFileSync(join(root, file), `${JSON.stringify(value, null, 2)}\n`);

// napi-rs's names: x86_64-unknown-linux-gnu -> linux-x64-gnu, aarch64-apple-darwin -> darwin-arm64.
const CPU = { x86_64: 'x64', aarch64: 'arm64' };
const SYS = { linux: 'linux', darwin: 'darwin', windows: 'win32' };
export function platformOf(triple) {
  const [cpu, , sys, abi] = triple.split('-');
  return { name: [SYS[sys] ?? sys, CPU[cpu] ?? cpu, abi].filter(Boolean).join('-'), os: SYS[sys] ?? sys, cpu: CPU[cpu] ?? cpu, abi };
}

const pick = (obj, keys) => Object.fromEntries(keys.filter((k) => obj[k] !== undefined).map((k) => [k, obj[k]]));

/** The manifest `napi create-npm-dirs` (@napi-rs/cli 3) writes for one platform, key order included. */
export function platformManifest(pkg, triple) {
  const p = platformOf(triple);
  const binary = `${pkg.napi.binaryName}.${p.name}.node`;
  const m = {
    name: `${pkg.napi.packageName}-${p.name}`,
    version: pkg.version,
    cpu: [p.cpu],
    main: binary,
    files: [binary],
    ...pick(pkg, ['description', 'keywords', 'author', 'authors', 'homepage', 'license', 'engines', 'repository', 'bugs']),
  };
  if (pkg.publishConfig) m.publishConfig = pick(pkg.publishConfig, ['registry', 'access']);
  m.os = [p.os];
  if (p.abi === 'gnu') m.libc = ['glibc'];
  else if (p.abi === 'musl') m.libc = ['musl'];
  return m;
}

const LOADER_VERSION = /(bindingPackageVersion !== ')([^']*)(')|(expected )(\S+)( but got)/g;

function places(version) {
  const pkg = readJson('package.json');
  const lock = readJson('package-lock.json');
  const optional = Object.fromEntries(pkg.napi.targets.map((t) => [`${pkg.napi.packageName}-${platformOf(t).name}`, version]));
  const sorted = (o) => Object.fromEntries(Object.entries(o ?? {}).sort(([a], [b]) => a.localeCompare(b)));
  const loader = readFileSync(join(root, 'index.js'), 'utf8');
  // optionalDependencies are written by `napi prepublish` at publish time, from the targets and
  // the version, and are not committed: a lock file cannot list packages not yet published, and
  // `npm ci` refuses a package.json that names packages its lock lacks. Present (in a staged
  // release, after napi prepublish), they must name every platform package at this version.
  const optionalOk = (o) => o === undefined || JSON.stringify(sorted(o)) === JSON.stringify(sorted(optional));
  return [
    {
      what: 'package.json version (and optionalDependencies, when napi prepublish has written them)',
      ok: pkg.version === version && optionalOk(pkg.optionalDependencies),
      fix: () => writeJson('package.json', { ...pkg, version, ...(pkg.optionalDependencies && { optionalDependencies: sorted(optional) }) }),
    },
    {
      what: 'package-lock.json root entries',
      ok: lock.version === version && lock.packages[''].version === version && optionalOk(lock.packages[''].optionalDependencies),
      fix: () => {
        lock.version = version;
        lock.packages[''].version = version;
        if (lock.packages[''].optionalDependencies) lock.packages[''].optionalDependencies = sorted(optional);
        writeJson('package-lock.json', lock);
      },
    },
    ...pkg.napi.targets.map((t) => {
      const file = `npm/${platformOf(t).name}/package.json`;
      const want = platformManifest({ ...pkg, version }, t);
      let have = null;
      try {
        have = readJson(file);
      } catch {}
      return {
        what: `${file} (as napi create-npm-dirs writes it)`,
        ok: JSON.stringify(have) === JSON.stringify(want),
        fix: () => writeJson(file, want),
      };
    }),
    {
      what: "index.js's expected platform package version",
      ok: ((m) => m.length > 0 && m.every((x) => (x[2] ?? x[5]) === version))([...loader.matchAll(LOADER_VERSION)]),
      fix: () =>
        writeFileSync(
          join(root, 'index.js'),
          loader.replace(LOADER_VERSION, (_, a, _v, c, d, _w, f) => (a !== undefined ? `${a}${version}${c}` : `${d}${version}${f}`)),
        ),
    },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const arg = process.argv[2];
  if (arg !== undefined && !SEMVER.test(arg)) {
    console.error(`version: "${arg}" is not a version (usage: node scripts/version.mjs [x.y.z[-pre]])`);
    process.exit(2);
  }
  const version = arg ?? readJson('package.json').version;
  if (arg !== undefined) for (const p of places(version)) if (!p.ok) p.fix();
  const bad = places(version).filter((p) => !p.ok);
  for (const p of bad) console.error(`version: out of step with ${version}: ${p.what}`);
  if (bad.length > 0) {
    console.error('version: run `node scripts/version.mjs <version>` to put every place in step');
    process.exit(1);
  }
  console.log(`version: ${version} everywhere (package.json, package-lock.json, ${readJson('package.json').napi.targets.length} platform packages, index.js)`);
}
