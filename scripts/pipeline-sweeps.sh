#!/usr/bin/env bash
# Disable-one sweeps of the ResNet-18 and transformer-block training steps on
# the CPU under today's XLA:GPU pipeline (gpu) and the seed era's (gpu-2021),
# then each pair side by side (passlab ablate --compare). Resumable: rerun
# with the same OUT to finish an interrupted sweep.
#
#   scripts/pipeline-sweeps.sh [OUT]    (default: docs/results/pipelines)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
passlab=${PASSLAB:-$here/build/tools/passlab}
out=${1:-$here/docs/results/pipelines}
repeats=${REPEATS:-24}
mkdir -p "$out"

sweep() {  # NAME PIPELINE MODEL-ARGS...
  local name=$1 pipeline=$2
  shift 2
  "$passlab" ablate "$@" --pipeline "$pipeline" --repeats "$repeats" --warmup 1 --jobs 2 \
    --out "$out/$name-$pipeline" > "$out/$name-$pipeline.log" 2>&1
}

resnet=(--model resnet18 --batch 4 --image-size 32 --classes 10 --width 16)
transformer=(--model transformer_block --batch 4 --seq-len 32 --width 64 --heads 4)
for pipeline in gpu gpu-2021; do
  sweep resnet18 "$pipeline" "${resnet[@]}"
  sweep transformer "$pipeline" "${transformer[@]}"
done
for name in resnet18 transformer; do
  "$passlab" ablate --compare "$out/$name-gpu" "$out/$name-gpu-2021" > "$out/$name-gpu-vs-gpu-2021.md"
done
echo "reports: $out/*/report.md; side by side: $out/*-gpu-vs-gpu-2021.md"
