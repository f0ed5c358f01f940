#!/usr/bin/env python3
"""`attnbench ab` end to end (issue 33, part 1), on a tiny config.

  - the same binary against itself: exit 0, ab.json/ab.md/JUnit written, every variant measured
    through paired rounds (ratio = candidate centre / base centre, method paired), outputs equal;
  - a candidate that computes something else (the test-hooks binary scaling one variant's
    outputs): that variant FAILs, exit 1, a JUnit <failure>;
  - protocol errors: a binary that is not attnbench, one that exits at once, one that speaks
    another protocol version, an attnbench without `serve`, a path that does not exist: exit 2
    with a message naming the option and the binary; a child that dies mid-run: an error naming it;
  - --out over an earlier ab without --force: exit 2, nothing rewritten.

    test_ab.py ATTNBENCH ATTNBENCH_TESTHOOKS CONFIG
"""
import json
import os
import stat
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

THRESHOLD = "50%"  # the mechanics, not the machine's noise: no verdict may depend on a loaded runner


def run(args, **kw):
    p = subprocess.run(args, capture_output=True, text=True, timeout=240, **kw)
    return p.returncode, p.stdout, p.stderr


def script(path, body):
    with open(path, "w") as f:
        f.write("#!/bin/sh\n" + body + "\n")
    os.chmod(path, os.stat(path).st_mode | stat.S_IEXEC)
    return path


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    print("ok:", what)


def main():
    attnbench, hooks, config = sys.argv[1:4]
    tmp = tempfile.mkdtemp(prefix="attnbench-test-ab-")

    # 1. the same binary against itself
    out = os.path.join(tmp, "self")
    junit = os.path.join(out, "ab-junit.xml")
    rc, so, se = run([attnbench, "ab", "--base", attnbench, "--candidate", attnbench, config, "--out", out,
                      "--junit", junit, "--threshold", THRESHOLD])
    check(rc == 0, f"self-comparison exits 0 (got {rc}; stderr: {se[-2000:]})")
    ab = json.load(open(os.path.join(out, "ab.json")))
    check([v["variant"] for v in ab["variants"]] == ["baseline", "sdpa"], "ab.json has every variant in order")
    for v in ab["variants"]:
        check(v["verdict"] in ("SAME", "FASTER"), f"{v['variant']}: verdict {v['verdict']} at threshold {THRESHOLD}")
        check(v["check"]["status"] == "PASS" and v["check"]["rel_l2"] <= 1e-6,
              f"{v['variant']}: one binary's two processes compute the same outputs (rel L2 {v['check']['rel_l2']})")
        check(v["ratio_method"] == "paired" and v["rounds"] >= 4, f"{v['variant']}: paired over {v['rounds']} rounds")
        b, c = v["base"]["samples"], v["candidate"]["samples"]
        check(len(b) == len(c) == v["rounds"], f"{v['variant']}: one base and one candidate pass per round")
        centre = v["candidate"]["samples_per_s"] / v["base"]["samples_per_s"]
        check(abs(v["ratio"] / centre - 1) < 1e-9, f"{v['variant']}: ratio {v['ratio']:.6f} = centre ratio {centre:.6f}")
        check(v["ratio_ci_low"] <= v["ratio"] <= v["ratio_ci_high"], f"{v['variant']}: interval holds its centre")
        check(abs(v["ratio_rel_half_width"] - (v["ratio_ci_high"] - v["ratio_ci_low"]) / 2 / v["ratio"]) < 1e-9,
              f"{v['variant']}: half-width reported")
    check(ab["base"]["version"] == ab["candidate"]["version"] != "", "both builds' versions recorded")
    md = open(os.path.join(out, "ab.md")).read()
    check("No regression" in md and "sdpa" in md, "ab.md says no regression and lists the variants")
    suite = ET.parse(junit).getroot()
    check(len(suite.findall(".//testcase")) == 2 and not suite.findall(".//failure"), "JUnit: 2 cases, no failure")

    # 2. --out over the earlier files without --force
    rc, so, se = run([attnbench, "ab", "--base", attnbench, "--candidate", attnbench, config, "--out", out])
    check(rc == 2 and "ab.json" in se, f"an earlier ab.json is not overwritten without --force (rc {rc})")

    # 3. a candidate that computes something else
    perturbed = script(os.path.join(tmp, "perturbed"), f'exec "{hooks}" "$@" --test-perturb-outputs sdpa')
    out = os.path.join(tmp, "perturbed-out")
    junit = os.path.join(tmp, "perturbed-junit.xml")
    rc, so, se = run([attnbench, "ab", "--base", attnbench, "--candidate", perturbed, config, "--out", out,
                      "--junit", junit, "--threshold", THRESHOLD])
    check(rc == 1, f"a candidate with other outputs exits 1 (got {rc}; stderr: {se[-2000:]})")
    ab = json.load(open(os.path.join(out, "ab.json")))
    rows = {v["variant"]: v for v in ab["variants"]}
    check(rows["sdpa"]["verdict"] == "FAIL" and "outputs differ" in rows["sdpa"]["reason"],
          f"the perturbed variant FAILs as different outputs: {rows['sdpa']['reason']}")
    check(rows["baseline"]["verdict"] != "FAIL", "the untouched variant does not FAIL")
    check(ab["regressed"] is True and "REGRESSION" in so, "the report says REGRESSION")
    failures = ET.parse(junit).getroot().findall(".//failure")
    check(len(failures) == 1 and "FAIL" in failures[0].get("message", ""), "JUnit: one failure, the FAIL")

    # 4. protocol errors
    cases = [
        ("not attnbench", script(os.path.join(tmp, "echo"), 'echo "hello from $1"'), "does not speak"),
        ("exits at once", script(os.path.join(tmp, "exit3"), "exit 3"), "exited with status 3 before it said anything"),
        ("another protocol version", script(os.path.join(tmp, "v99"), 'echo "attnbench-serve 99 0.0 abc"; cat > /dev/null'),
         "protocol version 99"),
        ("an attnbench without serve", script(os.path.join(tmp, "old"), f'exec "{attnbench}" no-such-subcommand "$2"'),
         "older than `attnbench ab`"),
        ("a path that does not exist", os.path.join(tmp, "no-such-binary"), "cannot start"),
    ]
    for what, binary, expect in cases:
        rc, so, se = run([attnbench, "ab", "--base", attnbench, "--candidate", binary, config])
        check(rc == 2 and "--candidate" in se and expect in se and binary in se,
              f"{what}: exit 2 naming --candidate and the binary, saying \"{expect}\" (rc {rc}; stderr: {se[-600:]})")
    # Greets and says ready as the real one does, then exits: its stdout closes before the first answer.
    # (Not `serve | head -n 2` with serve reading the parent's requests: the shell then holds the pipe
    # open while serve, its SIGPIPE ignored, waits for the next request — a deadlock of the fixture.)
    dies = script(os.path.join(tmp, "dies"), f'"{attnbench}" serve "$2" </dev/null | head -n 2')
    rc, so, se = run([attnbench, "ab", "--base", attnbench, "--candidate", dies, config])
    check(rc not in (0, 2) and "candidate build" in se + so and dies in se + so,
          f"a child that dies mid-run: an error naming the candidate build (rc {rc}; {se[-600:]})")
    print("all ab checks passed")


if __name__ == "__main__":
    main()
