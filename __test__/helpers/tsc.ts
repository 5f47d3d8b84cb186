// Compiling the type tests' projects with the repository's TypeScript, as they are or against a
// changed copy of index.d.ts (to prove a type test fails when the declarations it guards break).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const tsc = fileURLToPath(new URL('../../node_modules/typescript/bin/tsc', import.meta.url));

export interface Compiled {
  ok: boolean;
  output: string;
}

/** `tsc -p tsconfig`: whether it compiled, and what it said. */
export function compile(tsconfig: string): Compiled {
  try {
    execFileSync(process.execPath, [tsc, '-p', tsconfig], { encoding: 'utf8', stdio: 'pipe' });
    return { ok: true, output: '' };
  } catch (err: any) {
    return { ok: false, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

/** The project of `tsconfig`, its '@rulvar/mcp-native' resolved to `declarations` instead. */
export function compileWith(tsconfig: string, declarations: string): Compiled {
  const tmp = mkdtempSync(join(tmpdir(), 'rulvar-types-'));
  writeFileSync(join(tmp, 'index.d.ts'), declarations);
  const config = JSON.parse(readFileSync(tsconfig, 'utf8'));
  config.compilerOptions.paths = { '@rulvar/mcp-native': [join(tmp, 'index.d.ts')] };
  config.files = config.files.map((file: string) => join(dirname(tsconfig), file));
  writeFileSync(join(tmp, 'tsconfig.json'), JSON.stringify(config));
  return compile(join(tmp, 'tsconfig.json'));
}
