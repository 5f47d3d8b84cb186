'use strict';

const { contractOf } = require('./toolset.js');

// `toolsetHash` over many contracts, without reading each value of each schema through N-API.
//
// The strict native walk (`native.toolsetHash`) asks V8 for every member, key and string of
// every schema one N-API call at a time, most of its time for a large toolset. `JSON.stringify`
// writes the same values in one pass, but it is lax where identity must be strict: it calls
// `toJSON`, writes `null` for `undefined` in an array and for a non-finite number, and drops
// functions. So a walk here first checks that each contract holds only what `JSON.stringify`
// writes exactly as the strict walk reads it; only then is it written, in chunks the native side
// parses and canonicalizes on a thread of its own while the next chunk is written. Anything else
// (a class instance, a boxed primitive, a getter's `toJSON`, nesting past the native parser's
// limit, a lone surrogate, a contract the canonical form refuses) goes to the strict walk, which
// decides and words any refusal. A getter inside a schema is read twice on this path (by the
// check and by `JSON.stringify`), and whatever is handed on to the strict walk is read again
// there.

/** Contracts per chunk: about 400 KB of text for a typical tool, well under the time of a chunk. */
const CHUNK = 256;
/** The strict walk refuses deeper values; the text path gives up well before. */
const MAX_DEPTH = 100;

function plain(v, depth) {
  switch (typeof v) {
    case 'string':
    case 'boolean':
      return true;
    case 'number':
      return Number.isFinite(v);
    case 'object': {
      if (v === null) return true;
      // Giving up early: a cycle would otherwise run to the end of the stack.
      if (depth > MAX_DEPTH || v.toJSON !== undefined) return false;
      if (Array.isArray(v)) {
        // An `undefined` (or a hole) is refused by the `default` below.
        for (let i = 0; i < v.length; i++) if (!plain(v[i], depth + 1)) return false;
        return true;
      }
      // Boxed primitives are written as their value by `JSON.stringify`, as objects by the walk.
      const proto = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) return false;
      // `for...in` also visits enumerable inherited members, which only makes the check stricter.
      for (const key in v) {
        const member = v[key];
        if (member !== undefined && !plain(member, depth + 1)) return false;
      }
      return true;
    }
    default:
      return false;
  }
}

/** The contract's tuple (`JSON.stringify` omits an `undefined` member), if all of it is plain. */
function tuple(contract) {
  if (typeof contract !== 'object' || contract === null) return undefined;
  const out = contractOf(contract);
  for (const key in out) {
    const member = out[key];
    if (member !== undefined && !plain(member, 1)) return undefined;
  }
  return out;
}

function makeToolsetHash(native) {
  return function toolsetHash(contracts) {
    if (Array.isArray(contracts) && contracts.length > 0) {
      // The length is read once, as the strict walk reads it: a getter that grows the array
      // while it is read does not make the walk longer.
      const count = contracts.length;
      let at = 0;
      const next = () => {
        if (at >= count) return null;
        const chunk = [];
        for (const end = Math.min(at + CHUNK, count); at < end; at++) {
          const t = tuple(contracts[at]);
          if (t === undefined) return false;
          chunk.push(t);
        }
        return JSON.stringify(chunk);
      };
      let hash = null;
      try {
        hash = native.toolsetHashFrom(next);
      } catch {
        // A getter threw while checking: the strict walk reads it again and throws as it does.
      }
      if (hash !== null) return hash;
    }
    return native.toolsetHash(contracts);
  };
}

module.exports = { makeToolsetHash };
