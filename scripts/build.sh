#!/usr/bin/env bash
# Configures and builds passlab into ./build (Ninja, ccache, 2 jobs).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j2
