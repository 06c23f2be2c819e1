#!/usr/bin/env bash
# ablate --device cuda with many resident workers says what GPU contexts do to
# absolute step times (issue 27; measured on an H200, docs/gpu-results.md).
# Without a GPU the sweep then fails at the baseline with a clear error.
set -euo pipefail
passlab="$1"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
if nvidia-smi -L > /dev/null 2>&1; then echo "SKIP: a GPU is present (the sweep would run)"; exit 0; fi
set +e
"$passlab" ablate --model mlp --batch 8 --width 32 --device cuda --block 5 --processes 2 --repeats 2 --out "$tmp/out" \
  > "$tmp/log" 2> "$tmp/err"; rc=$?
set -e
grep -q "note: on cuda about 10 worker processes (--block 5 x --processes 2) hold GPU contexts" "$tmp/err" \
  || fail "no note on resident contexts: $(cat "$tmp/err")"
[ "$rc" != 0 ] || fail "a cuda sweep without a GPU succeeded"
grep -q "CUDA driver\|cuda" "$tmp/err" || fail "unclear error without a GPU: $(cat "$tmp/err")"
# The cuda defaults (--block 3 --processes 1): three resident workers, no note.
set +e
"$passlab" ablate --model mlp --batch 8 --width 32 --device cuda --repeats 2 --out "$tmp/out2" > /dev/null 2> "$tmp/err2"
set -e
if grep -q "note: on cuda" "$tmp/err2"; then fail "note with the cuda defaults: $(cat "$tmp/err2")"; fi
echo "cli_ablate_cuda_contexts: ok"
