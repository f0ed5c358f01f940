#!/usr/bin/env python3
"""scripts/gpu-check.sh --bundle (issue 30) on a fake bundle: a library the bundle lacks fails the
first step, naming it, and the pack folder still holds the archive and SUMMARY.md; under the
rehearsal's strict check a library found outside the bundle, the torch and
scripts/gpu-device-libs.txt fails too, and so does one under a forbidden path. Also the time plan:
the caps sum to 7 minutes with the machine's start, and the GPU attention grid has head dim 128,
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


def compiler():
    return shutil.which("cc") or shutil.which("gcc")


class fake_bundle:
    """bin/attnbench and bin/attnbench_tests: a program that needs libghost.so; with_lib puts the
    library into the bundle's lib/, else it is left in `elsewhere/`."""

    def __init__(self, tmp, with_lib):
        self.tmp = Path(tmp)
        cc = compiler()
        src = self.tmp / "src"
        src.mkdir()
        (src / "ghost.c").write_text("int ghost(void) { return 0; }\n")
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
        if with_lib:
            shutil.copy(self.elsewhere / "libghost.so", stage / "lib" / "libghost.so")
        self.bundle = self.tmp / "bundle"
        self.bundle.mkdir()
        with tarfile.open(self.bundle / "bundle.tar.xz", "w:xz") as tar:
            for part in ("bin", "lib"):
                tar.add(stage / part, arcname=part)
        (self.bundle / "MANIFEST.txt").write_text("attnbench GPU bundle (test)\ncommit: test\n")
        # python3 as the device has it: prints where "its torch" is (an empty folder here)
        (self.tmp / "site" / "torch" / "lib").mkdir(parents=True)
        self.python = self.tmp / "python3"
        self.python.write_text(f"#!/bin/sh\necho {self.tmp / 'site' / 'torch'}\n")
        self.python.chmod(0o755)
        self.pack = self.tmp / "pack"

    def run(self, **env):
        e = dict(os.environ, ATTNBENCH_PYTHON=str(self.python))
        e.pop("LD_LIBRARY_PATH", None)
        e.update(env)
        return subprocess.run(["bash", str(SCRIPT), "--bundle", str(self.bundle), "--cpu-dry-run", "--pack",
                               str(self.pack), "--out", str(self.tmp / "run"), "--budget-s", "60"],
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


class gpu_check_plan(unittest.TestCase):
    text = SCRIPT.read_text()

    def cap(self, name):
        return int(re.search(rf"^CAP_{name}=(\d+)", self.text, re.M).group(1))

    def test_the_caps_fit_seven_minutes_with_the_machine_start(self):
        caps = sum(self.cap(n) for n in ("LIBRARIES", "TESTS", "SEED", "ATTENTION", "OFFLOAD", "NCCL"))
        self.assertLessEqual(caps + MACHINE_START_S, PLAN_S)
        self.assertEqual(int(re.search(r"^BUDGET_S=(\d+)", self.text, re.M).group(1)), caps)

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
