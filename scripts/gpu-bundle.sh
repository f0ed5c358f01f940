#!/usr/bin/env bash
# The GPU check's bundle (issues 30 and 39): what the lent GPU machine lacks, built here and carried there.
# The device machine has its own torch 2.11.0+cu130 (its python3's) but none of the Debian
# packages attnbench builds against, no build directory (about 800 MB: it cannot travel; 64 MiB
# may) and no network. So this script builds here (scripts/build.sh: the same torch wheel, nvcc
# 13.0) and lays into one git-ignored folder, DIR (default .gpu-bundle):
#   bundle.tar.xz   bin/attnbench and bin/attnbench_tests (stripped); lib/: every shared library
#                   they load that neither the device's torch (torch/lib, nvidia/*/lib) nor the
#                   device image (scripts/gpu-device-libs.txt) provides (ICU, cpp-httplib,
#                   OpenSSL, ...); fallback/: this machine's libstdc++ and libgcc_s, used there
#                   only when the device's are older than the binaries need
#   MANIFEST.txt    the commit, the torch it was built against (gpu-check.sh compares it with the
#                   device's), whether the CUDA kernels are in the binary (read from its own
#                   symbols and sections, not from the CMake cache: what was linked, not what was
#                   asked for) and which CUDA runtime registers them, every file with its size,
#                   the libraries left to the device, the highest glibc version the binaries need
# and prints the size of what a device call carries (the working tree that travels plus DIR),
# failing when it is 60 MiB or more (the device tool's limit is 64 MiB), or when the binary links a
# static CUDA runtime.
#
#   scripts/gpu-bundle.sh [--out DIR] [--no-build]
#
# --no-build takes the binaries as they are in ATTNBENCH_BUILD_DIR (default build/). Then, on the
# device: scripts/gpu-check.sh --bundle DIR --pack "$OUT" (README "GPU check").
set -euo pipefail
cd "$(dirname "$0")/.."

DIR=.gpu-bundle
BUILD=1
while [ $# -gt 0 ]; do
  case "$1" in
    --out) DIR=${2:?--out needs a directory}; shift 2 ;;
    --no-build) BUILD=0; shift ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    *) echo "gpu-bundle: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
BUILD_DIR=${ATTNBENCH_BUILD_DIR:-build}
VENV=${ATTNBENCH_VENV:-/opt/attnbench/venv}
LIMIT_MIB=60

if [ "$BUILD" = 1 ]; then
  scripts/build.sh
fi
for f in "$BUILD_DIR/attnbench" "$BUILD_DIR/tests/attnbench_tests"; do
  [ -x "$f" ] || { echo "gpu-bundle: $f is not built (run scripts/build.sh, or drop --no-build)" >&2; exit 1; }
done

TORCH_DIR=$("$VENV/bin/python" -c 'import torch, os; print(os.path.dirname(torch.__file__))')
TORCH_VERSION=$("$VENV/bin/python" -c 'import torch; print(torch.__version__)')
SITE=$(dirname "$TORCH_DIR")
# The library path the device will have, so ldd resolves what torch brings as it will there.
TORCH_PATH="$TORCH_DIR/lib"
for d in "$SITE"/nvidia/*/lib; do [ -d "$d" ] && TORCH_PATH="$TORCH_PATH:$d"; done
mapfile -t DEVICE_LIBS < <(grep -v '^#' scripts/gpu-device-libs.txt | sed '/^$/d')

STAGE=$(mktemp -d)
trap 'rm -rf "$STAGE"' EXIT
mkdir -p "$STAGE/bin" "$STAGE/lib" "$STAGE/fallback"
cp "$BUILD_DIR/attnbench" "$BUILD_DIR/tests/attnbench_tests" "$STAGE/bin/"
strip --strip-unneeded "$STAGE/bin/attnbench" "$STAGE/bin/attnbench_tests"

is_device_lib() {
  local name=$1 l
  for l in "${DEVICE_LIBS[@]}"; do [ "$l" = "$name" ] && return 0; done
  return 1
}

# Every library the binaries load (ldd lists them transitively), sorted into: the device's torch,
# the device image, the bundle.
left=()
missing=0
while read -r name arrow path _; do
  [ "$arrow" = "=>" ] || continue
  if [ "$path" = "not" ]; then echo "gpu-bundle: $name is not found here either" >&2; missing=1; continue; fi
  case "$path" in
    "$TORCH_DIR"/*|"$SITE"/nvidia/*) left+=("$name (the device's torch)"); continue ;;
  esac
  if is_device_lib "$name"; then
    left+=("$name (the device image)")
    case "$name" in libstdc++.so.6|libgcc_s.so.1) cp -L "$path" "$STAGE/fallback/$name" ;; esac
    continue
  fi
  cp -L "$path" "$STAGE/lib/$name"
done < <(LD_LIBRARY_PATH="$TORCH_PATH" ldd "$STAGE/bin/attnbench" "$STAGE/bin/attnbench_tests" | sort -u)
[ "$missing" = 0 ] || exit 1
strip --strip-unneeded "$STAGE"/lib/* 2>/dev/null || true

# Whether kernels/cuda is in the binary, read from the binary itself (before stripping): its
# device code (an .nv_fatbin section), the kernel's instantiations among its symbols, and which
# CUDA runtime registers them: __cudaRegisterFatBinary undefined, to be found in libcudart.so, is
# the shared runtime (CMakeLists.txt asks for it); defined in the binary, a static copy.
describe_kernels() {
  local bin=$1 n runtime
  if ! readelf -SW "$bin" 2>/dev/null | grep -q '[.]nv_fatbin'; then
    echo "not built (no device code: $(basename "$bin") has no .nv_fatbin section)"
    return
  fi
  n=$(nm -C "$bin" 2>/dev/null | grep -o 'flash2_forward<[^>]*>' | sort -u | wc -l)
  if nm -D --undefined-only "$bin" 2>/dev/null | grep -qw '__cudaRegisterFatBinary'; then
    runtime="the shared CUDA runtime ($(LD_LIBRARY_PATH="$TORCH_PATH" ldd "$bin" | awk '/libcudart/ {print $1; exit}'))"
  elif nm "$bin" 2>/dev/null | grep -qw 'T __cudaRegisterFatBinary'; then
    runtime="a static CUDA runtime linked into the binary (CUDA_RUNTIME_LIBRARY is not Shared)"
  else
    runtime="no CUDA runtime registration found"
  fi
  echo "built (.nv_fatbin present; $n flash2_forward instantiations in the symbols; registered by $runtime)"
}
glibc_needed=$(objdump -T "$STAGE"/bin/* "$STAGE"/lib/* 2>/dev/null | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)
mkdir -p "$DIR"
rm -f "$DIR/bundle.tar.xz" "$DIR/MANIFEST.txt"
tar -C "$STAGE" -cf - bin lib fallback | xz -T2 -1 >"$DIR/bundle.tar.xz"
{
  echo "attnbench GPU bundle (scripts/gpu-bundle.sh)"
  echo "commit: $(git rev-parse HEAD 2>/dev/null || echo unknown)$(git diff --quiet 2>/dev/null || echo ' (with uncommitted changes)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(. /etc/os-release && echo "$PRETTY_NAME")"
  echo "against: torch $TORCH_VERSION ($TORCH_DIR)"
  echo "cuda kernels: $(describe_kernels "$BUILD_DIR/attnbench")"
  echo "highest glibc version needed: ${glibc_needed:-none}"
  echo
  echo "files (bytes, unpacked):"
  (cd "$STAGE" && find bin lib fallback -type f -printf '  %p %s\n' | sort)
  echo
  echo "left to the device:"
  printf '  %s\n' "${left[@]}" | sort -u
} >"$DIR/MANIFEST.txt"

# A static CUDA runtime beside torch's shared one would give the kernel its own runtime state
# (CMakeLists.txt sets CUDA_RUNTIME_LIBRARY Shared so it cannot): refuse such a bundle.
if grep -q '^cuda kernels: built.*static CUDA runtime' "$DIR/MANIFEST.txt"; then
  echo "gpu-bundle: $BUILD_DIR/attnbench links a static CUDA runtime (MANIFEST.txt's cuda kernels line); rebuild" \
    "with CUDA_RUNTIME_LIBRARY Shared" >&2
  exit 1
fi
grep -q '^cuda kernels: not built' "$DIR/MANIFEST.txt" &&
  echo "gpu-bundle: warning: $BUILD_DIR/attnbench holds no CUDA kernels (MANIFEST.txt): the GPU check cannot run cuda-flash2" >&2

# What a device call carries: the working tree that travels (tracked files and untracked ones git
# does not ignore) and the bundle, named in carry.
tree_bytes=$(git ls-files -co --exclude-standard -z | xargs -0 stat -c %s 2>/dev/null | awk '{s += $1} END {print s + 0}')
bundle_bytes=$(du -sb "$DIR" | cut -f1)
total=$((tree_bytes + bundle_bytes))
mib() { awk -v b="$1" 'BEGIN {printf "%.1f", b / 1048576}'; }
echo "gpu-bundle: $DIR: $(mib "$bundle_bytes") MiB (bundle.tar.xz $(mib "$(stat -c %s "$DIR/bundle.tar.xz")") MiB," \
  "unpacked $(mib "$(du -sb "$STAGE" | cut -f1)") MiB); working tree $(mib "$tree_bytes") MiB;" \
  "together $(mib "$total") MiB of the $LIMIT_MIB MiB allowed"
if [ "$total" -ge $((LIMIT_MIB * 1048576)) ]; then
  echo "gpu-bundle: the working tree and the bundle together are over $LIMIT_MIB MiB: the device call would be refused" >&2
  exit 1
fi
