#!/usr/bin/env bash
# passlab ablate --device cuda: on a machine without a GPU or driver the
# sweep stops at the baseline with the reason, and records it in the
# manifest; with one, a tiny sweep runs on the GPU and reports CUPTI times.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
args=(ablate --model mlp --batch 4 --width 16 --repeats 2 --warmup 1 --device cuda --out "$tmp/sweep")
if "$passlab" "${args[@]}" > "$tmp/out" 2> "$tmp/err"; then
  # A GPU is present: every variant ran there.
  grep -q '"device": "cuda"' "$tmp/sweep/manifest.json" || fail "manifest: $(cat "$tmp/sweep/manifest.json")"
  grep -q "variants\*\* swept" "$tmp/out" || fail "no report: $(cat "$tmp/out")"
  exit 0
fi
grep -Eq "baseline failed: compile: (no CUDA driver|no CUDA device|the cuda backend was not built)" "$tmp/err" \
  || fail "unclear error: $(cat "$tmp/err")"
grep -q '"device": "cuda"' "$tmp/sweep/manifest.json" || fail "manifest: $(cat "$tmp/sweep/manifest.json")"
# An unknown device is refused before anything runs.
if "$passlab" ablate --model mlp --device tpu --out "$tmp/x" > /dev/null 2> "$tmp/err2"; then fail "--device tpu accepted"; fi
grep -q "device" "$tmp/err2" || fail "no reason for --device tpu: $(cat "$tmp/err2")"
echo ok
