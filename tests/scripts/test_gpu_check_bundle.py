#!/usr/bin/env python3
"""scripts/gpu-check.sh --bundle (issues 30 and 39) on a fake bundle: a library the bundle lacks
fails the first step, naming it, and the pack folder still holds the archive and SUMMARY.md; under
the rehearsal's strict check a library found outside the bundle, the torch and
scripts/gpu-device-libs.txt fails too, and so does one under a forbidden path. A library that ldd
finds but that lacks a symbol fails LD_BIND_NOW=1 and no step runs; a torch whose version differs
from the manifest's fails the libraries step by name while the steps still run; a step that hangs
past its cap or exits 3 is reported so, with its log's last lines on stderr, and the next step
runs; --skip leaves steps out. Also the time plan: the budget with the machine's start fits 7
minutes, every cap is at least twice its estimate, and the GPU attention grid has head dim 128,
key padding and a batch above 1. Standard library and a C compiler; CTest runs it."""
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "gpu-check.sh"
MACHINE_START_S = 90  # README "GPU check": the lent machine's start, counted in the 7 minutes
PLAN_S = 420
CALL_TIMEOUT_S = 360  # README "GPU check": the call's timeout_s


def compiler():
    return shutil.which("cc") or shutil.which("gcc")


BUILT_AGAINST = "2.11.0+fake"


class fake_bundle:
    """bin/attnbench and bin/attnbench_tests: a program that needs libghost.so and calls its
    ghost(); with_lib puts the library into the bundle's lib/ (else it is left in `elsewhere/`),
    hollow makes that copy one that exports no ghost (found by ldd, missing the symbol). The fake
    python3 prints where "its torch" is (an empty folder) and its version (torch_version)."""

    def __init__(self, tmp, with_lib, hollow=False, torch_version=BUILT_AGAINST):
        self.tmp = Path(tmp)
        cc = compiler()
        src = self.tmp / "src"
        src.mkdir()
        (src / "ghost.c").write_text("int ghost(void) { return 0; }\n")
        (src / "hollow.c").write_text("int not_ghost(void) { return 0; }\n")
        (src / "main.c").write_text("int ghost(void);\nint main(void) { return ghost(); }\n")
        self.elsewhere = self.tmp / "elsewhere"
        self.elsewhere.mkdir()
        subprocess.run([cc, "-shared", "-fPIC", "-o", str(self.elsewhere / "libghost.so"), str(src / "ghost.c")],
                       check=True)
        stage = self.tmp / "stage"
        (stage / "bin").mkdir(parents=True)
        (stage / "lib").mkdir()
        subprocess.run([cc, "-o", str(stage / "bin" / "attnbench"), str(src / "main.c"), "-L", str(self.elsewhere),
                        "-lghost"], check=True)
        shutil.copy(stage / "bin" / "attnbench", stage / "bin" / "attnbench_tests")
        if hollow:
            subprocess.run([cc, "-shared", "-fPIC", "-o", str(stage / "lib" / "libghost.so"), str(src / "hollow.c")],
                           check=True)
        elif with_lib:
            shutil.copy(self.elsewhere / "libghost.so", stage / "lib" / "libghost.so")
        self.bundle = self.tmp / "bundle"
        self.bundle.mkdir()
        with tarfile.open(self.bundle / "bundle.tar.xz", "w:xz") as tar:
            for part in ("bin", "lib"):
                tar.add(stage / part, arcname=part)
        (self.bundle / "MANIFEST.txt").write_text(
            f"attnbench GPU bundle (test)\ncommit: test\nagainst: torch {BUILT_AGAINST} (/nowhere/torch)\n"
            "cuda kernels: not built (test)\n")
        # python3 as the device has it: prints where "its torch" is (an empty folder here)
        (self.tmp / "site" / "torch" / "lib").mkdir(parents=True)
        self.python = self.tmp / "python3"
        self.python.write_text(f"#!/bin/sh\necho {self.tmp / 'site' / 'torch'}\necho {torch_version}\n")
        self.python.chmod(0o755)
        self.pack = self.tmp / "pack"

    def run(self, *args, **env):
        e = dict(os.environ, ATTNBENCH_PYTHON=str(self.python))
        e.pop("LD_LIBRARY_PATH", None)
        e.pop("ATTNBENCH_GPU_CHECK_INJECT", None)
        e.update(env)
        return subprocess.run(["bash", str(SCRIPT), "--bundle", str(self.bundle), "--cpu-dry-run", "--pack",
                               str(self.pack), "--out", str(self.tmp / "run"), "--budget-s", "60", *args],
                              capture_output=True, text=True, env=e, cwd=ROOT)

    def summary(self):
        return (self.pack / "SUMMARY.md").read_text()

    def returned(self):
        return sorted(p.name for p in self.pack.iterdir())


@unittest.skipIf(compiler() is None, "no C compiler")
class gpu_check_bundle(unittest.TestCase):
    def test_a_library_missing_from_the_bundle_fails_first_naming_it(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = fake_bundle(tmp, with_lib=False)
            r = b.run()
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertIn("MISSING", r.stderr)
            self.assertIn("libghost.so", r.stderr)
            self.assertEqual(b.returned(), ["SUMMARY.md", "gpu-check.tar.gz"])
            self.assertRegex(b.summary(), r"\| libraries \| FAIL \(exit 1\) \|")
            self.assertIn("Not run (yet): gpu-tests seed-table attention offload-gpu nccl-world", b.summary())
            with tarfile.open(b.pack / "gpu-check.tar.gz") as tar:
                names = tar.getnames()
            self.assertIn("run/libraries.log", names)
            self.assertIn("run/SUMMARY.md", names)

    def test_the_bundle_s_own_library_resolves(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = fake_bundle(tmp, with_lib=True)
            b.run(ATTNBENCH_GPU_CHECK_STRICT="1")
            self.assertRegex(b.summary(), r"\| libraries \| PASS \|")
            # every later step ran and was packed (the fake binaries fail the offload check)
            self.assertRegex(b.summary(), r"\| nccl-world \| \w+")
            self.assertNotIn("Not run", b.summary())

    def test_strict_a_library_outside_bundle_torch_and_device_list_fails(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = fake_bundle(tmp, with_lib=False)
            r = b.run(ATTNBENCH_GPU_CHECK_STRICT="1", LD_LIBRARY_PATH=str(b.elsewhere))
            self.assertEqual(r.returncode, 1)
            self.assertIn("NOT ON THE DEVICE: libghost.so", r.stderr)
            r = b.run(ATTNBENCH_GPU_CHECK_STRICT="1", LD_LIBRARY_PATH=str(b.elsewhere),
                      ATTNBENCH_GPU_CHECK_FORBID=str(b.elsewhere))
            self.assertIn("FORBIDDEN: libghost.so", r.stderr)
            # not strict (the device itself): found is found
            r = b.run(LD_LIBRARY_PATH=str(b.elsewhere))
            self.assertRegex(b.summary(), r"\| libraries \| PASS \|")

    def test_a_library_without_the_symbol_passes_ldd_and_fails_ld_bind_now(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = fake_bundle(tmp, with_lib=True, hollow=True)
            r = b.run()
            self.assertEqual(r.returncode, 1, r.stderr)
            summary = b.summary()
            self.assertRegex(summary, r"\| libraries \| FAIL \(exit 1\) \|")
            self.assertIn("- ldd: every library found", summary)
            self.assertRegex(summary, r"LD_BIND_NOW=1 attnbench --version`: FAILED \(exit \d+\): .*undefined symbol: ghost")
            self.assertIn("Not run (yet): gpu-tests seed-table attention offload-gpu nccl-world", summary)
            self.assertIn("UNRESOLVED: LD_BIND_NOW=1 attnbench --version", r.stderr)
            self.assertIn("the last 20 lines of libraries.log", r.stderr)

    def test_the_same_torch_passes_and_the_summary_says_so(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = fake_bundle(tmp, with_lib=True)
            b.run("--skip", "seed-table,attention,offload-gpu,nccl-world")
            summary = b.summary()
            self.assertRegex(summary, r"\| libraries \| PASS \|")
            self.assertIn(f"the bundle built against {BUILT_AGAINST}: same", summary)
            self.assertIn("LD_BIND_NOW=1 attnbench --version`: OK", summary)
            self.assertIn("LD_BIND_NOW=1 attnbench_tests --help`: OK", summary)
            self.assertIn("- cuda kernels (MANIFEST.txt): not built (test)", summary)

    def test_another_torch_fails_libraries_by_name_and_the_steps_still_run(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = fake_bundle(tmp, with_lib=True, torch_version="2.10.0+other")
            r = b.run("--skip", "seed-table,attention,offload-gpu,nccl-world")
            self.assertEqual(r.returncode, 1, r.stderr)
            summary = b.summary()
            self.assertRegex(summary, r"\| libraries \| FAIL \(torch 2\.10\.0\+other, the bundle built against "
                                      r"2\.11\.0\+fake; every symbol resolves, so the steps run\) \|")
            self.assertIn("torch: MISMATCH: the device's 2.10.0+other", summary)
            self.assertRegex(summary, r"\| gpu-tests \| \w+")  # ran after it
            self.assertIn("MISMATCH: torch 2.10.0+other here", r.stderr)

    def test_a_step_that_hangs_is_cut_at_its_cap_and_the_next_runs(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = fake_bundle(tmp, with_lib=True)
            r = b.run("--skip", "offload-gpu,nccl-world", ATTNBENCH_GPU_CHECK_INJECT="hang:gpu-tests",
                      ATTNBENCH_GPU_CHECK_INJECT_CAP="2")
            self.assertEqual(r.returncode, 1, r.stderr)
            summary = b.summary()
            self.assertRegex(summary, r"\| gpu-tests \| TIMEOUT after 2s \| [2-9] \|")
            self.assertRegex(summary, r"\| seed-table \| \w+")
            self.assertIn("gpu-tests.log | injected: hang", r.stderr)

    def test_a_step_that_exits_3_is_named_with_its_log_tail(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = fake_bundle(tmp, with_lib=True)
            r = b.run("--skip", "seed-table,offload-gpu,nccl-world", ATTNBENCH_GPU_CHECK_INJECT="exit3:attention")
            self.assertEqual(r.returncode, 1, r.stderr)
            self.assertRegex(b.summary(), r"\| attention \| FAIL \(exit 3\) \|")
            self.assertIn("gpu-check: the last 20 lines of attention.log:", r.stderr)
            self.assertIn("attention.log | injected: exit 3", r.stderr)

    def test_skip_leaves_steps_out_and_refuses_unknown_ones(self):
        with tempfile.TemporaryDirectory() as tmp:
            b = fake_bundle(tmp, with_lib=True)
            b.run("--skip", "gpu-tests,seed-table,attention,offload-gpu,nccl-world")
            summary = b.summary()
            for s in ("gpu-tests", "seed-table", "attention", "offload-gpu", "nccl-world"):
                self.assertIn(f"| {s} | SKIPPED (--skip) | 0 |", summary)
            self.assertNotIn("Not run", summary)
            self.assertIn("--skip gpu-tests,seed-table", summary)
            self.assertEqual(b.run("--skip", "seed-tables").returncode, 2)
            self.assertEqual(b.run("--skip", "libraries").returncode, 2)


class gpu_check_plan(unittest.TestCase):
    text = SCRIPT.read_text()

    def cap(self, name):
        return int(re.search(rf"^CAP_{name}=(\d+)", self.text, re.M).group(1))

    def estimate(self, name):
        return int(re.search(rf"^CAP_{name}=\d+ +# est\. (\d+) s", self.text, re.M).group(1))

    STEPS = ("LIBRARIES", "TESTS", "SEED", "ATTENTION", "OFFLOAD", "NCCL")

    def test_the_budget_fits_the_call_and_seven_minutes_with_the_machine_start(self):
        budget = int(re.search(r"^BUDGET_S=(\d+)", self.text, re.M).group(1))
        self.assertLessEqual(budget + MACHINE_START_S, PLAN_S)
        self.assertLessEqual(budget + 30, CALL_TIMEOUT_S)  # 30 s for unpacking what comes back
        # the estimates: under half the budget, and every cap at least twice its step's estimate
        self.assertLessEqual(2 * sum(self.estimate(n) for n in self.STEPS), budget)
        for n in self.STEPS:
            self.assertGreaterEqual(self.cap(n), 2 * self.estimate(n), n)

    def test_the_libraries_step_has_a_minute(self):
        # a cold import of torch and the first loads on a fresh VM: it gates every other step
        self.assertGreaterEqual(self.cap("LIBRARIES"), 60)

    def test_the_run_steps_skip_the_cost_check(self):
        runs = [line for line in self.text.splitlines() if re.search(r'"\$BIN" run ', line)]
        self.assertEqual(len(runs), 2)
        for line in runs:
            self.assertIn("--no-cost-check", line)

    def test_steps_run_in_order_of_value(self):
        order = re.findall(r"^step ([\w-]+) ", self.text, re.M)
        self.assertEqual(order, ["gpu-tests", "seed-table", "attention", "offload-gpu", "nccl-world"])

    def test_the_gpu_attention_grid_has_head_dim_128_padding_and_batches(self):
        gpu = [line for line in self.text.splitlines() if '"$BIN" attention --device cuda' in line]
        grid = " ".join(self.text.splitlines()[self.text.splitlines().index(g) + 1] + " " + g for g in gpu)
        self.assertRegex(grid, r"--head-dim \S*128")
        self.assertRegex(grid, r"--valid \S*0\.5")
        self.assertRegex(grid, r"--batch [2-9]")


if __name__ == "__main__":
    unittest.main()
