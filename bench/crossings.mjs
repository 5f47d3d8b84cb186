// What V8 takes to carry one in-process echo call across the bridge as JSON text, each text
// alone, in µs (median of 5 rounds of 1,000,000): `node bench/crossings.mjs`. The texts are the
// ones an echo call of the bench's servers carries (lib/inprocess.js, lib/calls.js): the
// request the native client writes, which the bridge parses for the server; the server's reply,
// which the bridge stringifies for the native client; the batch of completions the native side
// hands back; the input, stringified for the native side. Beside them, the same request built
// as an object literal, which is what a client that hands the server objects pays.
const REQUEST = '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hello"}}}';
const BATCH = '[[3,1,"hello"]]';
const input = { text: 'hello' };

let sink;
const ops = {
  'JSON.parse of the request': (i) => (sink = JSON.parse(i & 1 ? REQUEST : `${REQUEST} `)),
  'JSON.stringify of the reply': (i) => (sink = JSON.stringify({ jsonrpc: '2.0', id: i, result: { content: [{ type: 'text', text: 'hello' }] } })),
  'JSON.parse of the batch': (i) => (sink = JSON.parse(i & 1 ? BATCH : `${BATCH} `)),
  'JSON.stringify of the input': () => (sink = JSON.stringify(input)),
  'the request as an object literal': (i) => (sink = { jsonrpc: '2.0', id: i, method: 'tools/call', params: { name: 'echo', arguments: input } }),
};

const N = 1_000_000;
const out = {};
for (const [name, op] of Object.entries(ops)) {
  const rounds = [];
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    for (let i = 0; i < N; i++) op(i);
    rounds.push(((performance.now() - t0) * 1000) / N);
  }
  rounds.sort((a, b) => a - b);
  out[name] = Number(rounds[2].toFixed(3));
}
if (sink === undefined) throw new Error('nothing ran');
console.log(JSON.stringify({ node: process.version, usPerOp: out }, null, 2));
