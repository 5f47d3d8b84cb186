'use strict';

// How `rulvar-mcp call` answers a server's elicitation: on the terminal, each field of a form
// asked one by one and a URL printed, on stderr (stdout keeps the result). With no terminal on
// stdin nobody is there to ask, and it declines.
const readline = require('node:readline/promises');

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
    field.type,
    Array.isArray(choices) ? `one of ${choices.join(', ')}` : '',
    field.default !== undefined ? `default ${JSON.stringify(field.default)}` : '',
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

/** The `elicit` hook of the CLI; `io` is the terminal (stdin and stderr unless a test says). */
async function terminalElicit(request, ctx, io = { input: process.stdin, output: process.stderr }) {
  if (!io.input.isTTY) return { action: 'decline' };
  const rl = readline.createInterface({ input: io.input, output: io.output, terminal: true });
  const signal = ctx.signal;
  const ask = (q) => rl.question(q, { signal });
  try {
    io.output.write(`\nThe server asks: ${request.message}\n`);
    if (request.mode === 'url') {
      io.output.write(`Open this URL in a browser: ${request.url}\n`);
      return { action: actionOf(await ask('Done? [Y = done / n = decline / c = cancel] '), 'accept') };
    }
    const schema = request.requestedSchema ?? {};
    const required = new Set(Array.isArray(schema.required) ? schema.required : []);
    const content = {};
    for (const [name, field] of Object.entries(schema.properties ?? {})) {
      const label = `${field.title ?? name}${field.description ? ` (${field.description})` : ''}`;
      for (;;) {
        const text = (await ask(`${label} [${hintOf(field, required.has(name))}]: `)).trim();
        // Left empty: the schema's default applies, if it has one.
        if (text === '' && (!required.has(name) || field.default !== undefined)) break;
        const value = text === '' ? undefined : parseField(field, text);
        if (value === undefined) {
          io.output.write(text === '' ? '  a value is required\n' : `  not a ${field.type}\n`);
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

module.exports = { terminalElicit };
