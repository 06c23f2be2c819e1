#!/usr/bin/env bash
# passlab eval: random inputs, .npy outputs fed back as inputs, and errors
# that name the parameter.
set -euo pipefail
passlab="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cat > "$tmp/mm.hlo" <<'HLO'
HloModule mm
ENTRY e {
  a = f32[2,3] parameter(0)
  b = f32[3,2] parameter(1)
  d = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT t = (f32[2,2], f32[2,3]) tuple(d, a)
}
HLO
"$passlab" eval "$tmp/mm.hlo" --random-inputs 7 --output-dir "$tmp/out" > "$tmp/sum1"
test -f "$tmp/out/output_0.npy" && test -f "$tmp/out/output_1.npy" || fail "no npy outputs"
# output_1 is parameter a; feed it back (twice) with b = a^T shaped... use a identity module.
cat > "$tmp/id.hlo" <<'HLO'
ENTRY e { ROOT p = f32[2,3] parameter(0) }
HLO
"$passlab" eval "$tmp/id.hlo" --input "$tmp/out/output_1.npy" > "$tmp/sum2"
c1=$(grep "output 1:" "$tmp/sum1" | sed 's/.*checksum //')
c2=$(grep "output 0:" "$tmp/sum2" | sed 's/.*checksum //')
[ "$c1" = "$c2" ] || fail "npy round trip changed the data ($c1 vs $c2)"
# Wrong shape names the parameter.
if "$passlab" eval "$tmp/mm.hlo" --input "$tmp/out/output_1.npy" --input "$tmp/out/output_1.npy" 2> "$tmp/err"; then
  fail "accepted a mis-shaped input"
fi
grep -q "parameter 1 ('b') is f32\[3,2\] but" "$tmp/err" || fail "unclear error: $(cat "$tmp/err")"
"$passlab" eval "$tmp/mm.hlo" --random-inputs 7 --format json | grep -q '"checksum"' || fail "json summary"
# A module whose shapes disagree is refused before anything evaluates,
# optimizes, runs or plans it (XLA verifies before compiling): one error
# naming the file and the instruction, exit 1, by every command.
printf 'HloModule m\nENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[4,5] parameter(1)\n  ROOT d = f32[2,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n' > "$tmp/baddot.hlo"
for args in "eval $tmp/baddot.hlo --random-inputs 1" "run $tmp/baddot.hlo" "opt $tmp/baddot.hlo -o $tmp/o.hlo" \
            "ablate $tmp/baddot.hlo --dry-run" "bisect $tmp/baddot.hlo"; do
  set +e
  # shellcheck disable=SC2086
  "$passlab" $args > "$tmp/stdout" 2> "$tmp/err"
  code=$?
  set -e
  [ "$code" = 1 ] || fail "$args: exit $code: $(cat "$tmp/err")"
  grep -q "baddot.hlo: the input does not verify: .*instruction 'd'.*contracting dimension" "$tmp/err" \
    || fail "$args: $(cat "$tmp/err")"
  [ ! -s "$tmp/stdout" ] || fail "$args printed output for an invalid module: $(cat "$tmp/stdout")"
done
# Arrays beyond the memory budget (this machine's memory, or
# PASSLAB_MEMORY_BUDGET) and shapes whose size overflows: one error, exit 1,
# never an abort.
printf 'HloModule m\nENTRY e {\n  a = f32[4096,4096] parameter(0)\n  ROOT n = f32[4096,4096] negate(a)\n}\n' > "$tmp/big.hlo"
for cmd in "eval --random-inputs 1" run; do
  set +e
  # shellcheck disable=SC2086
  PASSLAB_MEMORY_BUDGET=1M "$passlab" $cmd "$tmp/big.hlo" > "$tmp/stdout" 2> "$tmp/err"
  code=$?
  set -e
  [ "$code" = 1 ] || fail "$cmd over budget: exit $code: $(cat "$tmp/err")"
  grep -q "instruction 'a' has shape f32\[4096,4096\]{1,0} of 67108864 bytes, more than the memory budget of 1048576 bytes" "$tmp/err" \
    || fail "$cmd over budget: $(cat "$tmp/err")"
done
# What allocates nothing takes a shape over the budget: opt optimizes it,
# verify passes it with a warning (XLA's benchmark modules have 34 GB
# parameters).
PASSLAB_MEMORY_BUDGET=1M "$passlab" verify "$tmp/big.hlo" > "$tmp/stdout" 2> "$tmp/err" || fail "verify over budget: $(cat "$tmp/err")"
grep -q "big.hlo: OK" "$tmp/stdout" || fail "verify over budget: $(cat "$tmp/stdout")"
grep -q "warning: .*instruction 'a' has shape f32\[4096,4096\]{1,0} of 67108864 bytes, more than the memory budget" "$tmp/err" \
  || fail "verify over budget: no warning: $(cat "$tmp/err")"
PASSLAB_MEMORY_BUDGET=1M "$passlab" opt --pipeline gpu "$tmp/big.hlo" -o "$tmp/opt.hlo" 2> "$tmp/err" \
  || fail "opt over budget: $(cat "$tmp/err")"
PASSLAB_MEMORY_BUDGET=1G "$passlab" verify "$tmp/big.hlo" 2> "$tmp/err" > /dev/null || fail "within budget refused"
[ ! -s "$tmp/err" ] || fail "within budget warned: $(cat "$tmp/err")"
if PASSLAB_MEMORY_BUDGET=lots "$passlab" verify "$tmp/big.hlo" 2> "$tmp/err"; then fail "bad budget accepted"; fi
grep -q "PASSLAB_MEMORY_BUDGET='lots' is not a positive byte count" "$tmp/err" || fail "$(cat "$tmp/err")"
printf 'HloModule m\nENTRY e {\n  ROOT a = f32[10000000000000,10000000000000] parameter(0)\n}\n' > "$tmp/overflow.hlo"
set +e
"$passlab" eval "$tmp/overflow.hlo" --random-inputs 1 > /dev/null 2> "$tmp/err"
code=$?
set -e
[ "$code" = 1 ] || fail "overflowing shape: exit $code: $(cat "$tmp/err")"
grep -q "more bytes than fit in 64 bits" "$tmp/err" || fail "$(cat "$tmp/err")"
echo "cli_eval: OK"
