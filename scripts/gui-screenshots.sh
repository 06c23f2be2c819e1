#!/usr/bin/env bash
# Regenerates the README's GUI screenshots (docs/gui-*.png) with
# passlab-gui's headless mode under Xvfb; pngquant (when installed) keeps
# each file small. Usage: [ABLATION_REPORT=DIR] scripts/gui-screenshots.sh [BUILD_DIR]
# (ABLATION_REPORT: a `passlab ablate --out` directory for the ablation
# panel, e.g. a ResNet-18 disable-one sweep; default: the test fixture).
set -euo pipefail
cd "$(dirname "$0")/.."
gui="${1:-build}/tools/passlab-gui"
[ -x "$gui" ] || { echo "no $gui: build the passlab-gui target first" >&2; exit 1; }
mkdir -p docs
shot() {  # shot NAME ARGS...
  local name="$1"; shift
  xvfb-run -a -s '-screen 0 1280x800x24' "$gui" --screenshot "docs/$name.png" "$@"
  if command -v pngquant > /dev/null; then
    pngquant --force --quality 70-95 --speed 1 --output "docs/$name.png" "docs/$name.png"
  fi
}
shot gui-pipeline-diff --model transformer_block --select-pass algsimp
shot gui-kernels --model mlp --run --panel kernels
shot gui-emitter --model gelu --panel emitter --emitter-pass expand-math --ir-view unified
shot gui-ablation --report "${ABLATION_REPORT:-test/gui/ablation_fixture}" --panel ablation
ls -l docs/gui-*.png
