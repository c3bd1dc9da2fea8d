import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', '.stryker-tmp/', 'reports/', 'src/__generated__/', 'explorer/assets/', 'examples/*/dist/', 'examples/*/src/gql/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  // CommonJS config files of tools (dependency-cruiser).
  { files: ['**/*.cjs'], languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } } },
  {
    // Upstream bodies go through decode.ts's lossless parser: JSON.parse would round amounts
    // (9007199254740993 -> ...992) before a Decimal could keep their digits.
    files: ['src/upstream/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'JSON', property: 'parse', message: 'Parse upstream bodies with parseJsonBody (decode.ts): JSON.parse rounds amounts.' },
      ],
    },
  },
  {
    // Webhook bodies and bus messages carry amounts too: events.ts reads a body as decode.ts does,
    // and the Redis bus writes and reads Decimals with upstream/codec.ts.
    files: ['src/realtime/**/*.ts'],
    rules: {
      'no-restricted-properties': [
        'error',
        { object: 'JSON', property: 'parse', message: 'Read webhook bodies with parseWebhookBody (events.ts) and bus messages with upstream/codec.ts: JSON.parse rounds amounts.' },
        { object: 'JSON', property: 'stringify', message: 'Write bus messages with upstream/codec.ts: JSON.stringify turns Decimals into strings.' },
      ],
    },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
    },
  },
);
