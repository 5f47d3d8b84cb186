// A tool folder: npm packages the tests run (the conformance suite, other runtimes) installed
// apart from the project, from a package.json and lock kept in the repository, once (again only
// when the lock changes or a file the caller needs is missing).
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Installs `pinned`'s package.json and package-lock.json into `tools`; `needed`: files it must hold. */
export function installPinned(pinned, tools, needed = []) {
  const lock = readFileSync(join(pinned, 'package-lock.json'), 'utf8');
  const stamp = join(tools, '.installed-lock');
  if (existsSync(stamp) && readFileSync(stamp, 'utf8') === lock && needed.every((f) => existsSync(f))) return;
  rmSync(tools, { recursive: true, force: true });
  mkdirSync(tools, { recursive: true });
  for (const f of ['package.json', 'package-lock.json']) copyFileSync(join(pinned, f), join(tools, f));
  // Under `npm test` the outer npm's project root is in the environment: the nested npm must
  // find its own (the tool folder), not install into the project.
  const env = { ...process.env };
  delete env.npm_config_local_prefix;
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: tools, env, stdio: 'pipe', timeout: 280_000 });
  writeFileSync(stamp, lock);
}
