'use strict';

// The generated loader (../index.js), with one clear error where it cannot load: a platform
// no package is built for gets the list of those that are and the way to build from source,
// instead of the loader's stack of attempts (kept as the cause).
const SUPPORTED = {
  'linux-x64': 'linux-x64-gnu, linux-x64-musl',
  'linux-arm64': 'linux-arm64-gnu, linux-arm64-musl',
  'darwin-x64': 'darwin-x64',
  'darwin-arm64': 'darwin-arm64',
  'win32-x64': 'win32-x64-msvc',
};
const ALL = Object.values(SUPPORTED).join(', ');
const FROM_SOURCE =
  'to build it from source, install Rust (https://rustup.rs) and run `npm install` in a clone of the repository (it runs `napi build`), then use that folder as the package';

/** @returns {typeof import('../binding.js')} */
function load() {
  // A runtime too old for the addon is told so here, by name, not by a crash or a hang later.
  const why = require('./runtime.js').unsupported();
  if (why !== null) throw new Error(why);
  try {
    // The generated loader's exports, as binding.d.ts (generated beside it) declares them;
    // ../index.d.ts is the package's API.
    return /** @type {typeof import('../binding.js')} */ (/** @type {unknown} */ (require('../index.js')));
  } catch (cause) {
    const platform = `${process.platform}-${process.arch}`;
    const message =
      SUPPORTED[platform] === undefined
        ? `@rulvar/mcp-native has no build for ${platform}; the supported platforms are ${ALL}; ${FROM_SOURCE}`
        : `@rulvar/mcp-native could not load its native addon for ${platform} (the package @rulvar/mcp-native-${platform}-* is missing or broken: reinstall without --no-optional / --omit=optional); ${FROM_SOURCE}`;
    const error = new Error(message);
    error.cause = cause;
    throw error;
  }
}

module.exports = load();
