'use strict';

// What the CLI shows of an import (inspect) and of one call (call).
const api = require('../index.js');
const { unvalidatedReasons, importedAs } = require('../source.js');
const { shownText } = require('../native.js');
const { shown } = require('./terminal.js');
const { UsageError } = require('./args.js');

// A server's text of several lines (a result, an error), shown line by line, escaped.
const shownLines = (/** @type {unknown} */ text) => shownText(String(text), true);

/** A progress line on stderr while connecting, only for a person at a terminal. */
async function connecting(source, work) {
  if (!process.stderr.isTTY) return work();
  process.stderr.write(`connecting to ${source.id}...`);
  try {
    return await work();
  } finally {
    process.stderr.write('\r\x1b[K');
  }
}

async function inspect(source, json) {
  const session = { runId: 'rulvar-mcp' };
  const defs = await connecting(source, () => source.tools(session));
  const resolved = await api.resolveToolset(defs, session);
  const tools = defs.map((def) => ({
    name: def.name,
    // As the core admitted it: `prefix` and `names: 'map'` undone, both schemas counted.
    original: importedAs(def)?.original ?? def.name,
    risk: def.risk ?? null,
    needsApproval: def.needsApproval,
    schemaBytes: importedAs(def)?.schemaBytes ?? 0,
    contractHash: api.toolContractHash(def).slice(0, 12),
    description: def.description,
    // Why the tool's input or output is not validated (its schema could not be compiled).
    unvalidated: unvalidatedReasons(def) ?? null,
  }));
  const report = {
    source: source.id,
    tools,
    toolsetHash: resolved.hash,
    authorityHash: resolved.authorityHash,
    posture: source.describeRegulatedPosture(),
    protocol: api.protocolOf(source) ?? null,
    leftOut: api.leftOutOf(source) ?? [],
  };
  if (json) {
    console.log(JSON.stringify(report, null, 2));
    return;
  }
  console.log(`${source.id}: ${tools.length} tool(s) admitted`);
  const rows = [
    ['name', 'original', 'risk', 'approval', 'schema', 'contract'],
    ...tools.map((t) => [shown(t.name), shown(t.original), t.risk ?? '-', t.needsApproval ? 'yes' : 'no', `${t.schemaBytes} B`, t.contractHash]),
  ];
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  for (const row of rows) console.log(`  ${row.map((c, i) => c.padEnd(widths[i])).join('  ')}`.trimEnd());
  for (const t of tools.filter((t) => t.unvalidated !== null)) {
    for (const side of ['input', 'output']) {
      if (t.unvalidated[side] !== undefined) console.log(`  ${shown(t.name)}: ${side} not validated: ${shown(t.unvalidated[side])}`);
    }
  }
  console.log(`toolsetHash    ${report.toolsetHash}`);
  console.log(`authorityHash  ${report.authorityHash}`);
  console.log(`posture        ${JSON.stringify(report.posture)}`);
  console.log(`protocol       ${report.protocol}`);
  for (const t of report.leftOut) console.log(`  left out: ${shown(t.name)}: ${shown(t.reason)}`);
}

async function call(source, toolName, inputText, json) {
  if (toolName === undefined) throw new UsageError('call needs a tool name');
  let input = {};
  if (inputText !== undefined) {
    try {
      input = JSON.parse(inputText);
    } catch (err) {
      throw new UsageError(`the input is not JSON: ${err.message}`);
    }
  }
  const session = { runId: 'rulvar-mcp' };
  const defs = await connecting(source, () => source.tools(session));
  const def = defs.find((d) => d.name === toolName);
  if (def === undefined) {
    const message = `no tool '${toolName}' was admitted from ${source.id} (have: ${defs.map((d) => shown(d.name)).join(', ')})`;
    throw Object.assign(new Error(message), { exitCode: 1 });
  }
  const result = await def.execute(input, { runId: 'rulvar-mcp', spanId: 'cli', agent: 'rulvar-mcp' });
  if (json) console.log(JSON.stringify({ tool: toolName, result }, null, 2));
  else console.log(shownLines(typeof result === 'string' ? result : JSON.stringify(result, null, 2)));
}

module.exports = { inspect, call, connecting, shownLines };
