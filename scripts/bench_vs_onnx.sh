#!/usr/bin/env bash
# Compares onnxcost with python onnx (onnx.load + onnx.shape_inference) in
# one run on one machine: wall time (median of 5) and peak RSS, on
# full-weight models (exported first if missing) and on a generated
# graph-only LLaMA-shaped model of 112,041 nodes (zoo llama-tiny with
# layers=1436, the size of a large LLM export; python loads it with
# load_external_data=False, as the graph is all that is asked about).
# With ONNX_TOOL set (see the end), `all` also compares `report` on
# DenseNet-121 with onnx-tool.
#   usage: [ONNX_TOOL=DIR] scripts/bench_vs_onnx.sh [DIR [all|cnn|llm]]
#   (default /tmp/onnxcost-bench, all; llm runs only the generated graph)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/onnxcost-bench}
which=${2:-all}
py=/usr/bin/python3
mkdir -p "$dir"
if [ "$which" != llm ] && { [ ! -f "$dir/vgg16.onnx" ] || [ ! -f "$dir/resnet50.onnx" ]; }; then
  echo "exporting full-weight models to $dir ..." >&2
  "$py" scripts/export_fixtures.py --with-weights --out "$dir" >&2
fi
bin=$(mktemp -d)/onnxcost
CGO_ENABLED=0 go build -o "$bin" ./cmd/onnxcost  # static, as README's install line builds it

# median wall seconds (bash's microsecond clock) of 5 runs and max RSS (KiB)
# of 5 more. The timed runs are bare: under /usr/bin/time each run also paid
# that (dynamically linked) program's own start, 4-6 ms on this VM, a tenth
# of a DenseNet report and nothing of a python one.
measure() {
  local walls=() rss=0 t0 t1 r tmp
  tmp=$(mktemp)
  for _ in 1 2 3 4 5; do
    t0=$EPOCHREALTIME
    "$@" >/dev/null 2>&1
    t1=$EPOCHREALTIME
    walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')")
  done
  for _ in 1 2 3 4 5; do
    /usr/bin/time -f "%M" -o "$tmp" "$@" >/dev/null 2>&1
    r=$(tail -1 "$tmp"); [ "$r" -gt "$rss" ] && rss=$r
  done
  rm -f "$tmp"
  echo "$(printf '%s\n' "${walls[@]}" | sort -n | sed -n 3p) $rss"
}

printf '%-10s %-40s %10s %10s\n' model command "wall(s)" "RSS(MiB)"
cnns="vgg16 resnet50"
[ "$which" = llm ] && cnns=""
for m in $cnns; do
  f="$dir/$m.onnx"
  size=$(du -m "$f" | cut -f1)
  for cmd in "shapes" "report --gpu A100 --batch 1"; do
    read -r w r < <(measure "$bin" $cmd "$f")
    printf '%-10s %-40s %10s %10d\n' "$m(${size}M)" "onnxcost $cmd" "$w" $((r/1024))
    eval "w_${m}_${cmd%% *}=$w"
  done
  read -r w r < <(measure "$py" -c "import onnx,sys; m=onnx.load(sys.argv[1]); onnx.shape_inference.infer_shapes(m)" "$f")
  printf '%-10s %-40s %10s %10d\n' "$m(${size}M)" "python onnx.load+infer_shapes" "$w" $((r/1024))
  s=$(eval echo "\$w_${m}_shapes")
  awk -v a="$w" -v b="$s" -v m="$m" 'BEGIN { printf "%-10s python / onnxcost shapes: %.0fx\n", m, a/b }'
done

[ "$which" = cnn ] && exit 0
# The structure-heavy case: 112k nodes, no weights.
f="$dir/llama-112k.onnx"
if [ ! -f "$f" ]; then
  "$bin" zoo llama-tiny --param layers=1436 -o "$f" >&2
fi
m=llama-112k
for cmd in "shapes" "shapes --format json" "report --gpu A100"; do
  read -r w r < <(measure "$bin" $cmd "$f")
  printf '%-10s %-40s %10s %10d\n' "$m" "onnxcost $cmd" "$w" $((r/1024))
  [ "$cmd" = shapes ] && ws=$w
  [ "$cmd" = "report --gpu A100" ] && wr=$w
done
read -r w r < <(measure "$py" -c "import onnx,sys; m=onnx.load(sys.argv[1], load_external_data=False); onnx.shape_inference.infer_shapes(m)" "$f")
printf '%-10s %-40s %10s %10d\n' "$m" "python onnx.load+infer_shapes" "$w" $((r/1024))
awk -v a="$w" -v s="$ws" -v r="$wr" -v m="$m" 'BEGIN { printf "%-10s python / onnxcost shapes: %.1fx, python / onnxcost report: %.1fx\n", m, a/s, a/r }'

# DenseNet-121 (full weights, ~900 nodes): `report` against onnx-tool's
# model_profile. onnx-tool is not installed by CI (PyPI is unreachable here):
# point ONNX_TOOL at a checkout of github.com/ThanatosShinji/onnx-tool (its
# onnx_tool package runs on Debian's python3-onnx, python3-numpy and
# python3-tabulate). Skipped when unset, and for `llm`.
[ "$which" = llm ] && exit 0
[ -n "${ONNX_TOOL:-}" ] || { echo "(set ONNX_TOOL=<onnx-tool checkout> for the DenseNet-121 comparison)"; exit 0; }
f="$(cd "$dir" && pwd)/densenet121.onnx"
if [ ! -f "$f" ]; then
  "$py" -c "import sys, torch, torchvision
m = torchvision.models.densenet121(weights=None).eval()
torch.onnx.export(m, torch.randn(1, 3, 224, 224), sys.argv[1], opset_version=13, input_names=['input'], output_names=['logits'])" "$f" >&2
fi
read -r wr r < <(measure "$bin" report --gpu A100 "$f")
printf '%-10s %-40s %10s %10d\n' densenet121 "onnxcost report --gpu A100" "$wr" $((r/1024))
read -r w r < <(cd "$ONNX_TOOL" && measure "$py" -c "import onnx_tool, sys; onnx_tool.model_profile(sys.argv[1], save_profile='/dev/null')" "$f")
printf '%-10s %-40s %10s %10d\n' densenet121 "onnx-tool model_profile" "$w" $((r/1024))
awk -v a="$w" -v r="$wr" 'BEGIN { printf "densenet121 onnx-tool / onnxcost report: %.1fx\n", a/r }'
