#!/usr/bin/env bash
# Renders report.html for a results folder (from its results.json) and a screenshot of it in
# headless Chromium, e.g. after rerunning the quickstart:
#
#   scripts/html-screenshot.sh results/cpu-quickstart            → report.html and report.png there
#   scripts/html-screenshot.sh DIR OUT.png                        → the screenshot elsewhere
#
# Environment: ATTNBENCH_BIN (default build/attnbench), ATTNBENCH_SCREENSHOT_SIZE (default 1200,1800).
set -euo pipefail
cd "$(dirname "$0")/.."
BIN=${ATTNBENCH_BIN:-build/attnbench}
dir=${1:?usage: scripts/html-screenshot.sh RESULTS_DIR [OUT.png]}
png=${2:-$dir/report.png}
browser=$(command -v chromium || command -v chromium-browser || true)
if [ -z "$browser" ]; then
  echo "html-screenshot.sh: chromium not found (scripts/setup.sh installs it)" >&2
  exit 2
fi
"$BIN" report --formats html "$dir" --force
profile=$(mktemp -d "${TMPDIR:-/tmp}/attnbench-chromium.XXXXXX")
trap 'rm -rf "$profile"' EXIT
"$browser" --headless --no-sandbox --disable-gpu --no-first-run --hide-scrollbars --user-data-dir="$profile" \
  --virtual-time-budget=5000 --window-size="${ATTNBENCH_SCREENSHOT_SIZE:-1200,1800}" \
  --screenshot="$(realpath -m "$png")" "file://$(realpath "$dir/report.html")" 2> /dev/null
echo "html-screenshot.sh: wrote $dir/report.html and $png" >&2
