'use strict';

/** @typedef {import('../index.js').McpConfig} McpConfig */
/** @typedef {import('../index.js').McpSourceRegulatedPosture} McpSourceRegulatedPosture */

// The drift policy of a config that names none, as the core parses it.
const DRIFT_DEFAULT = /** @type {McpSourceRegulatedPosture['drift']} */ (require('./native.js').DRIFT_DEFAULT);

/**
 * The regulated posture, read live from the host's config object on every call (no wire):
 * a host that mutates its config after construction sees the mutation here.
 * @param {McpConfig} config
 * @param {string} id
 * @returns {McpSourceRegulatedPosture}
 */
function describePosture(config, id) {
  const timeouts = config.timeouts;
  const values = {
    maxTools: config.maxTools,
    maxPages: config.maxPages,
    maxSchemaBytes: config.maxSchemaBytes,
    discoveryMs: timeouts == null ? undefined : timeouts.discoveryMs,
  };
  /** @type {McpSourceRegulatedPosture['bounds']} */
  const bounds = { declared: true };
  for (const key of Object.keys(values)) {
    if (values[key] === undefined) bounds.declared = false;
    else bounds[key] = values[key];
  }
  return {
    regulatedPosture: 1,
    kind: 'mcp-source',
    name: id,
    drift: config.drift ?? DRIFT_DEFAULT,
    bounds,
  };
}

module.exports = { describePosture };
