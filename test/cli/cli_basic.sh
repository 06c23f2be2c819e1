#!/usr/bin/env bash
# End-to-end checks of the passlab CLI as a user runs it.
# usage: cli_basic.sh PASSLAB_BINARY SOURCE_DIR
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# fmt is canonical and idempotent.
"$passlab" fmt "$src/test/hlo/gelu.hlo" > "$tmp/a.hlo"
"$passlab" fmt "$tmp/a.hlo" -o "$tmp/b.hlo"
cmp -s "$tmp/a.hlo" "$tmp/b.hlo" || fail "fmt is not idempotent"
grep -q 'ROOT %fusion = bf16\[6,512,4096\]{2,1,0} fusion(' "$tmp/a.hlo" || fail "fmt output unexpected"

# verify: OK and a clear error with exit code 1.
"$passlab" verify "$src/test/hlo/all_opcodes.hlo" | grep -q "OK" || fail "verify did not say OK"
printf 'ENTRY e {\n  p = f32[2,3] parameter(0)\n  ROOT n = f32[3,2] negate(p)\n}\n' > "$tmp/bad.hlo"
if "$passlab" verify "$tmp/bad.hlo" 2> "$tmp/err"; then fail "verify accepted a bad module"; fi
grep -q "instruction 'n' in computation 'e': \[shape\]" "$tmp/err" || fail "verify error unclear: $(cat "$tmp/err")"

# Parse errors name FILE:LINE:COL.
printf 'ENTRY e {\n  ROOT x = f32[] frobnicate()\n}\n' > "$tmp/syntax.hlo"
if "$passlab" fmt "$tmp/syntax.hlo" 2> "$tmp/err"; then fail "fmt accepted bad syntax"; fi
grep -q "syntax.hlo:2:18: error: unknown opcode 'frobnicate'" "$tmp/err" || fail "parse error unclear: $(cat "$tmp/err")"

# Missing files.
if "$passlab" stats "$tmp/nope.hlo" 2> "$tmp/err"; then fail "stats accepted a missing file"; fi
grep -q "cannot open file" "$tmp/err" || fail "missing file error unclear"

# stats as JSON.
"$passlab" stats "$src/test/hlo/gelu.hlo" --format json > "$tmp/stats.json"
grep -q '"fusions": 1' "$tmp/stats.json" || fail "stats json: $(cat "$tmp/stats.json")"
grep -q '"multiply": 6' "$tmp/stats.json" || fail "stats json opcodes"

# opt with a pipeline, filters, dumps and the pass list.
"$passlab" opt --list-passes --format json > "$tmp/passes.json"
grep -q '"name": "dce"' "$tmp/passes.json" || fail "list-passes json"
"$passlab" opt --list-passes > "$tmp/passes.txt"
grep -Eq '^dce +simplifiers +no +[0-9]+ +[a-z-]+(,[a-z_ -]+)* +Dead-code' "$tmp/passes.txt" \
  || fail "list-passes: no runs/sub-pipelines columns: $(head -4 "$tmp/passes.txt")"
"$passlab" opt "$src/test/hlo/all_opcodes.hlo" --dump-to "$tmp/dump" --time-passes --stats -o "$tmp/opt.hlo" 2> "$tmp/report"
grep -q "passlab pass timing report" "$tmp/report" || fail "no timing report"
grep -q "fixed point gpu/optimization/simplification" "$tmp/report" || fail "no fixed point report"
test -f "$tmp/dump/index.json" || fail "no index.json"
ls "$tmp/dump" > "$tmp/dump.list"  # not piped into grep -q: under pipefail its early exit would fail ls
grep -Eq '^[0-9]{4}\.gpu_optimization\.call-inliner\.after\.hlo$' "$tmp/dump.list" || fail "dump names: $(cat "$tmp/dump.list")"
"$passlab" verify "$tmp/opt.hlo" > /dev/null || fail "optimized module does not verify"
"$passlab" opt "$src/test/hlo/all_opcodes.hlo" --disable dce --stats -o /dev/null 2> "$tmp/report"
grep -q "dce (@4) *skipped" "$tmp/report" || grep -q "skipped" "$tmp/report" || fail "disable did not skip"
if "$passlab" opt "$src/test/hlo/all_opcodes.hlo" --disable dcee 2> "$tmp/err"; then fail "unknown filter accepted"; fi
grep -q "did you mean: dce" "$tmp/err" || fail "no close-match hint: $(cat "$tmp/err")"
"$passlab" opt "$src/test/hlo/all_opcodes.hlo" --print-changed=diff --passes algsimp > "$tmp/changed.txt"
grep -q "^\*\*\* IR diff after algsimp" "$tmp/changed.txt" || fail "print-changed=diff"
grep -q "^-  %" "$tmp/changed.txt" || fail "print-changed diff has no removed line"

# diff, unified and structural.
"$passlab" diff "$src/test/hlo/all_opcodes.hlo" "$tmp/opt.hlo" --structural > "$tmp/sdiff"
grep -q "instructions" "$tmp/sdiff" || fail "structural diff summary"
# A mistyped command: exit 2, the close match and the list of commands.
set +e
"$passlab" runn "$src/test/hlo/gelu.hlo" > /dev/null 2> "$tmp/err"
code=$?
set -e
[ "$code" = 2 ] || fail "mistyped command: exit $code"
grep -q "unknown command 'runn'; did you mean 'run'? (commands: fmt, verify" "$tmp/err" || fail "$(cat "$tmp/err")"
echo "cli_basic: OK"
