'use strict';

// The CLI's cassette commands: `record` (a server's opening, its list and the calls asked for,
// written to a cassette file) and `cassette` (what a cassette holds, as a replay reads it).

const { readCassette } = require('../testing.js');
const { shownText } = require('../native.js');

/** @param {string} message */
const usage = (message) => Object.assign(new Error(message), { exitCode: 2 });

/**
 * `--call` values, each `tool` or `tool {json input}`.
 * @param {string[]} specs
 * @returns {Array<{ tool: string, input: unknown }>}
 */
function parseCalls(specs) {
  return specs.map((spec) => {
    const m = /^\s*(\S+)\s*([\s\S]*)$/.exec(spec);
    if (m === null) throw usage(`--call needs a tool name: '${spec}'`);
    const [, tool, rest] = m;
    if (rest.trim() === '') return { tool, input: {} };
    try {
      return { tool, input: JSON.parse(rest) };
    } catch (err) {
      throw usage(`--call ${tool}: the input is not JSON (${/** @type {Error} */ (err).message})`);
    }
  });
}

/**
 * Records `source` (its config has `cassette: { path: out, mode: 'record' }`): the import, then
 * each call in order; a call that fails is told on stderr (what reached the server is recorded). Closes the
 * source, so the file is complete, and says what it holds.
 * @param {any} source
 * @param {string[]} callSpecs
 * @param {string} out
 * @returns {Promise<string>}
 */
async function record(source, callSpecs, out) {
  const calls = parseCalls(callSpecs);
  const defs = await source.tools({ runId: 'rulvar-mcp' });
  for (const { tool, input } of calls) {
    const def = defs.find((/** @type {any} */ d) => d.name === tool);
    if (def === undefined) throw usage(`record: no tool '${tool}' was imported`);
    try {
      await def.execute(input, { runId: 'rulvar-mcp', spanId: 'cli', agent: 'rulvar-mcp' });
    } catch (err) {
      console.error(`rulvar-mcp: ${tool} failed: ${shownText(String(/** @type {Error} */ (err).message), false)}`);
    }
  }
  await source.close();
  const held = readCassette(out);
  return `wrote ${out}: ${held.interactions.length} request(s) of ${source.id}, protocol ${held.protocol}, toolsetHash ${held.toolsetHash}`;
}

/**
 * What the cassette at `file` holds: JSON, or a line per request for a person.
 * @param {string} file
 * @param {boolean} json
 * @returns {string}
 */
function show(file, json) {
  const held = readCassette(file);
  if (json) return JSON.stringify(held, null, 2);
  const server = /** @type {any} */ (held.server);
  const name = server && typeof server === 'object' ? `${server.name ?? '?'} ${server.version ?? ''}`.trim() : 'unnamed';
  const lines = [`${file}: ${shownText(name, false)}, protocol ${held.protocol}, toolsetHash ${held.toolsetHash ?? 'none'}`];
  for (const i of held.interactions) {
    const what = i.tool !== undefined && i.tool !== null ? `${i.method} ${i.tool}` : i.method;
    const extra = [i.notifications ? `${i.notifications} notification(s)` : '', i.asks ? `${i.asks} request(s) of the server` : ''].filter(Boolean).join(', ');
    lines.push(`  ${shownText(what, false)} -> ${i.outcome ?? 'no answer'}${extra ? `; ${extra}` : ''}`);
  }
  return lines.join('\n');
}

module.exports = { record, show };
