#!/usr/bin/env python3
"""report.html and history.html in a real browser (issue 33, part 3): Debian's headless Chromium
loads each page from disk; the DOM it built must hold every variant with figures equal to
results.json (the data-value of each cell, and its text to 4 significant digits), the charts the
inline script draws must be there, the console must be free of errors, and nothing may be fetched
from the network (any console message counts: the page logs none). A screenshot of each page is taken. A page with a planted script error must be
caught, so the console check can fail. Skips (exit 77) only when chromium is not installed.

    test_html_report.py ATTNBENCH RESULTS_DIR [SCREENSHOT_DIR]
"""
import json
import math
import os
import re
import shutil
import subprocess
import sys
import tempfile
from html.parser import HTMLParser

SKIP = 77


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def browse(browser, page, profile, screenshot=None):
    """The DOM after the page's scripts ran, and the console lines Chromium logged."""
    args = [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
            f"--user-data-dir={profile}", "--enable-logging=stderr", "--v=0", "--virtual-time-budget=5000",
            "--window-size=1200,1800", "--hide-scrollbars"]
    url = "file://" + os.path.abspath(page)
    dom = subprocess.run(args + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
    console = [l for l in dom.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    if screenshot:
        shot = subprocess.run(args + [f"--screenshot={os.path.abspath(screenshot)}", url], capture_output=True,
                              text=True, timeout=120)
        console += [l for l in shot.stderr.splitlines() if "CONSOLE" in l or "Uncaught" in l]
    return dom.stdout, console


class Cells(HTMLParser):
    """Every <td data-value> inside a <tr data-variant>, and the ids of drawn charts."""

    def __init__(self):
        super().__init__()
        self.rows = []  # (table id, variant, css class, data-value, text)
        self.table = None
        self.variant = None
        self.cell = None
        self.svgs = []
        self.figure = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "table":
            self.table = a.get("id")
        elif tag == "tr":
            self.variant = a.get("data-variant")
        elif tag == "td" and "data-value" in a and self.variant is not None:
            self.cell = [self.table, self.variant, a.get("class"), a["data-value"], ""]
        elif tag == "figure":
            self.figure = a.get("id")
        elif tag == "svg" and self.figure:
            self.svgs.append(self.figure)

    def handle_endtag(self, tag):
        if tag == "td" and self.cell:
            self.rows.append(tuple(self.cell))
            self.cell = None
        elif tag == "figure":
            self.figure = None

    def handle_data(self, data):
        if self.cell:
            self.cell[4] += data


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    print("ok:", what)


def g4(v):
    return "n/a" if v is None else "%.4g" % v


def console_errors(lines):
    # Chromium logs every console message at INFO, console.error included, without its level: the
    # page's script logs nothing, so any console line is an error.
    return [l for l in lines if "CONSOLE" in l or "Uncaught" in l]


def main():
    attnbench, results_dir = sys.argv[1:3]
    shots = sys.argv[3] if len(sys.argv) > 3 else None
    browser = chromium()
    if not browser:
        print("SKIPPED: chromium is not installed (scripts/setup.sh installs Debian's chromium)")
        sys.exit(SKIP)
    tmp = tempfile.mkdtemp(prefix="attnbench-test-html-")
    out = os.path.join(tmp, "page")
    rc = subprocess.run([attnbench, "report", "--formats", "html", results_dir, "--out", out]).returncode
    check(rc == 0, f"attnbench report --formats html {results_dir}")
    page = os.path.join(out, "report.html")
    html = open(page).read()
    check(not re.search(r"<link|\ssrc=|@import|url\(", html), "no external resource referenced")
    check(set(re.findall(r"https?://[^\s\"'<>]+", html)) <= {"http://www.w3.org/2000/svg"},
          "no URL but the SVG namespace")

    shot = os.path.join(shots or tmp, "report.png")
    dom, console = browse(browser, page, os.path.join(tmp, "profile"), shot)
    check(not console_errors(console), f"no console errors ({console_errors(console)})")
    check(os.path.getsize(shot) > 10000, f"screenshot taken ({shot})")
    cells = Cells()
    cells.feed(dom)
    check(set(cells.svgs) == {"chart-throughput", "chart-speedup"}, f"the script drew both charts ({cells.svgs})")

    results = json.load(open(os.path.join(results_dir, "results.json")))
    by = {(t, v, c): (value, text) for t, v, c, value, text in cells.rows}
    for v in results["variants"]:
        name = v["name"]
        figures = {("throughput", "throughput"): v["throughput"]["geomean"],
                   ("throughput", "throughput-low"): v["throughput"]["geomean_ci_low"],
                   ("throughput", "throughput-high"): v["throughput"]["geomean_ci_high"],
                   ("speedup", "speedup"): v["speedup"]["geomean"],
                   ("speedup", "speedup-low"): v["speedup"]["geomean_ci_low"],
                   ("speedup", "speedup-high"): v["speedup"]["geomean_ci_high"],
                   ("latency", "p50"): v["latency_ms"]["p50"],
                   ("latency", "p99"): v["latency_ms"]["p99"]}
        for (table, cls), expected in figures.items():
            got = by.get((table, name, cls))
            check(got is not None, f"{name}: {table}/{cls} present")
            value, text = got
            if expected is None:
                check(value == "" and text == "n/a", f"{name}: {cls} n/a as in results.json")
            else:
                check(math.isclose(float(value), expected, rel_tol=1e-15) and text == g4(expected),
                      f"{name}: {cls} = {text} ({value}) as results.json's {expected}")
        for m in v.get("metrics", []):
            got = by.get(("metrics", name, "metric"))
            check(got is not None, f"{name}: metric {m['name']} present")

    # The console check can fail: a page whose script throws.
    broken = os.path.join(tmp, "broken.html")
    open(broken, "w").write(html.replace("'use strict';", "'use strict'; undefinedFunction();"))
    _, console = browse(browser, broken, os.path.join(tmp, "profile2"))
    check(console_errors(console), "a planted script error is caught by the console check")

    # The history page, from a small history of this run.
    db = os.path.join(tmp, "h.db")
    rc = subprocess.run([attnbench, "history", "add", "--db", db, results_dir], capture_output=True).returncode
    hpage = os.path.join(tmp, "history.html")
    rc2 = subprocess.run([attnbench, "history", "html", "--db", db, hpage], capture_output=True).returncode
    check(rc == 0 and rc2 == 0, "history add and history html")
    dom, console = browse(browser, hpage, os.path.join(tmp, "profile3"), os.path.join(shots or tmp, "history.png"))
    check(not console_errors(console), f"history page: no console errors ({console_errors(console)})")
    cells = Cells()
    cells.feed(dom)
    check(cells.svgs == ["chart-series-0"], f"history page: the trend chart drawn ({cells.svgs})")
    names = {v for _, v, _, _, _ in cells.rows}
    check(names == {v["name"] for v in results["variants"]}, "history page: every variant present")
    print("all html checks passed")


if __name__ == "__main__":
    main()
