#!/usr/bin/env bash
# passlab-gui's Ablation views under Xvfb on two small real sweeps (the
# fusion sub-pipeline on a tiny module, two seeds): the compile cost per
# pass, the two reports side by side, and a heatmap cell's kernels, whose
# HLO the GUI compiles again from the sweep's manifest. Each screenshot is a
# real picture; the log says what each view read.
set -euo pipefail
gui="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
passlab="$(dirname "$gui")/passlab"
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v xvfb-run > /dev/null; then
  echo "SKIP: xvfb-run not found (apt-get install xvfb): the headless GUI tests need it"
  exit 77
fi
[ -x "$passlab" ] || fail "no $passlab next to $gui"
shot() {  # shot NAME ARGS...: screenshot, then check the PNG
  local name="$1"; shift
  xvfb-run -a -s '-screen 0 1280x800x24' "$gui" --screenshot "$tmp/$name.png" "$@" > "$tmp/$name.out" 2>&1 \
    || fail "$name: $(cat "$tmp/$name.out")"
  grep -q "wrote $tmp/$name.png (1280x800)" "$tmp/$name.out" || fail "$name: $(cat "$tmp/$name.out")"
  python3 "$src/test/gui/check_png.py" "$tmp/$name.png" 1280 800 || fail "$name: blank screenshot"
}
cat > "$tmp/m.hlo" <<'HLO'
HloModule m
ENTRY e {
  x = f32[64,32] parameter(0)
  y = f32[32,16] parameter(1)
  a = f32[64,32] add(x, x)
  t = f32[64,32] tanh(a)
  ROOT d = f32[64,16] dot(t, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
HLO
for s in 1 2; do
  "$passlab" ablate "$tmp/m.hlo" --pipeline fusion --repeats 3 --seed $s --out "$tmp/sweep$s" > "$tmp/sweep$s.log" 2>&1 \
    || fail "sweep $s: $(tail -5 "$tmp/sweep$s.log")"
done

shot cost --report "$tmp/sweep1" --panel ablation --ablation-view compile-cost
grep -q "opened $tmp/sweep1: 5 variants" "$tmp/cost.out" || fail "cost: $(cat "$tmp/cost.out")"

shot compare --report "$tmp/sweep1" --ablation "$tmp/sweep2" --panel ablation --ablation-view compare
grep -q "comparing 2 reports" "$tmp/compare.out" || fail "compare: $(cat "$tmp/compare.out")"

# Row 0 is the largest effect; column 0 a kernel of the baseline's.
shot kernel --report "$tmp/sweep1" --panel ablation --ablation-view heatmap --heatmap-cell 0,0
grep -Eq "kernel HLO of '[^']+': baseline [0-9]+ lines" "$tmp/kernel.out" || fail "kernel: $(cat "$tmp/kernel.out")"

# A cell outside the heatmap: an error naming the heatmap's size.
if xvfb-run -a -s '-screen 0 1280x800x24' "$gui" --screenshot "$tmp/bad.png" --report "$tmp/sweep1" \
    --heatmap-cell 99,0 > "$tmp/bad.out" 2>&1; then
  fail "--heatmap-cell 99,0 succeeded"
fi
grep -q "not ROW,COLUMN of the heatmap" "$tmp/bad.out" || fail "bad cell: $(cat "$tmp/bad.out")"
echo "ok"
