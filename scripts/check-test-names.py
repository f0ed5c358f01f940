#!/usr/bin/env python3
"""Refuses Catch2 test names that CTest cannot run: catch_discover_tests splits a name at ";" (a CMake
list separator), so the registered spec matches no test case and, without --warn NoTests, passes
having run nothing (22 tests did, until issue 38's review found them). Scans every TEST_CASE in
tests/, its name's string literals joined. Standard library only; exit 1 lists each offender."""
import re
import sys
from pathlib import Path

NAME = re.compile(r'TEST_CASE\(\s*((?:"(?:[^"\\]|\\.)*"\s*)+)', re.S)
LITERAL = re.compile(r'"((?:[^"\\]|\\.)*)"')


def offenders(tests: Path):
    for path in sorted(tests.rglob("*.cpp")):
        text = path.read_text(encoding="utf-8")
        for m in NAME.finditer(text):
            name = "".join(LITERAL.findall(m.group(1)))
            if ";" in name:
                line = text.count("\n", 0, m.start()) + 1
                yield f"{path}:{line}: test name has a ';', which CTest splits: {name}"


def main():
    tests = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent / "tests"
    found = list(offenders(tests))
    for f in found:
        print(f, file=sys.stderr)
    if found:
        return 1
    print(f"check-test-names: no test name CTest would split under {tests}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
