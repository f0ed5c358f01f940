#!/usr/bin/env bash
# Runs the whole test suite through CTest (the build must exist: scripts/build.sh).
# Extra arguments go to ctest, e.g. `scripts/test.sh -R config`.
# The CI self-check's tests (label selfcheck, one fails on purpose) are left out: they run in
# scripts/ci-selfcheck.sh. After the run it prints each skipped test with the reason it gave,
# which CTest's own summary leaves out.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${ATTNBENCH_BUILD_DIR:-build}
JUNIT="$(cd "$BUILD_DIR" && pwd)/Testing/test-junit.xml"
rm -f "$JUNIT"
status=0
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "${ATTNBENCH_TEST_JOBS:-2}" -LE selfcheck \
  --output-junit "$JUNIT" "$@" || status=$?
if [ -f "$JUNIT" ]; then
  scripts/ctest-junit.py skips "$JUNIT"
fi
exit "$status"
