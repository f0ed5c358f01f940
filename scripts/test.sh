#!/usr/bin/env bash
# Runs the whole test suite through CTest (the build must exist: scripts/build.sh).
# Extra arguments go to ctest, e.g. `scripts/test.sh -R config`.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${ATTNBENCH_BUILD_DIR:-build}
exec ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${ATTNBENCH_TEST_JOBS:-2}" "$@"
