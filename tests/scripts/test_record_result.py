#!/usr/bin/env python3
"""scripts/record-result.sh in a temporary git repository: on a clean tree COMMAND says nothing of
uncommitted changes and no uncommitted.diff is written; with a modified tracked file and an untracked
one, results/NAME/uncommitted.diff holds `git diff HEAD` and the untracked file's name, COMMAND names
its sha256 and both files, and the diff applies to a clean clone; a later clean run removes the stale
diff. Changes under results/ never count. An attnbench binary built from another tree (another
commit, a dirty build since committed, or sources edited after it) is refused with exit 2 before
anything runs. Needs git and bash; standard library only; CTest runs it
(tests/CMakeLists.txt)."""
import hashlib
import os
import re
import shutil
import subprocess
import tempfile
import unittest
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent.parent
SCRIPT = ROOT / "scripts" / "record-result.sh"
ENV = dict(os.environ, GIT_AUTHOR_NAME="test", GIT_AUTHOR_EMAIL="test@example.com", GIT_COMMITTER_NAME="test",
           GIT_COMMITTER_EMAIL="test@example.com", GIT_CONFIG_GLOBAL=os.devnull, GIT_CONFIG_NOSYSTEM="1")


@unittest.skipUnless(shutil.which("git") and shutil.which("bash"), "needs git and bash")
class record_result(unittest.TestCase):
    def setUp(self):
        self.repo = Path(tempfile.mkdtemp(prefix="record-result-"))
        (self.repo / "scripts").mkdir()
        shutil.copy(SCRIPT, self.repo / "scripts" / "record-result.sh")
        (self.repo / "src.txt").write_text("one\ntwo\n")
        (self.repo / ".gitignore").write_text("/build/\n")
        self.git("init", "-q", "-b", "main")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "start")

    def tearDown(self):
        shutil.rmtree(self.repo)

    def git(self, *args, cwd=None):
        return subprocess.run(["git", *args], cwd=cwd or self.repo, env=ENV, check=True, capture_output=True,
                              text=True).stdout

    def record(self, name="demo"):
        # The command writes into results/NAME itself, as every recorded command does.
        r = subprocess.run(["bash", "scripts/record-result.sh", name, "bash", "-c",
                            f"mkdir -p results/{name} && echo figures > results/{name}/out.txt"],
                           cwd=self.repo, env=ENV, capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        folder = self.repo / "results" / name
        return folder, (folder / "COMMAND").read_text()

    def test_a_clean_tree_writes_no_diff(self):
        (self.repo / "build").mkdir()
        (self.repo / "build" / "ignored.o").write_text("ignored")  # ignored files are not changes
        folder, command = self.record()
        self.assertNotIn("uncommitted", command)
        self.assertFalse((folder / "uncommitted.diff").exists())

    def test_uncommitted_changes_are_written_and_named(self):
        (self.repo / "src.txt").write_text("one\nTWO\n")
        (self.repo / "new-script.sh").write_text("echo new\n")
        folder, command = self.record()
        diff = folder / "uncommitted.diff"
        self.assertTrue(diff.exists(), command)
        text = diff.read_text()
        self.assertIn("-two", text)
        self.assertIn("+TWO", text)
        self.assertIn("#   new-script.sh", text)
        self.assertIn(self.git("rev-parse", "HEAD").strip(), text)
        sha = hashlib.sha256(diff.read_bytes()).hexdigest()
        first = command.splitlines()[0]
        self.assertIn("with uncommitted changes outside results/", first)
        self.assertIn(f"uncommitted.diff, sha256 {sha}", first)
        self.assertRegex(command, r"# Uncommitted changes \(in uncommitted.diff\): modified src\.txt; untracked new-script\.sh\.")
        # The results folder itself is no change: its own files are not in the diff or the list.
        self.assertNotIn("results/", re.sub(r"outside results/", "", text))
        # The diff rebuilds the tree: it applies to a clean clone of the commit.
        clone = self.repo.parent / (self.repo.name + "-clone")
        try:
            subprocess.run(["git", "clone", "-q", str(self.repo), str(clone)], env=ENV, check=True, capture_output=True)
            self.git("apply", str(diff), cwd=clone)
            self.assertEqual((clone / "src.txt").read_text(), "one\nTWO\n")
        finally:
            shutil.rmtree(clone, ignore_errors=True)

        # Committed (the results with them), then run again: clean, and the stale diff is gone.
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "changes")
        folder, command = self.record()
        self.assertNotIn("uncommitted", command)
        self.assertFalse((folder / "uncommitted.diff").exists())

    def test_only_untracked_files_count_too(self):
        (self.repo / "notes.txt").write_text("an untracked input\n")
        folder, command = self.record()
        self.assertIn("modified none; untracked notes.txt.", command)
        self.assertIn("#   notes.txt", (folder / "uncommitted.diff").read_text())

    def fake_binary(self, label):
        # An attnbench whose --version names the commit it says it was built at, and which writes
        # into results/NAME as a recorded run does.
        binary = self.repo / "build" / "attnbench"
        binary.parent.mkdir(exist_ok=True)
        binary.write_text(f"""#!/bin/bash
if [ "$1" = --version ]; then echo "attnbench 0.1.0 ({label})"; exit 0; fi
mkdir -p results/$2 && echo figures > results/$2/out.txt
""")
        binary.chmod(0o755)
        return subprocess.run(["bash", "scripts/record-result.sh", "bin", "build/attnbench", "run", "bin"],
                              cwd=self.repo, env=ENV, capture_output=True, text=True)

    def test_a_binary_built_from_another_tree_is_refused_before_running(self):
        head = self.git("rev-parse", "--short=12", "HEAD").strip()
        r = self.fake_binary("0123456789ab")
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn(f"says 0123456789ab, the tree is {head}", r.stderr)
        self.assertFalse((self.repo / "results" / "bin").exists())
        # A build from a dirty tree, recorded once the edit is committed, is not the commit's either.
        r = self.fake_binary(head + "-dirty")
        self.assertEqual(r.returncode, 2, r.stderr)
        # The check alone, as scripts/amx-report.sh makes it before its steps.
        check = ["bash", "scripts/record-result.sh", "--check-binary", "build/attnbench"]
        r = subprocess.run(check, cwd=self.repo, env=ENV, capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        # The tree's own build runs and is recorded.
        r = self.fake_binary(head)
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertIn(f"at commit {head}:", (self.repo / "results" / "bin" / "COMMAND").read_text())
        self.assertEqual(subprocess.run(check, cwd=self.repo, env=ENV, capture_output=True).returncode, 0)

    def test_a_wrapped_or_scripted_binary_is_checked_and_the_test_binary_is_not(self):
        self.fake_binary("0123456789ab")  # a stale build/attnbench
        def record(*command):
            return subprocess.run(["bash", "scripts/record-result.sh", "bin", *command], cwd=self.repo, env=ENV,
                                  capture_output=True, text=True)
        for command in (["env", "OMP_NUM_THREADS=1", "build/attnbench", "run", "bin"],
                        ["bash", "-c", "build/attnbench run bin"]):
            r = record(*command)
            self.assertEqual(r.returncode, 2, (command, r.stderr))
            self.assertIn("build/attnbench is not built from this tree", r.stderr)
        # A script that runs it is checked too, and its --bin names the binary it runs instead.
        (self.repo / "run.sh").write_text('#!/bin/bash\nBIN=${ATTNBENCH_BIN:-build/attnbench}\n')
        self.assertEqual(record("bash", "run.sh").returncode, 2)
        r = record("bash", "run.sh", "--bin", "build/other")
        self.assertEqual(r.returncode, 0, r.stderr)  # build/other is not an executable here: the script's to refuse
        # The tests' binary has no commit in its --version: it is not an attnbench build to check.
        tests = self.repo / "build" / "attnbench_tests"
        tests.write_text("#!/bin/bash\nmkdir -p results/bin\n")
        tests.chmod(0o755)
        self.assertEqual(record("build/attnbench_tests").returncode, 0)

    def test_a_dirty_build_is_refused_when_the_source_changed_after_it(self):
        (self.repo / "src").mkdir()
        (self.repo / "src" / "a.cpp").write_text("int a;\n")
        self.git("add", "-A")
        self.git("commit", "-q", "-m", "src")
        head = self.git("rev-parse", "--short=12", "HEAD").strip()
        (self.repo / "src" / "a.cpp").write_text("int b;\n")
        self.fake_binary(head + "-dirty")  # built after the edit: accepted
        self.assertTrue((self.repo / "results" / "bin" / "COMMAND").exists())
        shutil.rmtree(self.repo / "results" / "bin")
        later = (self.repo / "build" / "attnbench").stat().st_mtime + 5
        os.utime(self.repo / "src" / "a.cpp", (later, later))  # edited again after the build
        r = subprocess.run(["bash", "scripts/record-result.sh", "bin", "build/attnbench", "run", "bin"],
                           cwd=self.repo, env=ENV, capture_output=True, text=True)
        self.assertEqual(r.returncode, 2, r.stderr)
        self.assertIn("edited since the build: src/a.cpp", r.stderr)
        self.assertFalse((self.repo / "results" / "bin").exists())


if __name__ == "__main__":
    unittest.main()
