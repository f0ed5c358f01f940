#!/usr/bin/env python3
"""scripts/amx-report.sh on injected machine descriptions (--cpuinfo, with --dry-run): a CPU
without AMX (the Zen 4) runs nothing and exits 3 naming the CPU; a Sapphire Rapids lists every
step into results/<step>-spr, each naming a config or script that exists; an Emerald Rapids and an
unknown AMX model get their own folder names; --only and --skip choose steps and refuse unknown
ones; an existing folder is refused without --force; --cpuinfo without --dry-run is refused. On a
CPU without AMX, the plain command runs nothing and writes nothing. Needs bash; standard library
only; CTest runs it (tests/CMakeLists.txt)."""
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "amx-report.sh"

ZEN4_FLAGS = "fpu sse sse2 avx avx2 fma avx512f avx512_bf16 avx512_vnni"
SPR_FLAGS = ZEN4_FLAGS + " avx512_fp16 amx_bf16 amx_tile amx_int8"


def cpuinfo(name, family, model, flags):
    # Two processors, as /proc/cpuinfo lists them: the script reads the first entry only.
    entry = f"processor\t: {{n}}\nvendor_id\t: x\ncpu family\t: {family}\nmodel\t\t: {model}\nmodel name\t: {name}\nflags\t\t: {flags}\n"
    return entry.format(n=0) + "\n" + entry.format(n=1).replace(flags, ZEN4_FLAGS) + "\n"


@unittest.skipUnless(shutil.which("bash"), "needs bash")
class amx_report(unittest.TestCase):
    def setUp(self):
        # A root of its own, so the folder checks see only what the test puts in results/.
        self.root = Path(tempfile.mkdtemp(prefix="amx-report-"))
        (self.root / "scripts").mkdir()
        shutil.copy(SCRIPT, self.root / "scripts" / "amx-report.sh")
        (self.root / "results").mkdir()

    def tearDown(self):
        shutil.rmtree(self.root)

    def describe(self, name, family, model, flags):
        path = self.root / f"cpuinfo-{family}-{model}"
        path.write_text(cpuinfo(name, family, model, flags))
        return str(path)

    def run_script(self, *args):
        return subprocess.run(["bash", str(self.root / "scripts" / "amx-report.sh"), *args],
                              capture_output=True, text=True)

    def spr(self):
        return self.describe("Intel(R) Xeon(R) Platinum 8480+", 6, 143, SPR_FLAGS)

    def steps(self, output):
        return [l for l in output.splitlines() if re.match(r"^[a-z0-9-]+ \(results/", l)]

    def test_a_cpu_without_amx_runs_nothing_and_exits_3(self):
        r = self.run_script("--dry-run", "--cpuinfo", self.describe("AMD EPYC", 25, 17, ZEN4_FLAGS))
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("this CPU has no AMX (AMD EPYC, family 25 model 17", r.stderr)
        self.assertEqual(self.steps(r.stdout), [])

    def test_a_sapphire_rapids_lists_every_step_into_its_own_folders(self):
        r = self.run_script("--dry-run", "--cpuinfo", self.spr(), "--threads", "4")
        self.assertEqual(r.returncode, 0, r.stderr)
        names = self.run_script("--list").stdout.split()
        steps = self.steps(r.stdout)
        self.assertEqual([s.split(" ")[0] for s in steps], names)
        self.assertIn("family 6 model 143; amx_bf16 amx_int8 amx_tile", r.stdout)
        for line in steps:
            self.assertRegex(line, r"\(results/[a-z0-9-]+-spr, ~\d+ min\): scripts/record-result.sh [a-z0-9-]+-spr ")
            for path in re.findall(r"(?:configs|scripts)/[\w./-]+\.(?:json|sh)", line):
                self.assertTrue((ROOT / path).exists(), f"{line}: {path} does not exist")
        # The decoders' part 5 (llama-1b against the triad, and its profile) and the peers are there.
        self.assertTrue(any("configs/generate-1b-cpu.json --out results/generate-1b-cpu-spr" in s for s in steps))
        self.assertTrue(any("profile configs/generate-1b-profile-cpu.json" in s for s in steps))
        self.assertTrue(any("scripts/peer-compare.sh --rounds 5 --threads 4" in s for s in steps))
        self.assertEqual(list((self.root / "results").iterdir()), [])  # a dry run writes nothing

    def test_other_amx_models_name_their_folders(self):
        emr = self.describe("Intel(R) Xeon(R) Gold 6548Y+", 6, 207, SPR_FLAGS)
        self.assertIn("results/generate-cpu-emr", self.run_script("--dry-run", "--cpuinfo", emr).stdout)
        other = self.describe("Intel(R) Xeon(R) future", 6, 999, SPR_FLAGS)
        self.assertIn("results/generate-cpu-amx-f6m999", self.run_script("--dry-run", "--cpuinfo", other).stdout)
        r = self.run_script("--dry-run", "--cpuinfo", other, "--suffix", "lab-box")
        self.assertIn("results/generate-cpu-lab-box", r.stdout)
        r = self.run_script("--dry-run", "--cpuinfo", other, "--suffix", "Bad Name")
        self.assertEqual(r.returncode, 2)
        self.assertIn("--suffix must be", r.stderr)

    def test_only_and_skip_choose_steps_and_refuse_unknown_ones(self):
        r = self.run_script("--dry-run", "--cpuinfo", self.spr(), "--only", "generate-1b,generate-1b-profile")
        self.assertEqual([s.split(" ")[0] for s in self.steps(r.stdout)], ["generate-1b", "generate-1b-profile"])
        r = self.run_script("--dry-run", "--cpuinfo", self.spr(), "--skip", "peer-compare,generate-peer")
        names = [s.split(" ")[0] for s in self.steps(r.stdout)]
        self.assertNotIn("peer-compare", names)
        self.assertIn("kernels", names)
        r = self.run_script("--dry-run", "--cpuinfo", self.spr(), "--only", "generate,nope")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no step 'nope'", r.stderr)
        # Names are names, not patterns, and an empty list is no list.
        r = self.run_script("--dry-run", "--cpuinfo", self.spr(), "--skip", "peer.*")
        self.assertEqual(r.returncode, 2)
        self.assertIn("no step 'peer.*'", r.stderr)
        self.assertEqual(self.run_script("--dry-run", "--cpuinfo", self.spr(), "--only", "").returncode, 2)

    def test_an_existing_folder_is_refused_without_force(self):
        (self.root / "results" / "generate-1b-cpu-spr").mkdir()
        r = self.run_script("--dry-run", "--cpuinfo", self.spr())
        self.assertEqual(r.returncode, 2)
        self.assertIn("results/generate-1b-cpu-spr", r.stderr)
        self.assertIn("Nothing was run", r.stderr)
        self.assertEqual(self.run_script("--dry-run", "--cpuinfo", self.spr(), "--force").returncode, 0)
        self.assertEqual(self.run_script("--dry-run", "--cpuinfo", self.spr(), "--skip", "generate-1b").returncode, 0)

    def test_another_machines_description_never_runs(self):
        r = self.run_script("--cpuinfo", self.spr())
        self.assertEqual(r.returncode, 2)
        self.assertIn("--dry-run only", r.stderr)
        self.assertEqual(list((self.root / "results").iterdir()), [])
        self.assertEqual(self.run_script("--bogus").returncode, 2)
        self.assertEqual(self.run_script("--threads", "0", "--dry-run").returncode, 2)

    @unittest.skipIf(re.search(r"^flags.*\bamx_bf16\b", Path("/proc/cpuinfo").read_text(), re.M),
                     "this CPU has AMX: the plain command would measure")
    def test_this_cpu_without_amx_runs_nothing(self):
        r = self.run_script()
        self.assertEqual(r.returncode, 3, r.stderr)
        self.assertIn("this CPU has no AMX", r.stderr)
        self.assertEqual(list((self.root / "results").iterdir()), [])


if __name__ == "__main__":
    unittest.main()
