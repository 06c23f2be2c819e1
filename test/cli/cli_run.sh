#!/usr/bin/env bash
# passlab run: optimize, compile for the CPU, run, time every kernel, and
# check the outputs against the evaluator; clean errors for bad requests.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cat > "$tmp/m.hlo" <<'HLO'
HloModule m
ENTRY e {
  a = f32[17,33] parameter(0)
  b = f32[33,5] parameter(1)
  d = f32[17,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  t = f32[17,5] tanh(d)
  z = f32[] constant(0)
  s = f32[17] reduce(t, z), dimensions={1}, to_apply={ x = f32[] parameter(0) y = f32[] parameter(1) ROOT r = f32[] add(x, y) }
  ROOT o = (f32[17,5], f32[17]) tuple(t, s)
}
HLO
"$passlab" run "$tmp/m.hlo" --check --repeats 2 --trace "$tmp/trace.json" > "$tmp/out" || fail "run --check: $(cat "$tmp/out")"
grep -q "check              ok" "$tmp/out" || fail "no check line: $(cat "$tmp/out")"
grep -q "kernel time/step" "$tmp/out" || fail "no totals"
grep -q '"traceEvents"' "$tmp/trace.json" || fail "no Chrome trace"
# The cost model's estimate beside each kernel: the CPU entry by default, a
# GPU's on request, none on request; an unknown device is an error.
grep -q " estimate " "$tmp/out" || fail "no estimate column: $(cat "$tmp/out")"
grep -q "estimate: the 'cpu' cost model" "$tmp/out" || fail "no estimate legend: $(cat "$tmp/out")"
"$passlab" run "$tmp/m.hlo" --repeats 1 --cost-model H100 > "$tmp/o3" || fail "cost model H100: $(cat "$tmp/o3")"
grep -q "estimate: the 'H100' cost model" "$tmp/o3" || fail "H100 legend: $(cat "$tmp/o3")"
"$passlab" run "$tmp/m.hlo" --repeats 1 --cost-model none > "$tmp/o4" || fail "cost model none"
! grep -q " estimate " "$tmp/o4" || fail "estimate column with --cost-model none"
! "$passlab" run "$tmp/m.hlo" --repeats 1 --cost-model B200 2> "$tmp/err" > /dev/null || fail "unknown cost model accepted"
grep -q "B200" "$tmp/err" && grep -q "H100" "$tmp/err" || fail "cost model error: $(cat "$tmp/err")"
# Today's pipeline and the seed era's both run and name themselves.
grep -q "pipeline 'gpu'" "$tmp/out" || fail "run does not name the pipeline: $(cat "$tmp/out")"
"$passlab" run "$tmp/m.hlo" --repeats 1 --pipeline gpu-2021 --check > "$tmp/o5" || fail "gpu-2021: $(cat "$tmp/o5")"
grep -q "pipeline 'gpu-2021'" "$tmp/o5" || fail "gpu-2021 not named: $(cat "$tmp/o5")"
# Outputs as .npy files, as `passlab eval` writes them.
"$passlab" run "$tmp/m.hlo" --repeats 1 --output-dir "$tmp/out_npy" > /dev/null || fail "run --output-dir"
python3 -c "import sys
for i, shape in ((0, '(17,5)'), (1, '(17,)')):
    head = open(f'{sys.argv[1]}/output_{i}.npy', 'rb').read(128)
    assert head.startswith(b'\\x93NUMPY') and shape.encode() in head.replace(b' ', b''), head" "$tmp/out_npy" \
  || fail "npy outputs: $(ls "$tmp/out_npy")"
# A model, with a pass disabled, as JSON.
"$passlab" run --model mlp --disable algsimp --check --repeats 1 --format json > "$tmp/j" || fail "mlp: $(cat "$tmp/j")"
python3 -c "import json,sys; j=json.load(open(sys.argv[1])); assert j['check']['ok'] and j['kernels'], j" "$tmp/j" \
  || fail "json: $(cat "$tmp/j")"
# MLIR after every emitter pass, per kernel; an optional emitter pass off.
"$passlab" run "$tmp/m.hlo" --repeats 1 --emitter-dump "$tmp/mlir" --emitter-disable vectorize,unroll --check > "$tmp/o2" \
  || fail "emitter dump: $(cat "$tmp/o2")"
ls "$tmp"/mlir/*/00.input.mlir > /dev/null 2>&1 || fail "no emitted MLIR: $(ls -R "$tmp/mlir")"
ls "$tmp"/mlir/*/01.inline.mlir > /dev/null 2>&1 || fail "no MLIR after inline: $(ls -R "$tmp/mlir")"
grep -q "llvm.func" "$(ls "$tmp"/mlir/*/*.mlir | sort | tail -1)" || fail "last dump is not LLVM dialect"
# The same from passlab opt (kernels compiled, nothing run), with a diff per changing pass.
"$passlab" opt "$tmp/m.hlo" --emitter-dump "$tmp/mlir2" -o "$tmp/opt.hlo" 2> "$tmp/o3" || fail "opt emitter dump: $(cat "$tmp/o3")"
grep -q "changed by inline" "$tmp/mlir2/index.txt" || fail "opt emitter index: $(cat "$tmp/mlir2/index.txt")"
grep -q '^-.*func.func private' "$(ls "$tmp"/mlir2/*/01.inline.diff | head -1)" || fail "inline diff does not remove the subgraph functions"
if "$passlab" run "$tmp/m.hlo" --emitter-disable no-such-emitter-pass 2> "$tmp/e0"; then fail "unknown emitter pass accepted"; fi
grep -q "no-such-emitter-pass" "$tmp/e0" || fail "unknown emitter pass message: $(cat "$tmp/e0")"
# Errors: unknown pass, missing file; the GPU backend where there is none.
if "$passlab" run "$tmp/m.hlo" --disable no-such-pass 2> "$tmp/e1"; then fail "unknown pass accepted"; fi
grep -q "no-such-pass" "$tmp/e1" || fail "unknown pass message: $(cat "$tmp/e1")"
# --device cuda runs where a GPU is present and fails cleanly elsewhere.
if "$passlab" run "$tmp/m.hlo" --device cuda --check > "$tmp/o2" 2> "$tmp/e2"; then
  grep -q "^device *cuda:0" "$tmp/o2" || fail "cuda run output: $(cat "$tmp/o2")"
  grep -q "^check *ok" "$tmp/o2" || fail "cuda check: $(cat "$tmp/o2")"
  grep -q "^wall time/step .*untraced" "$tmp/o2" || fail "cuda wall time: $(cat "$tmp/o2")"
  grep -q "^traced step" "$tmp/o2" || fail "cuda traced step: $(cat "$tmp/o2")"
  # The CPU's other options work on the GPU too: JSON, outputs, emitter dumps.
  "$passlab" run "$tmp/m.hlo" --device cuda --check --repeats 3 --format json --output-dir "$tmp/gout" \
    --emitter-dump "$tmp/gmlir" > "$tmp/gj" || fail "cuda json: $(cat "$tmp/gj")"
  python3 -c "import json,sys; j=json.load(open(sys.argv[1]))
assert j['device'] == 'cuda' and j['device_description'].startswith('cuda:0'), j
assert j['check']['ok'] and j['kernels'], j
assert len(j['wall_ms']) == len(j['traced_wall_ms']) == len(j['kernel_ms']) == 3, j" "$tmp/gj" \
    || fail "cuda json: $(cat "$tmp/gj")"
  [ -s "$tmp/gout/output_0.npy" ] && [ -s "$tmp/gout/output_1.npy" ] || fail "cuda outputs: $(ls "$tmp/gout")"
  ls "$tmp"/gmlir/*/00.input.mlir > /dev/null 2>&1 || fail "no GPU emitter dump: $(ls -R "$tmp/gmlir")"
else
  grep -Eq "no CUDA driver|no CUDA device|cuda backend was not built" "$tmp/e2" || fail "cuda message: $(cat "$tmp/e2")"
fi
if "$passlab" run "$tmp/missing.hlo" 2> "$tmp/e3"; then fail "missing file accepted"; fi
grep -q "missing.hlo" "$tmp/e3" || fail "missing file message: $(cat "$tmp/e3")"
# Partitioned and replicated programs need more devices than the CPU backend has.
sed 's/^HloModule m$/HloModule m, num_partitions=4/' "$tmp/m.hlo" > "$tmp/p.hlo"
if "$passlab" run "$tmp/p.hlo" 2> "$tmp/e4"; then fail "partitioned module accepted"; fi
grep -q "module has 4 partitions; the CPU backend runs one device" "$tmp/e4" || fail "partitions message: $(cat "$tmp/e4")"
sed 's/^HloModule m$/HloModule m, replica_count=2/' "$tmp/m.hlo" > "$tmp/r.hlo"
if "$passlab" run "$tmp/r.hlo" 2> "$tmp/e5"; then fail "replicated module accepted"; fi
grep -q "module has 2 replicas; the CPU backend runs one device" "$tmp/e5" || fail "replicas message: $(cat "$tmp/e5")"
if "$passlab" run "$tmp/r.hlo" --device cuda 2> "$tmp/e6"; then fail "replicated module accepted on cuda"; fi
grep -q "module has 2 replicas; the CUDA backend runs one device" "$tmp/e6" || fail "cuda replicas message: $(cat "$tmp/e6")"
# Numeric flags state their range in plain numbers.
if "$passlab" run --model mlp --repeats 0 2> "$tmp/range"; then fail "--repeats 0 accepted"; fi
grep -q -- "--repeats: must be greater than 0, got 0" "$tmp/range" || fail "range message: $(cat "$tmp/range")"
if "$passlab" run --model mlp --warmup -1 2> "$tmp/range"; then fail "--warmup -1 accepted"; fi
grep -q -- "--warmup: must be at least 0, got -1" "$tmp/range" || fail "range message: $(cat "$tmp/range")"
# Kernels split their rows over oneDNN's OpenMP threads, or over passlab's
# own pool with PASSLAB_KERNEL_POOL=1: the same outputs, bit for bit (each
# element is computed by one thread), and both match the evaluator.
cat > "$tmp/big.hlo" <<'HLO'
HloModule big
ENTRY e {
  a = f32[512,1024] parameter(0)
  b = f32[512,1024] parameter(1)
  m = f32[512,1024] multiply(a, b)
  t = f32[512,1024] tanh(m)
  z = f32[] constant(0)
  s = f32[512] reduce(t, z), dimensions={1}, to_apply={ x = f32[] parameter(0) y = f32[] parameter(1) ROOT r = f32[] add(x, y) }
  ROOT o = (f32[512,1024], f32[512]) tuple(t, s)
}
HLO
"$passlab" run "$tmp/big.hlo" --threads 2 --repeats 1 --check --output-dir "$tmp/omp" > "$tmp/o6" || fail "OpenMP kernels: $(cat "$tmp/o6")"
PASSLAB_KERNEL_POOL=1 "$passlab" run "$tmp/big.hlo" --threads 2 --repeats 1 --check --output-dir "$tmp/pool" > "$tmp/o7" \
  || fail "pool kernels: $(cat "$tmp/o7")"
cmp -s "$tmp/omp/output_0.npy" "$tmp/pool/output_0.npy" && cmp -s "$tmp/omp/output_1.npy" "$tmp/pool/output_1.npy" \
  || fail "OpenMP and pool kernels differ"
echo "cli_run: ok"
