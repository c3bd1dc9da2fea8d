#!/usr/bin/env bash
# Fails when a generated file differs from what the generators produce now
# (someone changed schema/ without running `npm run codegen` and `npm run sdl`).
set -euo pipefail
cd "$(dirname "$0")/.."
files=(src/__generated__/resolvers-types.ts src/__generated__/schema-enums.ts supergraph/payments.graphql)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for f in "${files[@]}"; do cp "$f" "$tmp/$(basename "$f")"; done
npm run -s codegen >/dev/null
npm run -s sdl
status=0
for f in "${files[@]}"; do
  if ! cmp -s "$f" "$tmp/$(basename "$f")"; then
    echo "stale generated file: $f (run npm run codegen and npm run sdl, and commit it)" >&2
    diff -u "$tmp/$(basename "$f")" "$f" | head -40 >&2 || true
    cp "$tmp/$(basename "$f")" "$f"
    status=1
  fi
done
exit $status
