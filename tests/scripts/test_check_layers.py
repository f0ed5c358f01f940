#!/usr/bin/env python3
"""scripts/check-layers.py: the real tree passes, and a file that includes a higher layer fails
the check with its path and line. Standard library only; CTest runs it (tests/CMakeLists.txt)."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "check-layers.py"


def run(src):
    return subprocess.run([sys.executable, str(SCRIPT), "--src", str(src)], capture_output=True, text=True)


class check_layers(unittest.TestCase):
    def test_the_tree_passes(self):
        result = run(ROOT / "src")
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_an_upward_include_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = Path(tmp) / "src"
            for folder, text in {"techniques": '#include "core/executor.hpp"\n#include "runner/runner.hpp"\n',
                                 "stats": '#include "stats/summary.hpp"\n'}.items():
                (src / folder).mkdir(parents=True)
                (src / folder / "x.cpp").write_text(text)
            result = run(src)
            self.assertEqual(result.returncode, 1)
            self.assertIn("techniques/x.cpp:2: techniques/ must not include runner/", result.stderr)
            self.assertNotIn("stats/x.cpp", result.stderr)


if __name__ == "__main__":
    unittest.main()
