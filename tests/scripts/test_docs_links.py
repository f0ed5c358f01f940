#!/usr/bin/env python3
"""README.md stays a README a newcomer reads (issue 38, part 4): at most 300 lines, opening with
the two quick-start commands that .ci/run and the tests rely on; and every relative link in
README.md and docs/*.md points to a file or folder that exists (a link from docs/ resolves from
docs/). Anchors (#…) and URLs are not checked. The checks are also run on planted pages, so a
check that cannot fail fails here.
Standard library only; CTest runs it (tests/CMakeLists.txt) with the repository root as its
argument (default: this file's ../..)."""
import re
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

ROOT = Path(sys.argv.pop(1)).resolve() if len(sys.argv) > 1 and not sys.argv[1].startswith("-") \
    else Path(__file__).resolve().parent.parent.parent
MAX_README_LINES = 300
QUICK_START = [
    "scripts/setup.sh && scripts/build.sh && build/attnbench run configs/quickstart.json --force",
    "scripts/setup.sh && scripts/build.sh && scripts/test.sh",
]
# [text](target) and ![alt](target), the target up to whitespace or ")"; <!-- comments --> and
# code (fenced blocks, `spans`) are not links.
LINK = re.compile(r"!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
REFERENCE = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$", re.M)


def pages(root):
    return [root / "README.md"] + sorted((root / "docs").glob("*.md"))


def prose(text):
    """text with fenced code blocks, code spans and HTML comments blanked (line count kept)."""
    text = re.sub(r"<!--.*?-->", lambda m: re.sub(r"[^\n]", " ", m.group()), text, flags=re.S)
    out, fenced = [], False
    for line in text.split("\n"):
        if line.strip().startswith("```"):
            fenced = not fenced
            out.append("")
            continue
        out.append("" if fenced else re.sub(r"(`+)(?!`).*?[^`]\1(?!`)", "", line))
    return "\n".join(out)


def broken_links(root):
    """(page, line, target) of every relative link whose file does not exist."""
    broken = []
    for page in pages(root):
        text = prose(page.read_text(encoding="utf-8"))
        for m in list(LINK.finditer(text)) + list(REFERENCE.finditer(text)):
            target = m.group(1)
            if re.match(r"[a-z][a-z0-9+.-]*:", target, re.I) or target.startswith("#"):
                continue  # a URL (https:, mailto:) or an anchor on the same page
            path = target.split("#", 1)[0].split("?", 1)[0]
            if not path:
                continue
            resolved = (root / path.lstrip("/")) if path.startswith("/") else (page.parent / path)
            if not resolved.exists():
                line = text.count("\n", 0, m.start()) + 1
                broken.append((str(page.relative_to(root)), line, target))
    return broken


def readme_problems(root):
    lines = (root / "README.md").read_text(encoding="utf-8").split("\n")
    count = len(lines) - (1 if lines and lines[-1] == "" else 0)
    problems = []
    if count > MAX_README_LINES:
        problems.append(f"README.md has {count} lines, more than {MAX_README_LINES}: move a topic to docs/")
    head = "\n".join(lines[:15])
    for command in QUICK_START:
        if command not in head:
            problems.append(f"README.md does not open with the quick-start command: {command}")
    return problems


class docs(unittest.TestCase):
    def test_readme_is_short_and_opens_with_the_two_commands(self):
        self.assertEqual(readme_problems(ROOT), [])

    def test_every_relative_link_resolves(self):
        self.assertEqual(broken_links(ROOT), [])

    def test_docs_has_an_index(self):
        self.assertTrue((ROOT / "docs" / "README.md").is_file())
        index = (ROOT / "docs" / "README.md").read_text(encoding="utf-8")
        for page in sorted((ROOT / "docs").glob("*.md")):
            if page.name != "README.md":
                self.assertIn(f"]({page.name}", index, f"docs/README.md does not link {page.name}")

    # --- the checks bite --------------------------------------------------------------------
    def planted(self):
        d = Path(tempfile.mkdtemp(prefix="docs-links-"))
        self.addCleanup(shutil.rmtree, d)
        (d / "docs").mkdir()
        (d / "results" / "x").mkdir(parents=True)
        (d / "results" / "x" / "report.png").write_bytes(b"")
        (d / "README.md").write_text("\n".join(["# x", "```sh", *QUICK_START, "```",
                                                 "[docs](docs/README.md), [a](docs/a.md#part)", ""]),
                                     encoding="utf-8")
        (d / "docs" / "README.md").write_text("[a](a.md) [up](../README.md)\n", encoding="utf-8")
        (d / "docs" / "a.md").write_text("![shot](../results/x/report.png) [web](https://example.com/x)\n"
                                         "`[code](nowhere.md)` <!-- [comment](nowhere.md) --> [self](#top)\n",
                                         encoding="utf-8")
        return d

    def test_a_good_tree_passes(self):
        d = self.planted()
        self.assertEqual((readme_problems(d), broken_links(d)), ([], []))

    def test_a_link_from_docs_written_as_from_the_root_fails(self):
        d = self.planted()
        page = d / "docs" / "a.md"
        page.write_text(page.read_text().replace("../results/x/report.png", "results/x/report.png"))
        self.assertEqual(broken_links(d), [("docs/a.md", 1, "results/x/report.png")])

    def test_a_missing_page_in_the_readme_fails(self):
        d = self.planted()
        readme = d / "README.md"
        readme.write_text(readme.read_text() + "[gone](docs/gone.md)\n")
        self.assertEqual(broken_links(d), [("README.md", 7, "docs/gone.md")])

    def test_a_long_readme_or_one_without_the_commands_fails(self):
        d = self.planted()
        readme = d / "README.md"
        readme.write_text(readme.read_text() + "line\n" * MAX_README_LINES)
        self.assertEqual(readme_problems(d), [f"README.md has {MAX_README_LINES + 6} lines, more than "
                                              f"{MAX_README_LINES}: move a topic to docs/"])
        readme.write_text("# x\n")
        self.assertEqual(len(readme_problems(d)), 2)


if __name__ == "__main__":
    unittest.main(verbosity=2)
