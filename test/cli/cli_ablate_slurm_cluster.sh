#!/usr/bin/env bash
# passlab ablate --executor slurm on a real single-node Slurm cluster started
# here (Debian's slurm-wlm + munge; scripts/install-deps.sh installs them):
# a private munged, slurmctld and slurmd on free ports with two CPUs as two
# slots, all state in a temporary directory. A sweep is submitted as a job
# array, task 1 is scancel'ed mid-run, the dependent merge lists it, and
# --resubmit-missing completes the report. Skips (77) without slurm-wlm/munge
# or root, or when the cluster does not come up here (with its logs); once it
# is up, anything that goes wrong fails the test.
set -euo pipefail
passlab="$1"; src="$2"
fail() { echo "FAIL: $*" >&2; exit 1; }
export PATH="$PATH:/usr/sbin:/sbin"
for tool in munged slurmctld slurmd sbatch squeue scancel sinfo; do
  command -v "$tool" > /dev/null || { echo "SKIP: '$tool' is not installed (apt-get install slurm-wlm munge)"; exit 77; }
done
[ "$(id -u)" = 0 ] || { echo "SKIP: slurmd needs root"; exit 77; }

tmp=$(mktemp -d)
stop() {
  for d in slurmd slurmctld munged; do
    [ -s "$tmp/$d.pid" ] && kill "$(cat "$tmp/$d.pid")" 2> /dev/null || true
  done
  sleep 1
  rm -rf "$tmp"
}
trap stop EXIT
# A cluster this machine cannot start (no hostname resolution, a container
# without the privileges slurmd wants) is a skip with the daemons' logs, not
# a failure: the fake-Slurm test covers passlab's side everywhere.
cluster_skip() {
  echo "SKIP: $*" >&2
  for log in "$tmp"/log/*; do echo "--- $log" >&2; tail -20 "$log" >&2; done
  exit 77
}
cluster_fail() {
  echo "FAIL: $*" >&2
  for log in "$tmp"/log/*; do echo "--- $log" >&2; tail -20 "$log" >&2; done
  exit 1
}

# munge: a private daemon and key, not the machine's.
mkdir -p "$tmp/munge" "$tmp/log" "$tmp/state" "$tmp/spool"
chmod 700 "$tmp/munge"
dd if=/dev/urandom of="$tmp/munge/key" bs=1024 count=1 status=none
chmod 400 "$tmp/munge/key"
munged --force --socket="$tmp/munge/socket" --key-file="$tmp/munge/key" --pid-file="$tmp/munged.pid" \
  --log-file="$tmp/log/munged.log" --seed-file="$tmp/munge/seed" || cluster_skip "munged did not start"

# Two free ports in a range nothing else here uses.
port=$(( 20000 + ($$ % 4000) * 2 ))
host=$(hostname -s)
cat > "$tmp/slurm.conf" <<EOF
ClusterName=passlab$$
SlurmctldHost=$host
SlurmUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$tmp/munge/socket
SlurmctldPort=$port
SlurmdPort=$((port + 1))
StateSaveLocation=$tmp/state
SlurmdSpoolDir=$tmp/spool
SlurmctldLogFile=$tmp/log/slurmctld.log
SlurmdLogFile=$tmp/log/slurmd.log
SlurmctldPidFile=$tmp/slurmctld.pid
SlurmdPidFile=$tmp/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
MpiDefault=none
NodeName=$host CPUs=2 State=UNKNOWN
PartitionName=passlab Nodes=$host Default=YES MaxTime=INFINITE State=UP
EOF
export SLURM_CONF="$tmp/slurm.conf"
slurmctld -f "$SLURM_CONF" || cluster_skip "slurmctld did not start"
slurmd -f "$SLURM_CONF" || cluster_skip "slurmd did not start"
for i in $(seq 60); do
  [ "$(sinfo --noheader --format=%t 2> /dev/null)" = idle ] && break
  [ "$i" = 60 ] && cluster_skip "the node is not idle after 30 s: $(sinfo 2>&1)"
  sleep 0.5
done

wait_for() {  # wait_for SECONDS CONDITION...: polls the condition twice a second
  local limit=$(( $1 * 2 )); shift
  for ((i = 0; i < limit; i++)); do "$@" && return 0; sleep 0.5; done
  return 1
}
queue_empty() { [ -z "$(squeue --noheader)" ]; }
task1_running() { squeue --noheader --array --format='%i %T' | grep -qx "${array_job}_1 RUNNING"; }

cat > "$tmp/variants.txt" <<'V'
no cse: cse
no dce: dce
boom: algsimp
stuck: dot_decomposer
no simp: algsimp,dce
V
sweep=(--model mlp --batch 2 --width 8 --depth 1 --sweep file --variants "$tmp/variants.txt" --repeats 3 --warmup 1
       --block 2 --timeout 120 --executor slurm --array-parallelism 2 --time 10 --out "$tmp/sw")
PASSLAB_ABLATE_FAULT="crash:boom;hang:stuck" "$passlab" ablate "${sweep[@]}" > "$tmp/submit.log" 2>&1 \
  || cluster_fail "submit: $(cat "$tmp/submit.log")"
array_job=$(sed -n 's/^submitted job array \([0-9]*\) (3 task(s)); merge job \([0-9]*\) .*/\1/p' "$tmp/submit.log")
[ -n "$array_job" ] || fail "no job id: $(cat "$tmp/submit.log")"

# Task 1 hangs in "stuck": cancel it mid-run, as a user or a node failure would.
wait_for 60 task1_running || cluster_fail "task 1 never ran: $(squeue 2>&1)"
sleep 3
scancel "${array_job}_1"
wait_for 120 queue_empty || cluster_fail "the jobs did not finish: $(squeue 2>&1)"
! pgrep -f "ablate-worker --input $tmp/sw/" > /dev/null || fail "the cancelled task left workers behind"
python3 -c "import json,sys
for l in open(sys.argv[1]): json.loads(l)" "$tmp/sw/results/task-1.jsonl" 2> /dev/null \
  || fail "the cancelled task left a corrupt record"
grep -q "incomplete: task 1 missing (0/2 variants)" "$tmp"/sw/logs/slurm-merge-*.out \
  || fail "merge job: $(cat "$tmp"/sw/logs/slurm-merge-*.out)"
"$passlab" ablate --status "$tmp/sw" > "$tmp/status" || fail "status"
grep -q "3/5 variants recorded; 3 task(s): 2 done, 0 pending or running, 0 failed, 1 missing" "$tmp/status" \
  || fail "status: $(cat "$tmp/status")"
grep -q "squeue: none of these jobs is pending or running" "$tmp/status" || fail "no squeue: $(cat "$tmp/status")"

PASSLAB_ABLATE_FAULT="crash:boom" "$passlab" ablate --resubmit-missing "$tmp/sw" > "$tmp/resubmit.log" 2>&1 \
  || fail "resubmit: $(cat "$tmp/resubmit.log")"
grep -q "^resubmitted task 1 missing (0/2 variants): job array" "$tmp/resubmit.log" || fail "resubmit: $(cat "$tmp/resubmit.log")"
wait_for 120 queue_empty || cluster_fail "the resubmitted jobs did not finish: $(squeue 2>&1)"
"$passlab" ablate --status "$tmp/sw" > "$tmp/status" || fail "status after resubmit"
grep -q "5/5 variants recorded; 3 task(s): 3 done" "$tmp/status" || fail "final status: $(cat "$tmp/status")"
grep -q "merged 3 task(s): all complete" "$tmp"/sw/logs/slurm-merge-*.out || fail "no complete merge"
python3 -c "import json,sys
r=json.load(open(sys.argv[1])); o={v['name']: v['outcome'] for v in r['variants']}
assert sorted(o)==['boom','no cse','no dce','no simp','stuck'] and o['boom']=='crash', o
assert all(v['check'] is None or v['check']['ok'] for v in r['variants'])
assert [t['node'] for t in r['manifest']['tasks']]==[sys.argv[2]]*3, r['manifest']['tasks']" \
  "$tmp/sw/report.json" "$host" || fail "merged report"
echo PASS
