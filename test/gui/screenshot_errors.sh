#!/usr/bin/env bash
# passlab-gui's errors: a bad file lands in the log with its location (and
# the window still renders); bad flags fail with a message.
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
echo "ok"
