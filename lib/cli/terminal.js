'use strict';

// How `rulvar-mcp call` answers a server's elicitation: on the terminal, each field of a form
// asked one by one and a URL printed, on stderr (stdout keeps the result). With no terminal on
// stdin nobody is there to ask, and it declines.
const readline = require('node:readline/promises');
const { shownText } = require('../native.js');

// Every string a server sent is shown through this: escape sequences, controls, hidden and
// bidirectional characters are written as <U+XXXX> (the native rule the lock diff uses), so
// a server cannot draw a link that opens elsewhere or erase what was printed before.
const shown = (/** @type {unknown} */ value) => shownText(typeof value === 'string' ? value : (JSON.stringify(value) ?? ''), false);

// One question at a time: a second elicitation (another call, the same server) waits until
// the first is answered, so one keystroke never answers two forms.
/** @type {Promise<unknown>} */
let turn = Promise.resolve();

function parseField(field, text) {
  switch (field.type) {
    case 'boolean':
      if (/^(y|yes|true)$/i.test(text)) return true;
      if (/^(n|no|false)$/i.test(text)) return false;
      return undefined;
    case 'integer':
      return /^-?\d+$/.test(text) ? Number(text) : undefined;
    case 'number': {
      const n = Number(text);
      return text !== '' && Number.isFinite(n) ? n : undefined;
    }
    case 'array':
      return text
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    default:
      return text;
  }
}

function hintOf(field, required) {
  const choices = field.enum ?? field.items?.enum;
  return [
    shown(field.type),
    Array.isArray(choices) ? `one of ${choices.map(shown).join(', ')}` : '',
    field.default !== undefined ? `default ${shown(JSON.stringify(field.default))}` : '',
    required ? 'required' : 'optional',
  ]
    .filter(Boolean)
    .join('; ');
}

function actionOf(text, yes) {
  const t = text.trim().toLowerCase();
  if (t === 'n' || t === 'no') return 'decline';
  if (t === 'c' || t === 'cancel') return 'cancel';
  return yes;
}

/**
 * The `elicit` hook of the CLI; `io` is the terminal (stdin and stderr unless a test says),
 * `source` the id of the source that asks (named in the prompt).
 */
function terminalElicit(request, ctx, io = { input: process.stdin, output: process.stderr }, source = 'the server') {
  if (!io.input.isTTY) return Promise.resolve({ action: 'decline' });
  const asked = turn.then(() => (ctx.signal?.aborted ? { action: 'cancel' } : askNow(request, ctx, io, source)));
  turn = asked.catch(() => {});
  return asked;
}

/** The URL as the native side checked and normalized it, its host on a line of its own. */
function showUrl(io, url) {
  let host = '';
  try {
    host = new URL(url).host;
  } catch {
    // Not a URL the native side would have passed; shown as it is, escaped.
  }
  io.output.write(`It asks you to open a page on ${shown(host)}:\n  ${shown(url)}\n`);
}

async function askNow(request, ctx, io, source) {
  const rl = readline.createInterface({ input: io.input, output: io.output, terminal: true });
  const signal = ctx.signal;
  const ask = (q) => rl.question(q, { signal });
  try {
    io.output.write(`\n${shown(source)} asks: ${shown(request.message)}\n`);
    if (request.mode === 'url') {
      showUrl(io, request.url);
      return { action: actionOf(await ask('Done? [Y = done / n = decline / c = cancel] '), 'accept') };
    }
    const schema = request.requestedSchema ?? {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const content = {};
    for (const [name, field] of Object.entries(schema.properties ?? {})) {
      const label = `${shown(field.title ?? name)}${field.description ? ` (${shown(field.description)})` : ''}`;
      for (;;) {
        const text = (await ask(`${label} [${hintOf(field, required.has(name))}]: `)).trim();
        // Left empty: the schema's default applies, if it has one.
        if (text === '' && (!required.has(name) || field.default !== undefined)) break;
        const value = text === '' ? undefined : parseField(field, text);
        if (value === undefined) {
          io.output.write(text === '' ? '  a value is required\n' : `  not a ${shown(field.type)}\n`);
          continue;
        }
        content[name] = value;
        break;
      }
    }
    const action = actionOf(await ask('Send? [Y = send / n = decline / c = cancel] '), 'accept');
    return action === 'accept' ? { action, content } : { action };
  } finally {
    rl.close();
  }
}

module.exports = { terminalElicit, shown };
