#!/usr/bin/env python3
"""scripts/check-layers.py: the real tree passes; an upward include, an include between two folders
of one layer, a folder without a layer and an upward include from kernels/ each fail the check with
the path and line. Standard library only; CTest runs it (tests/CMakeLists.txt)."""
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "check-layers.py"


def run(src, kernels=None):
    args = [sys.executable, str(SCRIPT), "--src", str(src)]
    if kernels:
        args += ["--kernels", str(kernels)]
    return subprocess.run(args, capture_output=True, text=True)


def tree(tmp, files):
    for rel, text in files.items():
        path = Path(tmp) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return Path(tmp) / "src"


class check_layers(unittest.TestCase):
    def test_the_tree_passes(self):
        result = run(ROOT / "src", ROOT / "kernels")
        self.assertEqual(result.returncode, 0, result.stderr)

    def test_an_upward_include_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = tree(tmp, {"src/techniques/x.cpp": '#include "core/executor.hpp"\n#include "runner/runner.hpp"\n',
                             "src/stats/x.cpp": '#include "stats/summary.hpp"\n#include <fmt/format.h>\n'})
            result = run(src)
            self.assertEqual(result.returncode, 1)
            self.assertIn("src/techniques/x.cpp:2: techniques/ (layer 6) must not include runner/", result.stderr)
            self.assertNotIn("stats/x.cpp", result.stderr)
            self.assertNotIn("x.cpp:1", result.stderr)

    def test_one_layer_s_folders_stay_independent(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = tree(tmp, {"src/report/x.hpp": '#include "workload/batch.hpp"\n',
                             "src/workload/y.hpp": '#include "report/x.hpp"\n'})
            result = run(src)
            self.assertEqual(result.returncode, 1)
            self.assertIn("src/report/x.hpp:1: report/ must not include workload/ (both on layer 2", result.stderr)
            self.assertIn("src/workload/y.hpp:1: workload/ must not include report/", result.stderr)

    def test_a_folder_without_a_layer_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = tree(tmp, {"src/newthing/x.cpp": '#include "common/error.hpp"\n'})
            result = run(src)
            self.assertEqual(result.returncode, 1)
            self.assertIn("folder newthing/ has no layer", result.stderr)

    def test_kernels_may_not_include_the_model(self):
        with tempfile.TemporaryDirectory() as tmp:
            src = tree(tmp, {"src/core/x.hpp": "\n", "kernels/cpu/k.hpp": '#include "core/x.hpp"\n#include "model/encoder.hpp"\n'})
            result = run(src, Path(tmp) / "kernels")
            self.assertEqual(result.returncode, 1)
            self.assertIn("kernels/cpu/k.hpp:2: kernels/ (layer 4) must not include model/", result.stderr)
            self.assertNotIn("k.hpp:1", result.stderr)


if __name__ == "__main__":
    unittest.main()
