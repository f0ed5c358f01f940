#!/usr/bin/env python3
"""scripts/check-readme-figures.py on the fixture README (fixtures/readme-figures/): it passes as
committed, and fails naming the figure (and the value to write) when one figure of any kind is
wrong: a table cell, a prose figure, seconds, a round count, a number word, a CPU label, a status,
a missing table row, or a number no marker covers; and the same on a page of docs/ (docs/demo.md),
whose messages name that page.
Standard library only; CTest runs it (tests/CMakeLists.txt)."""
import json
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
        self.page = self.dir / "docs" / "demo.md"

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_script(self, *args):
        return subprocess.run([sys.executable, str(SCRIPT), "--readme", str(self.readme), *args],
                              capture_output=True, text=True)

    def replace(self, old, new, page=None):
        page = page or self.readme
        text = page.read_text(encoding="utf-8")
        self.assertEqual(text.count(old), 1, old)
        page.write_text(text.replace(old, new), encoding="utf-8")

    def line_of(self, text, page=None):
        return (page or self.readme).read_text(encoding="utf-8").split("\n").index(text) + 1

    def test_right_figures_pass(self):
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn("35 figures in README.md and docs/*.md (README.md 31, docs/demo.md 4) match their files",
                      r.stdout)

    def test_a_wrong_table_figure_fails_naming_it_and_the_value_to_write(self):
        self.replace("| amp | 8.48 | 1.68× | 1.66–1.72 | 26.4% |", "| amp | 8.48 | 1.70× | 1.66–1.72 | 26.4% |")
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        line = self.line_of("  | amp | 8.48 | 1.70× | 1.66–1.72 | 26.4% |")
        self.assertIn(f"README.md:{line}: results/demo/results.json: name=amp: speedup.median: "
                      "README says 1.70, the file says 1.68 (1.67894)", r.stderr)
        self.assertIn("1 problems in 35 checked figures", r.stderr)

    def test_a_peer_comparison_figure_is_read_from_its_table_rows(self):
        # peers.json (scripts/peer-compare.sh) has a "table" of shapes, not "variants".
        self.replace("| 1 | 128 | 34.8 | 1.22 |", "| 1 | 128 | 34.8 | 1.25 |")
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        self.assertIn("results/peers/peers.json: batch=1, length=128: ratio_onnxruntime: "
                      "README says 1.25, the file says 1.22 (1.2171)", r.stderr)

    def test_a_list_item_is_read_by_its_name_whatever_its_index(self):
        results = self.dir / "results" / "demo" / "results.json"
        doc = json.loads(results.read_text())
        doc["variants"][1]["metrics"] = [{"name": "a", "value": 1.0}, {"name": "decode_tokens_per_s", "value": 31.3}]
        results.write_text(json.dumps(doc))
        with self.readme.open("a", encoding="utf-8") as f:
            f.write("\namp decodes 31.3<!-- figure: results/demo/results.json; name=amp; "
                    "metrics.decode_tokens_per_s.value --> tokens/s.\n")
        self.assertEqual(self.run_script().returncode, 0, self.run_script().stderr)
        # A metric added before it moves its index, not its name: still the same figure.
        doc["variants"][1]["metrics"].insert(0, {"name": "changed_decisions", "value": 0.0})
        results.write_text(json.dumps(doc))
        self.assertEqual(self.run_script().returncode, 0)
        doc["variants"][1]["metrics"][2]["value"] = 29.0
        results.write_text(json.dumps(doc))
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        self.assertIn("metrics.decode_tokens_per_s.value: README says 31.3, the file says 29", r.stderr)

    def test_every_status_of_every_sweep_point_is_checked(self):
        folder = self.dir / "results" / "grid"
        folder.mkdir()
        doc = {"kind": "sweep", "points": [{"params": {"test": t}, "result": {"variants": [
            {"name": "baseline", "status": "PASS"}, {"name": "bf16", "status": "PASS"}]}} for t in ("pp512", "tg128")]}
        (folder / "results.json").write_text(json.dumps(doc))
        with self.readme.open("a", encoding="utf-8") as f:
            f.write("\nEvery row PASSes<!-- figure: results/grid/results.json; points.*.result.variants.*.status -->, all "
                    "4<!-- figure: results/grid/results.json; points.*.result.variants.*.status:count --> of them.\n")
        self.assertEqual(self.run_script().returncode, 0)
        doc["points"][1]["result"]["variants"][1]["status"] = "FAIL"
        (folder / "results.json").write_text(json.dumps(doc))
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        self.assertIn('README says PASSes for every one, the file has ["FAIL"]', r.stderr)

    def test_precision_is_the_printed_one(self):
        # 26.4% would be wrong written as 26.3%; 1.51 (1.514966) wrong as 1.52; 2.5e-2 wrong as 2.4e-2.
        self.assert_each_caught([("26.4% |", "26.3% |", "README says 26.3, the file says 26.4"),
                                 ("| 64 | bf16 | 1.51× |", "| 64 | bf16 | 1.52× |", "README says 1.52, the file says 1.51"),
                                 ("is 2.5e-2<", "is 2.4e-2<", "README says 2.4e-2, the file says 2.5e-2")])

    def test_a_wrong_prose_figure_fails(self):
        self.replace("peak 249 MiB<", "peak 250 MiB<")
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        self.assertIn("name=amp: train.activation_peak_bytes:MiB: README says 250, the file says 249", r.stderr)

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
        line = self.line_of("- `results/sweep/` — a sweep, 3.1× at batch 1:")
        self.assertIn(f"README.md:{line}: unmarked number \"3.1\" (column 31)", r.stderr)
        self.assertIn(f"README.md:{line}: unmarked number \"1\" (column 45)", r.stderr)

    # --- docs/*.md (issue 38, part 4): each page checked as README.md is, and named --------------
    def test_a_docs_page_figure_that_matches_passes_and_one_that_does_not_fails_naming_the_page(self):
        self.assertEqual(self.run_script().returncode, 0)
        self.replace("speedup was 1.68×<", "speedup was 1.75×<", self.page)
        r = self.run_script()
        self.assertEqual(r.returncode, 1)
        line = self.line_of("speedup was 1.75×<!-- figure: results/demo/results.json; name=amp; speedup.median -->, in",
                            self.page)
        self.assertIn(f"{self.page}:{line}: results/demo/results.json: name=amp: speedup.median: "
                      "README says 1.75, the file says 1.68 (1.67894)", r.stderr)
        self.assertNotIn("README.md:", r.stderr)
        self.assertIn("1 problems in 35 checked figures", r.stderr)

    def test_a_docs_page_table_row_word_and_cpu_label_are_checked(self):
        self.assert_each_caught([
            ("| amp | 8.48 |", "| amp | 8.50 |", "docs/demo.md:13: results/demo/results.json: name=amp: throughput.median: "
                                                 "README says 8.50, the file says 8.48"),
            ("seven<!--", "eight<!--", "docs/demo.md:6: results/demo/results.json: name=amp: repetition.rounds: "
                                       "README says eight, the file says 7"),
            ("**Zen 3**<!-- cpu", "**Zen 4**<!-- cpu", "docs/demo.md:4: results/demo: README says Zen 4, "
                                                       "its COMMAND/results.json record Zen 3")], page="page")

    def test_an_unmarked_number_on_a_docs_page_is_listed_with_the_page(self):
        self.replace("in\nseven<", "in 12 s,\nseven<", self.page)
        r = self.run_script("--unmarked")
        self.assertEqual(r.returncode, 1)
        lines = r.stdout.splitlines()
        self.assertEqual(len(lines), 1, r.stdout)
        self.assertTrue(lines[0].startswith(f"{self.page}:5:91: number \"12\" … "), lines[0])

    def test_fix_writes_into_the_docs_page(self):
        self.replace("| amp | 8.48 |", "| amp | 9.00 |", self.page)
        r = self.run_script("--fix")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"wrote 1 figures into {self.page}", r.stderr)
        self.assertEqual(self.page.read_text(encoding="utf-8"),
                         (FIXTURE / "docs" / "demo.md").read_text(encoding="utf-8"))
        self.assertEqual(self.readme.read_text(encoding="utf-8"), (FIXTURE / "README.md").read_text(encoding="utf-8"))

    def test_a_docs_page_marker_path_is_read_from_the_repository_root(self):
        # Markers are not links: ../results/… (a link's form from docs/) names no committed file.
        self.assert_caught("<!-- figure: results/demo/results.json; name=amp; speedup.median -->",
                           "<!-- figure: ../results/demo/results.json; name=amp; speedup.median -->",
                           "../results/demo/results.json: cannot read", page="page")

    # --- the plants of issue 31, part 4: each kind of wrong figure must fail --------------------
    def assert_caught(self, old, new, message, page=None):
        self.replace(old, new, self.page if page == "page" else None)
        r = self.run_script()
        self.assertEqual(r.returncode, 1, f"{new!r} passed:\n{r.stdout}{r.stderr}")
        self.assertIn(message, r.stderr)

    def assert_each_caught(self, plants, page=None):
        """Each (old, new, message) planted alone in a fresh copy of the fixture (page="page": in docs/demo.md)."""
        for old, new, message in plants:
            with self.subTest(plant=new):
                self.tearDown()
                self.setUp()
                self.assert_caught(old, new, message, page)

    def test_planted_wrong_figures_of_every_kind_fail(self):
        plants = [
            # a ratio copied from a report (from marker) and one tied to the JSON
            ("samples/s and 1.68×<", "samples/s and 9.99×<", "report.md: README says 9.99, which the file does not hold"),
            ("8.48\n  samples/s", "7.77\n  samples/s", "report.md: README says 7.77, which the file does not hold"),
            # seconds, from the COMMAND file
            ("took 284 s<", "took 99 s<", "results/demo/COMMAND: /wall time (\\d+) s/: README says 99, the file says 284"),
            # a round count in digits, and one in words
            (", 7<!--", ", 5<!--", "name=amp: repetition.rounds: README says 5, the file says 7"),
            ("  six<!--", "  five<!--", "name=amp: repetition.rounds_ahead: README says five, the file says 6"),
            ("rounds of\n  seven<", "rounds of\n  eight<", "name=amp: repetition.rounds: README says eight, the file says 7"),
            # CPU labels: a folder's CPU, and one that was never recorded
            ("**Zen 3**<!-- cpu", "**Zen 4**<!-- cpu", "results/demo: README says Zen 4, its COMMAND/results.json record Zen 3"),
            ("CPU unknown<!-- cpu", "the Zen 3<!-- cpu", "results/old: README says Zen 3, its COMMAND/results.json record no CPU model"),
            # statuses, in prose and in a table
            ("amp PASSes<", "amp FAILs<", "name=amp: status: README says FAILs, the file has \"PASS\""),
            ("| offload | SKIPPED |", "| offload | PASS |", "name=offload: README says PASS, the row's status is \"SKIPPED\""),
            # a table row removed
            ("  | amp | 8.48 | 1.68× | 1.66–1.72 | 26.4% |\n", "",
             "results/demo/results.json: the table has no row with name=amp, which the file has"),
            ("  | 64 | bf16 | 1.51× |\n", "", "results/sweep/results.json: the table has no row with params.batch_size=64, name=bf16"),
        ]
        self.assert_each_caught(plants)

    def test_unmarked_words_statuses_and_cpu_labels_fail(self):
        self.assert_each_caught([
            ("took 284 s<!-- figure: results/demo/COMMAND; /wall time (\\d+) s/ -->", "took 284 s",
             "unmarked number \"284\""),
            ("- `results/sweep/` — a sweep:", "- `results/sweep/` — a sweep of three points:", "unmarked number \"three\""),
            ("- `results/sweep/` — a sweep:", "- `results/sweep/` — a sweep, on the Zen 4, all PASS:",
             "unmarked CPU label \"Zen 4\""),
            ("- `results/sweep/` — a sweep:", "- `results/sweep/` — a sweep, all PASS:", "unmarked status \"PASS\"")])

    def test_counts_and_ratios_are_checked(self):
        self.assert_each_caught([
            ("all three<", "all four<", "variants:count: README says four, the file says 3"),
            ("  variants ran, two<", "  variants ran, three<",
             "variants.*.throughput.median:count>1: README says three, the file says 2"),
            ("  1.83×<", "  1.90×<", "÷ params.batch_size=64; name=bf16; speedup.median: ratio: README says 1.90, "
                                         "the file says 1.83"),
            ("  100%<", "  90%<", "ratio:percent: README says 90, the file says 100")])

    def test_a_paragraph_marker_covers_its_paragraph_and_a_sentence_marker_its_sentence(self):
        self.replace("<!-- spec (paragraph): src/alloc.hpp -->", "<!-- spec: src/alloc.hpp -->")
        r = self.run_script("--unmarked")
        self.assertEqual(r.returncode, 1)
        self.assertEqual([l.split(" … ")[0].split(": ", 1)[1] for l in r.stdout.splitlines()],
                         ['number "8"', 'number "3"', 'number "64"'])

    def test_a_paragraph_marker_cannot_cover_a_paragraph_that_names_results(self):
        # Otherwise a measured figure written into such a paragraph later would pass unmarked.
        self.assert_caught("  took 284 s<!-- figure: results/demo/COMMAND; /wall time (\\d+) s/ -->.",
                           "  took 284 s.<!-- spec (paragraph): the config -->",
                           "a spec marker for a whole paragraph cannot cover one that names results/")

    def test_the_sapphire_rapids_is_told_from_the_zen_cpus(self):
        self.assert_caught("on the Sapphire Rapids<!-- cpu: results/spr -->", "on the Zen 4<!-- cpu: results/spr -->",
                           "results/spr: README says Zen 4, its COMMAND/results.json record Sapphire Rapids")

    def test_a_peers_json_names_its_cpu(self):
        # scripts/generate-peer.sh's folder: no results.json at its top, a peers.json whose "cpu" line holds the id.
        folder = self.dir / "results" / "peer"
        folder.mkdir(parents=True)
        (folder / "peers.json").write_text(json.dumps(
            {"cpu": "Intel(R) Xeon(R) Processor (GenuineIntel family 6 model 207 stepping 2; avx512f amx_bf16)"}))
        with open(self.readme, "a", encoding="utf-8") as f:
            f.write("\nThe peer ran on the Emerald Rapids<!-- cpu: results/peer -->.\n")
        r = self.run_script()
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assert_caught("the Emerald Rapids<!-- cpu: results/peer", "the Zen 4<!-- cpu: results/peer",
                           "results/peer: README says Zen 4, its COMMAND/results.json record Emerald Rapids")

    def test_a_from_marker_does_not_vouch_for_a_small_integer(self):
        self.assert_caught("8.48\n  samples/s", "8.48\n  samples/s in 5 rounds",
                           "report.md: 5: a from marker does not vouch for an integer below 100")

    def test_literal_text_is_exempt_and_quoted_text_is_not_checked(self):
        # The fixture's code block says "took 99 s at 9.99×", its prose `3.5×`, cuda:0, exit status 2:
        # none is a figure. Quoted and spec numbers pass whatever they say.
        self.replace("12×<!-- quoted", "13×<!-- quoted")
        self.replace("| 3 | a check failed |", "| 4 | a check failed |")
        self.assertEqual(self.run_script().returncode, 0)

    def test_unmarked_mode_lists_each_number_with_its_line_and_column(self):
        self.replace("- `results/sweep/` — a sweep:", "- `results/sweep/` — a sweep of three points in 12 s:")
        r = self.run_script("--unmarked")
        self.assertEqual(r.returncode, 1)
        line = self.line_of("- `results/sweep/` — a sweep of three points in 12 s:")
        self.assertEqual(r.stdout.splitlines(), [
            f"{self.readme}:{line}:33: number \"three\" … - `results/sweep/` — a sweep of three points in 12 s: …",
            f"{self.readme}:{line}:49: number \"12\" … ts/sweep/` — a sweep of three points in 12 s: …"])
        self.assertIn("2 unmarked", r.stderr)
        self.tearDown()
        self.setUp()
        r = self.run_script("--unmarked")
        self.assertEqual((r.returncode, r.stdout), (0, ""))


if __name__ == "__main__":
    unittest.main(verbosity=2)
