#!/usr/bin/env bash
# run --autotune-cache FILE: the pickers' choices are saved to FILE and the
# next run (or a sweep's autotune.json) starts from them, so two runs time
# the same program; a file that is not an autotune cache is a clear error.
set -euo pipefail
passlab="$1"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
model=(--model resnet18 --batch 2 --image-size 32 --repeats 2 --warmup 0 --max-rows 0)
"$passlab" run "${model[@]}" --autotune-cache "$tmp/at.json" > "$tmp/run1" || fail "first run: $(cat "$tmp/run1")"
[ -s "$tmp/at.json" ] || fail "no autotune cache written"
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); assert len(d['results']) > 5, d" "$tmp/at.json" \
  || fail "the cache holds too few choices: $(head -c 300 "$tmp/at.json")"
# Two later runs from the same cache choose the same algorithm for every call.
algorithms() { grep -E "^custom-call" "$1" | awk '{print $1, $NF}' | sort; }
"$passlab" run "${model[@]}" --autotune-cache "$tmp/at.json" > "$tmp/run2" || fail "second run"
"$passlab" run "${model[@]}" --autotune-cache "$tmp/at.json" > "$tmp/run3" || fail "third run"
[ -n "$(algorithms "$tmp/run2")" ] || fail "no library calls listed: $(head -20 "$tmp/run2")"
diff <(algorithms "$tmp/run2") <(algorithms "$tmp/run3") > /dev/null || fail "runs from one cache chose differently"
echo "not json" > "$tmp/bad.json"
set +e
"$passlab" run "${model[@]}" --autotune-cache "$tmp/bad.json" > /dev/null 2> "$tmp/err"; rc=$?
set -e
[ "$rc" = 1 ] || fail "a bad cache file: exit $rc"
grep -q "autotune-cache" "$tmp/err" || fail "the error does not name --autotune-cache: $(cat "$tmp/err")"
echo "cli_run_autotune_cache: ok"
