#!/usr/bin/env bash
# bench/xla_ablation.py (real XLA's ablation on a GPU, issue 28) writes
# records that passlab's report reads with the same statistics: checked here
# with its --simulate timing model (no JAX, no GPU), an injected 20% slowdown
# that the report must find, resuming, and a crashed variant.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 > /dev/null || { echo "SKIP: no python3"; exit 77; }
script="$src/bench/xla_ablation.py"

python3 "$script" --simulate --out "$tmp/x" --passes algsimp,priority-fusion,dce --repeats 24 \
  --simulate-effect priority-fusion=0.2 > "$tmp/log" || fail "simulated sweep: $(cat "$tmp/log")"
grep -q "0 variants left" "$tmp/log" || fail "not finished: $(cat "$tmp/log")"
"$passlab" ablate --report-only --out "$tmp/x" > "$tmp/report.log" 2>&1 || fail "report: $(cat "$tmp/report.log")"
python3 - "$tmp/x/report.json" <<'PY' || fail "report verdicts"
import json, sys
r = json.load(open(sys.argv[1]))
v = {x["name"]: x for x in r["variants"]}
assert set(v) == {"disable algsimp", "disable priority-fusion", "disable dce"}, sorted(v)
assert v["disable priority-fusion"]["outcome"] == "slower", v["disable priority-fusion"]["outcome"]
assert 1.15 < v["disable priority-fusion"]["ratio"] < 1.25, v["disable priority-fusion"]["ratio"]
assert v["disable dce"]["outcome"] in ("no-change", "undecided"), v["disable dce"]["outcome"]
assert not v["disable dce"]["significant"], v["disable dce"]
PY

# Rerunning resumes: nothing left to do.
python3 "$script" --simulate --out "$tmp/x" --passes algsimp,priority-fusion,dce > "$tmp/log2" || fail "rerun"
grep -q "3 of 3 variants done" "$tmp/log2" || fail "no resume: $(cat "$tmp/log2")"
# A variant that was started alone but never recorded crashed its process;
# one of several compiling at once is retried alone (any of them may have
# been the cause), and recorded as a crash only when that dies too.
echo "disable cse" >> "$tmp/x/started.txt"
printf 'disable cse2\tparallel\n' >> "$tmp/x/started.txt"
python3 "$script" --simulate --out "$tmp/x" --passes algsimp,priority-fusion,dce,cse > "$tmp/log3" || fail "crash rerun"
grep -q '"variant": "disable cse".*"status": "crash"' "$tmp/x/results.jsonl" || fail "no crash record"
grep -q '"variant": "disable cse2".*"status": "crash"' "$tmp/x/results.jsonl" && fail "a parallel compile's variant was not retried"
python3 "$script" --simulate --out "$tmp/x" --passes algsimp,priority-fusion,dce,cse,cse2 --compile-threads 4 > "$tmp/log4" || fail "retry"
grep -q '"variant": "disable cse2".*"status": "ok"' "$tmp/x/results.jsonl" || fail "cse2 not retried: $(cat "$tmp/log4")"
"$passlab" ablate --report-only --out "$tmp/x" > /dev/null 2>&1 || fail "report with a crash"
python3 -c "import json,sys; r=json.load(open(sys.argv[1])); v={x['name']:x for x in r['variants']}; assert v['disable cse']['outcome']=='crash', v['disable cse']['outcome']" \
  "$tmp/x/report.json" || fail "crash outcome"
# When the GPU session ends: --finish records what died (no JAX), quoting
# XLA's fatal message that followed the variant's start in the log.
printf 'disable dce2\n' >> "$tmp/x/started.txt"
printf 'disable cse3\tparallel\n' >> "$tmp/x/started.txt"
printf 'xla_ablation: started disable dce2\nF1127 16:39:33.170292 11258 hlo_instructions.cc:2573] Check failed: IsUserOf(x)\n' > "$tmp/x/parts.log"
python3 "$script" --finish --log "$tmp/x/parts.log" --out "$tmp/x" --passes dce2,cse3 > "$tmp/log5" || fail "finish"
grep -q '"variant": "disable dce2".*"status": "crash".*Check failed: IsUserOf' "$tmp/x/results.jsonl" || fail "no message: $(tail -2 "$tmp/x/results.jsonl")"
grep -q '"variant": "disable cse3"' "$tmp/x/results.jsonl" && fail "cse3 died beside others, never alone: not a crash"
grep -q 'not measured: disable cse3' "$tmp/log5" || fail "cse3 not named: $(cat "$tmp/log5")"
grep -q '"source": "real XLA (JAX) via bench/xla_ablation.py --simulate"' "$tmp/x/manifest.json" || fail "--finish rewrote the manifest"
echo "cli_xla_ablation: ok"
