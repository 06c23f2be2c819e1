#!/usr/bin/env bash
# Real arguments for real dumps: a module with its .npy arguments and the
# outputs written beside them (test/cli/data/replay, made by its
# make_files.py in plain Python) replays through eval, run and ablate;
# mismatched or missing files are clear errors; XLA protobuf files (the
# snapshot committed under test/core/proto/data) open in eval, run, opt and
# verify and bring their arguments.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
data="$src/test/cli/data/replay"
module="$data/module.hlo"
# same_data A B: the arrays in two .npy files are byte for byte equal.
same_data() {
  python3 -c "import sys
def body(p):
    b=open(p,'rb').read(); n=int.from_bytes(b[8:10],'little'); return b[10+n:]
sys.exit(0 if body(sys.argv[1])==body(sys.argv[2]) else 1)" "$1" "$2"
}

# eval reproduces the outputs exactly (every value is exact in f32).
"$passlab" eval "$module" --args "$data" --output-dir "$tmp/eval" > /dev/null || fail "eval --args"
for i in 0 1 2; do same_data "$tmp/eval/output_$i.npy" "$data/output_$i.npy" || fail "eval output $i differs"; done

# run: the compiled program against the files and the evaluator.
"$passlab" run "$module" --args "$data" --expect "$data" --check --repeats 2 --warmup 0 > "$tmp/run" \
  || fail "run --args --expect: $(cat "$tmp/run")"
grep -q "^inputs *arguments from $data" "$tmp/run" || fail "run does not say where the inputs came from"
grep -q "^expect *ok: outputs match" "$tmp/run" || fail "no expect verdict: $(cat "$tmp/run")"
grep -q "^check *ok: outputs match" "$tmp/run" || fail "no check verdict"

# A wrong expected output fails the run with exit 1.
mkdir -p "$tmp/wrong" && cp "$data"/output_*.npy "$tmp/wrong/" && cp "$data/output_0.npy" "$tmp/wrong/output_2.npy"
if "$passlab" run "$module" --args "$data" --expect "$tmp/wrong" --repeats 2 > /dev/null 2> "$tmp/err"; then
  fail "a mis-shaped expected output was accepted"
fi
grep -q "output 2 is f32\[4,8\] but .*output_2.npy holds f32\[4,3\]" "$tmp/err" || fail "unclear: $(cat "$tmp/err")"
cp "$data/output_2.npy" "$tmp/wrong/output_2.npy" && cp "$data/output_1.npy" "$tmp/wrong/x.npy"
python3 - "$tmp/wrong/output_1.npy" <<'PY'
import sys; p=sys.argv[1]; b=bytearray(open(p,'rb').read()); b[-1]^=0x40; open(p,'wb').write(b)
PY
set +e
"$passlab" run "$module" --args "$data" --expect "$tmp/wrong" --repeats 2 > /dev/null 2> "$tmp/err"; rc=$?
set -e
[ "$rc" = 1 ] || fail "--expect mismatch exit $rc"
grep -q -- "--expect: outputs differ from $tmp/wrong: FAILED: output 1" "$tmp/err" || fail "unclear: $(cat "$tmp/err")"

# Errors name the file and the parameter.
expect_error() {  # expect_error PATTERN DIR
  if "$passlab" run "$module" --args "$2" --repeats 2 > /dev/null 2> "$tmp/err"; then fail "accepted $2"; fi
  grep -q -- "$1" "$tmp/err" || fail "expected '$1', got: $(cat "$tmp/err")"
  if "$passlab" eval "$module" --args "$2" > /dev/null 2> "$tmp/err"; then fail "eval accepted $2"; fi
  grep -q -- "$1" "$tmp/err" || fail "eval: expected '$1', got: $(cat "$tmp/err")"
}
fresh() { rm -rf "$tmp/a"; mkdir -p "$tmp/a"; cp "$data"/*.npy "$tmp/a/"; }
fresh; rm "$tmp/a/param_2.npy"
expect_error "$tmp/a: no file for parameter 2 (expected 2.npy" "$tmp/a"
fresh; cp "$data/0.npy" "$tmp/a/arg1.npy"
expect_error "parameter 1 ('w') is f32\[8,3\] but $tmp/a/arg1.npy holds f32\[4,8\]" "$tmp/a"
fresh; cp "$data/param_2.npy" "$tmp/a/Arg_3.7.npy"
expect_error "parameter 3 ('k') is s32\[\] but $tmp/a/Arg_3.7.npy holds f32\[3\]" "$tmp/a"
fresh; cp "$data/0.npy" "$tmp/a/p0.npy"
expect_error "$tmp/a: two files for parameter 0: 0.npy and p0.npy" "$tmp/a"
fresh; cp "$data/0.npy" "$tmp/a/9.npy"
expect_error "$tmp/a/9.npy: names parameter 9 but there are only 4 parameters" "$tmp/a"
fresh; cp "$data/0.npy" "$tmp/a/weights.npy"
expect_error "$tmp/a/weights.npy: the file name has no parameter number" "$tmp/a"
expect_error "$tmp/none: not a directory" "$tmp/none"

# ablate: the workers run on the real arguments (the reference they write
# holds the committed outputs' bytes).
printf 'no cse: cse\n' > "$tmp/variants.txt"
"$passlab" ablate "$module" --args "$data" --sweep file --variants "$tmp/variants.txt" --repeats 2 --warmup 0 \
  --out "$tmp/ablate" > "$tmp/ablate.log" 2>&1 || fail "ablate --args: $(tail -5 "$tmp/ablate.log")"
python3 -c "import json,sys; sys.exit(0 if json.load(open('$tmp/ablate/manifest.json')).get('args') else 1)" \
  || fail "manifest lacks args"
python3 -c "import sys
b=open('$data/output_1.npy','rb').read(); n=int.from_bytes(b[8:10],'little')
sys.exit(0 if open('$tmp/ablate/reference/leaf_1.bin','rb').read()==b[10+n:] else 1)" \
  || fail "the ablation reference was not computed on the real arguments"
if "$passlab" ablate "$module" --args "$tmp/none" --dry-run > /dev/null 2> "$tmp/err"; then fail "ablate accepted a missing --args"; fi
grep -q "not a directory" "$tmp/err" || fail "ablate: unclear: $(cat "$tmp/err")"

# XLA protobuf files: a snapshot brings its arguments.
pb="$src/test/core/proto/data/small_step.snapshot.pb"
if "$passlab" version 2>/dev/null | grep -q "protobuf: no"; then echo "SKIP: built without protobuf"; exit 0; fi
"$passlab" verify "$pb" > /dev/null || fail "verify .pb"
"$passlab" opt "$pb" --pipeline gpu > "$tmp/opt.hlo" || fail "opt .pb"
grep -q "^HloModule small_step" "$tmp/opt.hlo" || fail "opt output: $(head -3 "$tmp/opt.hlo")"
"$passlab" eval "$pb" > "$tmp/eval.txt" || fail "eval .pb (its own arguments)"
grep -q "output 1: f32\[2\]  min 8.5  max 20.5" "$tmp/eval.txt" || fail "eval .pb values: $(cat "$tmp/eval.txt")"
"$passlab" run "$pb" --check --repeats 2 --warmup 0 > "$tmp/run" || fail "run .pb: $(cat "$tmp/run")"
grep -q "^inputs *the arguments recorded in the file" "$tmp/run" || fail "run .pb inputs: $(cat "$tmp/run")"
head -c 300 "$pb" > "$tmp/cut.pb"
set +e
"$passlab" run "$tmp/cut.pb" > /dev/null 2> "$tmp/err"; rc=$?
set -e
[ "$rc" = 1 ] || fail "truncated .pb: exit $rc"
grep -q "cut.pb: not an HLO protobuf file" "$tmp/err" || fail "truncated .pb: $(cat "$tmp/err")"
echo "cli_replay: ok"
