#!/usr/bin/env python3
"""scripts/peer_table.py on small synthetic rows (what scripts/peer-compare.sh collects): every verdict
comes from the paired interval, never from the point estimate (a ratio above 1 whose interval holds 1
is level, not ahead); every printed ratio has its interval beside it; no generated text claims
anything "by the geometric means"; the alternating order within rounds (peer-compare.sh --print-order)
is what the rows record and peers.json's "round_order" keeps.
Needs neither the build nor the peers' environment. Standard library only; CTest runs it
(tests/CMakeLists.txt)."""
import json
import re
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
TABLE = ROOT / "scripts" / "peer_table.py"
COMPARE = ROOT / "scripts" / "peer-compare.sh"


def position(side, rnd):
    """peer-compare.sh's order: attnbench first in odd rounds, the peers first in even rounds."""
    first = "attnbench" if rnd % 2 else "peers"
    return 1 if side == first else 2


def rows_for(shape, klass, mine, peer, peer_name, rounds):
    """Rows of one attnbench variant and one peer; mine/peer: samples/s per round (lists)."""
    b, l = shape
    out = []
    for rnd in range(1, rounds + 1):
        out.append({"engine": f"attnbench-{klass}-v", "batch": b, "length": l, "round": rnd,
                    "position": position("attnbench", rnd), "class": klass, "ran": klass, "status": "PASS",
                    "reason": "", "rel_l2": 1e-7, "compared": 4, "kept": 4, "samples_per_s": mine[rnd - 1]})
        out.append({"engine": peer_name, "batch": b, "length": l, "round": rnd, "position": position("peers", rnd),
                    "class": klass, "ran": klass, "detail": "static shape", "status": "PASS", "rel_l2": 2e-7,
                    "kept": 4, "compared": 4, "samples_per_s": peer[rnd - 1], "pass_samples_per_s": [peer[rnd - 1]]})
    return out


class peer_table(unittest.TestCase):
    def setUp(self):
        self.dir = Path(tempfile.mkdtemp(prefix="peer-table-"))

    def tearDown(self):
        shutil.rmtree(self.dir)

    def run_table(self, rows, rounds):
        path = self.dir / "rows.jsonl"
        path.write_text("".join(json.dumps(r) + "\n" for r in rows))
        out = self.dir / "out"
        r = subprocess.run([sys.executable, str(TABLE), str(path), str(out), "Test CPU", "test id", "avx2 fma",
                            "test versions", "2", str(rounds), "4", "3", "0"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        return json.loads((out / "peers.json").read_text()), (out / "peers.md").read_text()

    def synthetic(self):
        rounds = 5
        rows = []
        # 1 × 128: attnbench ~1.2× every round, tightly: ahead.
        rows += rows_for((1, 128), "fp32", [120, 121, 119, 120, 122], [100, 100, 100, 100, 100], "openvino-f32", rounds)
        # 8 × 128: attnbench ~0.8× every round: behind.
        rows += rows_for((8, 128), "fp32", [80, 81, 79, 80, 80], [100, 100, 100, 100, 100], "onnxruntime-bert-opt",
                         rounds)
        # 32 × 128: the geometric mean of the ratios is above 1 (about 1.09), the interval holds 1: level.
        rows += rows_for((32, 128), "fp32", [150, 70, 160, 75, 140], [100, 100, 100, 100, 100], "openvino-f32-static",
                         rounds)
        # 8 × 512: below 1 by the point estimate (about 0.92), the interval holds 1: level.
        rows += rows_for((8, 512), "fp32", [60, 130, 65, 125, 70], [100, 100, 100, 100, 100], "onnxruntime", rounds)
        return rows, rounds

    def test_verdicts_come_from_the_interval(self):
        rows, rounds = self.synthetic()
        doc, md = self.run_table(rows, rounds)
        table = {(r["batch"], r["length"]): r for r in doc["table"]}
        want = {(1, 128): "ahead", (8, 128): "behind", (32, 128): "level", (8, 512): "level"}
        for shape, v in want.items():
            row = table[shape]
            self.assertEqual(row["fp32_verdict"], v, shape)
            lo, hi = row["fp32_ci_low"], row["fp32_ci_high"]
            self.assertLess(lo, row["fp32_ratio"])
            self.assertLess(row["fp32_ratio"], hi)
            # The verdict is the interval's, whatever the point estimate says.
            self.assertEqual(v, "ahead" if lo > 1 else "behind" if hi < 1 else "level")
            self.assertEqual(row["fp32_rounds"], rounds)
        # The two level shapes have point estimates on either side of 1: the point estimate decided nothing.
        self.assertGreater(table[(32, 128)]["fp32_ratio"], 1.0)
        self.assertLess(table[(8, 512)]["fp32_ratio"], 1.0)
        # The best peer is whichever form was counted: the optimised/static names go through.
        self.assertEqual(table[(8, 128)]["fp32_peer_engine"], "onnxruntime-bert-opt")
        self.assertEqual(table[(32, 128)]["fp32_peer_engine"], "openvino-f32-static")
        self.assertEqual(table[(32, 128)]["engines"]["openvino-f32-static"]["detail"], "static shape")
        # The summary: every ratio with its interval, the tally by verdict.
        summary = "\n".join(doc["summary"])
        self.assertIn("ahead at 1 of 4 shapes", summary)
        self.assertIn("behind at 1 of 4 shapes", summary)
        self.assertIn("level at 2 of 4 shapes", summary)
        for row in doc["table"]:
            ci = f"{row['fp32_ratio']:.2f} (95% CI {row['fp32_ci_low']:.2f}–{row['fp32_ci_high']:.2f})"
            self.assertIn(ci, summary)
            self.assertIn(ci, md)
        self.assertNotRegex(md.lower(), r"(met|ahead|behind|level)[^.\n]*by the geometric means?")
        self.assertNotIn("geometric means only", md)
        # In the class table the interval sits in the cell beside the ratio.
        for line in md.splitlines():
            if line.startswith("| 32 × 128 |") and "openvino-f32-static" in line and "level" in line:
                cells = [c.strip() for c in line.strip("|").split("|")]
                i = cells.index(f"{table[(32, 128)]['fp32_ratio']:.2f}")
                self.assertRegex(cells[i + 1], r"^\d\.\d\d–\d\.\d\d$")
                break
        else:
            self.fail("no fp32 table line for 32 × 128:\n" + md)

    def test_the_alternating_order_is_recorded(self):
        rows, rounds = self.synthetic()
        doc, md = self.run_table(rows, rounds)
        want = {str(r): (["attnbench", "peers"] if r % 2 else ["peers", "attnbench"]) for r in range(1, rounds + 1)}
        self.assertEqual(doc["round_order"], want)
        self.assertIn("odd rounds attnbench first", doc["order"])
        self.assertTrue(all("position" in r for r in doc["rounds"]))
        self.assertIn("round 1 attnbench then peers; round 2 peers then attnbench", md)
        # Shapes that disagree within a round are not hidden.
        rows[1]["position"], rows[0]["position"] = 1, 2  # 1 × 128, round 1: the peers first there only
        doc, _ = self.run_table(rows, rounds)
        self.assertEqual(doc["round_order"]["1"], "mixed")
        self.assertEqual(doc["round_order"]["2"], ["peers", "attnbench"])

    def test_peer_compare_schedules_the_order_the_table_expects(self):
        # peer-compare.sh --print-order: the schedule the timed loop runs, without installing or timing.
        r = subprocess.run(["bash", str(COMPARE), "--print-order", "--rounds", "4", "--shapes", "1x128,8x512"],
                           capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        lines = r.stdout.strip().splitlines()
        self.assertEqual(len(lines), 8)
        for line in lines:
            m = re.fullmatch(r"round (\d+) (\d+x\d+): (attnbench|peers) (attnbench|peers)", line)
            self.assertIsNotNone(m, line)
            rnd, first, second = int(m.group(1)), m.group(3), m.group(4)
            self.assertNotEqual(first, second)
            self.assertEqual(position(first, rnd), 1, line)
        # The default is 5 rounds.
        r = subprocess.run(["bash", str(COMPARE), "--print-order", "--shapes", "8x128"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(len(r.stdout.strip().splitlines()), 5)

    def test_one_round_has_no_verdict(self):
        rows = rows_for((8, 128), "fp32", [150], [100], "openvino-f32", 1)
        doc, md = self.run_table(rows, 1)
        row = doc["table"][0]
        self.assertIsNone(row["fp32_ci_low"])
        self.assertTrue(row["fp32_verdict"].startswith("n/a"))
        self.assertIn("1.50 (one round: no interval)", "\n".join(doc["summary"]))
        self.assertNotIn("ahead", row["fp32_verdict"])


if __name__ == "__main__":
    unittest.main()
