// Preloaded (`node --require`) for the "peer absent" measurements: @opentelemetry/* cannot be
// resolved in this process, as in an application that never installed it, although the
// repository has it among its dev dependencies.
const Module = require('node:module');
const resolve = Module._resolveFilename;
Module._resolveFilename = function (request, ...rest) {
  if (typeof request === 'string' && request.startsWith('@opentelemetry/')) {
    const error = new Error(`Cannot find module '${request}'`);
    error.code = 'MODULE_NOT_FOUND';
    throw error;
  }
  return resolve.call(this, request, ...rest);
};
