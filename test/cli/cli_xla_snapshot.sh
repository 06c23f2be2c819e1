#!/usr/bin/env bash
# A snapshot written by XLA itself (issue 25): JAX 0.11.2's XLA on an H200
# dumped the small step of bench/jax_snapshot.py with
# --xla_dump_hlo_unoptimized_snapshots (scripts/jax-snapshot-check.sh, run on
# the GPU machine on 2026-11-28). test/core/proto/data/jax_step holds that
# HloUnoptimizedSnapshot (the module before XLA's passes and the arguments
# JAX passed), the step's HLO text with the same arguments as .npy files,
# and JAX's outputs (output_<i>.npy). passlab imports the snapshot, replays
# it with its own arguments and matches both the evaluator and JAX.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
if "$passlab" version 2>/dev/null | grep -q "protobuf: no"; then echo "SKIP: built without protobuf"; exit 0; fi
data="$src/test/core/proto/data/jax_step"
pb="$data/jit_step.hlo_unoptimized_snapshot.pb"

"$passlab" verify "$pb" > "$tmp/verify" || fail "verify: $(cat "$tmp/verify")"
"$passlab" fmt "$pb" > "$tmp/module.hlo" || fail "fmt of the snapshot"
grep -q "dot(.*operand_precision={highest,highest}" "$tmp/module.hlo" || fail "the imported module lost its dot: $(head -30 "$tmp/module.hlo")"

# The snapshot's own arguments, against the evaluator and against JAX's outputs.
"$passlab" run "$pb" --check --expect "$data" --repeats 2 --warmup 0 > "$tmp/run" 2>&1 || fail "run: $(cat "$tmp/run")"
grep -q "^inputs *the arguments recorded in the file" "$tmp/run" || fail "inputs: $(cat "$tmp/run")"
grep -q "^check *ok: outputs match the reference" "$tmp/run" || fail "check: $(cat "$tmp/run")"
grep -q "^expect *ok: outputs match the reference" "$tmp/run" || fail "expect: $(cat "$tmp/run")"

# The same step from its HLO text and .npy arguments gives the same outputs.
"$passlab" run "$data/module.hlo" --args "$data" --expect "$data" --repeats 2 --warmup 0 > "$tmp/run2" 2>&1 \
  || fail "run of the HLO text: $(cat "$tmp/run2")"
grep -q "^expect *ok: outputs match the reference" "$tmp/run2" || fail "expect (text): $(cat "$tmp/run2")"

# Both come with the same arguments: the evaluator's outputs agree.
"$passlab" eval "$pb" --output-dir "$tmp/from_pb" > /dev/null || fail "eval of the snapshot"
"$passlab" eval "$data/module.hlo" --args "$data" --output-dir "$tmp/from_text" > /dev/null || fail "eval of the text"
for i in 0 1; do cmp -s "$tmp/from_pb/output_$i.npy" "$tmp/from_text/output_$i.npy" || fail "output $i differs between snapshot and text"; done

# A JAX output that does not match is caught: perturb output 1 (the scalar).
mkdir -p "$tmp/wrong" && cp "$data"/*.npy "$tmp/wrong/"
python3 - "$tmp/wrong/output_1.npy" <<'PY'
import struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
n = int.from_bytes(b[8:10], "little")
v = struct.unpack_from("<f", b, 10 + n)[0]
struct.pack_into("<f", b, 10 + n, v * 1.5 + 1)
open(p, "wb").write(bytes(b))
PY
set +e
"$passlab" run "$pb" --expect "$tmp/wrong" --repeats 2 --warmup 0 > "$tmp/run3" 2>&1; rc=$?
set -e
[ "$rc" != 0 ] || fail "a wrong expected output passed: $(cat "$tmp/run3")"
grep -q "output 1" "$tmp/run3" || fail "the mismatch does not name output 1: $(cat "$tmp/run3")"
echo "cli_xla_snapshot: ok"
