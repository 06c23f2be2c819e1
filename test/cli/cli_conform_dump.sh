#!/usr/bin/env bash
# passlab conform --xla-dump: per-pass dumps (XLA's file names, written here by
# passlab itself with XLA's flags) as conformance cases. passlab's own dump
# must agree with passlab's passes run by run; a dump whose "after" module was
# altered must not; bad arguments are clear errors.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$passlab" model mlp --batch 2 --width 8 --depth 1 -o "$tmp/mlp.hlo" > /dev/null || fail "model"
"$passlab" opt "$tmp/mlp.hlo" --xla_dump_to="$tmp/dump" --xla_dump_hlo_pass_re='.*' -o /dev/null || fail "dump"
# XLA's sanitized names: "layout assignment" -> "layout_assignment".
ls "$tmp/dump" > "$tmp/list"
grep -q '\.layout_assignment\.after_' "$tmp/list" || fail "pipeline names not sanitized: $(head -5 "$tmp/list")"
"$passlab" conform --xla-dump "$tmp/dump" > "$tmp/out" || fail "conform --xla-dump: $(cat "$tmp/out")"
grep -Eq '^runs of passes passlab models: [0-9]+ of [0-9]+ agree' "$tmp/out" || fail "no summary: $(cat "$tmp/out")"
grep -q '^final module module_0000' "$tmp/out" || fail "no final fusion census"
"$passlab" conform --xla-dump "$tmp/dump" --format json > "$tmp/out.json" || fail "json"
# Every run agrees, but for schedules whose ties broke another way (the
# memory scheduler's list order changes when a dump is parsed).
python3 - "$tmp/out.json" <<'PY' || fail "passlab's own dump does not agree with passlab: $(grep -A4 'runs of passes' "$tmp/out")"
import json, sys
j = json.load(open(sys.argv[1]))
s = j["summary"]
assert s["differs"] == 0 and s["errors"] == 0 and s["not_modelled"] == 0 and s["agrees"] > 50, s
odd = {r["pass"] for r in j["runs"] if r["outcome"] == "differs in order only"}
assert odd <= {"hlo-memory-scheduler", "latency-hiding-scheduler"}, odd
PY

# Replace the module after a pass that changed it (algsimp's first run that
# changed anything) by the module before it: that run must differ now.
after=$(python3 - "$tmp/out.json" "$tmp/dump" <<'PY'
import json, sys, glob, os
j = json.load(open(sys.argv[1]))
run = next(r for r in j["runs"] if r["pass"] == "algsimp" and r["xla_changed"])
print(glob.glob(os.path.join(sys.argv[2], f"*.{run['step']:04d}.*.after_algsimp.*"))[0])
PY
)
before=$(ls "$tmp"/dump/*.txt | python3 -c "
import sys, re
files = sorted(l.strip() for l in sys.stdin)
step = int(re.search(r'\.(\d{4})\.', '$after'.split('/')[-1]).group(1))
print(next(f for f in files if re.search(r'\.%04d\.' % (step - 1), f.split('/')[-1])))")
cp "$before" "$after"
"$passlab" conform --xla-dump "$tmp/dump" > "$tmp/out2" || fail "conform on the altered dump"
grep -q "algsimp: differs" "$tmp/out2" || fail "altered run not reported: $(grep -A3 'runs of passes' "$tmp/out2")"

# Errors.
if "$passlab" conform --xla-dump "$tmp/nope" > /dev/null 2> "$tmp/err"; then fail "missing dir accepted"; fi
grep -q "not a directory" "$tmp/err" || fail "missing dir message: $(cat "$tmp/err")"
mkdir "$tmp/empty"
if "$passlab" conform --xla-dump "$tmp/empty" > /dev/null 2> "$tmp/err"; then fail "empty dir accepted"; fi
grep -q "xla_dump_hlo_pass_re" "$tmp/err" || fail "empty dir message: $(cat "$tmp/err")"
if "$passlab" conform "$tmp/x.jsonl" --xla-dump "$tmp/dump" > /dev/null 2> "$tmp/err"; then fail "both accepted"; fi
grep -q "not both" "$tmp/err" || fail "both message: $(cat "$tmp/err")"
echo "cli_conform_dump: ok"
