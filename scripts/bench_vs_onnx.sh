#!/usr/bin/env bash
# Compares onnxcost with python onnx (onnx.load + onnx.shape_inference) in
# one run on one machine: wall time (median of 5) and peak RSS, on
# full-weight models (exported first if missing) and on a generated
# graph-only LLaMA-shaped model of 112,041 nodes (zoo llama-tiny with
# layers=1436, the size of a large LLM export; python loads it with
# load_external_data=False, as the graph is all that is asked about).
#   usage: scripts/bench_vs_onnx.sh [DIR [all|cnn|llm]]
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
go build -o "$bin" ./cmd/onnxcost

# median wall seconds (bash's microsecond clock) and max RSS (KiB) of 5 runs
measure() {
  local walls=() rss=0 t0 t1 r tmp
  tmp=$(mktemp)
  for _ in 1 2 3 4 5; do
    t0=$EPOCHREALTIME
    /usr/bin/time -f "%M" -o "$tmp" "$@" >/dev/null 2>&1
    t1=$EPOCHREALTIME
    walls+=("$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.4f", b - a }')")
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
