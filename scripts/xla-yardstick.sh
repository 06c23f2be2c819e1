#!/usr/bin/env bash
# Real XLA as the yardstick (issue 28), one prepared, resumable command for a
# GPU session with JAX installed:
#   1. XLA's per-pass dumps of the JAX ResNet training step
#      (--xla_dump_to --xla_dump_hlo_pass_re=.*: after every pass that changed
#      the module), packed as OUT_DIR/xla-dump.tar.xz (and 15 MB parts,
#      xla-dump.tar.xz.part-*, for transfers that limit a file's size), and
#      the passes that changed XLA's module (OUT_DIR/ablation/changed_passes.txt);
#   2. the passes to time: those of bench/xla_ablation_passes.txt that changed
#      XLA's module first, then the other passes passlab models that changed
#      it (OUT_DIR/passes.txt), two A/A copies ahead of them;
#   3. real XLA's disable-one ablation of the same step (bench/xla_ablation.py:
#      each pass disabled in turn, timed against the baseline in ABBA pairs
#      with the profiler's kernel times) for XY_XLA_SHARE percent of what is
#      left (default 50);
#   4. passlab's sweep of the same step on the GPU, the same passes (those in
#      its `gpu` pipeline), for the rest (`passlab ablate --device cuda
#      --sweep file`), then the reports and `passlab ablate --compare`;
#   5. OUT_DIR/results.tar.gz: the small files worth keeping.
# Rerunning with the same OUT_DIR goes on where it stopped (XLA's autotuning
# results are cached there between parts; the dump is made once).
# Usage: scripts/xla-yardstick.sh [BIN_DIR] [OUT_DIR] [SECONDS]
#   BIN_DIR holds passlab (default: build/tools). SECONDS: this part's budget
#   (default 540, inside a 10-minute command limit).
# XY_DEPTH (50), XY_BATCH (8), XY_IMAGE (64): the step's size, as
# bench/jax_resnet_step.py takes them. XY_THREADS (8): XLA compiles at once.
# XY_PIPELINES ("gpu"): passlab pipelines to sweep, in turn, with what is left.
set -uo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-$here/build/tools}
out=${2:-xla-yardstick}
budget=${3:-540}
began=$(date +%s)
passlab=$bin/passlab
depth=${XY_DEPTH:-50}; batch=${XY_BATCH:-8}; image=${XY_IMAGE:-64}
mkdir -p "$out"
left() { echo $(( budget - ($(date +%s) - began) )); }
phase() { echo "$(date -u +%H:%M:%S) [$(left) s left] $*" | tee -a "$out/phases.txt"; }
if ! python3 -c 'import jax' 2> /dev/null; then
  echo "xla-yardstick: python3 has no jax" >&2
  exit 1
fi
have_passlab=0
if "$passlab" --version > /dev/null 2>&1 || "$passlab" opt --list-passes > /dev/null 2>&1; then have_passlab=1; fi
phase "start (passlab runs: $have_passlab)"
nvidia-smi -L > "$out/gpu.txt" 2>&1
python3 -c 'import jax, jaxlib; print("jax", jax.__version__, "jaxlib", jaxlib.__version__, jax.devices())' \
  >> "$out/gpu.txt" 2>&1
cat "$out/gpu.txt"
step=(--depth "$depth" --batch "$batch" --image-size "$image")

# 1: the dump, once.
if [[ ! -f "$out/xla-dump.tar.xz" ]]; then
  phase dump
  rm -rf "$out/xla-dump"
  timeout 240 python3 "$here/bench/xla_ablation.py" --out "$out/ablation" "${step[@]}" \
    --dump "$out/xla-dump" > "$out/dump.log" 2>&1
  echo "dump: rc=$? $(find "$out/xla-dump" -type f 2> /dev/null | wc -l) files, $(du -sh "$out/xla-dump" 2> /dev/null | cut -f1)"
  tail -n 2 "$out/dump.log"
  if [[ -d "$out/xla-dump" ]]; then
    tar cf - -C "$out" xla-dump | xz -6 -T0 > "$out/xla-dump.tar.xz" && rm -rf "$out/xla-dump"
    (cd "$out" && split -b 15M -d xla-dump.tar.xz xla-dump.tar.xz.part-)
    echo "dump: $(du -h "$out/xla-dump.tar.xz" | cut -f1) compressed"
  fi
fi

# 2: the passes to time.
if (( have_passlab )); then
  "$passlab" opt --list-passes --format json > "$out/passlab-passes.json" 2> /dev/null
  for p in ${XY_PIPELINES:-gpu}; do
    "$passlab" opt --list-passes --pipeline "$p" --format json > "$out/passlab-passes-$p.json" 2> /dev/null
  done
fi
python3 - "$here/bench/xla_ablation_passes.txt" "$out/ablation/changed_passes.txt" "$out/passlab-passes.json" \
  > "$out/passes.txt" <<'EOF'
import json, os, sys
def names(path):
    if not os.path.exists(path):
        return None
    return [l.split("#", 1)[0].strip() for l in open(path) if l.split("#", 1)[0].strip()]
first, changed = names(sys.argv[1]), names(sys.argv[2])
modelled = set()
if os.path.exists(sys.argv[3]) and os.path.getsize(sys.argv[3]):
    for p in json.load(open(sys.argv[3])):
        modelled.update(n for n in (p.get("name") or "").split(" / ") if n)
if changed is None:  # no dump: the list as it is
    order = first
else:
    order = [p for p in first if p in changed]
    order += [p for p in changed if p not in order and (not modelled or p in modelled)]
for p in dict.fromkeys(order):
    print(p)
EOF
echo "passes to time: $(wc -l < "$out/passes.txt") ($(paste -sd, "$out/passes.txt" | cut -c1-300))"

# 3: real XLA's sweep.
share=${XY_XLA_SHARE:-50}
xla_s=$(( ($(left) - 40) * share / 100 ))
if (( xla_s > 60 )); then
  phase "xla sweep ($xla_s s)"
  # A pass XLA cannot do without may abort the process (a CHECK in a later
  # pass): the next part goes on after it, and the log gives the crash record
  # XLA's message.
  xla_end=$(( $(date +%s) + xla_s ))
  while (( xla_end - $(date +%s) > 45 )); do
    part_s=$(( xla_end - $(date +%s) ))
    timeout $(( part_s + 60 )) python3 "$here/bench/xla_ablation.py" --out "$out/ablation" "${step[@]}" \
      --passes-file "$out/passes.txt" --aa-copies 2 --compile-threads "${XY_THREADS:-8}" \
      --log "$out/ablation.log" --budget-s "$part_s" >> "$out/ablation.log" 2>&1
    rc=$?
    echo "xla sweep part: rc=$rc"
    tail -n 1 "$out/ablation.log" | grep -q " 0 variants left" && break
    (( rc == 0 )) && break  # stopped for the budget
  done
  echo "xla sweep: $(grep -c '"status": "ok"' "$out/ablation/results.jsonl" 2> /dev/null) ok records"
  tail -n 3 "$out/ablation.log"
fi

# 4: passlab's sweep of the same step and passes, per pipeline.
if (( have_passlab )); then
  for p in ${XY_PIPELINES:-gpu}; do
    python3 - "$out/passes.txt" "$out/passlab-passes-$p.json" "$p" > "$out/variants-$p.txt" <<'EOF'
import json, sys
wanted = [l.strip() for l in open(sys.argv[1]) if l.strip()]
inside = set()
for e in json.load(open(sys.argv[2])):
    if any(o.get("pipeline", "").startswith(sys.argv[3] + "/") for o in e.get("occurrences", [])):
        inside.update(n for n in (e.get("name") or "").split(" / ") if n)
for name in wanted:
    if name in inside:
        print(f"disable {name}: {name}")
EOF
    # Passes registered for the pipeline that this model's build of it does
    # not run: dropped (ablate names them).
    for _ in 1 2 3 4 5 6 7 8 9 10; do
      bad=$("$passlab" ablate --model "resnet$depth" --batch "$batch" --image-size "$image" --device cuda \
              --pipeline "$p" --sweep file --variants "$out/variants-$p.txt" --dry-run --out "$out/passlab-$p" 2>&1 |
            sed -n "s/.*pass filter '\([^']*\)' matches no pass.*/\1/p" | head -n 1)
      [[ -z "$bad" ]] && break
      echo "passlab $p: no '$bad' in this pipeline; dropped"
      grep -v -F ": $bad" "$out/variants-$p.txt" > "$out/variants-$p.tmp"; mv "$out/variants-$p.tmp" "$out/variants-$p.txt"
    done
    n=$(wc -l < "$out/variants-$p.txt")
    s=$(( $(left) - 45 ))
    if (( n > 0 && s > 60 )); then
      phase "passlab sweep $p ($n variants, $s s)"
      timeout "$s" "$passlab" ablate --model "resnet$depth" --batch "$batch" --image-size "$image" --device cuda \
        --pipeline "$p" --sweep file --variants "$out/variants-$p.txt" --repeats 24 --warmup 2 --jobs 15 \
        --block $(( n + 1 )) --out "$out/passlab-$p" > "$out/passlab-$p.log" 2>&1
      echo "passlab sweep $p: rc=$?"
      tail -n 3 "$out/passlab-$p.log"
      [[ -f "$out/passlab-$p/report.md" ]] || "$passlab" ablate --report-only --out "$out/passlab-$p" > /dev/null 2>&1
    fi
  done
  "$passlab" ablate --report-only --out "$out/ablation" > "$out/report.log" 2>&1
  echo "xla report: rc=$? $out/ablation/report.md"
  cmp=("$out/ablation")
  for p in ${XY_PIPELINES:-gpu}; do [[ -f "$out/passlab-$p/results.jsonl" ]] && cmp+=("$out/passlab-$p"); done
  if (( ${#cmp[@]} > 1 )); then
    "$passlab" ablate --compare "${cmp[@]}" > "$out/compare.md" 2>&1
    echo "compare: rc=$? $out/compare.md"
  fi
fi

# 5: the small files worth keeping.
phase pack
(cd "$out" && find . -maxdepth 2 -type f \( -name '*.log' -o -name '*.txt' -o -name '*.json' -o -name '*.jsonl' \
   -o -name '*.md' -o -name '*.html' -o -name '*.csv' \) -not -path './xla-dump/*' -print) |
  tar czf "$out/results.tar.gz" -C "$out" -T - 2> /dev/null
echo "results: $out/results.tar.gz ($(du -h "$out/results.tar.gz" | cut -f1))"
phase end
