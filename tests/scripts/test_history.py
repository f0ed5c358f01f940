#!/usr/bin/env python3
"""`attnbench history` (issue 33, part 2) on synthetic series made from a committed results.json.

  - add: runs recorded, the same run again is "already recorded", a folder without results.json
    adds nothing (exit 2);
  - show: a trend table per series, a machine change (another cpu_id) is a series of its own;
  - check: steady points are IN, a point 20% below the band is BELOW (exit 1), while the same drop on
    another machine's first points is n/a (no band yet), never a regression;
  - concurrency: two processes adding 15 runs each at once: 30 runs, integrity_check ok;
  - html: the page is written with a chart per series group (its DOM is tested in the browser test).

    test_history.py ATTNBENCH RESULTS_JSON
"""
import copy
import json
import os
import sqlite3
import subprocess
import sys
import tempfile

SCALED = ("geomean", "geomean_ci_low", "geomean_ci_high", "median", "mean", "min", "max", "stddev")


def run(args):
    p = subprocess.run(args, capture_output=True, text=True, timeout=120)
    return p.returncode, p.stdout, p.stderr


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    print("ok:", what)


def make_run(template, root, name, day, commit, factor, cpu_id="AuthenticAMD family 25 model 1 stepping 1"):
    d = copy.deepcopy(template)
    d["environment"]["date"] = f"2026-11-{day:02d}T10:00:00Z"
    d["environment"]["git_commit"] = commit
    d["environment"]["cpu_id"] = cpu_id
    for v in d["variants"]:
        t = v.get("throughput")
        if not t or t.get("geomean") is None:
            continue
        for k in SCALED:
            if t.get(k) is not None:
                t[k] *= factor
        t["samples"] = [s * factor for s in t["samples"]]
    folder = os.path.join(root, name)
    os.makedirs(folder)
    with open(os.path.join(folder, "results.json"), "w") as f:
        json.dump(d, f)
    return folder


def main():
    attnbench, template_path = sys.argv[1:3]
    template = json.load(open(template_path))
    tmp = tempfile.mkdtemp(prefix="attnbench-test-history-")
    db = os.path.join(tmp, "history.db")

    # Steady noise of ±1%, then a drop of 20%; and a second machine whose first run is 20% lower.
    noise = [1.0, 1.01, 0.99, 1.005, 0.995, 1.0]
    steady = [make_run(template, tmp, f"run{i}", 1 + i, f"c{i:07d}", f) for i, f in enumerate(noise)]
    rc, so, se = run([attnbench, "history", "add", "--db", db] + steady)
    check(rc == 0 and so.count("added") == len(steady), f"six runs added (rc {rc}: {se})")
    rc, so, se = run([attnbench, "history", "add", "--db", db, steady[0]])
    check(rc == 0 and "already recorded" in so, "the same run again is not recorded twice")
    rc, so, se = run([attnbench, "history", "add", "--db", db, steady[1], tmp])
    check(rc == 2 and "results.json" in se, f"a folder without results.json: exit 2 naming the file ({se.strip()})")

    rc, so, se = run([attnbench, "history", "check", "--db", db])
    check(rc == 0 and "| IN |" in so and "BELOW" not in so, "steady series: the newest point is IN its band")

    drop = make_run(template, tmp, "drop", 20, "cdrop00", 0.8)
    other = [make_run(template, tmp, f"other{i}", 21 + i, f"o{i:07d}", 0.8, cpu_id="GenuineIntel family 6 model 143")
             for i in range(2)]
    rc, so, se = run([attnbench, "history", "add", "--db", db, drop] + other)
    check(rc == 0, "the drop and another machine's runs added")
    rc, so, se = run([attnbench, "history", "show", "--db", db])
    check(rc == 0 and so.count("### ") == 2, "show: two series groups, one per machine")
    check("GenuineIntel family 6 model 143" in so and "AuthenticAMD family 25 model 1" in so, "show names each CPU identity")
    baseline = template["baseline"]
    rc, so, se = run([attnbench, "history", "show", "--db", db, "--variant", baseline])
    rows = [l for l in so.splitlines() if l.startswith("| 2026")]
    check(rc == 0 and len(rows) == 9 and all(f"| {baseline} |" in l for l in rows),
          f"show --variant: only {baseline}, 9 points")
    rc, so, se = run([attnbench, "history", "check", "--db", db])
    lines = [l for l in so.splitlines() if l.startswith("| ") and "GenuineIntel" not in l and "series" not in l]
    check(rc == 1 and all("BELOW" in l for l in lines if "AuthenticAMD" in l), "check: the drop is BELOW, exit 1")
    check(all("n/a" in l for l in so.splitlines() if "GenuineIntel" in l),
          "check: another machine's lower figures are a new series (no band yet), not a regression")
    rc, so, se = run([attnbench, "history", "check", "--db", db, "--config", "no-such-config"])
    check(rc == 0, "check --config with no runs: nothing to flag")

    # Two writers at once.
    cdb = os.path.join(tmp, "concurrent.db")
    batches = [[make_run(template, tmp, f"w{w}-{i}", 1 + i % 28, f"w{w}{i:05d}", 1.0) for i in range(15)] for w in range(2)]
    script = 'for d in "$@"; do "$0" history add --db "$DB" "$d" > /dev/null || exit 1; done'
    procs = [subprocess.Popen(["sh", "-c", script, attnbench] + b, env=dict(os.environ, DB=cdb)) for b in batches]
    codes = [p.wait(timeout=300) for p in procs]
    check(codes == [0, 0], f"two concurrent writers both succeed ({codes})")
    con = sqlite3.connect(cdb)
    runs = con.execute("SELECT count(*) FROM runs").fetchone()[0]
    variants = con.execute("SELECT count(*) FROM variants").fetchone()[0]
    integrity = con.execute("PRAGMA integrity_check").fetchone()[0]
    con.close()
    check(runs == 30 and variants == 30 * len(template["variants"]) and integrity == "ok",
          f"after concurrent writes: {runs} runs, {variants} variant rows, integrity {integrity}")

    page = os.path.join(tmp, "history.html")
    rc, so, se = run([attnbench, "history", "html", "--db", db, page])
    html = open(page).read() if rc == 0 else ""
    check(rc == 0 and html.count('class="series"') == 2 and "attnbench-data" in html, "history html: two series groups")
    rc, so, se = run([attnbench, "history", "html", "--db", db, page])
    check(rc == 2, "history html does not overwrite without --force")
    not_db = os.path.join(tmp, "not-a-db")
    open(not_db, "w").write("hello")
    rc, so, se = run([attnbench, "history", "show", "--db", not_db])
    check(rc == 2 and not_db in se, f"a file that is not a database: exit 2 naming it ({se.strip()})")
    print("all history checks passed")


if __name__ == "__main__":
    main()
