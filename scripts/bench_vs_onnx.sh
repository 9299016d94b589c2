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
  awk -v a="$w" -v b="$s" -v m="$m" 'BEGIN { printf "%-10s python / onnxcost shapes: %.0fx\n", m, a/b }'
done
