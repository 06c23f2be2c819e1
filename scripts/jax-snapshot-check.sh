#!/usr/bin/env bash
# Makes JAX write a real HLO snapshot of a small jitted step
# (bench/jax_snapshot.py, XLA's --xla_dump_hlo_snapshots and, where XLA has
# it, --xla_dump_hlo_unoptimized_snapshots), copies the snapshots to OUT_DIR,
# and replays them with passlab: the unoptimized snapshot (or the HLO text
# with its .npy arguments) with `run --check --expect` against JAX's own
# outputs; the optimized snapshot is imported and verified (it holds XLA's
# backend custom calls, which passlab may not run).
# Usage: scripts/jax-snapshot-check.sh PASSLAB OUT_DIR. Exit 77: no JAX.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
passlab=$1; out=$2
work="$out/jax_snapshot"
mkdir -p "$work"
python3 -c 'import jax' 2> /dev/null || { echo "jax-snapshot-check: python3 has no jax"; exit 77; }
if ! timeout 180 python3 "$here/bench/jax_snapshot.py" "$work" > "$out/jax_snapshot.log" 2>&1; then
  echo "retrying without --xla_dump_hlo_unoptimized_snapshots" >> "$out/jax_snapshot.log"
  rm -rf "$work"; mkdir -p "$work"
  timeout 180 python3 "$here/bench/jax_snapshot.py" "$work" --no-unoptimized >> "$out/jax_snapshot.log" 2>&1 \
    || { echo "jax-snapshot-check: JAX failed: $(tail -3 "$out/jax_snapshot.log")"; exit 1; }
fi
ls -la "$work/dump" >> "$out/jax_snapshot.log" 2>&1
status=0
# The step's HLO text and its .npy arguments, against JAX's outputs.
timeout 120 "$passlab" run "$work/args/module.hlo" --args "$work/args" --expect "$work/args" --check --repeats 3 \
  > "$out/jax_args_replay.log" 2>&1 || status=1
echo "args replay: $(grep -E '^(inputs|check|expect)' "$out/jax_args_replay.log" | cut -c1-160 | tr '\n' ' ')"
found=0
for pb in "$work"/dump/*snapshot*.pb; do
  [[ -f $pb ]] || continue
  found=1
  cp "$pb" "$out/"
  name=$(basename "$pb")
  if [[ $name == *jit_step*unoptimized* ]]; then
    timeout 120 "$passlab" run "$pb" --check --expect "$work/args" --repeats 3 > "$out/$name.replay.log" 2>&1 || status=1
  elif [[ $name == *unoptimized* ]]; then
    # JAX's helper modules (key splitting, argument set-up): JAX's outputs
    # are the step's, so these are checked against the evaluator only.
    timeout 120 "$passlab" run "$pb" --check --repeats 3 > "$out/$name.replay.log" 2>&1 || status=1
  else
    # Optimized for XLA's backend: import and verify; the run is reported, not required.
    "$passlab" verify "$pb" > "$out/$name.replay.log" 2>&1 || status=1
    timeout 120 "$passlab" run "$pb" --pipeline none --check --repeats 3 >> "$out/$name.replay.log" 2>&1
  fi
  echo "$name: $(grep -E '^(inputs|check|expect)|error' "$out/$name.replay.log" | cut -c1-160 | tr '\n' ' ')"
done
[[ $found = 1 ]] || { echo "jax-snapshot-check: XLA wrote no snapshot into $work/dump"; status=1; }
exit $status
