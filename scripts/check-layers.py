#!/usr/bin/env python3
"""Checks that the source tree's includes run one way: down the layers (issue 15, part 3; issue 38,
part 3).

Every folder of src/ and kernels/ has a layer; a file may include headers of its own folder and of
folders on lower layers only. Two folders on one layer may not include each other (nor one the
other: the rule is strict), so no cycle can form, and a folder without a layer is an error, so a
new folder must be placed before it builds. The layers, lowest first:

  0  common                      what everything uses: errors, CPU features, hashing, UTF-8, time
  1  config, stats               the typed config and its reader; the statistics (torch-free)
  2  workload, report, monitor   datasets and batching; the result record and its writers; live metrics
  3  core, check                 the executor interface, devices, worker threads; the output check
  4  kernels                     our attention kernels and their catalog
  5  model                       the encoder, attention cores, weights
  6  techniques                  one strategy per file, and the registry
  7  parallel                    data parallel threads and ranks (shards run the plain executor)
  8  runner                      the measurement loop and its scenarios
  9  profile                     the profiler (drives the runner)
 10  cli                         one file pair per subcommand
 11  main                        src/main.cpp (and src/pch.hpp)

Run from anywhere: `scripts/check-layers.py [--src DIR] [--kernels DIR]`; exit 1 lists every
violation, exit 2 a bad argument. Standard library only (CTest runs it through
tests/scripts/test_check_layers.py)."""
import argparse
import re
import sys
from collections import defaultdict
from pathlib import Path

LAYERS = {
    "common": 0,
    "config": 1, "stats": 1,
    "workload": 2, "report": 2, "monitor": 2,
    "core": 3, "check": 3,
    "kernels": 4,
    "model": 5,
    "techniques": 6,
    "parallel": 7,
    "runner": 8,
    "profile": 9,
    "cli": 10,
    "main": 11,
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^/"]+)/[^"]+"')
SOURCES = ("*.cpp", "*.hpp", "*.cu", "*.cuh", "*.h")


def files_by_folder(src: Path, kernels: Path):
    """(folder, path) for every source file: src/<folder>/..., src/main.cpp, kernels/..."""
    for pattern in SOURCES:
        for path in sorted(src.rglob(pattern)):
            rel = path.relative_to(src)
            if len(rel.parts) == 1:
                yield "main", path, rel  # main.cpp and the precompiled header (external headers only)
            else:
                yield rel.parts[0], path, rel
        if kernels and kernels.is_dir():
            for path in sorted(kernels.rglob(pattern)):
                yield "kernels", path, Path("kernels") / path.relative_to(kernels)


def violations(src: Path, kernels: Path = None):
    edges = defaultdict(set)
    unplaced = set()
    for folder, path, rel in files_by_folder(src, kernels):
        shown = rel if str(rel).startswith("kernels") else Path(src.name) / rel
        if folder not in LAYERS:
            if folder not in unplaced:
                unplaced.add(folder)
                yield f"{shown}: folder {folder or rel.name}/ has no layer in scripts/check-layers.py (LAYERS)"
            continue
        for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            target = m.group(1)
            if target == folder or target not in LAYERS:
                continue  # its own folder, or not a project header ("fmt/format.h", "catch2/...")
            edges[folder].add(target)
            if LAYERS[target] > LAYERS[folder]:
                yield (f"{shown}:{line_no}: {folder}/ (layer {LAYERS[folder]}) must not include {target}/ "
                       f"(layer {LAYERS[target]}, above it) ({line.strip()})")
            elif LAYERS[target] == LAYERS[folder]:
                yield (f"{shown}:{line_no}: {folder}/ must not include {target}/ (both on layer "
                       f"{LAYERS[folder]}: one layer's folders stay independent) ({line.strip()})")
    # With the strict rule above no cycle can pass; this names one should LAYERS ever allow it.
    for cycle in cycles(edges):
        yield "include cycle: " + " -> ".join(cycle)


def cycles(edges):
    seen, stack, found = set(), [], []

    def visit(node):
        if node in stack:
            found.append(stack[stack.index(node):] + [node])
            return
        if node in seen:
            return
        seen.add(node)
        stack.append(node)
        for nxt in sorted(edges.get(node, ())):
            visit(nxt)
        stack.pop()

    for node in sorted(edges):
        visit(node)
    return found


def main():
    root = Path(__file__).resolve().parent.parent
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=root / "src")
    parser.add_argument("--kernels", type=Path, default=None,
                        help="the kernels/ folder (default: beside --src)")
    args = parser.parse_args()
    if not args.src.is_dir():
        print(f"check-layers: {args.src} is not a directory", file=sys.stderr)
        return 2
    kernels = args.kernels or args.src.parent / "kernels"
    found = list(violations(args.src, kernels))
    for v in found:
        print(v, file=sys.stderr)
    if found:
        print(f"check-layers: {len(found)} problem(s)", file=sys.stderr)
        return 1
    print("check-layers: every include goes down a layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
