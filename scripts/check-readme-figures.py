#!/usr/bin/env python3
"""Checks that every figure in the README and in docs/*.md is tied to a committed file, or marked as
not measured.

Standard library only; needs nothing built. Exits 0 when every number is accounted for and every
checked figure equals its source at the precision the README prints; 1 naming each problem (with
the value to write where there is one: --fix writes them); 2 on bad usage.
--unmarked lists only the numbers (and CPU labels, statuses) that no marker covers, one a line as
README.md:LINE:COL: KIND "TEXT" … context … (or docs/PAGE.md:…), to mark new text with.

The pages checked are README.md and every docs/*.md beside it, each on its own (a marker's scope,
a paragraph, never runs from one page into the next); every message names its page and line.
"The README" below means any of them.

Every number the README prints outside code is one of three things:

  1. A figure with a marker that ties it to a committed file (checked).
  2. A number marked as not measured here: quoted from elsewhere, or a constant of the code.
  3. Exempt by one of the mechanical rules below.

Anything else is reported as unmarked. "Number" means digits (1.57, 16,384, 2.5e-2) and number
words (two … twenty, thirty … ninety, hundred, thousand, million, twice; not "one", which is
mostly a pronoun here: write 1 where it is a figure).

MARKERS (HTML comments, invisible when rendered)

  A table: the file and a template row, right before the table.

    <!-- figures: results/cpu-seed-table/results.json
    | {=name} | {throughput.median} | {speedup.median}× | {speedup.ci_low}–{speedup.ci_high} |
    -->
    | variant | samples/s | speedup | 95% CI |
    |---|---:|---:|---:|
    | AMP | 8.48 | 1.68× | 1.66–1.72 |

  Each body row's cells are read against the template's: {=PATH} cells select the source row
  whose PATH equals the cell's text (the rows are a results.json's "variants"; for a sweep, every
  point's variants, with the point's "params"; for scripts/peer-compare.sh's peers.json, its
  "table", one row per batch × length; for a .csv file, its rows); {PATH} is a figure, PATH a
  dotted path into that row (list items by index: parallel.workers.0.samples, or by their
  "name": metrics.decode_tokens_per_s.value, which a new metric does not shift), optionally with a
  unit after a colon: {PATH:percent} (the JSON holds a fraction, the README a percentage),
  {PATH:MiB} (bytes in the JSON), {PATH:inverse} (1 / the value), {PATH:count} (a list's
  length), {PATH:count>1} (how many of a list's numbers are above 1; also >=, <, <=). A * in a
  path reads every item of a list (variants.*.status, table.*.ratio_onnxruntime). A cell "—" or "n/a" quotes
  nothing; a status word (PASS, FAIL, SKIPPED, ERROR) in a figure cell must be the row's
  "status"; any other cell with digits must have its template's form.
  The table must list every row of its source: a table that quotes some rows says which after the
  file, as KEY=VALUE,VALUE… filters (every source row matching all filters must be in the table):

    <!-- figures: results/cpu-sweep-batch-size/results.json params.batch_size=1,64

  One figure in prose: a marker right after it, on the same line.

    a 2.5e-2<!-- figure: results/cpu-quickstart/results.json; name=amp-bf16; check.rel_l2 -->
    it ran six<!-- figure: results/x/results.json; name=amp; repetition.rounds --> rounds
    amp PASSes<!-- figure: results/x/results.json; name=amp; check.status -->   (a string value:
                                    the word before the marker must begin with it, any case)
    all four<!-- figure: results/x/results.json; variants:count --> variants
    PASS<!-- figure: results/x/results.json; variants.*.status -->            (every one)
    PASS<!-- figure: results/s/results.json; points.*.result.variants.*.status -->  (every point's: a sweep)
    ahead at three<!-- figure: results/p/peers.json; table.*.ratio_onnxruntime:count>1 --> shapes
    1.54×<!-- figure: results/x/results.json; name=b; speedup.geomean; ÷ name=a; speedup.geomean -->
                                                     (a ratio of two figures of one file;
                                                     a unit goes after the last path: …:percent)
    the whole run took 284 s<!-- figure: results/cpu-seed-table/COMMAND; /wall time (\\d+) s/ -->

  A config's setting is tied to the config the same way:
    10<!-- figure: configs/ci.json; measure.repetitions --> repetitions

  The parts after the file are KEY=VALUE selectors of the row (as {=KEY} cells do; none: PATH is
  read from the file's top level) and, last, the figure's PATH (with an optional :unit). For a
  file that is not JSON or CSV (COMMAND, report.md, output.txt) the one part is /REGEX/, and its
  first group in the file is the figure. The marker checks the last number, number word or
  status word before it on its line.

  A CPU label (Zen 3, Zen 4, Sapphire Rapids, Emerald Rapids, or "unknown") right before a cpu marker must be the
  CPU that made the folder, as its results.json environment (cpu_id, cpu_features), a peers.json's "cpu" or, for older
  folders, its COMMAND file records it:

    made on the **Zen 3**<!-- cpu: results/cpu-seed-table-zen3 -->
    on the Zen 4<!-- cpu: results/cpu-quickstart results/cpu-seed-table -->  (each folder listed)

  Numbers not measured by a committed run, each marker naming where they come from:

    12.1×<!-- quoted: the article's table -->        quoted from outside this repository's files
    5 rounds<!-- spec: src/measure/config.cpp -->    constants of the code, config or a format
                                                     (defaults, limits, exit codes, sizes)

  and numbers copied from a committed text file, looser than a figure marker:

    … in 63 s and then 15.2 s<!-- from: results/cpu-quickstart/report.md -->

  where each number covered must occur in FILE (at the printed precision; for a percentage,
  also as a fraction). A from marker does not vouch for an integer below 100 without a unit
  (too common to find by chance): give those a figure marker.
  quoted, spec and from markers cover every number, CPU label and status of their sentence up to
  the marker (from the sentence's start, or the previous marker in the same paragraph, whichever is
  later). With "(paragraph)" after its kind (<!-- spec (paragraph): src/cli -->, anywhere in a
  paragraph or list item, best at its end) such a marker covers the whole paragraph or list item;
  alone on its line, the whole next block (paragraph, list or table, up to a blank line); neither
  may cover a paragraph that names results/, whose figures need their own markers. (Not at
  the start of a paragraph or list item: a line that begins with <!-- is an HTML block in
  Markdown, and the rest of that line would not render as Markdown.)

EXEMPT (literal text, not figures)

  - fenced code blocks, `code spans`, HTML comments, link targets and URLs;
  - digits joined to a letter: identifiers and shapes (fp32, minilm-l6, cuda:0, top-1, x86-64,
    8x128, avx512_bf16, 2nd); a glued unit (63s, 5ms, 2x, 4GiB) is not an identifier;
  - ISO dates (2026-12-01), dotted versions (2.11.0), and a number right after a name that
    versions or numbers things: Debian, g++, C++, CUDA, torch, LibTorch, Python, CMake,
    transformers, onnxruntime, OpenVINO, Catch2, version, schema_version, issue(s), part(s),
    section(s), step(s), line(s), PR, #, exit / exit status / exits with, family, model,
    stepping, Zen (see the list VERSIONED below);
  - a numbered list item's number (1. at the start of a line).

CPU labels and statuses are checked in blocks that name results/ only: elsewhere "the Zen 3" and
"PASS" are names, not claims about a folder.

Usage: scripts/check-readme-figures.py [--readme README.md] [--fix | --unmarked]
Paths in markers are relative to the README's folder, the repository root, in docs/*.md too
(results/x/results.json, not ../results/x/results.json): markers are not links.
"""
import argparse
import csv
import io
import json
import math
import re
import sys
from pathlib import Path

NUMBER = r"[-−]?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+−]?\d+)?"
TABLE_MARKER = re.compile(r"<!--\s*figures:\s*(\S+)([^\n]*)\n(.*?)-->", re.S)
INLINE_MARKER = re.compile(r"<!--\s*figure:\s*(.*?)\s*-->")
COMMENT = re.compile(r"<!--.*?-->", re.S)
MARKER = re.compile(r"<!--\s*(figures?|cpu|quoted|spec|from)(\s+\(paragraph\))?:\s*(.*?)\s*-->", re.S)
PLACEHOLDER = re.compile(r"\{(=?)([^{}:]+?)(?::(\w+))?\}")
UNITS = {
    "percent": lambda v: v * 100,
    "MiB": lambda v: v / 2**20,
    "inverse": lambda v: 1 / v if v else math.inf,
    "count": len,  # a list's or object's length: "four variants"
}
WORDS = {w: i for i, w in enumerate(
    "zero _ two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split()) if w != "_"}
WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70, "eighty": 80,
              "ninety": 90, "hundred": 100, "thousand": 1000, "million": 10**6, "twice": 2})
# Tokens: digits (not right after a letter, digit or dot: fp32, v1.2 are not numbers), number words.
TOKEN = re.compile(r"(?<![\w.,])\d+(?:,\d{3})*(?:\.\d+)?(?:[eE][-+−]?\d+)?|\b(?:" +
                   "|".join(w + "|" + w.capitalize() for w in WORDS) + r")\b")
GLUED_UNIT = re.compile(r"(?:ms|ns|us|µs|s|x|k|K|M|G|KiB|MiB|GiB|KB|MB|GB|B)\b")
VERSIONED = re.compile(
    r"(?:\b(?:Debian|Ubuntu|g\+\+|gcc|clang|C\+\+|CUDA|cuDNN|torch|LibTorch|PyTorch|Python|CMake|"
    r"transformers|onnxruntime|OpenVINO|Catch2|version|schema_version|issues?|parts?|sections?|"
    r"steps?|lines?|versions|fmt|PR|exit(?:\s+status)?|exits(?:\s+with)?|family|model|stepping|Zen)\s*|#|\bv)$")
STATUS = re.compile(r"\b(?:PASS|FAIL|SKIPPED|ERROR)(?:ED|ES|e?[sd])?\b")
CPU_LABEL = re.compile(r"\bZen\s?\d\b|\bSapphire Rapids\b|\bEmerald Rapids\b|\bCPU (?:is )?unknown\b|\bunknown CPU\b")
SENTENCE_END = re.compile(r"[.!?][\"”’)*_]*\s+(?=[^\sa-z])")


class checker:
    def __init__(self, readme, root=None):
        """readme: the page checked (README.md or a docs/*.md); root: the folder marker paths are
        relative to, the repository root (README.md's folder) for every page."""
        self.readme = readme
        self.root = root if root is not None else readme.parent
        self.text = readme.read_text(encoding="utf-8")
        self.lines = self.text.split("\n")
        self.starts = [0]
        for line in self.lines:
            self.starts.append(self.starts[-1] + len(line) + 1)
        self.problems = []   # (line number, message, fix): fix = (line index, start, end, text) or None
        self.unmarked = []   # (line number, column, kind, text)
        self.checked = 0
        self.documents = {}
        self.fenced = fenced_lines(self.lines)  # markers in code blocks are examples, not markers
        self.mask, self.markers = self.masked()
        self.covered = set()  # offsets of tokens a marker accounts for

    def problem(self, line_no, message, fix=None):
        """fix: (line index, start, end, text) that --fix writes, or None."""
        self.problems.append((line_no, message, fix))

    def line_of(self, offset):
        lo, hi = 0, len(self.lines) - 1
        while lo < hi:
            mid = (lo + hi + 1) // 2
            if self.starts[mid] <= offset:
                lo = mid
            else:
                hi = mid - 1
        return lo

    # --- what is literal text -----------------------------------------------------------------
    def masked(self):
        """The README with code, comments and link targets blanked (offsets kept), and its markers."""
        mask = list(self.text)

        def blank(a, b):
            for i in range(a, b):
                if mask[i] != "\n":
                    mask[i] = " "
        for index in self.fenced:
            blank(self.starts[index], self.starts[index] + len(self.lines[index]))
        # Code spans, which may run over lines within a paragraph: literal text, markers included.
        self.spans = [(m.start(), m.end()) for m in re.finditer(r"(`+)(?!`)([\s\S]*?[^`])\1(?!`)", "".join(mask))
                      if not re.search(r"\n\s*\n", m.group())]
        markers = []
        for m in COMMENT.finditer(self.text):
            if self.line_of(m.start()) in self.fenced or self.in_span(m.start()):
                continue
            k = MARKER.fullmatch(m.group())
            if k:
                markers.append((m.start(), m.end(), k.group(1) + ("+" if k.group(2) else ""), k.group(3)))
            blank(m.start(), m.end())
        for a, b in self.spans:
            blank(a, b)
        for index, line in enumerate(self.lines):
            if index in self.fenced:
                continue
            base = self.starts[index]
            for pattern in (r"\]\([^)\s]*\)", r"<?https?://[^\s)>]+>?"):
                for m in re.finditer(pattern, "".join(mask[base:base + len(line)])):
                    blank(base + m.start(), base + m.end())
        return "".join(mask), markers

    def in_span(self, offset):
        return any(a < offset < b for a, b in self.spans)

    def tokens(self):
        """(start, end, kind, text) of every number, CPU label and status outside literal text."""
        out = []
        for m in TOKEN.finditer(self.mask):
            index = self.line_of(m.start())
            line = self.mask[self.starts[index]:self.starts[index + 1] - 1]
            col = m.start() - self.starts[index]
            if self.exempt(line, col, m.group()):
                continue
            out.append((m.start(), m.end(), "number", m.group()))
        for m in CPU_LABEL.finditer(self.mask):
            out.append((m.start(), m.end(), "CPU label", m.group()))
        for m in STATUS.finditer(self.mask):
            out.append((m.start(), m.end(), "status", m.group()))
        return sorted(out)

    @staticmethod
    def exempt(line, col, token):
        before, after = line[:col], line[col + len(token):]
        if not token[0].isdigit():
            return False
        if re.search(r"[A-Za-z_]\w*[:\-]$", before):                 # cuda:0, top-1, x86-64
            return True
        if re.match(r"[A-Za-z_]", after) and not GLUED_UNIT.match(after):  # 8x128, 2nd, 3D
            return True
        if re.match(r"\.\d", after) or re.match(r"-\d\d-\d\d", after):  # 2.11.0, 2026-12-01
            return True
        if re.search(r"\d{4}-\d\d-$|\d\.$", before):
            return True
        if VERSIONED.search(before):
            return True
        if re.fullmatch(r"\s*(?:[-*]\s+)?", before) and re.match(r"\.\s", after):  # numbered list
            return True
        return False

    def blocks(self):
        """(start, end) offsets of paragraphs, list items and tables: the scope of 'names results/'."""
        out, first = [], None
        for index, line in enumerate(self.lines + [""]):
            new_item = re.match(r"\s*(?:[-*]|\d+\.)\s", line)
            if index in self.fenced or not line.strip() or new_item or line.lstrip().startswith("#"):
                if first is not None:
                    out.append((self.starts[first], self.starts[index] - 1))
                first = None
            if index < len(self.lines) and index not in self.fenced and line.strip():
                if first is None:
                    first = index
                if line.lstrip().startswith("#"):
                    out.append((self.starts[index], self.starts[index] + len(line)))
                    first = None
        return out

    # --- JSON, CSV, text ---------------------------------------------------------------------
    def document(self, rel):
        if rel not in self.documents:
            path = self.root / rel
            try:
                text = path.read_text(encoding="utf-8")
                if rel.endswith(".json"):
                    self.documents[rel] = json.loads(text)
                elif rel.endswith(".csv"):
                    self.documents[rel] = [{k: number_or_text(v) for k, v in row.items()}
                                           for row in csv.DictReader(io.StringIO(text))]
                else:
                    self.documents[rel] = text
            except (OSError, ValueError) as e:
                self.documents[rel] = e
        return self.documents[rel]

    @staticmethod
    def rows(doc):
        if isinstance(doc, list):
            return doc  # a .csv file's rows
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
        parts = path.strip().split(".")
        for n, part in enumerate(parts):
            if part == "*":  # every item: a list of what the rest of the path reads in each
                if not isinstance(obj, list):
                    return None
                rest = ".".join(parts[n + 1:])
                return [checker.resolve(item, rest) if rest else item for item in obj]
            if isinstance(obj, list) and part.isdigit() and int(part) < len(obj):
                obj = obj[int(part)]
            elif isinstance(obj, list) and not part.isdigit():  # the item whose "name" is part
                named = [item for item in obj if isinstance(item, dict) and item.get("name") == part]
                if len(named) != 1:
                    return None
                obj = named[0]
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
        if not selectors:
            return doc
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
        value = self.resolve(row, path) if path is not None else row
        label = f"{rel}: {where}{path}{':' + unit if unit else ''}" if path is not None else \
            f"{rel}: {where.rstrip(': ')}"
        if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
            value = [v for items in value for v in items]  # a * inside a *: every point's variants
        counted = re.fullmatch(r"count(?:([<>]=?)(" + NUMBER + "))?", unit or "")
        if counted and isinstance(value, (list, dict)):
            op, bound = counted.group(1), counted.group(2)
            if op:  # how many items are above (or below) the bound: "ahead at three shapes of four"
                b = numeric(bound)
                test = {">": lambda v: v > b, ">=": lambda v: v >= b, "<": lambda v: v < b, "<=": lambda v: v <= b}[op]
                value = sum(1 for v in value if isinstance(v, (int, float)) and test(v))
            else:
                value = len(value)
            unit = None
        if isinstance(value, list) and value and all(isinstance(v, str) for v in value) \
                and not re.fullmatch(NUMBER, printed.replace(",", "")) and printed.lower() not in WORDS:
            wrong = sorted({v for v in value if not printed.lower().startswith(v.lower())})
            if wrong:
                self.problem(line_no, f"{label}: README says {printed} for every one, the file has {json.dumps(wrong)}")
            return
        if isinstance(value, str) and not re.fullmatch(NUMBER, printed.replace(",", "")) \
                and printed.lower() not in WORDS:
            if not printed.lower().startswith(value.lower()) or not value:
                self.problem(line_no, f"{label}: README says {printed}, the file has {json.dumps(value)}")
            return
        if isinstance(value, str):
            value = number_or_text(value)
        if not isinstance(value, (int, float)) or isinstance(value, bool):
            self.problem(line_no, f"{label}: README says {printed}, the JSON has {json.dumps(value)}")
            return
        if unit:
            value = UNITS[unit](value)
        if printed.lower() in WORDS:
            if value != WORDS[printed.lower()]:
                self.problem(line_no, f"{label}: README says {printed}, the file says {self.key_text(value)}")
            return
        expected = at_precision(value, printed)
        if expected is not None and numeric(expected) == numeric(printed):
            return
        fix = (line_index, start, start + len(printed), expected) if expected is not None else None
        self.problem(line_no, f"{label}: README says {printed}, the file says {expected} ({value!r})", fix)

    # --- markers ----------------------------------------------------------------------------
    def check_tables(self):
        for m in TABLE_MARKER.finditer(self.text):
            rel = m.group(1)
            marker_line = self.text.count("\n", 0, m.start()) + 1
            if marker_line - 1 in self.fenced or self.in_span(m.start()):
                continue
            filters = []
            for f in m.group(2).split():
                if "=" not in f:
                    self.problem(marker_line, f"{rel}: a table's row filter is KEY=VALUE,VALUE…: \"{f}\"")
                    continue
                k, v = f.split("=", 1)
                filters.append((k, set(v.split(","))))
            template_lines = [l.strip() for l in m.group(3).split("\n") if l.strip()]
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
                continue
            head = body[0] - 2
            for offset in range(m.start(), self.starts[body[-1] + 1]):
                self.covered.add(offset)
            listed = set()
            for index in body:
                listed.add(self.check_table_row(index, rel, template, keys))
            self.check_every_row(marker_line, head, rel, keys, filters, listed)

    def check_every_row(self, marker_line, head, rel, keys, filters, listed):
        doc = self.document(rel)
        if isinstance(doc, Exception):
            return
        for row in self.rows(doc):
            if not all(self.key_text(self.resolve(row, k)) in vs for k, vs in filters):
                continue
            key = tuple(self.key_text(self.resolve(row, path.strip())) for _, path in keys)
            if key not in listed:
                what = ", ".join(f"{path.strip()}={v}" for (_, path), v in zip(keys, key))
                self.problem(head + 1, f"{rel}: the table has no row with {what}, which the file has "
                                       "(list it, or name the rows quoted as KEY=VALUE,… after the file)")

    def check_table_row(self, index, rel, template, keys):
        line = self.lines[index]
        cells = split_row(line, with_offsets=True)
        if len(cells) != len(template):
            self.problem(index + 1, f"{rel}: {len(cells)} cells, the template has {len(template)}")
            return None
        selectors = [(path.strip(), cells[i][0].strip()) for i, path in keys]
        row = self.find_row(index + 1, rel, selectors)
        if row is None:
            return None
        where = ", ".join(f"{k}={v}" for k, v in selectors) + ": "
        for (cell, offset), tmpl in zip(cells, template):
            fields = [p for p in PLACEHOLDER.finditer(tmpl) if p.group(1) != "="]
            if not fields:
                continue
            try:
                pattern, groups = template_regex(tmpl.strip())
            except ValueError as e:
                self.problem(index + 1, f"{rel}: {e}")
                return None
            stripped = cell.strip()
            lead = offset + (len(cell) - len(cell.lstrip()))
            if STATUS.fullmatch(stripped):
                self.checked += 1
                status = row.get("status") if isinstance(row, dict) else None
                if not isinstance(status, str) or status.upper() != stripped.upper():
                    self.problem(index + 1, f"{rel}: {where}README says {stripped}, the row's status is "
                                            f"{json.dumps(status)}")
                continue
            m = re.fullmatch(pattern, stripped)
            if not m:
                if re.search(r"\d", stripped):
                    self.problem(index + 1, f"{rel}: {where}cell \"{stripped}\" does not have the "
                                                     f"template's form \"{tmpl.strip()}\"")
                continue
            for g, (path, unit) in groups.items():
                self.check_figure(index, lead + m.start(g), m.group(g), row, rel, path, unit, where)
        return tuple(v for _, v in selectors)

    def target(self, marker_start, tokens):
        """The last token before a marker on its line with nothing but markup in between."""
        index = self.line_of(marker_start)
        before = [t for t in tokens if self.starts[index] <= t[0] < marker_start]
        if not before:
            return None
        t = before[-1]
        if re.search(r"\d", self.mask[t[1]:marker_start]):
            return None
        return t

    def check_markers(self, tokens):
        blocks = self.blocks()
        previous_end = {}  # block → end of the last marker in it
        for start, end, kind, body in self.markers:
            whole = kind.endswith("+")
            kind = kind.rstrip("+")
            index = self.line_of(start)
            line_no = index + 1
            block = next(((a, b) for a, b in blocks if a <= start <= b + 1), (start, start))
            prev = previous_end.get(block, block[0])
            previous_end[block] = end
            if kind == "figures":
                continue  # check_tables
            if kind == "figure":
                t = self.target(start, tokens)
                if t is None:
                    self.problem(line_no, f"{body.split(';')[0]}: no number or word right before the figure marker")
                    continue
                self.covered.add(t[0])
                self.check_inline(index, t, body)
            elif kind == "cpu":
                t = self.target(start, tokens)
                if t is None or t[2] != "CPU label":
                    self.problem(line_no, f"{body}: no CPU label (Zen 3, Zen 4, Sapphire Rapids, Emerald Rapids, CPU unknown) "
                                          "right before the cpu marker")
                    continue
                self.covered.add(t[0])
                self.check_cpu(line_no, t[3], body)
            else:
                if not body:
                    self.problem(line_no, f"a {kind} marker names its source: <!-- {kind}: WHERE -->")
                    continue
                alone = self.lines[index].strip() == self.text[start:end].strip()
                if whole and not alone:  # "(paragraph)": all of its paragraph or list item
                    a, b = block
                elif alone:
                    a = self.starts[index + 1]
                    b = a
                    for j in range(index + 1, len(self.lines)):
                        if not self.lines[j].strip():
                            break
                        b = self.starts[j] + len(self.lines[j])
                else:
                    a = max(prev, sentence_start(self.mask, block[0], start))
                    b = start
                if (whole or alone) and "results/" in self.text[a:b]:
                    self.problem(line_no, f"a {kind} marker for a whole paragraph cannot cover one that names results/: "
                                          "its figures need their own markers (mark sentence by sentence)")
                    continue
                scope = [t for t in tokens if a <= t[0] < b]
                for t in scope:
                    self.covered.add(t[0])
                if kind == "from":
                    self.check_from(line_no, body, scope)

    def check_inline(self, index, token, body):
        parts = [p.strip() for p in body.split(";")]
        rel = parts[0]
        line_no = index + 1
        printed = self.text[token[0]:token[1]]
        col = token[0] - self.starts[index]
        if len(parts) < 2:
            self.problem(line_no, "a figure marker is FILE; KEY=VALUE…; PATH (or FILE; /REGEX/)")
            return
        doc = self.document(rel)
        if isinstance(doc, Exception):
            self.problem(line_no, f"{rel}: cannot read: {doc}")
            return
        if isinstance(doc, str):
            if len(parts) != 2 or not (parts[1].startswith("/") and parts[1].endswith("/") and len(parts[1]) > 2):
                self.problem(line_no, f"{rel}: a figure of a text file is FILE; /REGEX/ (group 1 is the figure)")
                return
            try:
                found = re.search(parts[1][1:-1], doc, re.M)
            except re.error as e:
                self.problem(line_no, f"{rel}: bad regex {parts[1]}: {e}")
                return
            if not found or not found.groups():
                self.problem(line_no, f"{rel}: {parts[1]} does not match the file (or has no group)")
                return
            self.check_figure(index, col, printed, found.group(1), rel, None, None, f"{parts[1]}: ")
            return
        rest = parts[1:]
        divisor = next((i for i, q in enumerate(rest) if q.startswith("÷")), None)
        if divisor is not None:  # a ratio of two figures: SEL…; PATH; ÷ SEL…; PATH
            num, den = rest[:divisor], [rest[divisor][1:].strip()] + rest[divisor + 1:]
            values = []
            den[-1], _, unit = den[-1].partition(":")
            if unit and unit not in UNITS:
                self.problem(line_no, f"{rel}: unknown unit \"{unit}\" (known: {', '.join(UNITS)})")
                return
            for side in (num, den):
                *sel, field = side
                if not field or any("=" not in q for q in sel):
                    self.problem(line_no, f"{rel}: a ratio is SEL…; PATH; ÷ SEL…; PATH: {body}")
                    return
                row = self.find_row(line_no, rel, [tuple(x.strip() for x in q.split("=", 1)) for q in sel])
                if row is None:
                    return
                values.append(self.resolve(row, field))
            if not all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values) or not values[1]:
                self.problem(line_no, f"{rel}: {body}: not two numbers to divide: {values}")
                return
            self.check_figure(index, col, printed, {"ratio": values[0] / values[1]}, rel, "ratio", unit or None,
                              f"{'; '.join(num)} ÷ {'; '.join(den)}: ")
            return
        *selectors, field = rest
        if any("=" not in s for s in selectors):
            self.problem(line_no, f"{rel}: a row selector is KEY=VALUE: {selectors}")
            return
        selectors = [tuple(x.strip() for x in s.split("=", 1)) for s in selectors]
        row = self.find_row(line_no, rel, selectors)
        if row is None:
            return
        path, _, unit = field.partition(":")
        if unit and unit not in UNITS and not re.fullmatch(r"count[<>]=?" + NUMBER, unit):
            self.problem(line_no, f"{rel}: unknown unit \"{unit}\" (known: {', '.join(UNITS)})")
            return
        where = ", ".join(f"{k}={v}" for k, v in selectors) + (": " if selectors else "")
        self.check_figure(index, col, printed, row, rel, path.strip(), unit or None, where)

    def folder_cpu(self, folder):
        """The CPU a results folder was made on, as a label, from its JSON environment or COMMAND."""
        cpu_id, features = "", set()
        for path in sorted((self.root / folder).glob("*.json")):
            doc = self.document(str(path.relative_to(self.root)))
            env = doc.get("environment") if isinstance(doc, dict) else None
            if env is None and isinstance(doc, dict) and doc.get("kind") == "sweep" and doc.get("points"):
                env = (doc["points"][0].get("result") or {}).get("environment")  # a sweep: its first point's
            if isinstance(env, dict):
                cpu_id = cpu_id or env.get("cpu_id") or ""
                features |= set(env.get("cpu_features") or [])
            elif isinstance(doc, dict) and isinstance(doc.get("cpu"), str):  # a peers.json: its "cpu" line
                m = re.search(r"\b(AuthenticAMD|GenuineIntel) family \d+ model \d+", doc["cpu"])
                cpu_id = cpu_id or (m.group() if m else "")
        command = self.document(f"{folder}/COMMAND")
        if isinstance(command, str):
            m = re.search(r"\b(AuthenticAMD|GenuineIntel) family \d+ model \d+", command)
            cpu_id = cpu_id or (m.group() if m else "")
            m = re.search(r"CPU features: ([^;.\n]*)", command)
            features |= set(m.group(1).split()) if m else set()
        return cpu_label(cpu_id, features)

    def check_cpu(self, line_no, label, folders):
        """label: the README's; folders: one or more, separated by spaces or commas."""
        said = "unknown" if "unknown" in label else re.sub(r"\s+", " ", label).replace("Zen3", "Zen 3").replace("Zen4", "Zen 4")
        for folder in re.split(r"[\s,]+", folders.strip()):
            folder = folder.rstrip("/")
            if not (self.root / folder).is_dir():
                self.problem(line_no, f"{folder}: no such folder")
                continue
            self.checked += 1
            made_on = self.folder_cpu(folder)
            if said != made_on:
                self.problem(line_no, f"{folder}: README says {label}, its COMMAND/results.json record "
                                      f"{made_on if made_on != 'unknown' else 'no CPU model'}")

    def check_from(self, line_no, rel, scope):
        doc = self.document(rel)
        if isinstance(doc, Exception):
            self.problem(line_no, f"{rel}: cannot read: {doc}")
            return
        text = doc if isinstance(doc, str) else (self.root / rel).read_text(encoding="utf-8")
        values = [numeric(v) for v in re.findall(NUMBER, text) if re.fullmatch(NUMBER, v)]
        values += [v * 100 for v in values] + [v / 2**20 for v in values]
        for start, end, kind, printed in scope:
            if kind != "number":
                continue
            self.checked += 1
            if printed.lower() in WORDS:
                printed_value = WORDS[printed.lower()]
                ok = printed_value in values
            else:
                after = self.mask[end:end + 2]
                if re.fullmatch(r"\d+", printed) and int(printed) < 100 and not re.match(r"\s?[×%]", after):
                    self.problem(line_no, f"{rel}: {printed}: a from marker does not vouch for an integer "
                                          "below 100; give it a figure marker")
                    continue
                ok = any(numeric(at_precision(v, printed) or "nan") == numeric(printed) for v in values)
            if not ok:
                self.problem(line_no, f"{rel}: README says {printed}, which the file does not hold")

    def check_unmarked(self, tokens):
        naming = [(a, b) for a, b in self.blocks() if "results/" in self.text[a:b]]
        for start, end, kind, text in tokens:
            if start in self.covered:
                continue
            if kind != "number" and not any(a <= start <= b for a, b in naming):
                continue
            index = self.line_of(start)
            self.unmarked.append((index + 1, start - self.starts[index] + 1, kind, text))

    def run(self):
        tokens = self.tokens()
        self.check_tables()
        self.check_markers(tokens)
        self.check_unmarked(tokens)
        for line_no, col, kind, text in self.unmarked:
            self.problem(line_no, f"unmarked {kind} \"{text}\" (column {col}): mark it "
                                  "(figure, cpu, quoted, spec or from: see this script's help)")
        return self


# --- helpers --------------------------------------------------------------------------------
def number_or_text(v):
    try:
        return float(v)
    except (TypeError, ValueError):
        return v


def cpu_label(cpu_id, features):
    if "GenuineIntel" in cpu_id or "amx_bf16" in features:
        if re.search(r"family 6 model 207\b", cpu_id):
            return "Emerald Rapids"
        return "Sapphire Rapids" if "amx_bf16" in features or re.search(r"family 6 model (143|167)\b", cpu_id) \
            else "unknown"
    m = re.search(r"AuthenticAMD family 25 model (\d+)", cpu_id)
    if m:
        return {"1": "Zen 3", "17": "Zen 4"}.get(m.group(1), "unknown")
    if "avx512_bf16" in features:
        return "Zen 4"
    if "avx2" in features:
        return "Zen 3"
    return "unknown"


def sentence_start(mask, lo, pos):
    start = lo
    for m in SENTENCE_END.finditer(mask, lo, pos):
        start = m.end()
    return start


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
    return float(text.replace("−", "-").replace(",", ""))


def at_precision(value, printed):
    """value written as printed is: same decimals, or same significant digits in e-notation."""
    if not math.isfinite(value):
        return None
    text = printed.replace("−", "-").replace(",", "")
    if "e" in text.lower():
        mantissa, exponent = re.split("[eE]", text)
        decimals = len(mantissa.partition(".")[2])
        m, e = f"{value:.{decimals}e}".split("e")
        out = f"{m}e{int(e)}"
    else:
        decimals = len(text.partition(".")[2])
        out = f"{value:,.{decimals}f}" if "," in printed else f"{value:.{decimals}f}"
        if float(out.replace(",", "")) == 0:
            out = out.lstrip("-")
    return out.replace("-", "−") if "−" in printed else out


def pages_of(readme):
    """README.md, then every docs/*.md beside it (sorted): the pages whose figures are checked."""
    return [readme] + sorted((readme.parent / "docs").glob("*.md"))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--readme", default=str(Path(__file__).resolve().parent.parent / "README.md"))
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--fix", action="store_true",
                      help="write each mismatched figure's value into its page (README.md or docs/*.md)")
    mode.add_argument("--unmarked", action="store_true",
                      help="list only what no marker covers (exit 1 when there is any)")
    args = parser.parse_args()
    readme = Path(args.readme)
    if not readme.is_file():
        print(f"check-readme-figures.py: no such file: {readme}", file=sys.stderr)
        return 2
    root = readme.parent
    checked = [(page, checker(page, root).run()) for page in pages_of(readme)]
    if args.unmarked:
        count = 0
        for page, c in checked:
            for line_no, col, kind, text in c.unmarked:
                line = c.lines[line_no - 1]
                context = line[max(0, col - 41):col + len(text) + 39].strip()
                print(f"{page}:{line_no}:{col}: {kind} \"{text}\" … {context} …")
            count += len(c.unmarked)
        print(f"check-readme-figures.py: {count} unmarked", file=sys.stderr)
        return 1 if count else 0
    left = written = 0
    for page, c in checked:
        fixes = [fix for _, _, fix in c.problems if fix] if args.fix else []
        for line_no, message, fix in sorted(c.problems, key=lambda p: p[:2]):
            print(f"{page}:{line_no}: {message}{' (fixed)' if fix in fixes and fix else ''}", file=sys.stderr)
        if fixes:
            lines = list(c.lines)
            for index, start, end, new in sorted(fixes, reverse=True):
                lines[index] = lines[index][:start] + new + lines[index][end:]
            page.write_text("\n".join(lines), encoding="utf-8")
            print(f"check-readme-figures.py: wrote {len(fixes)} figures into {page}; reread the prose around them",
                  file=sys.stderr)
        left += len(c.problems) - len(fixes)
        written += len(fixes)
    total = sum(c.checked for _, c in checked)
    if left:
        print(f"check-readme-figures.py: {left} problems in {total} checked figures", file=sys.stderr)
        return 1
    names = [str(page.relative_to(root)) for page, _ in checked]
    where = readme.name if len(checked) == 1 else \
        f"{readme.name} and docs/*.md ({', '.join(f'{n} {c.checked}' for n, (_, c) in zip(names, checked) if c.checked)})"
    print(f"check-readme-figures.py: {total} figures in {where} match their files; "
          "every other number is marked or exempt")
    return 0


if __name__ == "__main__":
    sys.exit(main())
