const fs = require('fs'); const path = require('path');
const { validateJson } = require('./lib/index.js');
let total = 0, misses = [];
for (const draft of ['draft2020-12', 'draft7']) {
  for (const f of fs.readdirSync(`/tmp/jsts/${draft}`)) {
    if (f === 'refRemote.json') continue;
    for (const group of JSON.parse(fs.readFileSync(`/tmp/jsts/${draft}/${f}`, 'utf8'))) {
      const schema = draft === 'draft7' && typeof group.schema === 'object' && !('$schema' in group.schema) ? { $schema: 'http://json-schema.org/draft-07/schema#', ...group.schema } : group.schema;
      for (const t of group.tests) {
        total++;
        let r; try { r = validateJson(schema, t.data); } catch (e) { misses.push(`${draft}/${f}: ${group.description} / ${t.description}: threw ${e.message.slice(0,120)}`); continue; }
        if (r.valid !== t.valid) misses.push(`${draft}/${f}: ${group.description} / ${t.description}: got ${r.valid} want ${t.valid}${r.issues ? ' ' + JSON.stringify(r.issues).slice(0,150) : ''}`);
      }
    }
  }
}
console.log(total, misses.length); for (const m of misses) console.log(m);
