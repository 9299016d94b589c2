#!/usr/bin/env bash
# Compares onnxcost with python onnx (onnx.load + onnx.shape_inference) on
# full-weight models, in one run on one machine: wall time (median of 5) and
# peak RSS. Exports the full-weight models first if they are missing.
#   usage: scripts/bench_vs_onnx.sh [DIR]   (default /tmp/onnxcost-bench)
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-/tmp/onnxcost-bench}
py=/usr/bin/python3
if [ ! -f "$dir/vgg16.onnx" ] || [ ! -f "$dir/resnet50.onnx" ]; then
  echo "exporting full-weight models to $dir ..." >&2
  "$py" scripts/export_fixtures.py --with-weights --out "$dir" >&2
fi
bin=$(mktemp -d)/onnxcost
go build -o "$bin" ./cmd/onnxcost

# median wall seconds and max RSS (KiB) of 5 runs of a command
measure() {
  local walls=() rss=0
  for _ in 1 2 3 4 5; do
    out=$( { /usr/bin/time -f "%e %M" "$@" >/dev/null 2>/dev/null; } 2>&1 | tail -1)
    walls+=("${out% *}")
    r=${out#* }; [ "$r" -gt "$rss" ] && rss=$r
  done
  med=$(printf '%s\n' "${walls[@]}" | sort -n | sed -n 3p)
  echo "$med $rss"
}

printf '%-10s %-40s %10s %10s\n' model command "wall(s)" "RSS(MiB)"
for m in vgg16 resnet50; do
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
  awk -v a="$w" -v b="$s" -v m="$m" 'BEGIN { if (b > 0) printf "%-10s speedup of onnxcost shapes: %.0fx\n", m, a/b; else print m, "onnxcost shapes below timer resolution (10 ms)" }'
done
