#!/usr/bin/env python3
"""scripts/check-readme-figures.py on the fixture README (fixtures/readme-figures/): it passes as
committed, and fails naming the figure and the value to write when one number is wrong.
Standard library only; CTest runs it (tests/CMakeLists.txt)."""
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent
SCRIPT = HERE.parent.parent / "scripts" / "check-readme-figures.py"
FIXTURE = HERE / "fixtures" / "readme-figures"


class check_readme_figures(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="readme-figures-"))
        shutil.copytree(FIXTURE, self.dir, dirs_exist_ok=True)
        self.readme = self.dir / "README.md"

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_script(self, *args):
        return subprocess.run([sys.executable, str(SCRIPT), "--readme", str(self.readme), *args],
                              capture_output=True, text=True)

    def replace(self, old, new):
        text = self.readme.read_text(encoding="utf-8")
        self.assertEqual(text.count(old), 1, old)
        self.readme.write_text(text.replace(old, new), encoding="utf-8")

    def line_of(self, text):
        return self.readme.read_text(encoding="utf-8").split("\n").index(text) + 1

    def test_right_figures_pass(self):
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("15 figures in README.md match results/", r.stdout)

    def test_a_wrong_table_figure_fails_naming_it_and_the_value_to_write(self):
        self.replace("| amp | 8.48 | 1.68× | 1.66–1.72 | 26.4% |", "| amp | 8.48 | 1.70× | 1.66–1.72 | 26.4% |")
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        line = self.line_of("  | amp | 8.48 | 1.70× | 1.66–1.72 | 26.4% |")
        self.assertIn(f"README.md:{line}: results/demo/results.json: name=amp: speedup.median: "
                      "README says 1.70, results.json says 1.68 (1.67894)", r.stderr)
        self.assertIn("1 problems in 15 checked figures", r.stderr)

    def test_a_peer_comparison_figure_is_read_from_its_table_rows(self):
        # peers.json (scripts/peer-compare.sh) has a "table" of shapes, not "variants".
        self.replace("| 1 | 128 | 34.8 | 1.22 |", "| 1 | 128 | 34.8 | 1.25 |")
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        self.assertIn("results/peers/peers.json: batch=1, length=128: ratio_onnxruntime: "
                      "README says 1.25, results.json says 1.22 (1.2171)", r.stderr)

    def test_precision_is_the_printed_one(self):
        # 26.4% would be wrong written as 26.3%; 1.51 (1.514966) wrong as 1.52; 2.5e-2 wrong as 2.4e-2.
        for old, new, says in (("26.4% |", "26.3% |", "README says 26.3, results.json says 26.4"),
                               ("| 64 | bf16 | 1.51× |", "| 64 | bf16 | 1.52× |", "README says 1.52, results.json says 1.51"),
                               ("is 2.5e-2<", "is 2.4e-2<", "README says 2.4e-2, results.json says 2.5e-2")):
            with self.subTest(new=new):
                self.tearDown()
                self.setUp()
                self.replace(old, new)
                r = self.run_script()
                self.assertEqual(r.returncode, 1)
                self.assertIn(says, r.stderr)

    def test_a_wrong_prose_figure_fails(self):
        self.replace("peak 249 MiB<", "peak 250 MiB<")
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        self.assertIn("name=amp: train.activation_peak_bytes:MiB: README says 250, results.json says 249", r.stderr)

    def test_fix_writes_the_json_values_and_the_check_then_passes(self):
        self.replace("| 1 | bf16 | 2.78× |", "| 1 | bf16 | 3.10× |")
        self.replace("| baseline | 5.05 |", "| baseline | 4.00 |")
        r = self.run_script("--fix")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("wrote 2 figures", r.stderr)
        text = self.readme.read_text(encoding="utf-8")
        self.assertIn("| 1 | bf16 | 2.78× |", text)
        self.assertIn("| baseline | 5.05 |", text)
        self.assertEqual(text, (FIXTURE / "README.md").read_text(encoding="utf-8"))
        self.assertEqual(self.run_script().returncode, 0)

    def test_a_figure_where_the_json_has_none_fails(self):
        self.replace("| offload | SKIPPED | — | — | — |", "| offload | 3.00 | — | — | — |")
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        self.assertIn("name=offload: throughput.median: README says 3.00, the JSON has null", r.stderr)

    def test_a_row_the_json_lacks_and_a_cell_of_another_form_fail(self):
        self.replace("| amp | 8.48 |", "| amp-fp16 | 8.48 |")
        self.replace("| 64 | bf16 | 1.51× |", "| 64 | bf16 | about 1.5 |")
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        self.assertIn("results/demo/results.json: no rows with name=amp-fp16", r.stderr)
        self.assertIn("cell \"about 1.5\" does not have the template's form \"{speedup.median}×\"", r.stderr)

    def test_an_unmarked_figure_in_a_block_naming_results_fails(self):
        self.replace("- `results/sweep/` — a sweep:", "- `results/sweep/` — a sweep, 3.1× at batch 1:")
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        self.assertIn("unchecked figure \"3.1×\" in a block that names results/", r.stderr)


if __name__ == "__main__":
    unittest.main(verbosity=2)
