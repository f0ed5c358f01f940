#!/usr/bin/env python3
"""scripts/ab_acceptance_summary.py (the summary of scripts/ab-acceptance.sh): the exact Clopper–Pearson
bound it prints beside every count of runs (0 of 10 → the one-sided 95% upper bound 1 − 0.05^(1/10)
= 0.259; N of N → the one-sided lower bound; otherwise the two-sided interval, against published
values), and a summary of synthetic runs that prints it beside each count and stores it in
summary.json. Standard library only; CTest runs it (tests/CMakeLists.txt)."""
import json
import math
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
sys.path.insert(0, str(ROOT / "scripts"))
import ab_acceptance_summary as summary  # noqa: E402

SCRIPT = ROOT / "scripts" / "ab_acceptance_summary.py"


class bound(unittest.TestCase):
    def test_zero_of_ten_is_the_one_sided_upper_bound(self):
        low, high, kind = summary.clopper_pearson(0, 10)
        self.assertEqual((low, kind), (0.0, "upper"))
        self.assertAlmostEqual(high, 1 - 0.05 ** (1 / 10), places=12)
        self.assertAlmostEqual(high, 0.259, places=3)
        self.assertIn("≤ 25.9% (one-sided 95% Clopper–Pearson upper bound)", summary.rate_text(0, 10, "false-alarm"))

    def test_the_closed_forms_agree_with_the_beta_quantile(self):
        for n in (1, 5, 10, 30, 100):
            # 0 of n: upper = B(0.95; 1, n); n of n: lower = B(0.05; n, 1).
            self.assertAlmostEqual(summary.clopper_pearson(0, n)[1], summary.beta_quantile(0.95, 1, n), places=9)
            self.assertAlmostEqual(summary.clopper_pearson(n, n)[0], summary.beta_quantile(0.05, n, 1), places=9)
        low, high, kind = summary.clopper_pearson(30, 30)
        self.assertEqual((high, kind), (1.0, "lower"))
        self.assertAlmostEqual(low, 0.05 ** (1 / 30), places=12)
        self.assertAlmostEqual(summary.clopper_pearson(0, 30)[1], 0.0950, places=4)

    def test_two_sided_intervals_match_published_values(self):
        # Exact (Clopper–Pearson) 95% intervals, as tabulated (e.g. R's binom.test).
        for k, n, low, high in ((3, 10, 0.06673951, 0.65245285), (1, 10, 0.00252858, 0.44501612),
                                (9, 10, 0.55498388, 0.99747142), (5, 30, 0.05642170, 0.34721170)):
            lo, hi, kind = summary.clopper_pearson(k, n)
            self.assertEqual(kind, "two-sided")
            self.assertAlmostEqual(lo, low, places=6, msg=f"{k} of {n}")
            self.assertAlmostEqual(hi, high, places=6, msg=f"{k} of {n}")

    def test_the_incomplete_beta_and_bad_counts(self):
        self.assertAlmostEqual(summary.betainc(2, 3, 0.4), 0.5248, places=4)  # 1 − (0.6^4 + 4·0.4·0.6^3)
        self.assertAlmostEqual(summary.betainc(1, 1, 0.3), 0.3, places=12)
        for k, n in ((-1, 10), (11, 10), (0, 0)):
            with self.assertRaises(ValueError):
                summary.clopper_pearson(k, n)


def ab_json(verdict, ratio):
    half = 0.03
    return {"variants": [{"variant": v, "verdict": verdict, "noisy": False, "ratio": ratio,
                          "ratio_ci_low": ratio * (1 - half), "ratio_ci_high": ratio * (1 + half),
                          "ratio_rel_half_width": half, "rounds": 6, "stop_reason": "target"} for v in ("sdpa", "custom")]}


def compare_json(verdict, change):
    return {"variants": [{"name": v, "verdict": verdict, "geomean_change": change} for v in ("sdpa", "custom")]}


class summary_of_runs(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="ab-acceptance-"))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def write(self, rel, doc):
        p = self.dir / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(json.dumps(doc))

    def test_every_count_has_its_bound(self):
        runs = 30
        for i in range(1, runs + 1):
            self.write(f"self/{i}/ab.json", ab_json("SAME", 1.0))
            self.write(f"plant/{i}/ab.json", ab_json("SLOWER" if i > 1 else "SAME", 0.9))  # caught 29 of 30
            for t in (15, 5):
                self.write(f"compare/same-{i}/compare-{t}/compare.json", compare_json("SAME", 0.01))
                self.write(f"compare/planted-{i}/compare-{t}/compare.json",
                           compare_json("SLOWER" if t == 5 else "SAME", -0.1))
        r = subprocess.run([sys.executable, str(SCRIPT), str(self.dir), str(runs)], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        md = (self.dir / "summary.md").read_text()
        self.assertIn("Runs with a SLOWER verdict (ab exit 1): 0 of 30; false-alarm rate ≤ 9.5% "
                      "(one-sided 95% Clopper–Pearson upper bound)", md)
        self.assertIn("Runs with a SLOWER verdict (ab exit 1): 29 of 30; catch rate 82.8%–99.9% "
                      "(two-sided 95% Clopper–Pearson interval)", md)
        self.assertIn("Runs with a SLOWER verdict at 5%: 30 of 30; catch rate ≥ 90.5% "
                      "(one-sided 95% Clopper–Pearson lower bound)", md)
        self.assertIn("Runs with a SLOWER verdict at 15%: 0 of 30; catch rate ≤ 9.5%", md)
        table = {row["name"]: row for row in json.loads((self.dir / "summary.json").read_text())["table"]}
        self.assertEqual(table["ab self"]["runs_with_slower"], 0)
        self.assertAlmostEqual(table["ab self"]["rate_ci_high"], 1 - 0.05 ** (1 / 30), places=12)
        self.assertEqual(table["ab self"]["rate_ci"], "one-sided 95% Clopper–Pearson upper bound")
        self.assertEqual(table["ab plant"]["runs_with_slower"], 29)
        self.assertEqual(table["compare planted 5%"]["runs_with_slower"], 30)
        self.assertEqual(table["compare same 15%"]["rate_of"], "false-alarm")

    def test_the_script_defaults_to_thirty_runs_and_names_the_bound(self):
        text = (ROOT / "scripts" / "ab-acceptance.sh").read_text()
        self.assertIn("runs=${2:-30}", text)
        self.assertIn("Clopper–Pearson", text.split("set -euo pipefail")[0])
        self.assertIn("scripts/ab_acceptance_summary.py", text)


if __name__ == "__main__":
    unittest.main()
