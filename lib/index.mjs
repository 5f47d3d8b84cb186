import pkg from './index.js';

export const {
  mcp,
  createMcp,
  ConfigError,
  OAuthError,
  CassetteError,
  jcsSerialize,
  canonicalizeSchema,
  schemaHash,
  toolContractHash,
  toolsetHash,
  toolsetAuthorityHash,
  resolveToolset,
  validateJson,
  unvalidatedReasons,
  importedAs,
  protocolOf,
  leftOutOf,
  lockText,
  resumeTask,
} = pkg;
export default pkg;
