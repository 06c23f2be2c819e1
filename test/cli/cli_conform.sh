#!/usr/bin/env bash
# passlab conform: XLA's pass unit tests run through passlab's passes.
# A small case file written here checks each verdict and the bad-input
# errors; then the shared corpus (../shared/corpus/xla_pass_tests.jsonl.gz,
# skipped when absent) must hold at least what test/conformance/ratchet.txt
# says, pass by pass: the ratchet only goes up.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

python3 - "$tmp/cases.jsonl" <<'PY'
import json, sys
m = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  dead = f32[4] negate(p)\n  ROOT r = f32[4] exponential(p)\n}\n"
clean = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f32[4] exponential(p)\n}\n"
cases = [
  dict(id="a", test="T.RemovesDead", pass_="dce", hlo=m, expect_changed=True,
       filecheck="// CHECK-NOT: negate\n// CHECK: ROOT %r = f32[4]{0} exponential(%p)\n"),
  dict(id="b", test="T.KeepsClean", pass_="dce", hlo=clean, expect_changed=False, filecheck=None),
  dict(id="c", test="T.WrongAnswer", pass_="dce", hlo=clean, expect_changed=True, filecheck=None),
  dict(id="d", test="T.WrongText", pass_="dce", hlo=m, expect_changed=True,
       filecheck="// CHECK: ROOT %r = f32[4]{0} exponential(f32[4]{0} %p)\n"),
  dict(id="e", test="T.NoSuchPass", pass_="frobnicate-things", hlo=m, expect_changed=True, filecheck=None),
  dict(id="f", test="T.BadText", pass_="dce", hlo="HloModule m\nENTRY e {\n  ROOT r = f32[4] frob(p)\n}\n",
       expect_changed=False, filecheck=None),
]
with open(sys.argv[1], "w") as f:
    for c in cases:
        c["pass"] = c.pop("pass_")
        f.write(json.dumps(c) + "\n")
PY
"$passlab" conform "$tmp/cases.jsonl" > "$tmp/out" || fail "conform exited $?: $(cat "$tmp/out")"
grep -Eq "^dce +2 +5$" "$tmp/out" || fail "dce tally: $(cat "$tmp/out")"
grep -q "frobnicate-things .*(not modelled)" "$tmp/out" || fail "not-modelled pass: $(cat "$tmp/out")"
grep -q "T.WrongAnswer (line 3): changed differs" "$tmp/out" || fail "changed verdict: $(cat "$tmp/out")"
grep -q "XLA's pass answers changed=true, passlab's false" "$tmp/out" || fail "changed detail"
grep -q "T.WrongText (line 4): FileCheck failed" "$tmp/out" || fail "FileCheck verdict: $(cat "$tmp/out")"
grep -q "directives:1:.*error: CHECK: expected string not found" "$tmp/out" || fail "FileCheck detail: $(cat "$tmp/out")"
grep -q "T.BadText (line 6): parse error" "$tmp/out" || fail "parse verdict"
gzip -c "$tmp/cases.jsonl" > "$tmp/cases.jsonl.gz"
"$passlab" conform "$tmp/cases.jsonl.gz" --pass dce --format json > "$tmp/json" || fail "json"
python3 - "$tmp/json" <<'PY' || fail "json content: $(cat "$tmp/json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["passes"]["dce"] == {"held": 2, "total": 5, "modelled": True}, j["passes"]
held = {c["test"]: c for c in j["cases"]}
assert held["T.RemovesDead"]["held"] and held["T.RemovesDead"]["evaluation"] == "equal", held["T.RemovesDead"]
assert held["T.WrongText"]["verdict"] == "FileCheck failed"
assert "frobnicate-things" not in j["passes"]
PY

# The ratchet: below it is exit 1 and names the pass.
printf '# pass held\ndce 3\n' > "$tmp/ratchet"
if "$passlab" conform "$tmp/cases.jsonl" --ratchet "$tmp/ratchet" > "$tmp/out" 2> "$tmp/err"; then fail "ratchet passed"; fi
grep -q "ratchet: dce: 2 held, the ratchet wants at least 3" "$tmp/err" || fail "ratchet message: $(cat "$tmp/err")"

# Bad input: one clear error naming the line, non-zero exit.
printf '{"id":"x","test":"T.A","pass":"dce","hlo":"HloModule m","expect_changed":false}\nnot json\n' > "$tmp/bad.jsonl"
if "$passlab" conform "$tmp/bad.jsonl" 2> "$tmp/err"; then fail "bad JSON accepted"; fi
grep -q "bad.jsonl:2: not a JSON object" "$tmp/err" || fail "bad JSON message: $(cat "$tmp/err")"
printf '{"id":"x","test":"T.A","pass":"dce","hlo":"HloModule m"}\n' > "$tmp/bad.jsonl"
if "$passlab" conform "$tmp/bad.jsonl" 2> "$tmp/err"; then fail "missing field accepted"; fi
grep -q "bad.jsonl:1: field 'expect_changed' is missing" "$tmp/err" || fail "missing field: $(cat "$tmp/err")"
if "$passlab" conform "$tmp/none.jsonl" 2> "$tmp/err"; then fail "missing file accepted"; fi
grep -q "none.jsonl: no such file" "$tmp/err" || fail "missing file: $(cat "$tmp/err")"
if "$passlab" conform "$tmp/cases.jsonl" --pass cse 2> "$tmp/err"; then fail "absent pass accepted"; fi
grep -q -- "--pass cse: no case of that pass" "$tmp/err" || fail "absent pass: $(cat "$tmp/err")"
printf 'dce many\n' > "$tmp/ratchet"
if "$passlab" conform "$tmp/cases.jsonl" --ratchet "$tmp/ratchet" 2> "$tmp/err" > /dev/null; then fail "bad ratchet"; fi
grep -q "ratchet:1: expected 'PASS HELD'" "$tmp/err" || fail "bad ratchet message: $(cat "$tmp/err")"

corpus="$src/../shared/corpus/xla_pass_tests.jsonl.gz"
if [ ! -f "$corpus" ]; then echo "SKIP: $corpus is absent"; exit 0; fi
"$passlab" conform "$corpus" --ratchet "$src/test/conformance/ratchet.txt" > "$tmp/out" 2> "$tmp/err" \
  || fail "below the ratchet: $(cat "$tmp/err")"
echo "conformance: $(grep 'cases of passes passlab models' "$tmp/out")"
