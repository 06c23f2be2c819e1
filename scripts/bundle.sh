#!/usr/bin/env bash
# Packs the built binaries with the shared libraries they need from Debian
# (LLVM/MLIR, oneDNN, OpenBLAS, abseil, ...) so that they run on a machine
# without those packages, such as a GPU box with only the CUDA stack:
#
#   OUT/libs-llvm.tar.xz  lib/: libLLVM and what only it needs (z3, ICU, libxml2)
#   OUT/libs.tar.xz       lib/: the other libraries (MLIR, oneDNN, OpenBLAS,
#                         abseil, ...) and libdevice
#   OUT/bins.tar.xz       bin/: passlab, cuda_runtime_tests, e2e_tests (stripped)
# Each archive stays under 64 MB, and the libraries change rarely.
#   OUT/env.sh        sourced there: unpacks both into $PASSLAB_BUNDLE (default
#                     /opt/passlab) and points the loader at them and at the
#                     machine's own CUDA libraries (cuBLASLt, cuDNN, CUPTI)
#
# The CUDA libraries and the driver are not packed: the GPU machine's own are
# used. The C library is not packed either, so the target needs glibc 2.34
# or newer. Then, on the GPU machine:
#   source OUT/env.sh && scripts/gpu-check.sh "$PASSLAB_BUNDLE/bin" gpu-check
#
# BUNDLE_STATIC_LLVM=1 packs passlab (and cuda_runtime_tests, which links no
# LLVM), passlab relinked (with lld) against
# LLVM's and MLIR's static archives from Debian's llvm-22-dev/libmlir-22-dev,
# so that only the code it uses travels: about 21 MB for bins.tar.xz and no
# libs-llvm.tar.xz (LLVM, MLIR, z3 and ICU as shared libraries are 60 MB
# compressed), for transfers limited to 64 MB.
#
# Usage: scripts/bundle.sh [OUT] [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
out=$(mkdir -p "${1:-bundle}" && cd "${1:-bundle}" && pwd)
build=${2:-$here/build}
bins=("$build/tools/passlab" "$build/test/cuda_runtime_tests" "$build/test/e2e_tests")
if [[ -n "${BUNDLE_STATIC_LLVM:-}" ]]; then
  static=$(mktemp -d)/passlab
  llvm=/usr/lib/llvm-22/lib
  archives=$(ls "$llvm"/libMLIR*.a "$llvm"/libLLVM*.a |
             grep -v -E 'libLLVM\.a|CAPI|Test|libMLIRMlirOptMain|TableGen' | tr '\n' ' ')
  # The link command CMake wrote, with the shared LLVM/MLIR replaced by the archives.
  (cd "$build" && ninja -t commands tools/passlab | tail -n 1) |
    sed -e "s#$llvm/libMLIR\.so[.0-9]*#-Wl,--start-group $archives -Wl,--end-group#" \
        -e "s#$llvm/libLLVM\.so[.0-9]*#-lz /lib/x86_64-linux-gnu/libzstd.so.1 -lffi -ltinfo#" \
        -e "s# -o tools/passlab # -fuse-ld=lld -o $static #" > "$(dirname "$static")/link.sh"
  (cd "$build" && bash "$(dirname "$static")/link.sh")
  bins=("$static" "$build/test/cuda_runtime_tests")  # the tests link no LLVM
  rm -f "$out/libs-llvm.tar.xz"
fi
for b in "${bins[@]}"; do [[ -x "$b" ]] || { echo "bundle: $b is not built" >&2; exit 1; }; done
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/llvm/lib" "$stage/rest/lib" "$stage/bins/bin"
# Every library the binaries load, but the C library's and CUDA's own.
for b in "${bins[@]}"; do ldd "$b" | awk '$3 ~ /^\// {print $3}'; done | sort -u |
  grep -v -E '/(libc|libm|libpthread|libdl|librt|libutil)\.so|/usr/local/cuda|libcuda\.so' |
  while read -r lib; do
    case $(basename "$lib") in
      libLLVM*|libz3*|libicu*|libxml2*) cp -L "$lib" "$stage/llvm/lib/" ;;
      *) cp -L "$lib" "$stage/rest/lib/" ;;
    esac
  done
libdevice=/usr/local/cuda/nvvm/libdevice/libdevice.10.bc
[[ -f $libdevice ]] && cp "$libdevice" "$stage/rest/lib/"
for b in "${bins[@]}"; do cp "$b" "$stage/bins/bin/" && strip "$stage/bins/bin/$(basename "$b")"; done
if [[ -z "${BUNDLE_STATIC_LLVM:-}" ]]; then
  (cd "$stage/llvm" && tar cf - lib | xz -9 -T0 > "$out/libs-llvm.tar.xz")
fi
(cd "$stage/rest" && tar cf - lib | xz -9 -T0 > "$out/libs.tar.xz")
(cd "$stage/bins" && tar cf - bin | xz -6 -T0 > "$out/bins.tar.xz")
cat > "$out/env.sh" <<'EOF'
# Sourced on the target: unpack (once per archive change) and set the loader path.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PASSLAB_BUNDLE=${PASSLAB_BUNDLE:-/opt/passlab}
mkdir -p "$PASSLAB_BUNDLE"
for a in libs-llvm libs bins; do
  if [[ -f "$here/$a.tar.xz" && "$here/$a.tar.xz" -nt "$PASSLAB_BUNDLE/.$a" ]]; then
    tar xJf "$here/$a.tar.xz" -C "$PASSLAB_BUNDLE" && touch "$PASSLAB_BUNDLE/.$a"
  fi
done
cuda_dirs=""
# One walk for all of them (the GPU machine's /opt holds a large Python
# environment), the first place found for each name.
names=(libcublasLt.so.13 libcudnn.so.9 libcupti.so.13 libcublas.so.13 libcufft.so.12 libcusolver.so.12
       libcusparse.so.12 libnvJitLink.so.13)
expr=(); for n in "${names[@]}"; do expr+=(${expr[@]:+-o} -name "$n"); done
while read -r d; do
  [[ ":$cuda_dirs:" != *":$d:"* ]] && cuda_dirs="$cuda_dirs:$d"
done < <(find /usr/local /opt /usr/lib /usr/lib64 \( "${expr[@]}" \) -not -path '*/stubs/*' 2>/dev/null |
         awk -F/ '!seen[$NF]++ { sub("/[^/]*$", ""); print }')
export LD_LIBRARY_PATH="$PASSLAB_BUNDLE/lib$cuda_dirs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
# The GPU code generator reads libdevice from the CUDA toolkit's place.
if [[ ! -f /usr/local/cuda/nvvm/libdevice/libdevice.10.bc && -f "$PASSLAB_BUNDLE/lib/libdevice.10.bc" ]]; then
  mkdir -p /usr/local/cuda/nvvm/libdevice 2>/dev/null &&
    cp "$PASSLAB_BUNDLE/lib/libdevice.10.bc" /usr/local/cuda/nvvm/libdevice/ 2>/dev/null ||
    echo "bundle: no libdevice at /usr/local/cuda/nvvm/libdevice; kernels with math calls will not compile" >&2
fi
if ldd "$PASSLAB_BUNDLE/bin/passlab" | grep -q 'not found'; then
  echo "bundle: missing libraries:" >&2
  ldd "$PASSLAB_BUNDLE/bin/passlab" | grep 'not found' >&2
fi
EOF
ls -la "$out"
