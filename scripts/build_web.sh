#!/usr/bin/env bash
# Builds web/dist, the part of the browser app that is built from Go:
# onnxcost compiled to WebAssembly (web/wasm) and Go's wasm_exec.js. A
# binary built afterwards embeds them (web/embed.go) with the page as
# written (web/static, not copied), and `onnxcost serve` runs the page in
# the browser. The output is build output, ignored by git: without it
# `serve` answers the page's calls itself, so a plain `go install` works.
# CI (.ci/run) and release builds run this first, so that the browser
# tests and the released binary use the WebAssembly. It takes about a
# minute (2-core machine); the build is reproducible (same Go version,
# byte-identical onnxcost.wasm).
#
# Usage: scripts/build_web.sh        (or: go generate ./web)
set -euo pipefail
cd "$(dirname "$0")/.."

# The vendored Graphviz must be the pinned release (web/static/vendor/README.md).
want=5f72d22219b9d7e9b3f180dcd6e0b06727b6671e12b42f169903eba9ee608db6
got=$(sha256sum web/static/vendor/graphviz.js | cut -d' ' -f1)
[ "$got" = "$want" ] || { echo "web/static/vendor/graphviz.js: checksum $got, want $want" >&2; exit 1; }

goroot=$(go env GOROOT)
wasm_exec="$goroot/lib/wasm/wasm_exec.js"            # Go 1.24 and later
[ -f "$wasm_exec" ] || wasm_exec="$goroot/misc/wasm/wasm_exec.js"

out=web/dist
tmp=$(mktemp -d web/.dist.XXXXXX)
trap 'rm -rf "$tmp"' EXIT

version=$(sed -n 's/^var version = "\(.*\)"$/\1/p' cmd/onnxcost/main.go)
# -trimpath and an empty build id keep the bytes independent of the
# checkout's location; -s -w drop the symbol table and DWARF (panics
# still name functions).
GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w -buildid= -X main.version=$version" \
  -o "$tmp/onnxcost.wasm" ./web/wasm
cp "$wasm_exec" "$tmp/wasm_exec.js"
chmod -R a+rX,go-w "$tmp"
find "$tmp" -type f -exec chmod 644 {} +

# web/dist/README.md is committed: replace only the build's files.
mv "$tmp/onnxcost.wasm" "$tmp/wasm_exec.js" "$out/"
wasm=$(stat -c %s "$out/onnxcost.wasm")
gz=$(gzip -9c "$out/onnxcost.wasm" | wc -c)
echo "web/dist: onnxcost.wasm $wasm bytes ($gz gzip -9)"
