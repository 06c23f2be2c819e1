#!/usr/bin/env bash
# passlab ablate --sweep aa: A/A copies run as variants (each over two worker
# processes, placement randomized), the A/A band in the reports, the sweep's
# aa_band.json and the calibration file, its reuse by a later sweep of the
# same configuration, --aa-band / --no-aa-band, the --test-inject-delay hook
# and plain range errors. A tiny MLP: a few seconds.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
model=(--model mlp --batch 2 --width 8 --depth 1)
cal="$tmp/calibration.json"
json() {  # json FILE EXPR: a Python expression over the parsed file `j`
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); print($2)" "$1"
}
record() {  # record DIR VARIANT EXPR: over the variant's first record `r`
  python3 -c "import json,sys
for l in open(sys.argv[1]+'/results.jsonl'):
    r=json.loads(l)
    if r['variant']==sys.argv[2]: print($3); break" "$1" "$2"
}

"$passlab" ablate "${model[@]}" --sweep aa --copies 3 --dry-run > "$tmp/plan" || fail "aa dry run"
grep -q "^aa-copy-3 *aa *none (the baseline itself)" "$tmp/plan" || fail "aa plan: $(cat "$tmp/plan")"

# The A/A sweep: two copies of the baseline, each a variant of its own.
"$passlab" ablate "${model[@]}" --sweep aa --copies 2 --repeats 4 --warmup 1 --aa-calibration "$cal" \
  --out "$tmp/aa" > "$tmp/aa.log" 2>&1 || fail "aa sweep: $(cat "$tmp/aa.log")"
for copy in aa-copy-1 aa-copy-2; do
  [ "$(record "$tmp/aa" $copy "r['status']")" = ok ] || fail "$copy: $(record "$tmp/aa" $copy "r")"
  [ "$(record "$tmp/aa" $copy "r['kind']")" = aa ] || fail "$copy kind"
  [ "$(record "$tmp/aa" $copy "r['processes']")" = 2 ] || fail "$copy: not spread over two processes"
  [ "$(record "$tmp/aa" $copy "len(r['samples']['kernel_ns'])")" = 4 ] || fail "$copy samples"
  [ -s "$tmp/aa/logs/$copy.log" ] && [ -s "$tmp/aa/logs/$copy.p2.log" ] || fail "$copy: no log per process"
done
[ "$(json "$tmp/aa/manifest.json" "j['randomize_placement'], j['processes'], j['copies']")" = "True 2 2" ] \
  || fail "manifest: $(json "$tmp/aa/manifest.json" "j.get('processes')")"
[ "$(json "$tmp/aa/report.json" "len(j['aa']['copies'])")" = 2 ] || fail "report: no A/A copies"
[ "$(json "$tmp/aa/report.json" "j['aa']['band_source']")" = "this sweep's 2 A/A copies" ] || fail "band source"
band=$(json "$tmp/aa/report.json" "j['aa']['band']")
[ "$(json "$tmp/aa/report.json" "j['aa']['band'] == max(abs(c['ratio']-1) for c in j['aa']['copies'])")" = True ] \
  || fail "band is not the largest |ratio - 1|"
grep -q "## A/A calibration" "$tmp/aa/report.md" || fail "no A/A section in report.md"
grep -q "A/A band ±" "$tmp/aa.log" || fail "console: no A/A band: $(cat "$tmp/aa.log")"
grep -q "A/A calibration" "$tmp/aa/report.html" || fail "no A/A section in report.html"
[ "$(json "$tmp/aa/aa_band.json" "j['band']")" = "$band" ] || fail "aa_band.json"
[ "$(json "$cal" "len(j['entries']), j['entries'][0]['band'], j['entries'][0]['key']['model']['name']")" = "1 $band mlp" ] \
  || fail "calibration file: $(cat "$cal")"

# A later sweep of the same configuration uses the stored band, and says so;
# its variant named 'slow' is slowed down on purpose by half its kernel time.
printf 'slow: cse\n' > "$tmp/variants.txt"
"$passlab" ablate "${model[@]}" --sweep file --variants "$tmp/variants.txt" --repeats 4 --warmup 1 \
  --aa-calibration "$cal" --test-inject-delay slow=50% --out "$tmp/later" > "$tmp/later.log" 2>&1 \
  || fail "later sweep: $(cat "$tmp/later.log")"
[[ "$(json "$tmp/later/report.json" "j['aa']['band_source']")" == "calibration file $cal (2 A/A copies in "* ]] \
  || fail "later: band source $(json "$tmp/later/report.json" "j['aa']['band_source']")"
[ "$(json "$tmp/later/report.json" "j['aa']['band']")" = "$band" ] || fail "later: band"
grep -q "calibration file $cal" "$tmp/later/report.md" || fail "later: report.md does not name the band's source"
[ "$(record "$tmp/later" slow "r['injected_delay']")" = 0.5 ] || fail "no injected delay recorded"
[ "$(json "$tmp/later/manifest.json" "j['test_inject_delay']['slow']")" = 0.5 ] || fail "manifest: injected delay"
# The injected delay is real time in the variant's steps: its ratio to the control is far above 1.
[ "$(json "$tmp/later/report.json" "[v for v in j['variants'] if v['name']=='slow'][0]['ratio'] > 1.2")" = True ] \
  || fail "injected delay not measured: $(json "$tmp/later/report.json" "[v['ratio'] for v in j['variants']]")"
grep -q '"name": *"injected-delay"' <(record "$tmp/later" slow "json.dumps(r['kernels'])") || fail "no injected-delay record"

# --aa-band and --no-aa-band override, on the same results.
"$passlab" ablate --report-only --out "$tmp/later" --aa-calibration "$cal" --aa-band 3 > /dev/null || fail "--aa-band"
[ "$(json "$tmp/later/report.json" "j['aa']['band'], j['aa']['band_source']")" = "0.03 --aa-band" ] || fail "--aa-band not used"
"$passlab" ablate --report-only --out "$tmp/later" --aa-calibration "$cal" --no-aa-band > /dev/null || fail "--no-aa-band"
[ "$(json "$tmp/later/report.json" "j['aa']['band']")" = None ] || fail "--no-aa-band not used"

# Plain range errors (as `run --repeats 0`), and clear errors for the new options.
expect_error() {  # expect_error MESSAGE ARGS...
  local message="$1"; shift
  if "$passlab" ablate "${model[@]}" --dry-run "$@" > "$tmp/err" 2>&1; then fail "accepted: $*"; fi
  grep -qF -- "$message" "$tmp/err" || fail "$*: expected '$message', got: $(cat "$tmp/err")"
}
expect_error "--repeats: must be at least 2, got 0" --repeats 0
expect_error "--target-ci: must be at most 50, got 70" --target-ci 70
expect_error "--copies: must be at least 1, got 0" --sweep aa --copies 0
expect_error "--processes: must be at least 1, got 0" --processes 0
expect_error "--copies K needs --sweep aa" --copies 3
expect_error "--test-inject-delay 'slow': expected VARIANT=PCT" --test-inject-delay slow
expect_error "--aa-band and --no-aa-band contradict" --aa-band 1 --no-aa-band
printf '{"schema": "something else"}\n' > "$tmp/foreign.json"
if "$passlab" ablate --report-only --out "$tmp/later" --aa-calibration "$tmp/foreign.json" > "$tmp/err" 2>&1; then
  fail "foreign calibration file accepted"
fi
grep -q "is not an A/A calibration file" "$tmp/err" || fail "foreign calibration: $(cat "$tmp/err")"
# The sweep's metric: per-kernel step times and CPU times in the records,
# kernel_cpu_ns by default on the CPU with one thread; a sweep without CPU
# times (docs/results: a GPU sweep) refuses --metric kernel-cpu by name.
[ "$(record "$tmp/aa" aa-copy-1 "len(r['samples']['kernel_cpu_ns']) == len(r['samples']['kernel_ns']) > 0")" = True ] \
  || fail "kernel_cpu_ns: $(record "$tmp/aa" aa-copy-1 "r['samples'].keys()")"
[ "$(record "$tmp/aa" aa-copy-1 "len(r['control_samples']['kernel_steps_cpu_ns']) > 0")" = True ] || fail "kernel_steps_cpu_ns"
grep -q "process CPU time" "$tmp/aa/report.md" || fail "default metric: $(grep -m1 Metric "$tmp/aa/report.md")"
cp -r "$src/docs/results/h200-passlab-resnet50-gpu" "$tmp/gpu"
if "$passlab" ablate --report-only --out "$tmp/gpu" --metric kernel-cpu > "$tmp/err" 2>&1; then
  fail "kernel-cpu accepted without CPU times"
fi
grep -q "has no CPU times" "$tmp/err" || fail "kernel-cpu on a GPU sweep: $(cat "$tmp/err")"
"$passlab" ablate --report-only --out "$tmp/gpu" > "$tmp/gpu.log" 2>&1 || fail "GPU sweep report: $(cat "$tmp/gpu.log")"
grep -q "(\`kernel_ns\`)" "$tmp/gpu/report.md" || fail "GPU sweep metric: $(grep -m1 Metric "$tmp/gpu/report.md")"
echo "cli_ablate_aa: ok"
