#!/usr/bin/env python3
"""Checks every figure the README quotes from results/ against the committed results.json.

Standard library only; needs nothing built. Exits 0 when every marked figure equals its JSON
value at the precision the README prints, 1 naming each mismatch with the value to write
(--fix writes them), 2 on bad usage.

A figure is checked when a marker says where it comes from:

  A table: an HTML comment holding the file and a template row, right before the table.

    <!-- figures: results/cpu-seed-table/results.json
    | {=name} | {throughput.median} | {speedup.median}× | {speedup.ci_low}–{speedup.ci_high} |
    -->
    | variant | samples/s | speedup | 95% CI |
    |---|---:|---:|---:|
    | AMP | 8.48 | 1.68× | 1.66–1.72 |

  Each body row's cells are read against the template's: {=PATH} cells select the JSON row
  whose PATH equals the cell's text (the rows are the file's "variants"; for a sweep, every
  point's variants, with the point's "params"; for scripts/peer-compare.sh's peers.json, its
  "table", one row per batch × length); {PATH} is a figure, PATH a dotted path into that
  row (list items by index: parallel.workers.0.samples), optionally with a unit after a colon:
  {PATH:percent} (the JSON holds a fraction, the README a percentage), {PATH:MiB} (bytes in the
  JSON), {PATH:inverse} (1 / the value: a time ratio from a speedup). A cell without digits
  ("—", "SKIPPED") quotes nothing and is not checked; a cell with digits must have its
  template's form.

  One figure in prose: a comment right after the number, on the same line.

    a 2.5e-2<!-- figure: results/cpu-quickstart/results.json; name=amp-bf16; check.rel_l2 -->

  The parts after the file are KEY=VALUE selectors of the row (as {=KEY} cells do) and, last,
  the figure's PATH (with an optional :unit).

A number is compared at the README's printed precision: "1.68" must be the JSON value rounded to
two decimals, "11.2" to one, "2.5e-2" to two significant digits. Figures of results/ outside a
marker are not checked; so a block (paragraph or list item) that names results/ and holds an
unmarked figure (a number with ×, %, samples/s, MiB, ms or ns after it) is reported too: mark it,
or point to the report instead of copying it.

Usage: scripts/check-readme-figures.py [--readme README.md] [--fix]
Paths in markers are relative to the README's folder.
"""
import argparse
import json
import math
import re
import sys
from pathlib import Path

NUMBER = r"[-−]?\d+(?:\.\d+)?(?:[eE][-+−]?\d+)?"
TABLE_MARKER = re.compile(r"<!--\s*figures:\s*(\S+)\s*\n(.*?)-->", re.S)
INLINE_MARKER = re.compile(r"<!--\s*figure:\s*(.*?)\s*-->")
PLACEHOLDER = re.compile(r"\{(=?)([^{}:]+?)(?::(\w+))?\}")
UNITS = {
    "percent": lambda v: v * 100,
    "MiB": lambda v: v / 2**20,
    "inverse": lambda v: 1 / v if v else math.inf,
}
# A figure quoted in prose: a number with a unit of measure after it.
UNMARKED = re.compile(r"(?<![\w.])\d+(?:\.\d+)?\s?(?:×|%|samples/s|MiB|GiB|KiB|ms\b|ns\b)")


class checker:
    def __init__(self, readme):
        self.readme = readme
        self.root = readme.parent
        self.text = readme.read_text(encoding="utf-8")
        self.lines = self.text.split("\n")
        self.problems = []   # (line number, message, fix): fix = (line index, start, end, text) or None
        self.checked = 0
        self.documents = {}
        self.fenced = fenced_lines(self.lines)  # markers in code blocks are examples, not markers

    def problem(self, line_no, message, fix=None):
        """fix: (line index, start, end, text) that --fix writes, or None."""
        self.problems.append((line_no, message, fix))

    # --- JSON -------------------------------------------------------------------------------
    def document(self, rel):
        if rel not in self.documents:
            path = self.root / rel
            try:
                self.documents[rel] = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError) as e:
                self.documents[rel] = e
        return self.documents[rel]

    @staticmethod
    def rows(doc):
        if not isinstance(doc, dict):
            return []
        if doc.get("kind") == "sweep":
            return [dict(v, params=p.get("params", {})) for p in doc.get("points", [])
                    for v in p.get("result", {}).get("variants", [])]
        if "variants" not in doc and isinstance(doc.get("table"), list):
            return list(doc["table"])  # scripts/peer-compare.sh's peers.json: one row per shape
        return list(doc.get("variants", []))

    @staticmethod
    def resolve(obj, path):
        for part in path.strip().split("."):
            if isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
                obj = obj[int(part)]
            elif isinstance(obj, dict) and part in obj:
                obj = obj[part]
            else:
                return None
        return obj

    @staticmethod
    def key_text(value):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        return str(value)

    def find_row(self, line_no, rel, selectors):
        doc = self.document(rel)
        if isinstance(doc, Exception):
            self.problem(line_no, f"{rel}: cannot read: {doc}")
            return None
        found = [r for r in self.rows(doc)
                 if all(self.key_text(self.resolve(r, k)) == v for k, v in selectors)]
        what = ", ".join(f"{k}={v}" for k, v in selectors)
        if len(found) != 1:
            self.problem(line_no, f"{rel}: {'no' if not found else len(found)} rows with {what}")
            return None
        return found[0]

    # --- one figure -------------------------------------------------------------------------
    def check_figure(self, line_index, start, printed, row, rel, path, unit, where):
        """Compares the number README prints at lines[line_index][start:] with row's PATH."""
        self.checked += 1
        line_no = line_index + 1
        value = self.resolve(row, path)
        label = f"{rel}: {where}{path}{':' + unit if unit else ''}"
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            self.problem(line_no, f"{label}: README says {printed}, the JSON has {json.dumps(value)}")
            return
        if unit:
            value = UNITS[unit](value)
        expected = at_precision(value, printed)
        if expected is not None and numeric(expected) == numeric(printed):
            return
        fix = (line_index, start, start + len(printed), expected) if expected is not None else None
        self.problem(line_no, f"{label}: README says {printed}, results.json says {expected} ({value!r})", fix)

    # --- markers ----------------------------------------------------------------------------
    def check_tables(self):
        for m in TABLE_MARKER.finditer(self.text):
            rel = m.group(1)
            marker_line = self.text.count("\n", 0, m.start()) + 1
            if marker_line - 1 in self.fenced:
                continue
            template_lines = [l.strip() for l in m.group(2).split("\n") if l.strip()]
            if len(template_lines) != 1 or not template_lines[0].startswith("|"):
                self.problem(marker_line, f"{rel}: a figures marker holds one template row (| … |)")
                continue
            template = split_row(template_lines[0])
            keys = [(i, PLACEHOLDER.fullmatch(c.strip())) for i, c in enumerate(template)]
            keys = [(i, k.group(2)) for i, k in keys if k and k.group(1) == "="]
            if not keys:
                self.problem(marker_line, f"{rel}: the template row has no {{=KEY}} cell")
                continue
            first = self.text.count("\n", 0, m.end())  # index of the line the comment ends on
            body = list(table_body(self.lines, first + 1))
            if not body:
                self.problem(marker_line, f"{rel}: no table right after the figures marker")
            for index in body:
                self.check_table_row(index, rel, template, keys)

    def check_table_row(self, index, rel, template, keys):
        line = self.lines[index]
        cells = split_row(line, with_offsets=True)
        if len(cells) != len(template):
            self.problem(index + 1, f"{rel}: {len(cells)} cells, the template has {len(template)}")
            return
        selectors = [(path.strip(), cells[i][0].strip()) for i, path in keys]
        row = self.find_row(index + 1, rel, selectors)
        if row is None:
            return
        where = ", ".join(f"{k}={v}" for k, v in selectors) + ": "
        for (cell, offset), tmpl in zip(cells, template):
            fields = [p for p in PLACEHOLDER.finditer(tmpl) if p.group(1) != "="]
            if not fields:
                continue
            try:
                pattern, groups = template_regex(tmpl.strip())
            except ValueError as e:
                self.problem(index + 1, f"{rel}: {e}")
                return
            stripped = cell.strip()
            lead = offset + (len(cell) - len(cell.lstrip()))
            m = re.fullmatch(pattern, stripped)
            if not m:
                if re.search(r"\d", stripped):
                    self.problem(index + 1, f"{rel}: {where}cell \"{stripped}\" does not have the "
                                                     f"template's form \"{tmpl.strip()}\"")
                continue
            for g, (path, unit) in groups.items():
                self.check_figure(index, lead + m.start(g), m.group(g), row, rel, path, unit, where)

    def check_inline(self):
        for index, line in enumerate(self.lines):
            if index in self.fenced:
                continue
            for m in INLINE_MARKER.finditer(line):
                if in_code_span(line, m.start()):
                    continue
                parts = [p.strip() for p in m.group(1).split(";")]
                if len(parts) < 3:
                    self.problem(index + 1, "a figure marker is FILE; KEY=VALUE…; PATH")
                    continue
                rel, *selectors, field = parts
                if any("=" not in s for s in selectors):
                    self.problem(index + 1, f"{rel}: a row selector is KEY=VALUE: {selectors}")
                    continue
                selectors = [tuple(x.strip() for x in s.split("=", 1)) for s in selectors]
                before = line[: m.start()]
                numbers = list(re.finditer(NUMBER, before))
                if not numbers or re.search(r"\d", before[numbers[-1].end():]):
                    self.problem(index + 1, f"{rel}: no number right before the figure marker")
                    continue
                row = self.find_row(index + 1, rel, selectors)
                if row is None:
                    continue
                path, _, unit = field.partition(":")
                if unit and unit not in UNITS:
                    self.problem(index + 1, f"{rel}: unknown unit \"{unit}\" (known: {', '.join(UNITS)})")
                    continue
                where = ", ".join(f"{k}={v}" for k, v in selectors) + ": "
                n = numbers[-1]
                self.check_figure(index, n.start(), n.group(), row, rel, path.strip(), unit or None, where)

    def check_unmarked(self):
        """Blocks (paragraphs, list items) that name results/ and quote a figure no marker covers."""
        covered = set()  # a figures marker and its table, header included
        for m in TABLE_MARKER.finditer(self.text):
            first = self.text.count("\n", 0, m.start())
            if first in self.fenced:
                continue
            last = self.text.count("\n", 0, m.end())
            body = list(table_body(self.lines, last + 1))
            covered.update(range(first, (body[-1] if body else last) + 1))
        block = []
        for index, line in enumerate(self.lines + [""]):
            new_item = re.match(r"\s*(?:[-*]|\d+\.)\s", line)
            skip = index in self.fenced or index in covered
            if skip or not line.strip() or new_item:
                self.report_unmarked(block)
                block = []
            if not skip and line.strip():
                block.append(index)

    def report_unmarked(self, block):
        if not any("results/" in self.lines[i] for i in block):
            return
        for i in block:
            text = INLINE_MARKER.sub("\0", self.lines[i])  # \0: where a figure marker was
            for m in UNMARKED.finditer(text):
                # Marked: the marker follows with no other number in between (as check_inline reads it).
                if not re.match(r"[^\d\0]*\0", text[m.end():]):
                    self.problem(i + 1, f"unchecked figure \"{m.group()}\" in a block that names results/: "
                                                 "mark it (see this script's help) or point to the report")

    def run(self):
        self.check_tables()
        self.check_inline()
        self.check_unmarked()
        return self


# --- helpers --------------------------------------------------------------------------------
def split_row(line, with_offsets=False):
    """The cells of a markdown table row (no escaped pipes), optionally with their offsets."""
    start = line.index("|") + 1
    end = line.rindex("|")
    cells, offset = [], start
    for cell in line[start:end].split("|"):
        cells.append((cell, offset))
        offset += len(cell) + 1
    return cells if with_offsets else [c for c, _ in cells]


def fenced_lines(lines):
    """Indexes of the lines inside ``` code blocks, the fences included."""
    fenced, inside = set(), False
    for index, line in enumerate(lines):
        if line.strip().startswith("```"):
            fenced.add(index)
            inside = not inside
        elif inside:
            fenced.add(index)
    return fenced


def in_code_span(line, pos):
    return any(m.start() < pos < m.end() for m in re.finditer(r"`[^`]*`", line))


def table_body(lines, index):
    """Line indexes of the body rows of the table starting at lines[index] (after blank lines)."""
    while index < len(lines) and not lines[index].strip():
        index += 1
    if index + 1 >= len(lines) or not lines[index].strip().startswith("|") or \
            not re.fullmatch(r"\|[\s:|-]+\|", lines[index + 1].strip()):
        return
    index += 2
    while index < len(lines) and lines[index].strip().startswith("|"):
        yield index
        index += 1


def template_regex(tmpl):
    """A regex matching a cell of this template, and its figure groups: name → (path, unit)."""
    pattern, groups, pos = "", {}, 0
    for n, p in enumerate(PLACEHOLDER.finditer(tmpl)):
        pattern += literal(tmpl[pos:p.start()])
        if p.group(1) == "=":
            pattern += r".+?"
        else:
            unit = p.group(3)
            if unit and unit not in UNITS:
                raise ValueError(f"unknown unit \"{unit}\" in \"{tmpl}\" (known: {', '.join(UNITS)})")
            groups[f"f{n}"] = (p.group(2).strip(), unit)
            pattern += f"(?P<f{n}>{NUMBER})"
        pos = p.end()
    return pattern + literal(tmpl[pos:]), groups


def literal(text):
    return r"\s*".join(re.escape(part) for part in re.split(r"\s+", text)) if text.strip() else r"\s*"


def numeric(text):
    return float(text.replace("−", "-"))


def at_precision(value, printed):
    """value written as printed is: same decimals, or same significant digits in e-notation."""
    if not math.isfinite(value):
        return None
    text = printed.replace("−", "-")
    if "e" in text.lower():
        mantissa, exponent = re.split("[eE]", text)
        decimals = len(mantissa.partition(".")[2])
        m, e = f"{value:.{decimals}e}".split("e")
        out = f"{m}e{int(e)}"
    else:
        decimals = len(text.partition(".")[2])
        out = f"{value:.{decimals}f}"
        if float(out) == 0:
            out = out.lstrip("-")
    return out.replace("-", "−") if "−" in printed else out


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readme", default=str(Path(__file__).resolve().parent.parent / "README.md"))
    parser.add_argument("--fix", action="store_true", help="write each mismatched figure's JSON value into the README")
    args = parser.parse_args()
    readme = Path(args.readme)
    if not readme.is_file():
        print(f"check-readme-figures.py: no such file: {readme}", file=sys.stderr)
        return 2
    c = checker(readme).run()
    fixes = [fix for _, _, fix in c.problems if fix] if args.fix else []
    for line_no, message, fix in sorted(c.problems, key=lambda p: p[:2]):
        print(f"{readme}:{line_no}: {message}{' (fixed)' if fix in fixes and fix else ''}", file=sys.stderr)
    if fixes:
        lines = list(c.lines)
        for index, start, end, new in sorted(fixes, reverse=True):
            lines[index] = lines[index][:start] + new + lines[index][end:]
        readme.write_text("\n".join(lines), encoding="utf-8")
        print(f"check-readme-figures.py: wrote {len(fixes)} figures into {readme}; reread the prose around them",
              file=sys.stderr)
    left = len(c.problems) - len(fixes)
    if left:
        print(f"check-readme-figures.py: {left} problems in {c.checked} checked figures", file=sys.stderr)
        return 1
    print(f"check-readme-figures.py: {c.checked} figures in {readme.name} match results/")
    return 0

if __name__ == "__main__":
    sys.exit(main())
