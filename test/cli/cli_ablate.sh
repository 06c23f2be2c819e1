#!/usr/bin/env bash
# passlab ablate: plans, worker isolation (an injected crash, hang and pass
# failure are records, not the end of the sweep), wrong results against the
# reference, resume after a torn write, and clean errors.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
model=(--model mlp --batch 2 --width 8 --depth 1)
field() {  # field VARIANT KEY[.KEY]: a key of the variant's record in results.jsonl
  python3 -c "import json,sys
for l in open('$tmp/out/results.jsonl'):
    try: r=json.loads(l)
    except ValueError: continue
    if r['variant']==sys.argv[1]:
        v=r
        for k in sys.argv[2].split('.'): v=v.get(k) if isinstance(v,dict) else None
        print(v)" "$1" "$2"
}

"$passlab" ablate "${model[@]}" --dry-run > "$tmp/plan" || fail "dry run"
grep -q "^disable algsimp *disable-one *--disable @" "$tmp/plan" || fail "no algsimp variant: $(cat "$tmp/plan")"
grep -q "variants to run in" "$tmp/plan" || fail "no plan summary"
"$passlab" ablate "${model[@]}" --dry-run --per-occurrence > "$tmp/plan" || fail "per-occurrence dry run"
grep -q "disable dce:0 (@" "$tmp/plan" || fail "per-occurrence plan"
"$passlab" ablate "${model[@]}" --dry-run --sweep add-one > "$tmp/plan" || fail "add-one dry run"
grep -q "^add cse *add-one *--enable-only @" "$tmp/plan" || fail "add-one plan"

cat > "$tmp/variants.txt" <<'V'
# two real variants and three broken ones
no cse: cse
no dce: dce
boom: algsimp
stuck: dot_decomposer
broken: enable-only call-inliner
V
PASSLAB_ABLATE_FAULT="crash:boom;hang:stuck;fail:broken" "$passlab" ablate "${model[@]}" --sweep file --time-identical \
  --variants "$tmp/variants.txt" --repeats 3 --warmup 1 --timeout 15 --out "$tmp/out" > "$tmp/log" 2>&1 \
  || fail "sweep: $(cat "$tmp/log")"
[ "$(field 'no cse' status)" = ok ] || fail "no cse: $(field 'no cse' status)"
[ "$(field boom status)" = crash ] || fail "crash not recorded: $(field boom status)"
[ "$(field boom signal)" = 11 ] || fail "crash signal"
# The injected crash hits the first pass that runs, whichever it is (spmd-partitioner's
# passes come first but do not run on single-device modules).
[[ "$(field boom failed_pass)" =~ ^[a-z0-9_-]+\ \(@[0-9]+\)$ ]] || fail "crash pass: $(field boom failed_pass)"
[ "$(field stuck status)" = timeout ] || fail "hang not recorded: $(field stuck status)"
[ "$(field broken status)" = compile-error ] || fail "failed pass: $(field broken status)"
# The occurrence id depends on how many passes precede call-inliner.
[[ "$(field broken failed_pass)" =~ ^call-inliner\ \(@[0-9]+\)$ ]] || fail "failed pass name: $(field broken failed_pass)"
grep -q '"ok": *true' <(python3 -c "import json
for l in open('$tmp/out/results.jsonl'):
    try: r=json.loads(l)
    except ValueError: continue
    if r['variant']=='no dce': print(json.dumps(r['check']))") || fail "no dce check"
[ -s "$tmp/out/diffs/cse.diff" ] || fail "no IR diff of cse"
# The baseline tunes the gemm calls; a variant that leaves them alone reuses its choices.
[ -s "$tmp/out/autotune.json" ] || fail "no shared autotune cache"
[ "$(field 'no dce' autotune.tuned)" = 0 ] || fail "no dce tuned again: $(field 'no dce' autotune)"
[ -s "$tmp/out/traces/baseline.json" ] || fail "no baseline trace"
for f in report.json report.csv report.md report.html gbench.json; do [ -s "$tmp/out/$f" ] || fail "no $f"; done
# The passes x kernels heatmap: each variant's time of every kernel, drawn in report.html.
python3 -c "import json; r=json.load(open('$tmp/out/report.json')); v={v['name']:v for v in r['variants']}
assert isinstance(v['no cse']['kernel_times_ns'], dict) and v['no cse']['kernel_times_ns'], v['no cse']
assert v['boom']['kernel_times_ns'] is None, v['boom']['kernel_times_ns']" || fail "report.json kernel_times_ns"
grep -q "<h2>Passes x kernels</h2>" "$tmp/out/report.html" || fail "report.html passes x kernels"
grep -q "^## Passes x kernels" "$tmp/out/report.md" || fail "report.md passes x kernels"
grep -q "Failures and required passes" "$tmp/log" || fail "no Markdown report on stdout: $(cat "$tmp/log")"
python3 -c "import json; r=json.load(open('$tmp/out/report.json')); o={v['name']:v['outcome'] for v in r['variants']}
assert r['schema']=='passlab.ablation/1'
assert o['boom']=='crash' and o['stuck']=='timeout' and o['broken']=='compile-error', o
c={v['name']:v['comparison'] for v in r['variants']}
assert c['no cse']=='in-process-control' and c['no dce']=='in-process-control', c" || fail "report outcomes"
# Each variant's worker timed the baseline program beside it, step for step.
python3 -c "import json
for l in open('$tmp/out/results.jsonl'):
    r=json.loads(l)
    if r['variant']=='no cse':
        assert len(r['control_samples']['kernel_ns'])==len(r['samples']['kernel_ns'])==3, r
        assert r['control_compile_ms']>0, r" || fail "no in-process control samples"
"$passlab" ablate --report-only --out "$tmp/out" --metric wall --threshold 0.5 > "$tmp/log2" || fail "report-only"
python3 -c "import json; r=json.load(open('$tmp/out/report.json')); assert r['metric']=='wall_ns' and r['threshold']==0.5, r['metric']" \
  || fail "report-only options"

# Resume: a torn last line and a lost record are redone; nothing else runs again.
n=$(wc -l < "$tmp/out/results.jsonl")
sed -i '/"variant":"no dce"/d' "$tmp/out/results.jsonl"
printf '{"variant":"no d' >> "$tmp/out/results.jsonl"
PASSLAB_ABLATE_FAULT="crash:boom;hang:stuck;fail:broken" "$passlab" ablate "${model[@]}" --sweep file --time-identical \
  --variants "$tmp/variants.txt" --repeats 3 --warmup 1 --timeout 15 --out "$tmp/out" > "$tmp/log" 2>&1 \
  || fail "resume: $(cat "$tmp/log")"
grep -q "resuming the sweep in $tmp/out: .* variants already measured (1 earlier block(s)); running the other 1" "$tmp/log" \
  || fail "resume not said on the console: $(cat "$tmp/log")"
[ "$(grep -c '"variant":"no dce"' "$tmp/out/results.jsonl")" = 1 ] || fail "no dce not redone once"
[ "$(grep -c '"variant":"boom"' "$tmp/out/results.jsonl")" = 1 ] || fail "finished variant ran again"
[ "$(grep -c '"variant":"baseline"' "$tmp/out/results.jsonl")" = 2 ] || fail "resumed block has no baseline"
python3 -c "import json; m=json.load(open('$tmp/out/manifest.json')); assert len(m['resumed_by'])==1 and 'ablate' in m['command'], m" \
  || fail "manifest does not record the resume"

# The screen: a variant whose optimized module is the baseline's (dce removes
# nothing from this MLP) is recorded as identical, untimed; one that changes
# the program (cse) is timed. Each record carries its program's fingerprint.
printf 'no cse: cse\nno dce: dce\n' > "$tmp/v4.txt"
"$passlab" ablate "${model[@]}" --sweep file --variants "$tmp/v4.txt" --repeats 2 --warmup 0 --out "$tmp/screen" \
  > "$tmp/log" 2>&1 || fail "screened sweep: $(cat "$tmp/log")"
grep -q "1 of 2 variants compile to the baseline's program ([0-9a-f]\{16\}): recorded as identical, not timed; timing the other 1" \
  "$tmp/log" || fail "screen not said on the console: $(cat "$tmp/log")"
python3 -c "import json
rs={}
for l in open('$tmp/screen/results.jsonl'): r=json.loads(l); rs[r['variant']]=r
b, d, c = rs['baseline'], rs['no dce'], rs['no cse']
assert d['identical_program'] is True and 'samples' not in d and d['status']=='ok', d
assert d['program_xxh64']==b['program_xxh64'] and c['program_xxh64']!=b['program_xxh64'], (b, c, d)
assert 'identical_program' not in c and len(c['samples']['kernel_ns'])==2, c
r=json.load(open('$tmp/screen/report.json')); v={x['name']:x for x in r['variants']}
assert v['no dce']['outcome']=='identical' and v['no dce']['ratio']==1 and v['no dce']['comparison']=='identical-program', v['no dce']
assert v['no dce']['p_adjusted'] is None and v['no cse']['outcome']!='identical', v
assert r['summary']['outcomes']['identical']==1 and r['manifest']['skip_identical'] is True, r['summary']" \
  || fail "identical variant records"
grep -q "^- 1 variant compiles to the baseline's program .*: \`dce\`\.$" "$tmp/screen/report.md" \
  || fail "report.md does not list the identical variant: $(grep -n dce "$tmp/screen/report.md")"
! grep -q "^| [0-9]* | dce |" "$tmp/screen/report.md" || fail "identical variant in the timed table"
grep -q "identical programs (not timed)" "$tmp/screen/report.html" || fail "report.html card"
# Which program runs first in a process's first step follows the compile
# order drawn for that process (not always the variant, whose memory would
# then always be touched first: a +0.5% A/A bias); every pair stays ABBA.
"$passlab" ablate "${model[@]}" --sweep file --variants "$tmp/v4.txt" --repeats 8 --warmup 1 --processes 4 \
  --out "$tmp/order" > "$tmp/log" 2>&1 || fail "order sweep: $(cat "$tmp/log")"
python3 -c "import json
r=[json.loads(l) for l in open('$tmp/order/results.jsonl') if json.loads(l)['variant']=='no cse'][0]
f=r['control_samples']['control_first']
pairs=[f[i:i+2] for i in range(0, len(f), 2)]
assert len(pairs)==4 and all(p[0]!=p[1] for p in pairs), f
assert any(p[0] for p in pairs) and any(not p[0] for p in pairs), f" || fail "first-step order not drawn per process"
# --time-identical times it like any variant.
"$passlab" ablate "${model[@]}" --sweep file --variants "$tmp/v4.txt" --repeats 2 --warmup 0 --time-identical \
  --out "$tmp/timed" > "$tmp/log" 2>&1 || fail "--time-identical sweep: $(cat "$tmp/log")"
python3 -c "import json
rs={json.loads(l)['variant']: json.loads(l) for l in open('$tmp/timed/results.jsonl')}
assert 'identical_program' not in rs['no dce'] and len(rs['no dce']['samples']['kernel_ns'])==2, rs['no dce']" \
  || fail "--time-identical did not time the identical variant"

# A worker killed after it said it was ready (as the OOM killer does) is a
# crash record, not the end of the sweep (the runner's next command meets a
# closed pipe); and when memory holds fewer workers than --block asks, blocks
# shrink (PASSLAB_ABLATE_MEMORY_AVAILABLE stands in for MemAvailable).
printf 'no cse: cse\ngone: algsimp\n' > "$tmp/v5.txt"
PASSLAB_ABLATE_FAULT="vanish:gone" PASSLAB_ABLATE_MEMORY_AVAILABLE=1 "$passlab" ablate "${model[@]}" --sweep file \
  --variants "$tmp/v5.txt" --repeats 2 --warmup 1 --out "$tmp/mem" > "$tmp/log" 2>&1 || fail "vanish sweep: $(cat "$tmp/log")"
grep -q "workers hold up to [0-9]* MiB of their own each and 0.0 GiB are available, so blocks hold 1 variant(s) (2 process(es) each) instead of 2" \
  "$tmp/log" || fail "blocks not sized by memory: $(cat "$tmp/log")"
python3 -c "import json
rs=[json.loads(l) for l in open('$tmp/mem/results.jsonl')]
v={r['variant']: r for r in rs}
assert v['gone']['status']=='crash' and v['gone']['signal']==9, v['gone']
assert v['no cse']['status']=='ok' and len(v['no cse']['samples']['kernel_ns'])==2, v['no cse']
assert sum(r['kind']=='baseline' for r in rs)==2, [r['variant'] for r in rs]" || fail "vanished worker or block sizes"

# A wrong reference makes every variant a wrong result.
printf 'xxxx' | dd of="$tmp/out/reference/leaf_0.bin" bs=1 seek=0 conv=notrunc status=none
echo "again: cse" > "$tmp/v2.txt"
"$passlab" ablate "${model[@]}" --sweep file --variants "$tmp/v2.txt" --repeats 2 --warmup 0 --out "$tmp/out" \
  --no-control > "$tmp/log" 2>&1 || fail "second plan: $(cat "$tmp/log")"
# Without the in-process control, the ratio is to the block's baseline, round by round.
python3 -c "import json; r=json.load(open('$tmp/out/report.json')); c={v['name']:v['comparison'] for v in r['variants']}
assert c['again']=='paired-rounds', c" || fail "--no-control comparison"
python3 -c "import json
for l in open('$tmp/out/results.jsonl'):
    try: r=json.loads(l)
    except ValueError: continue
    if r['variant']=='again': assert not r['check']['ok'], r['check']; print(r['check']['message'])" \
  | grep -q "output 0" || fail "wrong result not detected"

# --target-ci: repetitions beyond --repeats while the ratio's CI is wider than asked.
# No step pair times alike to 0.0001%, so every variant runs to --max-repeats; at
# ±49% it stops well before --max-repeats. (Not "never": with 3 samples, one step
# preempted by a parallel test can widen the microsecond-step CI past 49%.)
echo "tight: dce" > "$tmp/v3.txt"
"$passlab" ablate "${model[@]}" --sweep file --variants "$tmp/v3.txt" --time-identical --repeats 3 --warmup 0 --target-ci 0.0001 \
  --max-repeats 5 --out "$tmp/adaptive" > "$tmp/log" 2>&1 || fail "target-ci sweep: $(cat "$tmp/log")"
python3 -c "import json
rs=[json.loads(l) for l in open('$tmp/adaptive/results.jsonl')]
v=[r for r in rs if r['variant']=='tight'][0]
b=[r for r in rs if r['variant']!='tight'][0]
assert v['extra_repeats']==2 and len(v['samples']['kernel_ns'])==5 and len(v['control_samples']['kernel_ns'])==5, v
assert len(b['samples']['kernel_ns'])==3 and 'extra_repeats' not in b, b
m=json.load(open('$tmp/adaptive/manifest.json')); assert m['target_ci']==1e-6 and m['max_repeats']==5, m" \
  || fail "target-ci repetitions"
"$passlab" ablate "${model[@]}" --sweep file --variants "$tmp/v3.txt" --time-identical --repeats 3 --warmup 0 --target-ci 49 \
  --max-repeats 20 --out "$tmp/loose" > "$tmp/log" 2>&1 || fail "loose target-ci sweep: $(cat "$tmp/log")"
python3 -c "import json
v=[json.loads(l) for l in open('$tmp/loose/results.jsonl')][-1]
extra=v.get('extra_repeats', 0)
assert v['variant']=='tight' and extra < 10 and len(v['samples']['kernel_ns'])==3+extra, v" \
  || fail "loose target-ci repeated to the limit"
! "$passlab" ablate "${model[@]}" --sweep file --variants "$tmp/v3.txt" --repeats 3 --target-ci 2 --no-control \
  --out "$tmp/nc" 2> "$tmp/err" || fail "target-ci without control accepted"
grep -q "needs the in-process control" "$tmp/err" || fail "target-ci error: $(cat "$tmp/err")"

# Errors name the place.
echo "bad: no-such-pass" > "$tmp/bad.txt"
! "$passlab" ablate "${model[@]}" --sweep file --variants "$tmp/bad.txt" --dry-run 2> "$tmp/err" || fail "bad variant accepted"
grep -q "bad.txt:1: .*no-such-pass" "$tmp/err" || fail "variant file error: $(cat "$tmp/err")"
! "$passlab" ablate --model gelu --batch 1 --seq-len 2 --width 4 --out "$tmp/out" --repeats 2 2> "$tmp/err" || fail "other module accepted"
grep -q "holds a sweep of a different module" "$tmp/err" || fail "out dir error: $(cat "$tmp/err")"
! "$passlab" ablate "${model[@]}" --sweep pairs --dry-run 2> "$tmp/err" || fail "pairs without top-k"
grep -q "needs --top-k" "$tmp/err" || fail "pairs error"
# Sweeps side by side: the adaptive and the loose sweep of the same module,
# and the errors for a directory that holds no report.
"$passlab" ablate --compare "$tmp/adaptive" "$tmp/loose" > "$tmp/cmp.md" || fail "compare: $(cat "$tmp/cmp.md")"
grep -q "^| tight |" "$tmp/cmp.md" || fail "compare table: $(cat "$tmp/cmp.md")"
grep -q "## Agreement with sweep 1" "$tmp/cmp.md" || fail "compare agreement: $(cat "$tmp/cmp.md")"
"$passlab" ablate --compare "$tmp/adaptive" "$tmp/loose" --format json > "$tmp/cmp.json" || fail "compare json"
grep -q '"schema": "passlab.ablation-compare/1"' "$tmp/cmp.json" || fail "compare json schema"
! "$passlab" ablate --compare "$tmp/adaptive" "$tmp/nowhere" 2> "$tmp/err" || fail "compare of a missing sweep"
grep -q "nowhere/report.json: cannot read" "$tmp/err" || fail "compare error: $(cat "$tmp/err")"
! "$passlab" ablate --compare "$tmp/adaptive" 2> "$tmp/err" || fail "compare of one sweep accepted"
# Compile cost against run-time benefit: a tiny disable-one sweep (the fusion
# sub-pipeline's 5 passes) whose records carry per-pass times and the kernel
# cache's counts, and whose reports put them next to the run-time effects.
"$passlab" ablate "${model[@]}" --pipeline fusion --repeats 2 --warmup 0 --out "$tmp/cost" > "$tmp/log" 2>&1 \
  || fail "compile-cost sweep: $(cat "$tmp/log")"
grep -q '"pass_times":{.*"priority-fusion":{"ms":' "$tmp/cost/results.jsonl" || fail "records without pass_times"
grep -q '"kernel_cache":{"hits":' "$tmp/cost/results.jsonl" || fail "records without kernel_cache"
grep -q '"autotune_ms":' "$tmp/cost/results.jsonl" || fail "records without autotune_ms"
python3 -c "import json
c=json.load(open('$tmp/cost/report.json'))['compile_cost']
assert c['baseline']['records_with_pass_times']>=1 and c['baseline']['kernel_cache_misses']>0, c['baseline']
r={x['variant']:x for x in c['rows']}
f=r['disable priority-fusion']
assert f['pass_ms']>0 and f['pass_runs']==1 and f['compile_delta_ms'] is not None and f['quadrant'], f
assert len(r)==5, r.keys()" || fail "report.json compile_cost"
grep -q "^## Compile cost against run-time benefit" "$tmp/cost/report.md" || fail "report.md compile cost"
grep -q "^| priority-fusion |" "$tmp/cost/report.md" || fail "report.md compile cost row"
grep -q ">expensive and essential</text>" "$tmp/cost/report.html" || fail "report.html compile cost plot"
# A sweep reproduced (issue 29 item 4): the manifest records the environment
# and the command line; --reproduce prints what differs now and reruns the
# recorded command with this build into another directory.
echo "no cse: cse" > "$tmp/repro.txt"
env -u OMP_NUM_THREADS "$passlab" ablate "${model[@]}" --sweep file --variants "$tmp/repro.txt" --repeats 2 \
  --warmup 0 --out "$tmp/orig" > "$tmp/log" 2>&1 || fail "sweep to reproduce: $(cat "$tmp/log")"
python3 -c "import json
m=json.load(open('$tmp/orig/manifest.json'))
e=m['environment']
for k in ('date','build','variables','versions','os','kernel','cpu','cpu_governor','gpu_clocks','autotune_cache_xxh64'):
    assert k in e, k
assert e['build']['git_commit'] and e['versions']['llvm'] and e['variables']['OMP_NUM_THREADS']=='unset', e
assert m['argv'][1]=='ablate', m['argv']" || fail "manifest environment"
grep -q "^| environment.versions.onednn | " "$tmp/orig/report.md" || fail "report.md environment rows"
grep -q ">environment.build.git_commit</th>" "$tmp/orig/report.html" || fail "report.html environment rows"
OMP_NUM_THREADS=3 "$passlab" ablate --reproduce "$tmp/orig" --out "$tmp/again" > "$tmp/log" 2>&1 \
  || fail "reproduce: $(cat "$tmp/log")"
grep -q "^build: the same as recorded, " "$tmp/log" || fail "reproduce build line: $(cat "$tmp/log")"
grep -q "^  environment.variables.OMP_NUM_THREADS: unset -> 3$" "$tmp/log" || fail "reproduce diff: $(cat "$tmp/log")"
grep -q "^rerunning the recorded command line" "$tmp/log" || fail "reproduce rerun line: $(cat "$tmp/log")"
[ -f "$tmp/again/report.html" ] || fail "reproduced sweep has no report"
grep -q '"PASSLAB_REPRODUCED_FROM": ' "$tmp/again/manifest.json" || fail "reproduced manifest does not say from where"
grep -q "| cse (file) |" "$tmp/again/report.md" || fail "reproduced sweep lacks the recorded variant"
! "$passlab" ablate --reproduce "$tmp/orig" 2> "$tmp/err" || fail "reproduce without --out accepted"
grep -q "needs --out" "$tmp/err" || fail "reproduce --out error: $(cat "$tmp/err")"
! "$passlab" ablate --reproduce "$tmp/orig" --out "$tmp/orig/" 2> "$tmp/err" || fail "reproduce into itself accepted"
grep -q "another directory than" "$tmp/err" || fail "reproduce into itself error: $(cat "$tmp/err")"
mkdir -p "$tmp/not-a-sweep"
! "$passlab" ablate --reproduce "$tmp/not-a-sweep" --out "$tmp/x" 2> "$tmp/err" || fail "reproduce of a non-sweep"
grep -q "is not a sweep directory (no manifest.json)" "$tmp/err" || fail "non-sweep error: $(cat "$tmp/err")"
! "$passlab" ablate --reproduce "$tmp/nowhere" --out "$tmp/x" 2> "$tmp/err" || fail "reproduce of a missing dir"
grep -q "is not a directory" "$tmp/err" || fail "missing dir error: $(cat "$tmp/err")"
echo PASS
