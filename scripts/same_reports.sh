#!/usr/bin/env bash
# same_reports.sh OLD NEW [DIR]: runs one fixed set of reports with two
# onnxcost binaries and says whether every output is byte-identical: the
# check a behaviour-preserving change (a refactor, a review's mending)
# is held to. The set: every fixture of testdata/models under each
# built-in runtime at batch 1 and 32 (a static export at its own), the
# training step (fp32 and fp16-amp, batch 1 to 512, on an A100 and a
# 24 GB RTX 3090, where the allocator runs the device full), the largest
# batch that fits, a generation run and a GPU comparison. Build the two
# binaries first, e.g.
#   git worktree add -f /tmp/base HEAD~1 && (cd /tmp/base && go build -o /tmp/oc_old ./cmd/onnxcost)
#   go build -o /tmp/oc_new ./cmd/onnxcost
#   bash scripts/same_reports.sh /tmp/oc_old /tmp/oc_new
# Exit 0 when identical, 1 with the differing files named otherwise.
set -euo pipefail
old=$1 new=$2 dir=${3:-$(mktemp -d)}
cd "$(dirname "$0")/.."

run() { # BIN OUT
  local bin=$1 out=$2
  mkdir -p "$out"
  local runtimes
  runtimes=$("$bin" gpus runtimes | awk 'NR > 1 && NF > 1 && $1 !~ /:$/ {print $1}')
  for m in testdata/models/*.onnx; do
    local n
    n=$(basename "$m" .onnx)
    for rt in $runtimes; do
      for b in 1 32; do
        "$bin" report "$m" --gpu A100-SXM4-80GB --runtime "$rt" --batch "$b" --dim seq=128 --format json -q > "$out/infer_${n}_${rt}_$b.json" 2>&1 || true
      done
    done
  done
  for n in resnet50 vgg16 densenet121 mobilenet_v2 bert_base gpt_small alexnet; do
    for b in 1 8 32 128 512; do
      for g in A100-SXM4-80GB RTX-3090; do
        "$bin" report "testdata/models/$n.onnx" --train --batch "$b" --gpu "$g" --dim seq=128 --format json -q > "$out/train_${n}_${b}_$g.json" 2>&1 || true
        "$bin" report "testdata/models/$n.onnx" --train --batch "$b" --gpu "$g" --dtype fp16-amp --dim seq=128 --format json -q > "$out/trainamp_${n}_${b}_$g.json" 2>&1 || true
      done
    done
  done
  "$bin" sweep zoo:vgg16 --gpu RTX-3090 --train --dtype fp16-amp --find-max-batch -q > "$out/maxbatch_vgg16.txt" 2>&1 || true
  "$bin" sweep zoo:resnet50 --gpu T4 --train --find-max-batch -q > "$out/maxbatch_resnet50.txt" 2>&1 || true
  "$bin" generate testdata/models/contrib/llama_fp16_gqa.onnx --gpu A100 --prompt 512 --output 128 --format json -q > "$out/generate.json" 2>&1 || true
  "$bin" gpus compare testdata/models/resnet50.onnx --batch 8 -q > "$out/gpus_compare.txt" 2>&1 || true
}

run "$old" "$dir/old"
run "$new" "$dir/new"
n=$(find "$dir/old" -type f | wc -l)
if diff -rq "$dir/old" "$dir/new"; then
  echo "same_reports: $n outputs byte-identical ($dir)"
else
  echo "same_reports: outputs differ ($dir; diff -r $dir/old $dir/new)"
  exit 1
fi
