#!/usr/bin/env bash
# The persistent compiled-kernel cache (--kernel-cache): a second run loads
# every kernel instead of compiling it and computes the same outputs; two
# runs writing one cache at once leave a valid cache; a corrupt entry is a
# warning and a compile, not a failure; ablate's workers share
# <out>/kernel_cache and count hits per record and in the manifest.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
model=(--model mlp --batch 2 --width 8 --depth 1)
json() {  # json FILE KEY: a top-level field of `passlab run --format json`'s output
  python3 -c "import json,sys; print(json.load(open(sys.argv[1]))[sys.argv[2]])" "$1" "$2"
}

"$passlab" run "${model[@]}" --kernel-cache "$tmp/kc" --format json --output-dir "$tmp/out1" > "$tmp/run1.json" \
  || fail "first run"
[ "$(json "$tmp/run1.json" persistent_cache_hits)" = 0 ] || fail "first run hit an empty cache"
misses=$(json "$tmp/run1.json" persistent_cache_misses)
[ "$misses" -gt 0 ] || fail "first run compiled nothing"
[ "$(ls "$tmp/kc"/*.kernel | wc -l)" = "$misses" ] || fail "not one entry per compiled kernel: $(ls "$tmp/kc")"

"$passlab" run "${model[@]}" --kernel-cache "$tmp/kc" --output-dir "$tmp/out2" > "$tmp/run2.txt" 2> "$tmp/run2.err" \
  || fail "second run"
grep -q "kernel cache .*($misses hits, 0 misses)" "$tmp/run2.txt" || fail "second run: $(cat "$tmp/run2.txt")"
grep -q "(0 kernels compiled, $misses loaded from the kernel cache" "$tmp/run2.txt" || fail "compile line"
[ ! -s "$tmp/run2.err" ] || fail "warnings on a clean cache: $(cat "$tmp/run2.err")"
for f in "$tmp"/out1/*.npy; do
  cmp -s "$f" "$tmp/out2/$(basename "$f")" || fail "outputs differ: $(basename "$f")"
done

# Two runs at once into a fresh cache: both succeed, and the cache they
# leave serves a third run entirely, without warnings.
"$passlab" run "${model[@]}" --kernel-cache "$tmp/kc2" > "$tmp/a.txt" 2>&1 & a=$!
"$passlab" run "${model[@]}" --kernel-cache "$tmp/kc2" > "$tmp/b.txt" 2>&1 & b=$!
wait $a || fail "concurrent run a: $(cat "$tmp/a.txt")"
wait $b || fail "concurrent run b: $(cat "$tmp/b.txt")"
"$passlab" run "${model[@]}" --kernel-cache "$tmp/kc2" > "$tmp/c.txt" 2> "$tmp/c.err" || fail "run after concurrent"
grep -q "kernel cache .*($misses hits, 0 misses)" "$tmp/c.txt" || fail "after concurrent writers: $(cat "$tmp/c.txt")"
[ ! -s "$tmp/c.err" ] || fail "warnings after concurrent writers: $(cat "$tmp/c.err")"
ls -A "$tmp/kc2" | grep -q '^\.tmp' && fail "temporaries left: $(ls -A "$tmp/kc2")"

# A corrupt entry: a warning naming it, a compile, the same outputs.
entry=$(ls "$tmp"/kc/*.kernel | head -1)
printf 'garbage' > "$entry"
"$passlab" run "${model[@]}" --kernel-cache "$tmp/kc" --output-dir "$tmp/out3" > "$tmp/run3.txt" 2> "$tmp/run3.err" \
  || fail "run with a corrupt entry"
grep -q "kernel cache: ignoring '$entry'" "$tmp/run3.err" || fail "no warning: $(cat "$tmp/run3.err")"
grep -q "($((misses - 1)) hits, 1 misses)" "$tmp/run3.txt" || fail "corrupt entry not a miss: $(cat "$tmp/run3.txt")"
for f in "$tmp"/out1/*.npy; do cmp -s "$f" "$tmp/out3/$(basename "$f")" || fail "outputs differ after recompile"; done

# Not a directory: a clear error, non-zero exit.
touch "$tmp/file"
if "$passlab" run "${model[@]}" --kernel-cache "$tmp/file" > "$tmp/bad.txt" 2>&1; then fail "a file as --kernel-cache"; fi
grep -q "kernel cache: cannot create directory '$tmp/file'" "$tmp/bad.txt" || fail "error message: $(cat "$tmp/bad.txt")"

# ablate: workers share <out>/kernel_cache; a second sweep with the same
# --kernel-cache loads every kernel.
sweep=(--sweep file --repeats 2 --warmup 0 --reference none --time-identical)
printf 'no cse: cse\nno dce: dce\n' > "$tmp/variants.txt"
"$passlab" ablate "${model[@]}" "${sweep[@]}" --variants "$tmp/variants.txt" --out "$tmp/s1" > /dev/null 2>&1 \
  || fail "sweep 1"
[ -d "$tmp/s1/kernel_cache" ] || fail "no <out>/kernel_cache"
python3 - "$tmp/s1" <<'PY' || fail "sweep 1 counts"
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))["kernel_cache"]
assert m["dir"].endswith("/kernel_cache"), m
assert m["persistent_misses"] > 0 and m["records"] >= 3, m
recs = [json.loads(l) for l in open(sys.argv[1] + "/results.jsonl")]
assert all("persistent_hits" in r["kernel_cache"] for r in recs if r.get("status") == "ok"), recs
PY
"$passlab" ablate "${model[@]}" "${sweep[@]}" --variants "$tmp/variants.txt" --out "$tmp/s2" \
  --kernel-cache "$tmp/s1/kernel_cache" > /dev/null 2>&1 || fail "sweep 2"
python3 - "$tmp/s2" <<'PY' || fail "sweep 2 counts"
import json, sys
m = json.load(open(sys.argv[1] + "/manifest.json"))["kernel_cache"]
assert m["persistent_misses"] == 0 and m["persistent_hits"] > 0 and m["hit_rate"] == 1, m
PY
grep -q "loaded)" "$tmp/s2/report.md" || fail "report without loaded kernels"
"$passlab" ablate "${model[@]}" "${sweep[@]}" --variants "$tmp/variants.txt" --out "$tmp/s3" --no-kernel-cache \
  > /dev/null 2>&1 || fail "sweep 3"
[ ! -e "$tmp/s3/kernel_cache" ] || fail "--no-kernel-cache made a cache"
python3 -c "import json,sys; assert 'kernel_cache' not in json.load(open(sys.argv[1]))" "$tmp/s3/manifest.json" \
  || fail "--no-kernel-cache manifest"
if "$passlab" ablate "${model[@]}" --dry-run --kernel-cache x --no-kernel-cache > /dev/null 2>&1; then
  fail "--kernel-cache with --no-kernel-cache"
fi
echo "cli_kernel_cache: ok"
