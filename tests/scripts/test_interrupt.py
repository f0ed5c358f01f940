#!/usr/bin/env python3
"""A run stopped by a real signal (README "What happens when things go wrong"), end to end.

The fixture's run would take hours (100000 fixed rounds). The test waits until the timed rounds
have started, then:
  1. SIGINT: the run stops after the current pass and writes every report, marked incomplete
     ("complete": false with the reason, a banner in report.md), with whole rounds only; exit 130.
  2. SIGTERM: the same, exit 143.
  3. two SIGINTs: the second ends the process at once with 130 (or, when the first one's reports were
     already written, the default action of SIGINT); whatever report exists under its
     own name is whole (reports are only ever renamed into place). Whether the first one's reports
     were already written by then is a race with a pass of milliseconds, so either is accepted.
Usage: test_interrupt.py ATTNBENCH_BINARY FIXTURE_CONFIG
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def start(binary, config, out):
    return subprocess.Popen([binary, "run", config, "--out", out, "--force"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)


def wait_for_timed(proc, timeout_s=120):
    """Reads stderr until the timed phase's first progress line; returns what was read."""
    seen = []
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith("[timed]"):
            time.sleep(1.0)  # let a few rounds complete
            return seen
    proc.kill()
    sys.exit("the run never reached its timed rounds:\n" + "".join(seen))


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
    print("ok:", what)


def main():
    binary, config = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        for sig, status in ((signal.SIGINT, 130), (signal.SIGTERM, 143)):
            out = os.path.join(tmp, sig.name)
            proc = start(binary, config, out)
            wait_for_timed(proc)
            proc.send_signal(sig)
            stdout, stderr = proc.communicate(timeout=120)
            check(proc.returncode == status, f"{sig.name}: exit status {proc.returncode} == {status}\n{stderr}")
            with open(os.path.join(out, "results.json")) as f:
                res = json.load(f)
            check(res["complete"] is False, f"{sig.name}: results.json says complete: false")
            check(sig.name in res["incomplete_reason"], f"{sig.name}: the reason names the signal: "
                  f"{res['incomplete_reason']!r}")
            check(res["measure"]["stop_reason"] == "interrupted", f"{sig.name}: stop_reason interrupted")
            rounds = [v["repetition"]["rounds"] for v in res["variants"]]
            check(len(set(rounds)) == 1 and rounds[0] >= 1,
                  f"{sig.name}: every variant has the same whole rounds ({rounds})")
            with open(os.path.join(out, "report.md")) as f:
                check("Incomplete run" in f.read(), f"{sig.name}: report.md has the incomplete banner")
            check(os.path.exists(os.path.join(out, "results.csv")), f"{sig.name}: results.csv written")
            check("INCOMPLETE" in stdout, f"{sig.name}: the printed table says INCOMPLETE")
            leftovers = [n for n in os.listdir(out) if ".tmp-" in n]
            check(not leftovers, f"{sig.name}: no temporary files left ({leftovers})")

        out = os.path.join(tmp, "twice")
        proc = start(binary, config, out)
        wait_for_timed(proc)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.05)  # two signals at once would merge into one pending signal
        proc.send_signal(signal.SIGINT)
        proc.communicate(timeout=60)
        # 130 from attnbench's handler, or -2 (killed by SIGINT: a shell shows 130 too) when the
        # reports were already written and the handlers gone when the second one came.
        check(proc.returncode in (130, -signal.SIGINT), f"two SIGINTs: exit status {proc.returncode} is 130 or -2")
        if os.path.exists(os.path.join(out, "results.json")):
            with open(os.path.join(out, "results.json")) as f:
                json.load(f)  # whole, or it would not parse
        print("ok: two SIGINTs: no half-written report")


if __name__ == "__main__":
    main()
