'use strict';

// A tool's output schema compiled to JS code that checks the structured value `JSON.parse` gave
// a call's result, so that a structured result need not be parsed and validated again in native
// code on the way (a 10 KB result spent most of the JS thread's time there).
//
// The check may only ever accept what the native validator accepts; it need not accept all of
// it. Whatever it does not accept is asked of the native validator again (`recheck`), whose
// word is final: a refusal is worded there, as before. So the check covers a small, exact
// subset of JSON Schema, and a schema with anything else in it (a keyword it does not know,
// `$ref`, `pattern`, `format`, which output validation asserts, draft 4's readings, a number
// JS cannot hold exactly) gets no check: its results take the native path whole. The native
// side hands a result on unvalidated only when both parsers read its text alike
// (`src/core/plain.rs`), so the value checked here is the value the native validator would see.
//
// The code is built from the schema's words only through `JSON.stringify`d strings and finite
// numbers, and from constants held in an array the code receives: nothing a server writes is
// ever code.

const hasOwn = Object.prototype.hasOwnProperty;

/** The dialects a check reads as the native validator does (draft 6 on: `1.0` is an integer). */
const DIALECTS = new Set([
  'http://json-schema.org/draft-06/schema',
  'http://json-schema.org/draft-07/schema',
  'https://json-schema.org/draft/2019-09/schema',
  'https://json-schema.org/draft/2020-12/schema',
]);

/** Keywords that assert nothing. */
const ANNOTATIONS = new Set(['title', 'description', 'default', 'examples', '$comment', 'deprecated', 'readOnly', 'writeOnly']);

/** @type {Record<string, (v: string) => string>} */
const TYPES = {
  null: (v) => `${v} === null`,
  boolean: (v) => `typeof ${v} === "boolean"`,
  object: (v) => `(typeof ${v} === "object" && ${v} !== null && !Array.isArray(${v}))`,
  array: (v) => `Array.isArray(${v})`,
  number: (v) => `typeof ${v} === "number"`,
  integer: (v) => `Number.isInteger(${v})`,
  string: (v) => `typeof ${v} === "string"`,
};

/** Schemas past these take the native path: a check is code, and code has a cost to build. */
const MAX_SCHEMA_CHARS = 64 * 1024;
const MAX_DEPTH = 32;

class Unsupported extends Error {}

/** @param {unknown} x */
const isObject = (x) => typeof x === 'object' && x !== null && !Array.isArray(x);

/** A number the check can compare exactly: finite, and an integer only within 2^53. */
function exactNumber(/** @type {unknown} */ x) {
  if (typeof x !== 'number' || !Number.isFinite(x) || (Number.isInteger(x) && !Number.isSafeInteger(x))) throw new Unsupported();
  return Object.is(x, -0) ? '0' : String(x);
}

function count(/** @type {unknown} */ x) {
  if (!Number.isSafeInteger(x) || /** @type {number} */ (x) < 0) throw new Unsupported();
  return String(x);
}

/** A primitive `enum` or `const` may hold (compared with ===, as the native validator compares them). */
function primitive(/** @type {unknown} */ x) {
  if (x === null || typeof x === 'string' || typeof x === 'boolean') return x;
  if (typeof x === 'number') return exactNumber(x) && x;
  throw new Unsupported();
}

/** The code of one check: statements that `return false` when a value is not accepted. */
class Build {
  constructor() {
    /** @type {unknown[]} constants the code reads as c[i] */
    this.consts = [];
    /** @type {string[]} functions of `anyOf` branches */
    this.fns = [];
    this.vars = 0;
  }

  /** @param {unknown} value */
  konst(value) {
    this.consts.push(value);
    return `c[${this.consts.length - 1}]`;
  }

  fresh() {
    return `v${++this.vars}`;
  }

  /**
   * @param {unknown} schema
   * @param {string} v the variable holding the value
   * @param {number} depth
   * @returns {string}
   */
  schema(schema, v, depth) {
    if (schema === true) return '';
    if (schema === false) return 'return false;';
    if (!isObject(schema) || depth > MAX_DEPTH) throw new Unsupported();
    const s = /** @type {Record<string, any>} */ (schema);
    let code = '';
    for (const key of Object.keys(s)) {
      if (ANNOTATIONS.has(key)) continue;
      if (key === '$schema') {
        if (depth !== 0 || typeof s.$schema !== 'string' || !DIALECTS.has(s.$schema.replace(/#$/, ''))) throw new Unsupported();
        continue;
      }
      const keyword = KEYWORDS[key];
      if (keyword === undefined) throw new Unsupported();
      code += keyword(this, s[key], v, depth, s);
    }
    return code;
  }

  /** A branch of `anyOf` as a function of its own, which answers true or false. */
  branch(/** @type {unknown} */ schema, /** @type {number} */ depth) {
    const at = this.fns.push('') - 1;
    const v = this.fresh();
    this.fns[at] = `function f${at}(${v}) {${this.schema(schema, v, depth)}return true;}`;
    return `f${at}`;
  }
}

/**
 * What each keyword asserts, as code; a value the keyword does not apply to passes.
 * @type {Record<string, (b: Build, arg: any, v: string, depth: number, parent: Record<string, any>) => string>}
 */
const KEYWORDS = {
  type(_b, arg, v) {
    const types = typeof arg === 'string' ? [arg] : arg;
    if (!Array.isArray(types) || types.length === 0 || !types.every((t) => typeof t === 'string' && hasOwn.call(TYPES, t))) throw new Unsupported();
    return `if (!(${types.map((t) => TYPES[t](v)).join(' || ')})) return false;`;
  },
  enum(b, arg, v) {
    if (!Array.isArray(arg) || arg.length === 0) throw new Unsupported();
    return `if (!${b.konst(new Set(arg.map(primitive)))}.has(${v})) return false;`;
  },
  const(b, arg, v) {
    return `if (${v} !== ${b.konst(primitive(arg))}) return false;`;
  },
  minLength: (_b, arg, v) => `if (typeof ${v} === "string" && ${v}.length < 2 * ${count(arg)} && points(${v}) < ${count(arg)}) return false;`,
  maxLength: (_b, arg, v) => `if (typeof ${v} === "string" && ${v}.length > ${count(arg)} && points(${v}) > ${count(arg)}) return false;`,
  minItems: (_b, arg, v) => `if (Array.isArray(${v}) && ${v}.length < ${count(arg)}) return false;`,
  maxItems: (_b, arg, v) => `if (Array.isArray(${v}) && ${v}.length > ${count(arg)}) return false;`,
  minProperties: (_b, arg, v) => `if (${TYPES.object(v)} && Object.keys(${v}).length < ${count(arg)}) return false;`,
  maxProperties: (_b, arg, v) => `if (${TYPES.object(v)} && Object.keys(${v}).length > ${count(arg)}) return false;`,
  minimum: (_b, arg, v) => `if (typeof ${v} === "number" && !(${v} >= ${exactNumber(arg)})) return false;`,
  maximum: (_b, arg, v) => `if (typeof ${v} === "number" && !(${v} <= ${exactNumber(arg)})) return false;`,
  // Draft 6 on: a number (draft 4's boolean form is not read here).
  exclusiveMinimum: (_b, arg, v) => `if (typeof ${v} === "number" && !(${v} > ${exactNumber(arg)})) return false;`,
  exclusiveMaximum: (_b, arg, v) => `if (typeof ${v} === "number" && !(${v} < ${exactNumber(arg)})) return false;`,
  required(_b, arg, v) {
    if (!Array.isArray(arg) || !arg.every((k) => typeof k === 'string')) throw new Unsupported();
    if (arg.length === 0) return '';
    return `if (${TYPES.object(v)}) {${arg.map((k) => `if (!${own(v, JSON.stringify(k))}) return false;`).join('')}}`;
  },
  properties(b, arg, v, depth) {
    if (!isObject(arg)) throw new Unsupported();
    let body = '';
    for (const [key, sub] of Object.entries(arg)) {
      const x = b.fresh();
      const code = b.schema(sub, x, depth + 1);
      if (code !== '') body += `if (${own(v, JSON.stringify(key))}) {const ${x} = ${v}[${JSON.stringify(key)}];${code}}`;
    }
    return body === '' ? '' : `if (${TYPES.object(v)}) {${body}}`;
  },
  additionalProperties(b, arg, v, depth, parent) {
    const x = b.fresh();
    const code = b.schema(arg, x, depth + 1);
    if (code === '') return '';
    const named = isObject(parent.properties) ? Object.keys(parent.properties) : [];
    const k = b.fresh();
    return `if (${TYPES.object(v)}) {for (const ${k} of Object.keys(${v})) {if (${b.konst(new Set(named))}.has(${k})) continue;const ${x} = ${v}[${k}];${code}}}`;
  },
  items(b, arg, v, depth) {
    // The array form is draft 7's tuple (2020-12's prefixItems): not read here.
    if (Array.isArray(arg)) throw new Unsupported();
    const x = b.fresh();
    const code = b.schema(arg, x, depth + 1);
    if (code === '') return '';
    const i = b.fresh();
    return `if (Array.isArray(${v})) {for (let ${i} = 0; ${i} < ${v}.length; ${i}++) {const ${x} = ${v}[${i}];${code}}}`;
  },
  allOf(b, arg, v, depth) {
    if (!Array.isArray(arg) || arg.length === 0) throw new Unsupported();
    return arg.map((sub) => b.schema(sub, v, depth + 1)).join('');
  },
  anyOf(b, arg, v, depth) {
    if (!Array.isArray(arg) || arg.length === 0) throw new Unsupported();
    return `if (!(${arg.map((sub) => `${b.branch(sub, depth + 1)}(${v})`).join(' || ')})) return false;`;
  },
};

/**
 * Whether object `v` has own member `key` (a string literal), as code. `JSON.parse` never gives a
 * member the value undefined, and its objects inherit from Object.prototype alone: a member
 * that reads as something is own unless Object.prototype has one of that name (`__proto__`,
 * `toString`, or whatever a host put there), which only then costs the call of hasOwnProperty.
 * @param {string} v
 * @param {string} key
 */
const own = (v, key) => `(${v}[${key}] !== undefined && (!(${key} in P) || has(${v}, ${key})))`;

/** Code points in `s`, as the native validator counts a string's length. */
function points(/** @type {string} */ s) {
  let n = 0;
  for (const _ of s) n++;
  return n;
}

/**
 * The check of a structured value against the output schema `text`, or null when the schema
 * is one it does not cover (or the runtime refuses code built at run time).
 * @param {string} text
 * @returns {((value: unknown) => boolean) | null}
 */
function compileCheck(text) {
  if (text.length > MAX_SCHEMA_CHARS) return null;
  try {
    const build = new Build();
    const body = build.schema(JSON.parse(text), 'v0', 0);
    const code = `'use strict';${build.fns.join('')}return function check(v0) {${body}return true;};`;
    return new Function('c', 'has', 'points', 'P', code)(
      build.consts,
      (/** @type {object} */ o, /** @type {string} */ k) => hasOwn.call(o, k),
      points,
      Object.prototype,
    );
  } catch {
    // Unsupported, or code generation disallowed: the native path decides.
    return null;
  }
}

/** @type {WeakMap<object, Array<((value: unknown) => boolean) | null | undefined>>} per snapshot, per tool */
const checks = new WeakMap();

/**
 * Tool `index`'s check of its structured results, compiled at its first call; null when it has
 * no output schema or none the check covers.
 * @param {import('../binding.js').NativeSnapshot} snapshot
 * @param {number} index
 */
function outputCheck(snapshot, index) {
  let of = checks.get(snapshot);
  if (of === undefined) checks.set(snapshot, (of = []));
  let check = of[index];
  if (check === undefined) {
    const text = snapshot.outputSchema(index);
    check = of[index] = text == null ? null : compileCheck(text);
  }
  return check;
}

module.exports = { compileCheck, outputCheck };
