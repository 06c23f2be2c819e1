#!/usr/bin/env bash
# XLA's own flag spellings (--xla_disable_hlo_passes, --xla_enable_hlo_passes_only,
# --xla_dump_to, --xla_dump_hlo_pass_re, and XLA_FLAGS) and --pass-option on
# opt, run and ablate: what is modelled is honoured, a real XLA pass or flag
# passlab lacks is a warning, and anything else a clear error.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cat > "$tmp/m.hlo" <<'H'
HloModule mod
ENTRY e {
  p = f32[8] parameter(0)
  n1 = f32[8] negate(p)
  n2 = f32[8] negate(n1)
  d = f32[8] exponential(p)
  ROOT r = f32[8] add(n2, p)
}
H

# XLA_FLAGS as a JAX user sets it: algsimp off, a pass passlab lacks and a
# flag it does not model are warnings.
XLA_FLAGS="--xla_disable_hlo_passes=algsimp,triton-softmax-rewriter --xla_gpu_enable_triton_gemm=false" \
  "$passlab" opt "$tmp/m.hlo" --stats -o "$tmp/out.hlo" 2> "$tmp/err" || fail "XLA_FLAGS opt: $(cat "$tmp/err")"
grep -q "warning: XLA_FLAGS: not modelled by passlab, ignored: --xla_gpu_enable_triton_gemm" "$tmp/err" \
  || fail "no flag warning: $(cat "$tmp/err")"
grep -q "warning: --xla_disable_hlo_passes: 'triton-softmax-rewriter' is an XLA pass passlab does not model; ignored" "$tmp/err" \
  || fail "no pass warning: $(cat "$tmp/err")"
grep -Eq "algsimp \(@[0-9]+\) +skipped|algsimp \(@[0-9]+\)\s+skipped" "$tmp/err" || grep -q "skipped" "$tmp/err" \
  || fail "algsimp not skipped: $(cat "$tmp/err")"
grep -q "negate" "$tmp/out.hlo" || fail "algsimp ran: negate(negate(p)) was folded"
# The command line wins over XLA_FLAGS; --xla_enable_hlo_passes_only = --enable-only.
XLA_FLAGS="--xla_disable_hlo_passes=algsimp" "$passlab" opt "$tmp/m.hlo" --xla_disable_hlo_passes=cse -o "$tmp/out.hlo" \
  2> "$tmp/err" || fail "command line over XLA_FLAGS: $(cat "$tmp/err")"
if grep -q "negate" "$tmp/out.hlo"; then fail "algsimp did not run once the command line replaced XLA_FLAGS"; fi
"$passlab" opt "$tmp/m.hlo" --xla_enable_hlo_passes_only=dce -o "$tmp/out.hlo" 2> "$tmp/err" || fail "enable only: $(cat "$tmp/err")"
grep -q "negate" "$tmp/out.hlo" || fail "enable-only dce still simplified"
if grep -q "exponential" "$tmp/out.hlo"; then fail "dce did not run"; fi
# A name that is no pass at all stays an error with close matches.
if "$passlab" opt "$tmp/m.hlo" --xla_disable_hlo_passes=algsimpp 2> "$tmp/err" > /dev/null; then fail "bad name accepted"; fi
grep -q "did you mean: algsimp" "$tmp/err" || fail "no close match: $(cat "$tmp/err")"
if XLA_FLAGS="xla_dump_to=/tmp" "$passlab" opt "$tmp/m.hlo" 2> "$tmp/err" > /dev/null; then fail "bad XLA_FLAGS accepted"; fi
grep -q "XLA_FLAGS: 'xla_dump_to=/tmp' is not a flag" "$tmp/err" || fail "bad XLA_FLAGS message: $(cat "$tmp/err")"

# Dumps with XLA's file names.
"$passlab" opt "$tmp/m.hlo" --xla_dump_to="$tmp/dump" --xla_dump_hlo_pass_re='^dce$' -o /dev/null 2> "$tmp/err" \
  || fail "dump: $(cat "$tmp/err")"
[ -f "$tmp/dump/module_0000.mod.before_optimizations.txt" ] || fail "no before dump: $(ls "$tmp/dump")"
[ -f "$tmp/dump/module_0000.mod.after_optimizations.txt" ] || fail "no after dump: $(ls "$tmp/dump")"
ls "$tmp/dump" > "$tmp/dump.list"  # not piped into grep -q: under pipefail its early exit would fail ls
grep -Eq '^module_0000\.mod\.0000\.[a-z_-]+\.after_[a-z_-]+\.before_dce\.txt$' "$tmp/dump.list" \
  || fail "no between-pass dump: $(cat "$tmp/dump.list")"
grep -Eq '^module_0000\.mod\.[0-9]{4}\.[a-z_-]+\.after_dce\.before_[a-z_-]+\.txt$' "$tmp/dump.list" \
  || fail "no after-dce dump: $(cat "$tmp/dump.list")"
if "$passlab" opt "$tmp/m.hlo" --xla_dump_hlo_pass_re=dce 2> "$tmp/err" > /dev/null; then fail "pass re without dir"; fi
grep -q "needs --xla_dump_to" "$tmp/err" || fail "pass re message: $(cat "$tmp/err")"

# --pass-option: XLA's option names, checked.
"$passlab" opt "$tmp/m.hlo" --passes cse --pass-option cse.is_layout_sensitive=false -o /dev/null \
  || fail "pass option on --passes"
"$passlab" opt "$tmp/m.hlo" --pass-option dot-merger.max_size_to_merge=1K -o /dev/null || fail "pass option on a pipeline"
if "$passlab" opt "$tmp/m.hlo" --pass-option dot-merger.max_size=1 2> "$tmp/err" > /dev/null; then fail "unknown option"; fi
grep -q "pass 'dot-merger' has no option 'max_size'; its options: max_size_to_merge" "$tmp/err" \
  || fail "unknown option message: $(cat "$tmp/err")"
if "$passlab" opt "$tmp/m.hlo" --pass-option dot-merger.max_size_to_merge=big 2> "$tmp/err" > /dev/null; then fail "bad value"; fi
grep -q "option 'max_size_to_merge' takes a int, not 'big'" "$tmp/err" || fail "bad value message: $(cat "$tmp/err")"
if "$passlab" opt "$tmp/m.hlo" --pass-option nosuchpass.x=1 2> "$tmp/err" > /dev/null; then fail "unknown pass"; fi
grep -q "no pass named 'nosuchpass'" "$tmp/err" || fail "unknown pass message: $(cat "$tmp/err")"
if "$passlab" opt "$tmp/m.hlo" --pass-option dot-merger 2> "$tmp/err" > /dev/null; then fail "malformed setting"; fi
grep -q "is not PASS.OPTION=VALUE" "$tmp/err" || fail "malformed message: $(cat "$tmp/err")"
if "$passlab" opt "$tmp/m.hlo" --passes dce --pass-option cse.is_layout_sensitive=false 2> "$tmp/err" > /dev/null; then
  fail "option of a pass not run"
fi
grep -q "does not run pass 'cse'" "$tmp/err" || fail "not-run message: $(cat "$tmp/err")"

# run: the same flags.
XLA_FLAGS="--xla_disable_hlo_passes=algsimp" "$passlab" run "$tmp/m.hlo" --repeats 1 --check \
  --pass-option cse.is_layout_sensitive=false --xla_dump_to="$tmp/rdump" > "$tmp/out" 2> "$tmp/err" \
  || fail "run: $(cat "$tmp/err")"
grep -q "check *ok" "$tmp/out" || fail "run check: $(cat "$tmp/out")"
[ -f "$tmp/rdump/module_0000.mod.after_optimizations.txt" ] || fail "run dump: $(ls "$tmp/rdump")"
if "$passlab" run "$tmp/m.hlo" --pipeline none --pass-option cse.is_layout_sensitive=false 2> "$tmp/err" > /dev/null; then
  fail "run --pipeline none with options"
fi

# ablate: --xla_disable_hlo_passes takes passes out of the sweep; options reach the manifest.
XLA_FLAGS="--xla_disable_hlo_passes=algsimp" "$passlab" ablate "$tmp/m.hlo" --dry-run > "$tmp/plan" 2> "$tmp/err" \
  || fail "ablate dry run: $(cat "$tmp/err")"
if grep -q "^disable algsimp " "$tmp/plan"; then fail "algsimp still in the sweep: $(cat "$tmp/plan")"; fi
grep -q "^disable dce " "$tmp/plan" || fail "dce missing from the sweep"
if "$passlab" ablate "$tmp/m.hlo" --dry-run --xla_enable_hlo_passes_only=dce 2> "$tmp/err" > /dev/null; then
  fail "ablate enable-only accepted"
fi
grep -q "does not apply to a sweep" "$tmp/err" || fail "ablate enable-only message: $(cat "$tmp/err")"
printf 'no dce: dce\n' > "$tmp/variants.txt"
"$passlab" ablate "$tmp/m.hlo" --sweep file --variants "$tmp/variants.txt" --repeats 2 --warmup 0 \
  --pass-option cse.is_layout_sensitive=false --xla_disable_hlo_passes=algsimp --out "$tmp/ab" > "$tmp/log" 2>&1 \
  || fail "ablate: $(cat "$tmp/log")"
python3 - "$tmp/ab/manifest.json" <<'PY' || fail "manifest: $(cat "$tmp/ab/manifest.json")"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["pass_options"] == ["cse.is_layout_sensitive=false"], m.get("pass_options")
assert m["xla_disabled_passes"] == ["algsimp"], m.get("xla_disabled_passes")
PY
echo ok

# --xla_gpu_enable_command_buffer is modelled (`run --device cuda` launches
# each step as a CUDA graph unless it is empty): no warning from XLA_FLAGS,
# and the empty spelling XLA documents is accepted on the command line.
XLA_FLAGS="--xla_gpu_enable_command_buffer=" "$passlab" run "$tmp/m.hlo" --repeats 2 > /dev/null 2> "$tmp/err" \
  || fail "XLA_FLAGS command buffer: $(cat "$tmp/err")"
grep -q "not modelled" "$tmp/err" && fail "command buffer flag called not modelled: $(cat "$tmp/err")"
"$passlab" run "$tmp/m.hlo" --repeats 2 --xla_gpu_enable_command_buffer= > /dev/null 2> "$tmp/err" \
  || fail "--xla_gpu_enable_command_buffer= rejected: $(cat "$tmp/err")"
echo "cli_xla_flags: command buffer flag OK"
