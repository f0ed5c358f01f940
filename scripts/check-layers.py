#!/usr/bin/env python3
"""Checks that no source file includes a header from a layer above its own (issue 15, part 3).

The layers, lowest first: common, config, stats, report, monitor → core (the executor interface, the metric
record, device helpers) → model → techniques, parallel → runner → profile, cli. A lower layer never
includes a higher one, so a technique or the statistics can be built and tested without the
runner. Run from anywhere: `scripts/check-layers.py [--src DIR]`; exit 1 lists every violation.
Standard library only (CTest and .ci/run call it)."""
import argparse
import re
import sys
from pathlib import Path

# folder → folders its files must not include
FORBIDDEN = {
    "stats": ["report", "core", "model", "techniques", "parallel", "runner", "profile", "cli"],
    "core": ["model", "techniques", "parallel", "runner", "profile", "cli"],
    # Live metrics (registry, endpoint, /proc and NVML readers): beside report, below core; the
    # runner reaches it only through core/run_observer.hpp, wired up in cli/.
    "monitor": ["core", "model", "techniques", "parallel", "runner", "profile", "cli"],
    "model": ["techniques", "parallel", "runner", "profile", "cli"],
    "techniques": ["runner", "profile", "cli"],
    "parallel": ["runner", "profile", "cli"],
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^/"]+)/[^"]+"', re.MULTILINE)


def violations(src: Path):
    for folder, banned in FORBIDDEN.items():
        for path in sorted((src / folder).glob("*.[ch]pp")):
            for line_no, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                m = INCLUDE.match(line)
                if m and m.group(1) in banned:
                    yield f"{path.relative_to(src.parent)}:{line_no}: {folder}/ must not include {m.group(1)}/ ({line.strip()})"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--src", type=Path, default=Path(__file__).resolve().parent.parent / "src")
    args = parser.parse_args()
    if not args.src.is_dir():
        print(f"check-layers: {args.src} is not a directory", file=sys.stderr)
        return 2
    found = list(violations(args.src))
    for v in found:
        print(v, file=sys.stderr)
    if found:
        print(f"check-layers: {len(found)} include(s) from a higher layer", file=sys.stderr)
        return 1
    print("check-layers: no include from a higher layer")
    return 0


if __name__ == "__main__":
    sys.exit(main())
