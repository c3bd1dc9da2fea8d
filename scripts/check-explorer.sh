#!/usr/bin/env bash
# Fails when the committed explorer bundle (explorer/assets) differs from
# what explorer/ui builds now. Builds into a scratch folder, so it leaves
# the tree as it was.
set -euo pipefail
cd "$(dirname "$0")/.."
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
npx vite build --config explorer/ui/vite.config.ts --outDir "$tmp" --emptyOutDir --logLevel warn
if ! differences=$(diff -r -q "$tmp" explorer/assets); then
  echo "$differences" | head -10 >&2
  echo "explorer/assets is stale: run npm run build:explorer and commit it" >&2
  exit 1
fi
