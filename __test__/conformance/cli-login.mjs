// The CLI's `--oauth` login as a conformance client: runs `rulvar-mcp inspect --http URL
// --oauth` and plays the person at the browser, opening the authorization URL it prints and
// following the authorization server's redirect to the CLI's loopback listener. Then checks
// that the token file is readable by its owner only.
import { spawn } from 'node:child_process';
import { mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const url = process.argv[process.argv.length - 1];
const cli = fileURLToPath(new URL('../../bin/rulvar-mcp.js', import.meta.url));
const store = join(mkdtempSync(join(tmpdir(), 'rulvar-oauth-')), 'tokens.json');
const child = spawn(process.execPath, [cli, 'inspect', '--json', '--oauth', '--oauth-store', store, '--http', url], {
  stdio: ['ignore', 'pipe', 'pipe'],
});
let err = '';
let opened = false;
child.stdout.pipe(process.stdout);
child.stderr.on('data', async (chunk) => {
  err += chunk;
  const m = /^\s+(https?:\/\/\S+)$/m.exec(err);
  if (!m || opened) return;
  opened = true;
  const answer = await fetch(m[1], { redirect: 'manual' });
  const back = new URL(answer.headers.get('location'), m[1]).href;
  await fetch(back);
});
const code = await new Promise((resolve) => child.on('exit', resolve));
process.stderr.write(err);
if (code !== 0) process.exit(code ?? 1);
const mode = statSync(store).mode & 0o777;
if (mode !== 0o600) {
  console.error(`token file mode ${mode.toString(8)}`);
  process.exit(1);
}
