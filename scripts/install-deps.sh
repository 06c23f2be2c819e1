#!/usr/bin/env bash
# Installs every Debian package passlab's build, tests and GUI need.
# Run as root (or with sudo). Safe to run again.
# The GUI's headless tests need xvfb + xauth (xvfb-run), Mesa's GLX and DRI
# drivers (llvmpipe renders OpenGL 3.3 in software) and the DejaVu fonts.
# The Slurm test starts a private single-node cluster (slurm-wlm + munge).
set -euo pipefail
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq
$SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends \
  build-essential g++ cmake ninja-build ccache pkg-config git python3 xz-utils \
  libabsl-dev libfmt-dev libcli11-dev nlohmann-json3-dev libdtl-dev libre2-dev libxxhash-dev \
  zlib1g-dev libgtest-dev libgmock-dev libbenchmark-dev libprotobuf-dev protobuf-compiler \
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools \
  libdnnl-dev libopenblas-dev libkissfft-dev \
  libimgui-dev libglfw3-dev libstb-dev \
  xvfb xauth libgl1-mesa-dri libglx-mesa0 libegl-mesa0 fonts-dejavu-core \
  clang libclang-rt-14-dev \
  slurm-wlm munge \
  >/dev/null
echo "passlab: dependencies installed"
