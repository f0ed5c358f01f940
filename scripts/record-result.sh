#!/usr/bin/env bash
# Runs one attnbench command whose outputs go to results/NAME and writes results/NAME/COMMAND:
# the exact command, the commit, the machine (CPU model, cores, memory, the vector and matrix
# features that change what reduced precision costs, GPUs), the date, the wall time and the exit
# status. Every committed result is made this way, so nothing in results/ is typed by hand.
# When the tree has uncommitted changes outside results/ (modified tracked files, or untracked files
# git does not ignore), it also writes results/NAME/uncommitted.diff: `git diff --binary HEAD` as it
# stood when the command started, preceded by the list of untracked files; COMMAND names its sha256
# and the changed files, so such a result can still be rebuilt. A clean tree removes a stale one.
#
#   scripts/record-result.sh cpu-quickstart build/attnbench run configs/quickstart.json --out results/cpu-quickstart --force
#
# The command must write into results/NAME itself (pass --out). Exits with the command's status,
# or 2 before running anything when the attnbench binary it runs was not built from this tree.
# `record-result.sh --check-binary BINARY` makes only that check (exit 0 or 2).
set -uo pipefail
cd "$(dirname "$0")/.."
# Exits 2, naming both, when binary $1 was not built from this tree.
check_binary() {
  local built expected newer
  built=$("$1" --version 2>/dev/null | sed -n 's/.*(\([0-9a-f]*\(-dirty\)\{0,1\}\)).*/\1/p' | head -1)
  expected=$(git rev-parse --short=12 HEAD)
  [ -z "$(git status --porcelain --untracked-files=no -- . ':(exclude)results')" ] || expected="$expected-dirty"
  newer=$(find src kernels cmake CMakeLists.txt tests/hooks -type f -newer "$1" 2>/dev/null | head -3 | paste -sd, -)
  if [ -z "$built" ] || [ "$built" != "$expected" ] || [ -n "$newer" ]; then
    echo "record-result.sh: $1 is not built from this tree: it says ${built:-no commit}, the tree is $expected${newer:+ (edited since the build: $newer)}; rebuild it (cmake --build build) and run again. Nothing was run or written." >&2
    exit 2
  fi
}
if [ "${1:-}" = --check-binary ]; then  # only the check, for scripts that run many recorded steps
  [ $# -eq 2 ] || { echo "usage: $0 --check-binary BINARY" >&2; exit 2; }
  check_binary "$2"
  exit 0
fi
[ $# -ge 2 ] || { echo "usage: $0 NAME COMMAND [ARGS...]" >&2; exit 2; }
name=$1
shift
dir=results/$name

commit=$(git rev-parse --short=12 HEAD)
dirty=""
changes=""
# The state at the start, kept until the command (which may clear results/NAME with --force) is done.
patch=$(mktemp)
trap 'rm -f "$patch"' EXIT
modified=$(git diff --name-only HEAD -- . ':!results' | paste -sd, - | sed 's/,/, /g')
untracked=$(git ls-files --others --exclude-standard -- . ':!results' | paste -sd, - | sed 's/,/, /g')
if [ -n "$modified$untracked" ]; then
  {
    echo "# Uncommitted changes outside results/ when scripts/record-result.sh ran $name, against commit $(git rev-parse HEAD)."
    echo "# Below: \`git diff --binary HEAD\` (git apply reads it). Untracked files, whose contents it does not hold:"
    git ls-files --others --exclude-standard -- . ':!results' | sed 's/^/#   /'
    [ -n "$untracked" ] || echo "#   (none)"
    git diff --binary HEAD -- . ':!results'
  } >"$patch"
  sha=$(sha256sum "$patch" | cut -d' ' -f1)
  dirty=" (with uncommitted changes outside results/: uncommitted.diff, sha256 $sha)"
  changes="# Uncommitted changes (in uncommitted.diff): modified ${modified:-none}; untracked ${untracked:-none}."
fi
# The binary must be the tree's: a build from another commit (or from an edit since undone or
# committed) would be recorded under a commit whose code it is not. The binary is the first
# attnbench or attnbench_testhooks executable among the words (so `env VAR=… build/attnbench`,
# `flock LOCK build/attnbench`, `perf record … build/attnbench` count), else a script's --bin or
# ATTNBENCH_BIN (as a word or in the environment), else build/attnbench when a script or a
# `bash -c` string runs it. Its --version names the commit it was built at
# (cmake/build_info.cmake); a source file newer than it means it is stale whatever git says.
binary="" script_bin="" runs_default="" prev=""
for arg in "$@"; do
  if [ "$prev" = --bin ]; then script_bin=$arg
  elif [[ "$arg" == ATTNBENCH_BIN=* ]]; then script_bin=${arg#ATTNBENCH_BIN=}
  elif [ -z "$binary" ] && [ -f "$arg" ] && [ -x "$arg" ] && [[ "$(basename "$arg")" =~ ^attnbench(_testhooks)?$ ]]; then binary=$arg
  elif [ -f "$arg" ] && grep -q 'build/attnbench' "$arg" 2>/dev/null; then runs_default=1
  elif [ ! -f "$arg" ] && [[ "$arg" == *build/attnbench* ]]; then runs_default=1
  fi
  prev=$arg
done
if [ -z "$binary" ] && [ -n "$runs_default" ]; then
  binary=${script_bin:-${ATTNBENCH_BIN:-build/attnbench}}
  [ -x "$binary" ] || binary=""  # the script will say it is missing
fi
[ -z "$binary" ] || check_binary "$binary"
cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
features=$(grep -o -w -E 'avx2|fma|avx512f|avx512_bf16|avx512_fp16|avx512_vnni|amx_bf16|amx_fp16|amx_int8|amx_tile' /proc/cpuinfo | sort -u | tr '\n' ' ')
memory=$(free -g | awk '/^Mem:/ {print $2 " GiB"}')
gpus=$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | paste -sd, - || true)
torch=$(/opt/attnbench/venv/bin/python -c 'import torch; print(torch.__version__)' 2>/dev/null || echo unknown)
date=$(date -u +%Y-%m-%dT%H:%M:%SZ)

# The 1-minute load average before and after, and the busiest other processes at the start: on a
# shared machine a figure made beside a compile is not what it would be alone.
load_before=$(cut -d' ' -f1 /proc/loadavg)
busy=$(top -b -n 2 -d 0.5 2>/dev/null | awk '/^top -/ {n++} n == 2 && $1 ~ /^[0-9]+$/ && $9 + 0 >= 20 {printf "%s%s %s%%", sep, $12, $9; sep=", "}' | head -c 200)
start=$(date +%s)
"$@"
status=$?
wall=$(($(date +%s) - start))
load_after=$(cut -d' ' -f1 /proc/loadavg)

mkdir -p "$dir"
if [ -n "$dirty" ]; then cp "$patch" "$dir/uncommitted.diff"; else rm -f "$dir/uncommitted.diff"; fi
{
  echo "# Made by this command, from the repository root, at commit $commit$dirty:"
  printf '%q ' "$@" | sed 's/ $//'
  echo
  echo "# Machine: $cpu, $(nproc) cores, $memory; CPU features: ${features:-none detected}; GPU: ${gpus:-none}."
  echo "# Debian $(cut -d. -f1 /etc/debian_version 2>/dev/null || echo '?'), torch $torch (the LibTorch wheel the build used)."
  echo "# Date: $date; wall time $wall s; exit status $status."
  echo "# Load average (1 min) before $load_before, after $load_after; processes over 20% CPU at the start: ${busy:-none}."
  [ -z "$changes" ] || echo "$changes"
} >"$dir/COMMAND"
echo "[record-result] wrote $dir/COMMAND (exit status $status, $wall s)" >&2
exit $status
