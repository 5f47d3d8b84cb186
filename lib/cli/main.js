'use strict';

// The CLI's dispatcher: one command per run, its exit code.
// Exit codes: 0 done (diff: no change from the lock), 1 a failed connect or call (diff: the
// import differs from the lock), 2 a refused config (or usage, or a lock of another source).
const api = require('../index.js');
const { refusalKindOf } = require('../errors.js');
const { USAGE, UsageError, parse, buildConfig } = require('./args.js');
const { addOAuth } = require('./login.js');
const { inspect, call, shownLines } = require('./show.js');
const { lock, diff } = require('./lock.js');
const cassette = require('./cassette.js');
const { terminalElicit } = require('./terminal.js');

function exitCodeOf(err) {
  if (err instanceof UsageError) return 2;
  if (err.exitCode !== undefined) return err.exitCode;
  // A refused config, discovery bound or lock is 2 (a ConfigError, code 'config'); a connect
  // that failed (a plain Error) or timed out (the refusal of kind 'connect_timeout') is 1.
  if (err.code === 'config' && refusalKindOf(err) !== 'connect_timeout') return 2;
  return 1;
}

async function main(argv) {
  let parsed;
  try {
    parsed = parse(argv);
  } catch (err) {
    console.error(`rulvar-mcp: ${err.message}\n${USAGE}`);
    return 2;
  }
  const { values, positionals } = parsed;
  const [command, ...rest] = positionals;
  if (values.help || command === undefined) {
    console.log(USAGE);
    return values.help ? 0 : 2;
  }
  let source;
  let listener = null;
  try {
    if (!['inspect', 'call', 'lock', 'diff', 'record', 'cassette'].includes(command)) throw new UsageError(`unknown command '${command}'`);
    if (values.out !== undefined && command !== 'lock' && command !== 'record') throw new UsageError('--out is an option of lock and record');
    if (values.call !== undefined && command !== 'record') throw new UsageError('--call is an option of record');
    if (command === 'cassette') {
      if (rest[0] === undefined) throw new UsageError('cassette needs the cassette file');
      console.log(cassette.show(rest[0], values.json === true));
      return 0;
    }
    const config = buildConfig(values);
    if (command === 'record') {
      if (values.out === undefined) throw new UsageError('record needs --out FILE');
      config.cassette = { path: values.out, mode: 'record' };
    }
    if (command === 'diff') {
      if (rest[0] === undefined) throw new UsageError('diff needs the lock file');
      config.lock = rest[0];
      config.lockPolicy = 'report';
    }
    listener = await addOAuth(config, values);
    // A tool that asks the user something mid-call asks the person at this terminal.
    if (command === 'call') {
      const io = { input: process.stdin, output: process.stderr };
      const id = () => source?.id ?? 'the server';
      config.elicit = { handler: (request, ctx) => terminalElicit(request, ctx, io, id()), form: true, url: true };
    }
    source = api.mcp(config);
    if (command === 'inspect') await inspect(source, values.json);
    else if (command === 'lock') await lock(source, values.out);
    else if (command === 'diff') return await diff(source, rest[0], values.json);
    else if (command === 'record') console.log(await cassette.record(source, values.call ?? [], String(values.out)));
    else await call(source, rest[0], rest[1], values.json);
    return 0;
  } catch (err) {
    const code = exitCodeOf(err);
    if (err instanceof UsageError) console.error(`rulvar-mcp: ${err.message}\n${USAGE}`);
    else console.error(`rulvar-mcp: ${shownLines(String(err.message).split('\n')[0])}`);
    // A refusal that lists what it refuses (a lock's changes, poisoning signs) shows the list.
    if (!(err instanceof UsageError) && /\n  /.test(String(err.message))) {
      for (const line of String(err.message).split('\n').slice(1)) console.error(shownLines(line));
    }
    return code;
  } finally {
    if (source) await source.close();
    listener?.close();
  }
}

module.exports = { main };
