'use strict';

// The CLI's toolset lock commands: lock (write it) and diff (what an import changes from it).
const fs = require('node:fs');
const { lockTextOf } = require('../source.js');
const { shown } = require('./terminal.js');
const { connecting } = require('./show.js');

async function lock(source, out) {
  const text = await connecting(source, () => lockTextOf(source));
  if (out === undefined) {
    process.stdout.write(text);
    return;
  }
  fs.writeFileSync(out, text);
  const written = JSON.parse(text);
  console.log(`wrote ${out}: ${written.tools.length} tool(s) of ${source.id}, toolsetHash ${written.toolsetHash}`);
}

async function diff(source, lockFile, json) {
  await connecting(source, () => source.tools({ runId: 'rulvar-mcp' }));
  const report = source.lockReport();
  if (json) {
    console.log(JSON.stringify({ source: source.id, lock: lockFile, changes: report.changes, signs: report.signs }, null, 2));
  } else {
    if (report.changes.length === 0) console.log(`${source.id}: no change from ${lockFile}`);
    else console.log(`${source.id}: ${report.changes.length} change(s) from ${lockFile}`);
    for (const change of report.changes) console.log(`  ${shown(change.text)}`);
    for (const sign of report.signs) console.log(`  poisoning sign: ${shown(sign.text)}`);
  }
  return report.changes.length === 0 ? 0 : 1;
}

module.exports = { lock, diff };
