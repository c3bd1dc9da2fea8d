/**
 * Makes the @apollo/gateway stack share one copy of @apollo/federation-internals.
 *
 * Why: @apollo/subgraph 2.12.4 (the newest on Node 20) pins internals 2.12.4,
 * so npm hoists that one and gives @apollo/gateway, query-planner,
 * query-graphs and composition (2.14.4) each a private copy of internals
 * 2.14.4. The planner then sees the gateway's schema objects as foreign
 * (`instanceof BaseNamedType` fails) and every cross-subgraph query dies with
 * "Cannot read properties of undefined (reading 'kind')". The copies are the
 * same version, so resolving them all to the gateway's is what `npm dedupe`
 * would do without the pin. Import this module before @apollo/gateway.
 */
import Module, { createRequire } from 'node:module';

const require = createRequire(import.meta.url);
const gatewayRequire = createRequire(require.resolve('@apollo/gateway/package.json'));
const SHARED = gatewayRequire.resolve('@apollo/federation-internals');
const FEDERATION_STACK = /[\\/]node_modules[\\/]@apollo[\\/](gateway|query-planner|query-graphs|composition)[\\/]/;

type Resolve = (request: string, parent: { filename?: string } | undefined, ...rest: unknown[]) => string;
const loader = Module as unknown as { _resolveFilename: Resolve };
const original = loader._resolveFilename;
loader._resolveFilename = function resolveShared(request, parent, ...rest) {
  if (request === '@apollo/federation-internals' && parent?.filename && FEDERATION_STACK.test(parent.filename)) return SHARED;
  return original.call(this, request, parent, ...rest);
};
