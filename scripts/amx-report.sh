#!/usr/bin/env bash
# Everything attnbench measures that an AMX CPU (Sapphire, Emerald or Granite Rapids) changes, in
# one command, for the person who has one: the AMX kernels against their references, then each
# shipped config and script whose figures wait for that CPU (the seed table, precision and int8,
# amp against the bf16 cast, the attention kernels, the decoders: generate, the llama-bench grid,
# llama-1b's decode against the triad and its profile, the server, and the peers). Each step runs
# through scripts/record-result.sh into results/<step>-<cpu>, so every folder says its command,
# commit and machine; commit them as they are.
#
#   scripts/amx-report.sh [--dry-run] [--only STEP,…] [--skip STEP,…] [--suffix NAME] [--force]
#                         [--threads N] [--cpuinfo FILE] [--list]
#
# --dry-run prints the steps and their commands and runs nothing; --list prints the step names.
# --suffix names the CPU in the folders (default from /proc/cpuinfo: spr for family 6 model 143,
# emr for 207, gnr for 173, else amx-f6m<model>). A step whose folder exists is refused (nothing
# runs) unless --force, so no committed result is overwritten by accident. --threads (default:
# 2, as in the committed peer folders) goes to the two peer scripts; the configs run as shipped, as they did for the
# committed folders of the other CPUs, so the folders compare. --cpuinfo reads another
# /proc/cpuinfo, with --dry-run only (the tests inject machine descriptions with it).
#
# Exit status: 0 when every step ran (a step whose output check FAILed, exit 3, still ran: its
# folder says which variant and why); 1 when a step could not run or errored (its status is
# listed), or build/attnbench is missing or not built from this tree; 2 on bad usage or an
# existing folder; 3 when this CPU has no AMX: nothing is run.
set -uo pipefail
cd "$(dirname "$0")/.."

usage() { sed -n '10,11p' "$0" | sed 's/^# \{0,1\}//' >&2; }
dry_run=0 force=0 list=0 only="" skip="" suffix="" threads="" cpuinfo=/proc/cpuinfo
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) dry_run=1; shift ;;
    --force) force=1; shift ;;
    --list) list=1; shift ;;
    --only|--skip|--suffix|--threads|--cpuinfo)
      [ $# -ge 2 ] && [ -n "$2" ] || { echo "amx-report.sh: $1 needs a value" >&2; usage; exit 2; }
      case "$1" in
        --only) only=$2 ;; --skip) skip=$2 ;; --suffix) suffix=$2 ;; --threads) threads=$2 ;; --cpuinfo) cpuinfo=$2 ;;
      esac
      shift 2 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "amx-report.sh: unknown argument '$1'" >&2; usage; exit 2 ;;
  esac
done
[ -r "$cpuinfo" ] || { echo "amx-report.sh: cannot read $cpuinfo" >&2; exit 2; }
# Another machine's description may say what would run, never run it here under that CPU's name.
[ "$cpuinfo" = /proc/cpuinfo ] || [ "$dry_run" = 1 ] ||
  { echo "amx-report.sh: --cpuinfo describes another machine: it goes with --dry-run only" >&2; exit 2; }
[ -z "$threads" ] || [[ "$threads" =~ ^[1-9][0-9]*$ ]] ||
  { echo "amx-report.sh: --threads must be a positive integer, got '$threads'" >&2; exit 2; }
[ -z "$suffix" ] || [[ "$suffix" =~ ^[a-z0-9][a-z0-9-]*$ ]] ||
  { echo "amx-report.sh: --suffix must be lower-case letters, digits and '-', got '$suffix'" >&2; exit 2; }
threads=${threads:-2}

# The steps: name, the folder's stem, minutes on 2 cores of the Zen 4 and Emerald Rapids runs in
# results/ (a guide), and the command ({out} is the folder, {threads} --threads).
steps=(
  "kernels|cpu-amx-kernels|1|bash -c 'mkdir -p {out} && build/tests/attnbench_tests \"[kernels],*amx*,*AMX*\" -r junit -o {out}/tests.xml'"
  "seed-table|cpu-seed-table|6|build/attnbench run configs/seed-table-cpu.json --out {out} --force -q"
  "precision|cpu-precision|2|build/attnbench run configs/precision-cpu.json --out {out} --force -q"
  "int8|cpu-int8|2|build/attnbench run configs/int8-cpu.json --out {out} --force -q"
  "amp-vs-cast|cpu-profile-bf16-run|3|build/attnbench run configs/profile-bf16-cpu.json --out {out} --force -q"
  "attention|cpu-attention-kernels|3|build/attnbench attention --device cpu --impl naive,sdpa-math,sdpa-flash,cpu-flash --seq 128,256,512,1024,2048,4096 --dtype fp32,bf16 --causal false,true --out {out} --force -q"
  "generate|generate-cpu|8|build/attnbench run configs/generate-cpu.json --out {out} --force"
  "generate-grid|generate-grid-cpu|5|build/attnbench run configs/generate-grid-cpu.json --out {out} --force"
  "generate-1b|generate-1b-cpu|6|build/attnbench run configs/generate-1b-cpu.json --out {out} --force"
  "generate-1b-profile|generate-1b-profile|2|build/attnbench profile configs/generate-1b-profile-cpu.json --out {out} --force"
  "generate-server|generate-server-cpu|8|build/attnbench run configs/generate-server-cpu.json --out {out} --force"
  "generate-peer|generate-peer-cpu|10|scripts/generate-peer.sh --rounds 3 --threads {threads} --preset llama-160m --prompts 4 --length 64 --new-tokens 32 --passes 3 --out {out}"
  "peer-compare|cpu-peer-compare|35|scripts/peer-compare.sh --rounds 5 --threads {threads} --shapes 1x128,8x128,8x512,32x128 --out {out}"
)
names=()
for s in "${steps[@]}"; do names+=("${s%%|*}"); done
if [ "$list" = 1 ]; then printf '%s\n' "${names[@]}"; exit 0; fi
IFS=, read -ra only_list <<<"$only"
IFS=, read -ra skip_list <<<"$skip"
for sel in "${only_list[@]}" "${skip_list[@]}"; do
  printf '%s\n' "${names[@]}" | grep -Fqx -- "$sel" ||
    { echo "amx-report.sh: no step '$sel' (steps: ${names[*]})" >&2; exit 2; }
done

# The CPU, from the first processor's entry.
entry=$(awk '/^$/ {exit} {print}' "$cpuinfo")
field() { printf '%s\n' "$entry" | sed -n "s/^$1[[:space:]]*: *//p" | head -1; }
model_name=$(field "model name")
family=$(field "cpu family")
model=$(field "model")
flags=" $(field flags) "
if [[ "$flags" != *" amx_bf16 "* || "$flags" != *" amx_tile "* ]]; then
  echo "amx-report.sh: this CPU has no AMX (${model_name:-unknown}, family ${family:-?} model ${model:-?}: amx_tile and amx_bf16 are not among its flags); nothing was run. Its figures wait for a CPU that has it." >&2
  exit 3
fi
if [ -z "$suffix" ]; then
  case "$family:$model" in
    6:143) suffix=spr ;; 6:207) suffix=emr ;; 6:173) suffix=gnr ;; *) suffix="amx-f${family}m${model}" ;;
  esac
fi

chosen=()
for s in "${steps[@]}"; do
  n=${s%%|*}
  if [ -n "$only" ] && [[ ",$only," != *",$n,"* ]]; then continue; fi
  if [[ ",$skip," == *",$n,"* ]]; then continue; fi
  chosen+=("$s")
done
[ ${#chosen[@]} -gt 0 ] || { echo "amx-report.sh: --only and --skip leave no step" >&2; exit 2; }

existing=() total=0
for s in "${chosen[@]}"; do
  IFS='|' read -r n stem minutes _ <<<"$s"
  [ -e "results/$stem-$suffix" ] && existing+=("results/$stem-$suffix")
  total=$((total + minutes))
done
if [ ${#existing[@]} -gt 0 ] && [ "$force" = 0 ]; then
  echo "amx-report.sh: these folders exist and would be overwritten: ${existing[*]}; pass --force, or --skip their steps. Nothing was run." >&2
  exit 2
fi

amx=$(printf '%s' "$flags" | grep -o -w -E 'amx_bf16|amx_int8|amx_fp16|amx_tile' | sort -u | tr '\n' ' ')
echo "amx-report.sh: ${model_name:-unknown} (family $family model $model; ${amx% }), folders results/<step>-$suffix, ${#chosen[@]} steps, about $total min on 2 cores"
if [ "$dry_run" = 0 ] && [ ! -x build/attnbench ]; then
  echo "amx-report.sh: build/attnbench is not built (scripts/build.sh); nothing was run" >&2
  exit 1
fi

if [ "$dry_run" = 0 ]; then
  # record-result.sh refuses a stale build at every step; say it once, before anything runs.
  scripts/record-result.sh --check-binary build/attnbench || { echo "amx-report.sh: nothing was run" >&2; exit 1; }
fi
summary=() status=0
for s in "${chosen[@]}"; do
  IFS='|' read -r n stem minutes template <<<"$s"
  out="results/$stem-$suffix"
  cmd=${template//\{out\}/$out}
  cmd=${cmd//\{threads\}/$threads}
  if [ "$dry_run" = 1 ]; then
    echo "$n ($out, ~$minutes min): scripts/record-result.sh $stem-$suffix $cmd"
    continue
  fi
  echo "== $n → $out (about $minutes min)"
  start=$(date +%s)
  eval "scripts/record-result.sh $(printf '%q' "$stem-$suffix") $cmd"
  rc=$?
  took=$(($(date +%s) - start))
  # Exit 3 is attnbench's FAIL verdict only where the step wrote its results; the peer scripts
  # exit 3 when their environment is absent, and Catch2's status counts failed assertions.
  if [ "$rc" = 0 ]; then verdict="ran, every check PASSed"
  elif [ "$n" != kernels ] && [ "$rc" = 3 ] && { [ -f "$out/results.json" ] || [ -f "$out/peers.json" ]; }; then
    verdict="ran, an output check FAILed (see $out/report.md)"
  else verdict="did not complete or failed: exit $rc"; status=1
  fi
  summary+=("$n: $verdict; $took s")
done
if [ "$dry_run" = 0 ]; then
  echo "== amx-report.sh: ${model_name:-unknown}, commit $(git rev-parse --short=12 HEAD)"
  printf '  %s\n' "${summary[@]}"
fi
exit $status
