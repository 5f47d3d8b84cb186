// The generated loader's declarations (binding.d.ts, written by `npm run build`) against the
// hand-written index.d.ts. Compiling them at all checks that binding.d.ts defines every name it
// uses; lib/index.js hands these natives out under index.d.ts's names, so each must also be
// assignable to what index.d.ts promises for it.
import type * as binding from '../../binding.js';
import type * as api from '@rulvar/mcp-native';

type Wrapped = 'jcsSerialize' | 'canonicalizeSchema' | 'schemaHash' | 'toolContractHash' | 'toolsetHash' | 'toolsetAuthorityHash' | 'validateJson';

declare const natives: Pick<typeof binding, Wrapped>;
export const promised: Pick<typeof api, Wrapped> = natives;
