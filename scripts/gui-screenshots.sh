#!/usr/bin/env bash
# Regenerates the README's GUI screenshots (docs/gui-*.png) with
# passlab-gui's headless mode under Xvfb; pngquant (when installed) keeps
# each file small. Usage: [ABLATION_REPORT=DIR] [COMPARE_REPORTS="DIR2 DIR3"]
# scripts/gui-screenshots.sh [BUILD_DIR]
# (ABLATION_REPORT: a `passlab ablate --out` directory for the ablation
# panel, e.g. a ResNet-18 disable-one sweep; default: the test fixture.
# With COMPARE_REPORTS, the sweeps read beside it too, and the compile-cost,
# side-by-side and heatmap-kernel views of ABLATION_REPORT, at 1600x1000;
# docs/gui-compile-cost.png and friends came from
#   passlab ablate --model mlp --repeats 20 --out A
#   passlab ablate --model mlp --repeats 20 --pipeline gpu-2021 --out B
#   passlab ablate --model mlp --repeats 20 --batch 128 --out C
# with ABLATION_REPORT=A COMPARE_REPORTS="B C" HEATMAP_CELL=0,12.)
set -euo pipefail
cd "$(dirname "$0")/.."
gui="${1:-build}/tools/passlab-gui"
[ -x "$gui" ] || { echo "no $gui: build the passlab-gui target first" >&2; exit 1; }
mkdir -p docs
shot() {  # shot NAME ARGS...
  local name="$1"; shift
  xvfb-run -a -s '-screen 0 1600x1000x24' "$gui" --screenshot "docs/$name.png" "$@"
  if command -v pngquant > /dev/null; then
    pngquant --force --quality 70-95 --speed 1 --output "docs/$name.png" "docs/$name.png"
  fi
}
shot gui-pipeline-diff --model transformer_block --select-pass algsimp
shot gui-kernels --model mlp --run --panel kernels
shot gui-emitter --model gelu --panel emitter --emitter-pass expand-math --ir-view unified
shot gui-ablation --report "${ABLATION_REPORT:-test/gui/ablation_fixture}" --panel ablation
if [ -n "${COMPARE_REPORTS:-}" ]; then
  big=(--width 1600 --height 1000 --report "$ABLATION_REPORT" --panel ablation)
  shot gui-compile-cost "${big[@]}" --ablation-view compile-cost
  # shellcheck disable=SC2086  # one --report per directory
  shot gui-compare "${big[@]}" $(printf -- '--report %s ' $COMPARE_REPORTS) --ablation-view compare
  shot gui-heatmap-kernel "${big[@]}" --ablation-view heatmap --heatmap-cell "${HEATMAP_CELL:-0,0}"
fi
ls -l docs/gui-*.png
