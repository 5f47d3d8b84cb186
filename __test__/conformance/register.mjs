// Node 20 lacks fs.globSync, which the conformance CLI (0.1.x) imports; this loader hook
// hands it a shim of `fs` with one. On Node 22+ it does nothing.
import * as fs from 'node:fs';
import { register } from 'node:module';

if (typeof fs.globSync !== 'function') {
  register('./fs-hook.mjs', import.meta.url);
}
