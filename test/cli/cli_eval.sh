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
echo "cli_eval: OK"
