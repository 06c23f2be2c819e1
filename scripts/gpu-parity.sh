#!/usr/bin/env bash
# passlab's ResNet-50 training step against JAX/XLA's on one GPU, in one go
# (issue 28's "kernel and wall time at parity"). The steps, most wanted
# first (each is skipped when SECONDS does not leave it enough time):
#   - passlab's step (batch 8, 64x64, `gpu` pipeline) as it runs by default
#     (each untraced step one CUDA graph, TF32 where XLA allows it, the conv
#     picker timing cuDNN's graph-API engines beside its legacy algorithms),
#     with --format json and a Chrome trace of its last traced step (the
#     device kernels by name); the same step in JAX (bench/jax_resnet_step.py)
#     at XLA's default precision (TF32), with its kernels per step; passlab's
#     step with the legacy cuDNN algorithms only (PASSLAB_CUDNN_ENGINES=0);
#   - the GPU tests (cuda_runtime_tests), test/hlo/gpu/*.hlo and the
#     ResNet-18 step checked against the evaluator (TF32; with and without the
#     native select-and-scatter kernel), side by side;
#   - an A/A sweep of the step with three worker processes (issue 27: does a
#     sweep's baseline equal the standalone step when few contexts are
#     resident?), the standalone step on the sweep's autotune cache, and a
#     short second sweep on the filled kernel cache (its hit rate);
#   - passlab's step and JAX's in full f32 (NVIDIA_TF32_OVERRIDE=0; JAX at
#     "highest"); passlab with its filters as they lie instead of XLA:GPU's
#     OHWI filters (layout-assignment.xla_filter_layout=false; OHWI is the
#     CUDA default since 2026-11-28) and with HWIO filter copies
#     (layout-assignment.filter_layout_as_is=false);
#   - the step thunk by thunk (--xla_gpu_enable_command_buffer=) and under
#     the seed-era `gpu-2021` pipeline.
# Then bench/kernel_compare.py sets the two kernel lists side by side by kind.
# Everything lands in OUT_DIR; OUT_DIR/results.tar.gz packs it.
#
# Usage: scripts/gpu-parity.sh [BIN_DIR] [OUT_DIR] [SECONDS]
#   BIN_DIR holds passlab and cuda_runtime_tests (default: build's);
#   SECONDS (default 600) bounds the whole run: later steps are skipped when
#   too little is left.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-}
out=${2:-gpu-parity}
budget=${3:-600}
began=$(date +%s)
if [[ -n "$bin" ]]; then
  passlab=$bin/passlab; runtime_tests=$bin/cuda_runtime_tests
else
  passlab=$here/build/tools/passlab; runtime_tests=$here/build/test/cuda_runtime_tests
fi
mkdir -p "$out"
left() { echo $((budget - ($(date +%s) - began))); }
# Progress goes to the script's own stdout (fd 3), not to a step's redirected output.
exec 3>&1
phase() { echo "$(date -u +%H:%M:%S) $1 ($(left) s left)" | tee -a "$out/phases.txt" >&3; }
if ! nvidia-smi -L > "$out/gpu.txt" 2>&1; then
  echo "gpu-parity: no GPU (nvidia-smi -L failed): $(cat "$out/gpu.txt")" >&2
  exit 1
fi
cat "$out/gpu.txt"
nvidia-smi --query-gpu=timestamp,pstate,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu \
  --format=csv -lms 500 > "$out/clocks.csv" 2> /dev/null &
clocks_pid=$!
trap 'kill $clocks_pid 2> /dev/null' EXIT
step=(--model resnet50 --batch 8 --image-size 64 --device cuda --warmup 5 --repeats 50 --format json
      --kernel-cache "$out/kernel-cache")

# Most wanted first: a short lease ends the run early, not in the middle.
# run_if NEED_SECONDS NAME COMMAND...: runs when that much is left.
run_if() {
  local need=$1 name=$2; shift 2
  if (( $(left) < need )); then echo "skipped $name (needs $need s)" | tee -a "$out/phases.txt" >&3; return; fi
  phase "$name"
  "$@"
  echo "$name exit $?" >> "$out/phases.txt"
}
jax_step() {  # precision
  python3 -c 'import jax' 2> /dev/null || { echo "no JAX here" > "$out/jax_$1.txt"; return 1; }
  timeout 120 python3 "$here/bench/jax_resnet_step.py" --depth 50 --batch 8 --image-size 64 --precision "$1" \
    --json "$out/jax_$1.json" --kernels "$out/jax_$1_kernels.csv" > "$out/jax_$1.txt" 2>&1
}
run_if 60 "passlab step: CUDA graph, TF32" timeout 150 "$passlab" run "${step[@]}" \
  --trace "$out/passlab_default_trace.json" > "$out/passlab_default.json" 2> "$out/passlab_default.err"
run_if 45 "JAX step: precision default (TF32)" jax_step default
run_if 45 "passlab step: legacy cuDNN algorithms only" env PASSLAB_CUDNN_ENGINES=0 timeout 100 "$passlab" run \
  "${step[@]}" --trace "$out/passlab_legacy_trace.json" > "$out/passlab_legacy.json" 2> "$out/passlab_legacy.err"
checks() {
  timeout 75 "$runtime_tests" --gtest_brief=1 > "$out/cuda_runtime_tests.log" 2>&1 &
  local tests=$!
  timeout 75 "$passlab" run --model resnet18 --batch 4 --image-size 32 --device cuda --check \
    > "$out/resnet18_tf32_check.txt" 2>&1 &
  local check=$!
  timeout 75 "$passlab" run --model resnet18 --batch 4 --image-size 32 --device cuda --check \
    --disable select_and_scatter_expander > "$out/resnet18_native_sas_check.txt" 2>&1 &
  local sas=$!
  # The GPU emitter's kernels with the shapes of the step's heaviest ones
  # (reductions with side outputs, scatter-adds), against the evaluator.
  for f in "$here"/test/hlo/gpu/*.hlo; do
    timeout 60 "$passlab" run "$f" --pipeline none --device cuda --check > "$out/hlo_$(basename "$f" .hlo).txt" 2>&1
    echo "$(basename "$f") --check exit $?" >> "$out/phases.txt"
  done
  wait $tests; echo "cuda_runtime_tests exit $?" >> "$out/phases.txt"
  wait $check; echo "resnet18 --check exit $?" >> "$out/phases.txt"
  wait $sas; echo "resnet18 native select-and-scatter --check exit $?" >> "$out/phases.txt"
  tail -n 12 "$out/cuda_runtime_tests.log"
}
run_if 80 "GPU tests and the ResNet-18 checks" checks
# Issue 27's sweep-against-standalone question with few resident contexts:
# two A/A copies and the baseline, one worker process each, then the
# standalone step on the sweep's own autotune choices (each process that
# autotunes for itself may pick other algorithms: 8% apart on an H200).
run_if 230 "A/A sweep with 3 worker processes" timeout 220 "$passlab" ablate --model resnet50 --batch 8 \
  --image-size 64 --device cuda --sweep aa --copies 2 --processes 1 --jobs 3 --block 3 --repeats 12 --warmup 2 \
  --kernel-cache "$out/kernel-cache" --out "$out/aa3"
[[ -d "$out/aa3" && ! -f "$out/aa3/report.md" ]] && "$passlab" ablate --report-only --out "$out/aa3" > /dev/null 2>&1
[[ -f "$out/aa3/autotune.json" ]] && run_if 40 "passlab step on the sweep's autotune cache" timeout 60 "$passlab" run \
  "${step[@]}" --autotune-cache "$out/aa3/autotune.json" > "$out/passlab_aa3_cache.json" 2> "$out/passlab_aa3_cache.err"
# The same sweep again, short, on the kernel cache the first one filled
# (issue 27: the persistent cache's hit rate and what it saves).
run_if 120 "A/A sweep again on the filled kernel cache" timeout 110 "$passlab" ablate --model resnet50 --batch 8 \
  --image-size 64 --device cuda --sweep aa --copies 2 --processes 1 --jobs 3 --block 3 --repeats 4 --warmup 1 \
  --kernel-cache "$out/kernel-cache" --out "$out/aa3-again"
run_if 45 "passlab step: full f32" env NVIDIA_TF32_OVERRIDE=0 timeout 100 "$passlab" run "${step[@]}" \
  --trace "$out/passlab_f32_trace.json" > "$out/passlab_f32.json" 2> "$out/passlab_f32.err"
run_if 45 "JAX step: precision highest (f32)" jax_step highest
run_if 45 "passlab step: filters as they lie" timeout 100 "$passlab" run "${step[@]}" \
  --pass-option layout-assignment.xla_filter_layout=false --trace "$out/passlab_aslie_trace.json" \
  > "$out/passlab_aslie.json" 2> "$out/passlab_aslie.err"
# Filters copied to HWIO instead of read as their producers lay them out
# (strided filters are packed per call).
run_if 45 "passlab step: HWIO filter copies" timeout 100 "$passlab" run "${step[@]}" \
  --pass-option layout-assignment.xla_filter_layout=false --pass-option layout-assignment.filter_layout_as_is=false \
  > "$out/passlab_hwio.json" 2> "$out/passlab_hwio.err"
run_if 40 "passlab step: thunk by thunk, TF32" timeout 100 "$passlab" run "${step[@]}" \
  --xla_gpu_enable_command_buffer= > "$out/passlab_eager.json" 2> "$out/passlab_eager.err"
run_if 50 "passlab step: gpu-2021 pipeline" timeout 100 "$passlab" run "${step[@]}" --pipeline gpu-2021 \
  > "$out/passlab_gpu2021.json" 2> "$out/passlab_gpu2021.err"

phase "summary"
python3 - "$out" <<'EOF' | tee "$out/summary.txt"
import json, sys, os
out = sys.argv[1]
def load(name):
    try:
        with open(os.path.join(out, name)) as f:
            return json.load(f)
    except Exception as e:
        return {"error": f"{name}: {e}"}
rows = [("passlab default (graph, TF32)", load("passlab_default.json")),
        ("passlab on the A/A sweep's autotune cache", load("passlab_aa3_cache.json")),
        ("passlab legacy cuDNN only (graph, TF32)", load("passlab_legacy.json")),
        ("passlab HWIO filter copies (graph, TF32)", load("passlab_hwio.json")),
        ("passlab thunk by thunk (TF32)", load("passlab_eager.json")),
        ("passlab full f32 (graph)", load("passlab_f32.json")),
        ("passlab filters as they lie (graph, TF32)", load("passlab_aslie.json")),
        ("passlab gpu-2021 (graph, TF32)", load("passlab_gpu2021.json")),
        ("JAX/XLA precision default", load("jax_default.json")),
        ("JAX/XLA precision highest", load("jax_highest.json"))]
print(f"{'':40} {'kernel ms':>10} {'wall ms':>9}  notes")
for name, r in rows:
    if "error" in r:
        print(f"{name:40} {'-':>10} {'-':>9}  {r['error'][:90]}")
        continue
    k = r.get("kernel_ms_median", r.get("kernel_ms_per_step"))
    w = r.get("wall_ms_median")
    note = r.get("command_buffer", r.get("device", ""))
    print(f"{name:40} {k if k is not None else '-':>10} {w if w is not None else '-':>9}  {note}")
EOF
if [[ -f "$out/passlab_default_trace.json" && -f "$out/jax_default_kernels.csv" ]]; then
  python3 "$here/bench/kernel_compare.py" "$out/passlab_default_trace.json" "$out/jax_default_kernels.csv" \
    > "$out/kernel_compare_default.txt" 2>&1
  python3 "$here/bench/kernel_compare.py" "$out/passlab_f32_trace.json" "$out/jax_highest_kernels.csv" \
    > "$out/kernel_compare_f32.txt" 2>&1
  python3 "$here/bench/kernel_compare.py" "$out/passlab_aslie_trace.json" "$out/jax_default_kernels.csv" \
    > "$out/kernel_compare_aslie.txt" 2>&1
  python3 "$here/bench/kernel_compare.py" "$out/passlab_legacy_trace.json" "$out/jax_default_kernels.csv" \
    > "$out/kernel_compare_legacy.txt" 2>&1
  cat "$out/kernel_compare_default.txt"
fi
rm -rf "$out/kernel-cache"
# The sweep's small files only (its references and snapshots are large).
for d in aa3 aa3-again; do
  if [[ -d "$out/$d" ]]; then
    mkdir -p "$out/$d-small" && cp "$out/$d"/*.md "$out/$d"/*.json "$out/$d"/*.jsonl "$out/$d-small/" 2> /dev/null
    rm -rf "${out:?}/$d"
  fi
done
(cd "$out" && tar czf results.tar.gz --exclude results.tar.gz . 2> /dev/null)
phase "done"
