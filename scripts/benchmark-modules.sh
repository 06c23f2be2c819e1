#!/usr/bin/env bash
# XLA's own benchmark modules through `passlab opt --pipeline gpu` (issue 25
# item 6): every module of the corpus (../shared/corpus/xla_test_hlo.jsonl.gz)
# whose source path lies under a benchmarks/ directory is verified and
# optimized, one at a time, and a Markdown table is printed: module,
# instructions, sharded?, seconds, peak RSS, the slowest pass (from
# --time-passes), or why it failed.
#
# Usage: scripts/benchmark-modules.sh [PASSLAB] [OUT.md]
#   PASSLAB  the binary (default build/tools/passlab)
#   OUT.md   also write the table there
#   BENCH_TIMEOUT=SECONDS  per module (default 300)
#   PASSLAB_CORPUS=DIR     the corpus directory (default ../shared/corpus)
# Without the corpus it says so and exits 0.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
passlab="${1:-$root/build/tools/passlab}"
out="${2:-}"
corpus="${PASSLAB_CORPUS:-$root/../shared/corpus}/xla_test_hlo.jsonl.gz"
limit="${BENCH_TIMEOUT:-300}"
if [ ! -f "$corpus" ]; then
  echo "benchmark-modules: skipped: no corpus at $corpus"
  exit 0
fi
[ -x "$passlab" ] || { echo "benchmark-modules: no passlab binary at $passlab" >&2; exit 1; }
command -v /usr/bin/time > /dev/null || { echo "benchmark-modules: needs /usr/bin/time (Debian: time)" >&2; exit 1; }
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# One file per module: ID_NAME.hlo (NAME: the source file's base name, or the
# module's name for the corpus's .hlo files).
python3 - "$corpus" "$tmp" <<'EOF'
import gzip, json, os, re, sys
corpus, tmp = sys.argv[1], sys.argv[2]
with gzip.open(corpus, "rt") as f:
    for line in f:
        e = json.loads(line)
        path = e.get("source_path", "")
        if "benchmarks/" not in path:
            continue
        base = re.sub(r"[^A-Za-z0-9_.-]", "_", os.path.basename(path))
        base = re.sub(r"\.(cc|hlo|txt)$", "", base)
        with open(os.path.join(tmp, f"{e['id']}_{base}.hlo"), "w") as o:
            o.write(e["text"])
EOF

table="$tmp/table.md"
{
  echo "| module | instructions | sharded | seconds | peak RSS (MB) | slowest pass (ms) |"
  echo "|---|---:|:---:|---:|---:|---|"
} > "$table"
for f in "$tmp"/*.hlo; do
  name="$(basename "$f" .hlo)"
  # Sharded: partitioned for several devices (num_partitions > 1, a tiled
  # sharding) or already SPMD-partitioned (cross-device collectives).
  sharded=no
  if head -c 4000 "$f" | grep -q 'num_partitions=[2-9]\|num_partitions=[1-9][0-9]' ||
    grep -q 'sharding={devices=\|all-reduce(\|all-gather(\|reduce-scatter(\|all-to-all(\|collective-permute(' "$f"; then
    sharded=yes
  fi
  if ! "$passlab" verify "$f" > "$tmp/verify.out" 2> "$tmp/verify.err"; then
    why="$(grep -m1 'error' "$tmp/verify.err" | sed 's/^passlab: error: //; s/|/\\|/g' | cut -c1-140)"
    echo "| $name | - | $sharded | - | - | does not verify: ${why#*: } |" >> "$table"
    continue
  fi
  instrs="$(sed -n 's/.*OK ([0-9]* computations, \([0-9]*\) instructions).*/\1/p' "$tmp/verify.out")"
  set +e
  /usr/bin/time -f '%e %M' -o "$tmp/time" timeout "$limit" "$passlab" opt --pipeline gpu --time-passes "$f" \
    -o /dev/null 2> "$tmp/opt.err"
  code=$?
  set -e
  read -r secs kb < <(tail -1 "$tmp/time")
  rss=$((kb / 1024))
  if [ "$code" = 124 ]; then
    echo "| $name | $instrs | $sharded | >$limit | $rss | timed out |" >> "$table"
    continue
  fi
  if [ "$code" != 0 ]; then
    why="$(grep -m1 'error' "$tmp/opt.err" | sed 's/^passlab: error: //; s/|/\\|/g' | cut -c1-140)"
    echo "| $name | $instrs | $sharded | $secs | $rss | fails: ${why:-exit $code} |" >> "$table"
    continue
  fi
  # --time-passes rows: "  wall_ms  pct%  runs  changed  pass".
  slowest="$(awk '$2 ~ /%$/ && NF == 5 { if ($1 + 0 > best) { best = $1 + 0; name = $5 } }
                  END { if (name != "") printf "%s (%.0f)", name, best }' "$tmp/opt.err")"
  echo "| $name | $instrs | $sharded | $secs | $rss | $slowest |" >> "$table"
done
cat "$table"
if [ -n "$out" ]; then cp "$table" "$out"; fi
