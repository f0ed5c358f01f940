#!/usr/bin/env python3
"""Reads the JUnit file CTest writes (ctest --output-junit FILE); standard library only.

  ctest-junit.py skips FILE
      Prints each skipped test with its reason (the "SKIPPED: ..." lines it printed, see
      tests/test_support.hpp's skip_test): CTest's own summary names skipped tests, not why.
  ctest-junit.py expect FILE [--failed NAME]... [--skipped NAME]...
      Exits 0 when CTest reported every --failed test as failed and every --skipped test as
      skipped by its return code (SKIP_RETURN_CODE, not "Not Run" for another reason) with a
      "SKIPPED:" reason in its output; otherwise names each difference and exits 1.
"""
import argparse
import sys
import xml.etree.ElementTree as ET


def verdict(case):
    """passed, failed, skipped (by SKIP_RETURN_CODE) or "not run: <CTest's reason>"."""
    status = case.get("status")
    if status == "run":
        return "passed"
    if status == "fail":
        return "failed"
    skipped = case.find("skipped")
    message = skipped.get("message", "") if skipped is not None else ""
    if message.startswith("SKIP_RETURN_CODE="):
        return "skipped"
    return f"not run: {message or status}"


def reasons(case):
    out = case.findtext("system-out") or ""
    return [line.strip() for line in out.splitlines() if line.strip().startswith("SKIPPED:")]


def load(path):
    try:
        return {case.get("name"): case for case in ET.parse(path).getroot().iter("testcase")}
    except (OSError, ET.ParseError) as e:
        sys.exit(f"ctest-junit.py: cannot read {path}: {e}")


def skips(args):
    for name, case in load(args.file).items():
        if verdict(case) == "skipped":
            why = "; ".join(r[len("SKIPPED:"):].strip() for r in reasons(case)) or "(no reason printed)"
            print(f"skipped: {name}: {why}")
    return 0


def expect(args):
    cases = load(args.file)
    problems = []
    for want, names in (("failed", args.failed), ("skipped", args.skipped)):
        for name in names:
            if name not in cases:
                problems.append(f"{name}: not in {args.file} (did CTest run it?)")
                continue
            got = verdict(cases[name])
            if got != want:
                problems.append(f"{name}: CTest reported {got}, expected {want}")
            elif want == "skipped" and not reasons(cases[name]):
                problems.append(f"{name}: skipped without a \"SKIPPED: <reason>\" line in its output")
    for p in problems:
        print(f"ctest-junit.py: {p}", file=sys.stderr)
    return 1 if problems else 0


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    p = sub.add_parser("skips", help="print each skipped test and its reason")
    p.add_argument("file")
    p.set_defaults(run=skips)
    p = sub.add_parser("expect", help="check how CTest reported the named tests")
    p.add_argument("file")
    p.add_argument("--failed", action="append", default=[], metavar="NAME")
    p.add_argument("--skipped", action="append", default=[], metavar="NAME")
    p.set_defaults(run=expect)
    args = parser.parse_args()
    return args.run(args)


if __name__ == "__main__":
    sys.exit(main())
