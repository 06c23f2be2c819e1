#!/usr/bin/env bash
# passlab-gui's errors: a bad file lands in the log with its location (and
# the window still renders); bad flags fail with a message; a cuda run that
# cannot run lands in the log.
set -euo pipefail
gui="$1"; src="$2"; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! command -v xvfb-run > /dev/null; then
  echo "SKIP: xvfb-run not found (apt-get install xvfb): the headless GUI tests need it"
  exit 77
fi
xv() { xvfb-run -a -s '-screen 0 1280x800x24' "$gui" "$@"; }
printf 'HloModule m\nENTRY e {\n  x = f32[2] frobnicate()\n}\n' > "$tmp/bad.hlo"
xv --screenshot "$tmp/bad.png" --open "$tmp/bad.hlo" > "$tmp/out" 2>&1 || fail "bad file: $(cat "$tmp/out")"
grep -q "\[error\] load bad.hlo: .*bad.hlo:3:.*frobnicate" "$tmp/out" || fail "no located error: $(cat "$tmp/out")"
python3 "$src/test/gui/check_png.py" "$tmp/bad.png" 1280 800 > /dev/null || fail "blank window after an error"
if xv --screenshot "$tmp/x.png" --panel nosuch > "$tmp/out2" 2>&1; then fail "unknown panel accepted"; fi
grep -q "unknown panel 'nosuch'" "$tmp/out2" || fail "$(cat "$tmp/out2")"
if xv --screenshot "$tmp/y.png" --open "$tmp/bad.hlo" --select-pass nosuchpass > "$tmp/out3" 2>&1; then
  fail "unknown pass accepted"
fi
grep -q "no pass occurrence 'nosuchpass'" "$tmp/out3" || fail "$(cat "$tmp/out3")"
# --device: an unknown one exits 2 before any window; cuda without a GPU
# (or without the backend built) is an error in the log, not a crash.
set +e
xv --screenshot "$tmp/z.png" --device tpu > "$tmp/out4" 2>&1
code=$?
set -e
[ "$code" = 2 ] || fail "unknown device: exit $code: $(cat "$tmp/out4")"
grep -q "unknown device 'tpu' (cpu, cuda)" "$tmp/out4" || fail "$(cat "$tmp/out4")"
printf 'HloModule m\nENTRY e {\n  x = f32[8] parameter(0)\n  ROOT t = f32[8] tanh(x)\n}\n' > "$tmp/good.hlo"
# --pass-option (XLA's option names, as on opt/run/ablate): a bad one exits
# 2 naming it before any window; a good one is logged and applied.
set +e
xv --screenshot "$tmp/p.png" --pass-option algsimp.no_such_option=true > "$tmp/out6" 2>&1
code=$?
set -e
[ "$code" = 2 ] || fail "unknown pass option: exit $code: $(cat "$tmp/out6")"
grep -q "pass-option.*no_such_option" "$tmp/out6" || fail "$(cat "$tmp/out6")"
xv --screenshot "$tmp/q.png" --open "$tmp/good.hlo" --pass-option algsimp.enable_dot_strength_reduction=false \
  > "$tmp/out7" 2>&1 || fail "pass option: $(cat "$tmp/out7")"
grep -q "\[info\] pipeline: pass options: algsimp.enable_dot_strength_reduction=false" "$tmp/out7" \
  || fail "pass option not logged: $(cat "$tmp/out7")"
grep -q "\[error\]" "$tmp/out7" && fail "pass option run logged an error: $(cat "$tmp/out7")"
xv --screenshot "$tmp/cuda.png" --open "$tmp/good.hlo" --run --device cuda --panel kernels > "$tmp/out5" 2>&1 \
  || fail "cuda run: $(cat "$tmp/out5")"
grep -Eq "\[error\] run: cuda: .*(no CUDA driver|no CUDA device|the cuda backend was not built)|\[info\] run: cuda:0" \
  "$tmp/out5" || fail "cuda run log: $(cat "$tmp/out5")"
python3 "$src/test/gui/check_png.py" "$tmp/cuda.png" 1280 800 > /dev/null || fail "blank window after a cuda run"
# Model options as the CLI takes them; without --model they are an error;
# an unknown pipeline exits 2 before any window; gpu-2021 is a pipeline.
xv --screenshot "$tmp/m.png" --model resnet18 --batch 2 --image-size 32 --model-width 8 --no-compile > "$tmp/out8" 2>&1 \
  || fail "model options: $(cat "$tmp/out8")"
grep -q "\[info\] load: resnet18 (batch 2, image 32, width 8)" "$tmp/out8" || fail "model options not used: $(cat "$tmp/out8")"
set +e
xv --screenshot "$tmp/m2.png" --batch 2 > "$tmp/out9" 2>&1
code=$?
xv --screenshot "$tmp/m3.png" --pipeline gpu-2019 > "$tmp/out10" 2>&1
code2=$?
set -e
[ "$code" = 2 ] && grep -q "model options (--batch, --dtype, ...) need --model NAME" "$tmp/out9" \
  || fail "model option without a model: exit $code: $(cat "$tmp/out9")"
[ "$code2" = 2 ] && grep -q "unknown pipeline 'gpu-2019'" "$tmp/out10" || fail "bad pipeline: exit $code2: $(cat "$tmp/out10")"
xv --screenshot "$tmp/old.png" --open "$tmp/good.hlo" --pipeline gpu-2021 > "$tmp/out11" 2>&1 \
  || fail "gpu-2021: $(cat "$tmp/out11")"
grep -q "\[info\] pipeline: 'gpu-2021'" "$tmp/out11" || fail "gpu-2021 not switched: $(cat "$tmp/out11")"
echo "ok"
