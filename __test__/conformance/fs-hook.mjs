// Resolve hook: `fs` imported by the conformance CLI becomes fs-shim.mjs.
const shim = new URL('./fs-shim.mjs', import.meta.url).href;

export async function resolve(specifier, context, next) {
  const fromCli = context.parentURL?.includes('@modelcontextprotocol/conformance');
  if (fromCli && (specifier === 'fs' || specifier === 'node:fs')) {
    return { url: shim, shortCircuit: true };
  }
  return next(specifier, context);
}
