#!/usr/bin/env bash
# CI self-check of how the suite reports skips (the build must exist: scripts/build.sh). Runs the
# hidden [.selfcheck] tests (tests/support/test_skip_test.cpp, CTest label selfcheck) and exits 0
# only when CTest reported the one that fails while printing "SKIPPED:" as failed, and the one
# that calls testing::skip_test as skipped with its reason. A suite that skipped on text in the
# output, or lost the skip return code, fails here.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${ATTNBENCH_BUILD_DIR:-build}
JUNIT="$(cd "$BUILD_DIR" && pwd)/Testing/selfcheck-junit.xml"
rm -f "$JUNIT"
LOG="$(cd "$BUILD_DIR" && pwd)/Testing/selfcheck.log"
# ctest exits non-zero here by design (one test fails on purpose); what it reported is read from
# its JUnit file. Its own output goes to a log, shown only when the check fails, so that the
# suite's closing line stays the last test summary CI prints.
ctest --test-dir "$BUILD_DIR" -L selfcheck --output-junit "$JUNIT" >"$LOG" 2>&1 || true
if scripts/ctest-junit.py expect "$JUNIT" \
    --failed "selfcheck: a failing test that prints SKIPPED is reported as failed" \
    --skipped "selfcheck: a test calling skip_test is reported as skipped with its reason"; then
  echo "ci-selfcheck: OK (a failure that prints SKIPPED: is a failure; a skip is a skip, with its reason)" >&2
else
  cat "$LOG" >&2
  echo "ci-selfcheck: FAILED: CTest does not report failures and skips as the suite relies on" >&2
  exit 1
fi
