#!/usr/bin/env bash
# Real XLA as the yardstick (issue 28), one prepared, resumable command for a
# GPU session with JAX installed:
#   1. XLA's per-pass dumps of the JAX ResNet training step
#      (--xla_dump_to --xla_dump_hlo_pass_re=.*), compressed into
#      OUT_DIR/xla-dump.tar.xz, and `passlab conform --xla-dump` on them
#      (every run of a pass passlab models, passlab's pass on XLA's module
#      before it against XLA's module after it; XLA's final fusions beside
#      passlab's);
#   2. real XLA's disable-one ablation of the same step
#      (bench/xla_ablation.py: each pass of passlab's `gpu` pipeline disabled
#      in turn, timed against the baseline in ABBA pairs with CUPTI kernel
#      times from the profiler), for what is left of SECONDS; rerunning with
#      the same OUT_DIR goes on where it stopped (XLA's autotuning results
#      are cached there between parts);
#   3. passlab's report of XLA's sweep (`passlab ablate --report-only`) and,
#      when PASSLAB_SWEEP names a passlab sweep of the same step, both side by
#      side (`passlab ablate --compare`).
# Usage: scripts/xla-yardstick.sh [BIN_DIR] [OUT_DIR] [SECONDS]
#   BIN_DIR holds passlab (default: build/tools). SECONDS: this part's budget
#   (default 480, inside a 10-minute command limit).
# XY_DEPTH (50), XY_BATCH (8), XY_IMAGE (64): the step's size, as
# bench/jax_resnet_step.py takes them.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/tools}
out=${2:-xla-yardstick}
budget=${3:-480}
began=$(date +%s)
passlab=$bin/passlab
depth=${XY_DEPTH:-50}; batch=${XY_BATCH:-8}; image=${XY_IMAGE:-64}
mkdir -p "$out"
if ! python3 -c 'import jax' 2> /dev/null; then
  echo "xla-yardstick: python3 has no jax" >&2
  exit 1
fi
step=(--depth "$depth" --batch "$batch" --image-size "$image")

# 1: the dump, once.
if [[ ! -f "$out/xla-dump.tar.xz" ]]; then
  rm -rf "$out/xla-dump"
  timeout 300 python3 "$here/bench/xla_ablation.py" --out "$out/ablation" "${step[@]}" \
    --dump "$out/xla-dump" > "$out/dump.log" 2>&1
  echo "dump: rc=$? $(ls "$out/xla-dump" 2> /dev/null | wc -l) files"
  "$passlab" conform --xla-dump "$out/xla-dump" > "$out/conform-dump.txt" 2>&1
  "$passlab" conform --xla-dump "$out/xla-dump" --format json > "$out/conform-dump.json" 2> /dev/null
  grep -E "^runs of passes passlab models|^final module" "$out/conform-dump.txt"
  tar cJf "$out/xla-dump.tar.xz" -C "$out" xla-dump && rm -rf "$out/xla-dump"
  echo "dump: $(du -h "$out/xla-dump.tar.xz" | cut -f1) compressed"
fi

# 2: the sweep, for the rest of the budget.
left=$(( budget - ($(date +%s) - began) - 30 ))
if (( left > 60 )); then
  timeout $(( left + 20 )) python3 "$here/bench/xla_ablation.py" --out "$out/ablation" "${step[@]}" \
    --passlab "$passlab" --budget-s "$left" 2>&1 | tee -a "$out/ablation.log" | tail -n 5
fi

# 3: the report, and the comparison when a passlab sweep is at hand.
"$passlab" ablate --report-only --out "$out/ablation" > "$out/report.log" 2>&1
echo "report: rc=$? $out/ablation/report.md"
if [[ -n "${PASSLAB_SWEEP:-}" ]]; then
  "$passlab" ablate --compare "$out/ablation" "$PASSLAB_SWEEP" > "$out/compare.md" 2>&1
  echo "compare: rc=$? $out/compare.md"
fi
