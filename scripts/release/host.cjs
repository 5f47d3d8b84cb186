// host.mjs's run, with the package loaded through require (CommonJS).
//   node host.cjs <result file> [server node]
'use strict';
const api = require('@rulvar/mcp-native');
import('./host.mjs').then(({ engineRun }) => engineRun(api, 'require', process.argv[2], process.argv[3]));
