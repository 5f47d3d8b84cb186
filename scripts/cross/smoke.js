// Cross-target smoke test, run by the target's own Node (under qemu or Wine where needed):
//   node smoke.js <addon.node> <server-command> <server-script | -> [<out.json>]
// Loads the addon through the package's own entry (lib/index.js, via the generated loader's
// NAPI_RS_NATIVE_LIBRARY_PATH), spawns the stdio server, lists its tools, calls them, closes,
// and checks that neither the server nor the grandchild it started is left. Then (unless
// SMOKE_NO_HOST_KILL is set: under qemu the same Node cannot be started again) it starts a
// second host that opens the server and kills itself hard (SIGKILL on Unix, TerminateProcess
// on Windows), and checks that the server and grandchild died with it. Prints one JSON
// line (also written to <out.json>: Node under Wine cannot write to a pipe) and exits 0 on success.
'use strict';
const fs = require('fs');
const path = require('path');
const hostMode = process.argv[2] === '--host';
const [addon, command, script, out] = process.argv.slice(hostMode ? 3 : 2);
process.env.NAPI_RS_NATIVE_LIBRARY_PATH = path.resolve(addon);
const report = { node: process.version, platform: process.platform, arch: process.arch, steps: [] };
const finish = (ok, error) => {
  report.ok = ok;
  if (error) report.error = String(error && error.stack ? error.stack : error);
  const text = JSON.stringify(report);
  if (out) fs.writeFileSync(out, text + '\n');
  console.log(text);
  process.exit(ok ? 0 : 1);
};
const alive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return e.code === 'EPERM';
  }
};
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
// The second host: opens the server, writes the pids, kills itself without any clean-up.
async function host() {
  const { mcp } = require(path.join(__dirname, '..', '..', 'lib', 'index.js'));
  const ctx = { signal: new AbortController().signal, log() {} };
  const source = mcp({ transport: 'stdio', command, args: script === '-' ? [] : [script], stderr: 'pipe' });
  const tools = await source.tools({ runId: 'host' });
  const pids = await tools.find((t) => t.name === 'pids').execute({}, ctx);
  fs.writeFileSync(out, typeof pids === 'string' ? pids : JSON.stringify(pids));
  process.kill(process.pid, 'SIGKILL');
}
if (hostMode) {
  host().catch((e) => {
    console.error(e);
    process.exit(3);
  });
  return;
}

(async () => {
  const { mcp, schemaHash } = require(path.join(__dirname, '..', '..', 'lib', 'index.js'));
  report.schemaHash = schemaHash({ type: 'object' });
  const ctx = { signal: new AbortController().signal, log() {}, agent: { agentType: 'smoke' }, isolation: 'none' };
  const source = mcp({ transport: 'stdio', command, args: script === '-' ? [] : [script], stderr: 'pipe' });
  const tools = await source.tools({ runId: 'smoke' });
  report.steps.push(`listed ${tools.map((t) => t.name).join(',')}`);
  const doubled = await tools.find((t) => t.name === 'double').execute({ n: 21 }, ctx);
  report.steps.push(`double(21) -> ${JSON.stringify(doubled)}`);
  if (!JSON.stringify(doubled).includes('42')) throw new Error('double(21) did not answer 42');
  const pids = await tools.find((t) => t.name === 'pids').execute({}, ctx);
  const text = typeof pids === 'string' ? pids : JSON.stringify(pids);
  const { server, grandchild } = JSON.parse(text.match(/\{[^{}]*"server"[^{}]*\}/)[0].replace(/\\"/g, '"'));
  report.steps.push(`server pid ${server}, grandchild pid ${grandchild}, both alive: ${alive(server) && alive(grandchild)}`);
  const t0 = Date.now();
  await source.close();
  report.steps.push(`closed in ${Date.now() - t0} ms`);
  for (let i = 0; i < 40 && (alive(server) || alive(grandchild)); i++) await sleep(50);
  const left = [server, grandchild].filter(alive);
  report.steps.push(`left after close: ${left.length ? left.join(',') : 'none'}`);
  if (left.length) throw new Error(`processes left after close: ${left.join(',')}`);
  if (!process.env.SMOKE_NO_HOST_KILL) {
    const pidFile = path.resolve((out || path.join(require('os').tmpdir(), 'smoke')) + '.host-pids');
    try { fs.unlinkSync(pidFile); } catch {}
    const r = require('child_process').spawnSync(process.execPath, [__filename, '--host', addon, command, script, pidFile], { stdio: 'ignore', timeout: 60000 });
    const text = fs.readFileSync(pidFile, 'utf8');
    const ids = JSON.parse(text.match(/\{[^{}]*"server"[^{}]*\}/)[0].replace(/\\"/g, '"'));
    report.steps.push(`host killed itself (exit ${r.status ?? r.signal}) with server ${ids.server} and grandchild ${ids.grandchild} running`);
    for (let i = 0; i < 60 && (alive(ids.server) || alive(ids.grandchild)); i++) await sleep(50);
    const orphans = [ids.server, ids.grandchild].filter(alive);
    report.steps.push(`left after the host died: ${orphans.length ? orphans.join(',') : 'none'}`);
    // Windows: the job's kill-on-close ends the whole tree. Linux: PR_SET_PDEATHSIG reaches the
    // server only; a grandchild outlives a SIGKILLed host (documented), so it is ended here.
    const mustBeGone = process.platform === 'win32' ? [ids.server, ids.grandchild] : [ids.server];
    for (const pid of orphans) if (!mustBeGone.includes(pid)) try { process.kill(pid, 'SIGKILL'); } catch {}
    const outlived = orphans.filter((pid) => mustBeGone.includes(pid));
    if (outlived.length) throw new Error(`processes outlived the host: ${outlived.join(',')}`);
  }
  finish(true);
})().catch((e) => finish(false, e));
