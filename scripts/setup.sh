#!/usr/bin/env bash
# README's first command: install dependencies, build, and run the main job on
# the bundled example (seed 000's GELU module).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
./scripts/build.sh
./build/tools/passlab verify test/hlo/gelu.hlo
./build/tools/passlab stats test/hlo/gelu.hlo
./build/tools/passlab fmt test/hlo/gelu.hlo
