#!/usr/bin/env bash
# Builds web/dist, the part of the browser app that is built from Go:
# onnxcost compiled to WebAssembly (web/wasm) and Go's wasm_exec.js.
# `onnxcost serve` embeds them with the page as written (web/static: HTML,
# script, style and the vendored Graphviz), which is not copied. The
# output is committed, so `go build` works on a fresh clone;
# web/dist/INPUTS records the fingerprint of the sources it was built
# from, and `go test ./web` fails when they have changed since (run this
# script again).
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

# The hardware database the wasm starts with, parsed from hwdb's YAML here
# rather than in the page (web/hwdbdata).
go run ./web/hwdbdata/gen -o web/hwdbdata/data.go

version=$(sed -n 's/^var version = "\(.*\)"$/\1/p' cmd/onnxcost/main.go)
# -trimpath and an empty build id keep the bytes independent of the
# checkout's location; -s -w drop the symbol table and DWARF (panics
# still name functions).
GOOS=js GOARCH=wasm go build -trimpath -ldflags="-s -w -buildid= -X main.version=$version" \
  -o "$tmp/onnxcost.wasm" ./web/wasm
cp "$wasm_exec" "$tmp/wasm_exec.js"
go run ./web/buildhash/cmd/buildhash . > "$tmp/INPUTS"
chmod -R a+rX,go-w "$tmp"
find "$tmp" -type f -exec chmod 644 {} +

rm -rf "$out"
mv "$tmp" "$out"
trap - EXIT
wasm=$(stat -c %s "$out/onnxcost.wasm")
gz=$(gzip -9c "$out/onnxcost.wasm" | wc -c)
echo "web/dist: onnxcost.wasm $wasm bytes ($gz gzip -9), inputs $(cat "$out/INPUTS")"
