// The public types compile the way an engine uses them, and wrong configs do not.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const tsc = fileURLToPath(new URL('../node_modules/typescript/bin/tsc', import.meta.url));
const project = fileURLToPath(new URL('./types/tsconfig.json', import.meta.url));

function compile(tsconfig: string): { ok: boolean; output: string } {
  try {
    execFileSync(process.execPath, [tsc, '-p', tsconfig], { encoding: 'utf8', stdio: 'pipe' });
    return { ok: true, output: '' };
  } catch (err: any) {
    return { ok: false, output: `${err.stdout ?? ''}${err.stderr ?? ''}` };
  }
}

describe('index.d.ts', () => {
  it('compiles an engine-style use under strict, wrong keys refused', () => {
    const result = compile(project);
    expect(result.output).toBe('');
    expect(result.ok).toBe(true);
  }, 60_000);

  it('would fail if a wrong key compiled (the @ts-expect-error lines carry weight)', () => {
    // The same file without its @ts-expect-error markers must not compile.
    const dir = mkdtempSync(join(tmpdir(), 'rulvar-types-'));
    const source = readFileSync(fileURLToPath(new URL('./types/engine.ts', import.meta.url)), 'utf8');
    writeFileSync(join(dir, 'engine.ts'), source.replace(/\/\/ @ts-expect-error.*\n/g, ''));
    // The copy resolves the SDK's types from this package's node_modules.
    symlinkSync(fileURLToPath(new URL('../node_modules', import.meta.url)), join(dir, 'node_modules'), 'dir');
    const config = JSON.parse(readFileSync(project, 'utf8'));
    config.compilerOptions.baseUrl = fileURLToPath(new URL('./types/', import.meta.url));
    writeFileSync(join(dir, 'tsconfig.json'), JSON.stringify(config));
    const result = compile(join(dir, 'tsconfig.json'));
    expect(result.ok).toBe(false);
    expect(result.output.match(/error TS/g)?.length).toBe(4);
  }, 60_000);
});
