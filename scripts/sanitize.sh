#!/usr/bin/env bash
# The unit tests that need no LibTorch, built and run under sanitizers; exits non-zero on any
# report (a failing test) and leaves the builds for the next run to reuse.
#
#   scripts/sanitize.sh                 both builds below
#   ATTNBENCH_SANITIZE_BUILD_DIR=dir    the ASan+UBSan build's folder (default build-asan)
#   ATTNBENCH_TSAN_BUILD_DIR=dir        the TSan build's folder (default build-tsan)
#   ATTNBENCH_JOBS=n                    compile jobs (default: every core)
#
# What it covers:
# - AddressSanitizer + UndefinedBehaviorSanitizer (-fno-sanitize-recover=undefined, leaks
#   checked at exit, libstdc++'s _GLIBCXX_ASSERTIONS): attnbench_base (config, statistics,
#   reports, the live-metrics registry, endpoint and event files, the torch-free workload code,
#   the safetensors header reader) and every tests/*/test_*.cpp that needs nothing else, picked by
#   what it includes (tests/sanitize/CMakeLists.txt).
# - ThreadSanitizer: the same library, with the torch-free tests that start threads: the metrics
#   registry updated from several threads while it renders, and the metrics endpoint serving
#   scrapes from its own thread while the run updates the registry.
# What it does not cover: anything on LibTorch (the model, the runner and its scenarios, the
# techniques, the data-parallel workers, the pipeline stages, the CLI): LibTorch is not built
# with the sanitizers, so ASan cannot see its accesses and TSan reports races inside its OpenMP
# pool and thread-local state that are not ours. Nor does TSan cover the server scenario's
# queueing or the live monitor's hooks, which live in the runner and the CLI. The config tests
# that expect techniques/cast_precision.cpp's registered precisions run only in the full suite.
#
# Why TSan stops there: a TSan build over the server scenario, the data-parallel worker threads
# and the pipeline stages links LibTorch (libtorch_cpu.so, uninstrumented, with its own OpenMP
# runtime): its intra-op pool synchronises through libgomp/atomics TSan cannot see, so every pass
# that uses more than one thread is reported as racing on tensor memory, and suppressing those
# suppresses the races in our code too. worker_thread and the pipeline's stages hand tensors
# between threads, so they cannot be separated from LibTorch either.
#
# Cost: XXX-MEASURE
# The fuzz targets, built with
# the ordinary build, run under ASan+UBSan in scripts/test.sh (label fuzz).
set -uo pipefail
cd "$(dirname "$0")/.."
ASAN_DIR=${ATTNBENCH_SANITIZE_BUILD_DIR:-build-asan}
TSAN_DIR=${ATTNBENCH_TSAN_BUILD_DIR:-build-tsan}
JOBS=${ATTNBENCH_JOBS:-$(nproc)}
# clang (installed for the fuzz targets) compiles sanitized code at -O0 in about half GCC's time;
# GCC where it is missing. ATTNBENCH_SANITIZE_CXX chooses another.
CXX_FOR_SANITIZERS=${ATTNBENCH_SANITIZE_CXX:-$(command -v clang++-14 || command -v clang++ || command -v c++)}

# Configures, builds and tests one sanitizer build: $1 its folder, $2 the -fsanitize= list.
sanitize() {
  echo "== sanitizers $2 in $1" >&2
  # Debug: assertions on, no optimisation to hide a bad access (and the fastest compile).
  cmake -S . -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_COMPILER="$CXX_FOR_SANITIZERS" \
    -DATTNBENCH_SANITIZE="$2" >&2 &&
    cmake --build "$1" -j "$JOBS" >&2 &&
    ctest --test-dir "$1" --output-on-failure -j "${ATTNBENCH_TEST_JOBS:-2}"
}

status=0
sanitize "$ASAN_DIR" address,undefined || status=1
sanitize "$TSAN_DIR" thread || status=1
exit "$status"
