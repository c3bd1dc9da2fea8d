#!/usr/bin/env bash
# Fails when a generated file differs from what the generators produce now
# (someone changed schema/ without running `npm run codegen` and `npm run sdl`,
# or an example's operations without `npm run example:codegen`).
set -euo pipefail
cd "$(dirname "$0")/.."
files=(src/__generated__/resolvers-types.ts src/__generated__/schema-enums.ts supergraph/payments.graphql
  examples/checkout/src/gql/gql.ts examples/checkout/src/gql/graphql.ts examples/checkout/src/gql/index.ts)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "${files[@]}"; do cp "$f" "$tmp/$(basename "$f")"; done
npm run -s codegen >/dev/null
npm run -s sdl
# The example's operation types are generated from the SDL just written.
npm run -s example:codegen >/dev/null
status=0
for f in "${files[@]}"; do
  if ! cmp -s "$f" "$tmp/$(basename "$f")"; then
    echo "stale generated file: $f (run npm run codegen, npm run sdl and npm run example:codegen, and commit it)" >&2
    diff -u "$tmp/$(basename "$f")" "$f" | head -40 >&2 || true
    cp "$tmp/$(basename "$f")" "$f"
    status=1
  fi
done
exit $status
