#!/usr/bin/env bash
# passlab ablate --executor slurm, end to end, against the stand-in sbatch,
# squeue and sacct of test/cli/fake_slurm/ (fake sbatch runs the array tasks
# here, two at a time, and can SIGKILL one mid-run): dry run, submission
# with a killed task, the dependent merge listing it, status, a refused mix
# of plans, --resubmit-missing running only the killed task, and the merged
# report against a local sweep of the same plan.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
export FAKE_SLURM_DIR="$tmp/slurm"; mkdir -p "$FAKE_SLURM_DIR"
export PATH="$src/test/cli/fake_slurm:$PATH"
cat > "$tmp/variants.txt" <<'V'
no cse: cse
no dce: dce
boom: algsimp
stuck: dot_decomposer
no simp: algsimp,dce
V
# Five variants in tasks of two: [no cse, no dce], [boom, stuck], [no simp].
sweep=(--model mlp --batch 2 --width 8 --depth 1 --sweep file --variants "$tmp/variants.txt" --repeats 3 --warmup 1
       --block 2 --timeout 120)
json() { python3 -c "import json,sys; $1" "${@:2}"; }

# --dry-run writes the plan and the scripts, and submits nothing.
"$passlab" ablate "${sweep[@]}" --executor slurm --partition debug --gres gpu:1 --time 10 --array-parallelism 2 \
  --out "$tmp/dry" --dry-run > "$tmp/log" 2>&1 || fail "dry run: $(cat "$tmp/log")"
for line in "--array=0-2%2" "--partition=debug" "--gres=gpu:1" "--time=10"; do
  grep -qx -- "#SBATCH $line" "$tmp/dry/ablate.sbatch" || fail "no '#SBATCH $line': $(cat "$tmp/dry/ablate.sbatch")"
done
grep -q 'ablate --run-task "$SLURM_ARRAY_TASK_ID" --out' "$tmp/dry/ablate.sbatch" || fail "task command"
grep -q "ablate --merge '$tmp/dry'" "$tmp/dry/merge.sbatch" || fail "merge command: $(cat "$tmp/dry/merge.sbatch")"
grep -q "5 variants to run in 3 array task(s)" "$tmp/log" || fail "dry-run summary: $(cat "$tmp/log")"
[ ! -e "$FAKE_SLURM_DIR/sbatch.log" ] || fail "the dry run submitted"

# Submit; task 1 hangs in "stuck" until it is killed after 4 s.
PASSLAB_ABLATE_FAULT="crash:boom;hang:stuck" FAKE_SLURM_KILL=1:4 \
  "$passlab" ablate "${sweep[@]}" --executor slurm --array-parallelism 2 --out "$tmp/sw" > "$tmp/submit.log" 2>&1 \
  || fail "submit: $(cat "$tmp/submit.log")"
grep -q "submitted job array 1000 (3 task(s)); merge job 1001 runs after it" "$tmp/submit.log" \
  || fail "no job ids: $(cat "$tmp/submit.log")"
grep -qx "sbatch --parsable $tmp/sw/ablate.sbatch" "$FAKE_SLURM_DIR/sbatch.log" || fail "array submission"
grep -qx "sbatch --parsable --dependency=afterany:1000 $tmp/sw/merge.sbatch" "$FAKE_SLURM_DIR/sbatch.log" \
  || fail "merge submission: $(cat "$FAKE_SLURM_DIR/sbatch.log")"
grep -qx "1000_1|CANCELLED|0:9|fake-node-1" "$FAKE_SLURM_DIR/sacct.txt" || fail "task 1 not killed: $(cat "$FAKE_SLURM_DIR/sacct.txt")"
! pgrep -f "ablate-worker --input $tmp/sw/" > /dev/null || fail "the killed task left workers behind"
# The killed task left no record, torn or whole; the others are complete.
[ ! -s "$tmp/sw/results/task-1.jsonl" ] || fail "killed task wrote: $(cat "$tmp/sw/results/task-1.jsonl")"
for k in 0 2; do
  json "import sys
recs=[json.loads(l) for l in open(sys.argv[1])]
assert all(r['task']==$k and r['node']=='fake-node-$((k % 2))' for r in recs), recs
assert sum(r['kind']=='baseline' for r in recs)==1 and [r for r in recs if r['kind']=='baseline'][0]['machine']['cpu']" "$tmp/sw/results/task-$k.jsonl" \
    || fail "task $k records"
done
# The merge job ran after the array and listed the killed task.
grep -q "incomplete: task 1 missing (0/2 variants)" "$tmp/sw/logs/slurm-merge-1001.out" \
  || fail "merge job: $(cat "$tmp/sw/logs/slurm-merge-1001.out")"
json "import sys; r=json.load(open(sys.argv[1])); n=sorted(v['name'] for v in r['variants'])
assert n==['no cse','no dce','no simp'], n
assert r['manifest']['incomplete_tasks']==[1], r['manifest']['incomplete_tasks']" "$tmp/sw/report.json" \
  || fail "partial report"

# Status: progress from the results files, then squeue and sacct.
echo "1000_1 RUNNING 0:05 fake-node-1" > "$FAKE_SLURM_DIR/squeue.txt"
"$passlab" ablate --status "$tmp/sw" > "$tmp/status" || fail "status"
grep -q "3/5 variants recorded; 3 task(s): 2 done, 1 pending or running, 0 failed, 0 missing" "$tmp/status" \
  || fail "status counts: $(cat "$tmp/status")"
grep -q "task 1  running  0/2 variants" "$tmp/status" || fail "status task 1: $(cat "$tmp/status")"
grep -q "task 2  done  1/1 variants  node fake-node-0" "$tmp/status" || fail "status task 2: $(cat "$tmp/status")"
grep -q "^1000_1 RUNNING" "$tmp/status" || fail "no squeue lines: $(cat "$tmp/status")"
grep -q "^1000_1|CANCELLED|0:9|fake-node-1" "$tmp/status" || fail "no sacct lines: $(cat "$tmp/status")"
# A task squeue still lists is not resubmitted.
"$passlab" ablate --resubmit-missing "$tmp/sw" > "$tmp/log" || fail "resubmit while running"
grep -q "nothing to resubmit" "$tmp/log" || fail "resubmitted a running task: $(cat "$tmp/log")"
rm "$FAKE_SLURM_DIR/squeue.txt"

# The merge never mixes plans: another plan in the same directory is
# refused, and so is a record of another plan among the results.
! "$passlab" ablate "${sweep[@]}" --seed 2 --executor slurm --out "$tmp/sw" 2> "$tmp/err" > /dev/null \
  || fail "another plan accepted"
grep -q "holds another plan" "$tmp/err" || fail "plan mix error: $(cat "$tmp/err")"
cp -r "$tmp/sw" "$tmp/mixed"
sed -n 1p "$tmp/sw/results/task-2.jsonl" | sed 's/"plan_id":"[0-9a-f]*"/"plan_id":"0123456789abcdef"/' \
  >> "$tmp/mixed/results/task-2.jsonl"
! "$passlab" ablate --merge "$tmp/mixed" > /dev/null 2> "$tmp/err" || fail "mixed records merged"
grep -q "results/task-2.jsonl:3: a record of plan 0123456789abcdef" "$tmp/err" || fail "mix error: $(cat "$tmp/err")"

# Resubmit the missing task only; its merge job completes the report.
PASSLAB_ABLATE_FAULT="crash:boom" "$passlab" ablate --resubmit-missing "$tmp/sw" > "$tmp/log" 2>&1 \
  || fail "resubmit: $(cat "$tmp/log")"
grep -q "resubmitted task 1 missing (0/2 variants): job array 1002, merge job 1003" "$tmp/log" \
  || fail "resubmit output: $(cat "$tmp/log")"
grep -qx "sbatch --parsable --array=1%2 $tmp/sw/ablate.sbatch" "$FAKE_SLURM_DIR/sbatch.log" \
  || fail "resubmitted tasks: $(cat "$FAKE_SLURM_DIR/sbatch.log")"
[ "$(grep -c '"kind":"baseline"' "$tmp/sw/results/task-0.jsonl")" = 1 ] || fail "a finished task ran again"
grep -q "merged 3 task(s): all complete" "$tmp/sw/logs/slurm-merge-1003.out" \
  || fail "second merge: $(cat "$tmp/sw/logs/slurm-merge-1003.out")"
"$passlab" ablate --status "$tmp/sw" > "$tmp/status" || fail "status after resubmit"
grep -q "5/5 variants recorded; 3 task(s): 3 done" "$tmp/status" || fail "final status: $(cat "$tmp/status")"

# The merged report has a local sweep's structure: same variants, the same
# failures, the same correctness verdicts; every variant is compared with the
# baseline of its own task.
PASSLAB_ABLATE_FAULT="crash:boom" "$passlab" ablate "${sweep[@]}" --out "$tmp/local" > "$tmp/log" 2>&1 \
  || fail "local sweep: $(cat "$tmp/log")"
json "import sys
slurm, local = (json.load(open(p)) for p in sys.argv[1:3])
assert slurm['schema']==local['schema'] and slurm.keys()==local.keys(), (slurm.keys(), local.keys())
def verdicts(r):
    measured = {'slower', 'faster', 'no-change', 'undecided'}  # timed: which one depends on the noise
    return {v['name']: ('measured' if v['outcome'] in measured else v['outcome'], v['status'],
                        (v['check'] or {}).get('ok')) for v in r['variants']}
assert verdicts(slurm)==verdicts(local), (verdicts(slurm), verdicts(local))
assert verdicts(slurm)['boom'][0]=='crash'
tasks = slurm['manifest']['tasks']
assert [t['state'] for t in tasks]==['done']*3 and [t['node'] for t in tasks]==['fake-node-0','fake-node-1','fake-node-0'], tasks
assert all(t['machine']['cpu'] for t in tasks) and slurm['manifest']['executor']=='slurm'" \
  "$tmp/sw/report.json" "$tmp/local/report.json" || fail "merged report differs from the local one"
for f in report.csv report.md report.html gbench.json; do [ -s "$tmp/sw/$f" ] || fail "no $f"; done
# A local sweep's directory is not a Slurm one.
! "$passlab" ablate --merge "$tmp/local" 2> "$tmp/err" || fail "merged a local sweep"
grep -q "holds a local sweep" "$tmp/err" || fail "local-dir error: $(cat "$tmp/err")"
echo PASS
