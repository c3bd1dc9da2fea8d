/**
 * Types for the checkout's operations, from the gateway's published SDL
 * (supergraph/payments.graphql, written by `npm run sdl`), with
 * graphql-codegen's client preset: `graphql(...)` returns a typed document.
 * Run from the repository root: `npm run example:codegen` (checked fresh by
 * `npm run codegen:check`).
 */
import type { CodegenConfig } from '@graphql-codegen/cli';
import { PAYMENTS_CLIENT_SCALARS } from '../../supergraph/client-scalars.js';

const config: CodegenConfig = {
  overwrite: true,
  schema: 'supergraph/payments.graphql',
  documents: ['examples/checkout/src/**/*.ts', '!examples/checkout/src/gql/**'],
  generates: {
    'examples/checkout/src/gql/': {
      preset: 'client',
      presetConfig: { fragmentMasking: false },
      config: {
        useTypeImports: true,
        enumsAsTypes: true,
        // The payments scalars as a client sees them; without this map they are `unknown`.
        scalars: PAYMENTS_CLIENT_SCALARS,
      },
    },
  },
};

export default config;
