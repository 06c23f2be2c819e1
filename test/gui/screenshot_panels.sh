#!/usr/bin/env bash
# passlab-gui --screenshot under Xvfb: every panel renders a real picture
# (right size, not blank) from a file, a model, a run and an ablation report.
set -euo pipefail
gui="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v xvfb-run > /dev/null; then
  echo "SKIP: xvfb-run not found (apt-get install xvfb): the headless GUI tests need it"
  exit 77
fi
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
  x = f32[8,16] parameter(0)
  y = f32[16,4] parameter(1)
  z = f32[] constant(0)
  zb = f32[8,16] broadcast(z), dimensions={}
  a = f32[8,16] add(x, zb)
  t = f32[8,16] tanh(a)
  ROOT d = f32[8,4] dot(t, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
HLO
shot ir --open "$tmp/m.hlo" --select-pass algsimp
grep -q "pipeline: .* runs" "$tmp/ir.out" || fail "no compile in the log: $(cat "$tmp/ir.out")"
shot ir_unified --open "$tmp/m.hlo" --select-pass @17 --ir-view unified
shot module --model gelu --ir-view module --search tanh
shot kernels --model mlp --run --panel kernels
grep -q "run: .* kernels; kernel time" "$tmp/kernels.out" || fail "no run in the log: $(cat "$tmp/kernels.out")"
shot emitter --open "$tmp/m.hlo" --panel emitter
shot ablation --report "$src/test/gui/ablation_fixture" --panel ablation
grep -q "opened .*ablation_fixture: 8 variants" "$tmp/ablation.out" || fail "report: $(cat "$tmp/ablation.out")"
echo "ok"
