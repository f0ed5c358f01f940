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
#   registry updated from several threads while it renders, the metrics endpoint serving scrapes
#   from its own thread while the run updates the registry, the server scenario's load thread
#   handing arrivals to the serving thread (workload/load_generator.hpp), and the data-parallel
#   workers' and pipeline stages' hand-offs (common/thread_sync.hpp), driven by test threads.
# What it does not cover: what LibTorch does (the model, the runner, the techniques, the work
# inside the workers and stages, the CLI): LibTorch is not built with the sanitizers, so ASan
# cannot see its accesses and TSan cannot see the synchronisation inside it or its OpenMP runtime. A TSan build of the whole project (about
# 220 translation units against LibTorch) was not tried: it does not fit CI's time on 2 cores.
# The config tests that expect techniques/cast_precision.cpp's registered precisions run only in
# the full suite.
#
# Cost, measured on the 2-core Zen 3 CI machine kind with clang 14, no ccache hits: the ASan+UBSan
# build 4 minutes (about 100 compile steps), its 213 tests 12 s; the TSan build under a minute
# (11 library sources, 4 test files), its 14 tests 1 s. Rebuilds reuse build-asan/ and build-tsan/.
# The fuzz targets, built by the ordinary build, run under ASan+UBSan in scripts/test.sh (label fuzz).
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
