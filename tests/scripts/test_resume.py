#!/usr/bin/env python3
"""`attnbench run CONFIG --resume DIR` after a real signal (README "What happens when things go wrong").

  1. A run stopped by SIGINT in its timed rounds leaves resume.json; `--resume` runs only the missing
     rounds (it says how many it kept) and ends with reports of the same form as an uninterrupted
     run's: complete, every variant with all its rounds, exit 0, and no resume.json left behind.
  2. `--resume` with a different config (one more round) is refused with exit 2, naming both.
  3. A sweep stopped by SIGTERM in its second point: `--resume` keeps point 1 as it was (not run
     again), goes on with point 2's kept rounds, runs point 3, and the sweep is complete.
  4. A server run stopped by SIGINT in its rate sweep: `--resume` keeps every timed round and runs
     the rate sweep again in full (README: a rate sweep is not resumed part way).
Usage: test_resume.py ATTNBENCH_BINARY RUN_CONFIG SWEEP_CONFIG SERVER_CONFIG
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
import time


def check(cond, what):
    if not cond:
        sys.exit("FAIL: " + what)
    print("ok:", what)


def interrupt_when(binary, config, out, sig, wanted, timeout_s=120):
    """Runs CONFIG into OUT, sends SIG once a stderr line starts with each of `wanted` in turn."""
    proc = subprocess.Popen([binary, "run", config, "--out", out, "--force"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    seen, todo = [], list(wanted)
    deadline = time.time() + timeout_s
    while todo and time.time() < deadline:
        line = proc.stderr.readline()
        if not line:
            break
        seen.append(line)
        if line.startswith(todo[0]):
            todo.pop(0)
    if todo:
        proc.kill()
        sys.exit(f"the run never printed {todo[0]!r}:\n" + "".join(seen))
    time.sleep(0.3)  # a few rounds
    proc.send_signal(sig)
    stdout, stderr = proc.communicate(timeout=120)
    return proc.returncode, stdout, "".join(seen) + stderr


def resume(binary, config, out):
    proc = subprocess.run([binary, "run", config, "--resume", out], capture_output=True, text=True, timeout=300)
    return proc.returncode, proc.stdout, proc.stderr


def load(path):
    with open(path) as f:
        return json.load(f)


def main():
    binary, run_config, sweep_config, server_config = sys.argv[1:5]
    rounds_wanted = load(run_config)["measure"]["repetitions"]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "run")
        status, _, stderr = interrupt_when(binary, run_config, out, signal.SIGINT, ["[timed]"])
        check(status == 130, f"interrupted run: exit {status} == 130\n{stderr}")
        check(os.path.exists(os.path.join(out, "resume.json")), "interrupted run: resume.json written")
        check(f"--resume {out}" in stderr, "interrupted run: says how to resume it")
        kept = load(os.path.join(out, "resume.json"))["state"]["rounds"]
        check(0 < kept < rounds_wanted, f"interrupted run: {kept} complete rounds saved")

        # A different config: refused before anything runs.
        other = os.path.join(tmp, "other.json")
        doc = load(run_config)
        doc["measure"]["repetitions"] += 1
        doc["measure"]["max_repetitions"] += 1
        with open(other, "w") as f:
            json.dump(doc, f)
        status, _, stderr = resume(binary, other, out)
        check(status == 2, f"another config: exit {status} == 2\n{stderr}")
        check("belongs to another config" in stderr and "resume.json" in stderr,
              f"another config: the message names it: {stderr.strip()}")

        status, stdout, stderr = resume(binary, run_config, out)
        check(status == 0, f"resumed run: exit {status} == 0\n{stderr}")
        check(f"{kept} complete round" in stderr, f"resumed run: says it kept {kept} rounds")
        res = load(os.path.join(out, "results.json"))
        check(res["complete"] is True, "resumed run: results.json complete")
        rounds = [v["repetition"]["rounds"] for v in res["variants"]]
        check(rounds == [rounds_wanted] * len(rounds), f"resumed run: every variant has {rounds_wanted} rounds ({rounds})")
        check(all(v["status"] == "PASS" for v in res["variants"]), "resumed run: every variant PASS")
        check(not os.path.exists(os.path.join(out, "resume.json")), "resumed run: resume.json removed")
        status, _, stderr = resume(binary, run_config, out)
        check(status == 2 and ("nothing to resume" in stderr or "not found" in stderr),
              f"a finished run: --resume refused ({stderr.strip()})")

        out = os.path.join(tmp, "sweep")
        status, _, stderr = interrupt_when(binary, sweep_config, out, signal.SIGTERM, ["point 2/3", "[timed]"])
        check(status == 143, f"interrupted sweep: exit {status} == 143\n{stderr}")
        state = load(os.path.join(out, "resume.json"))
        check(state["kind"] == "sweep" and state["point"] == 1, f"interrupted sweep: stopped in point 2 ({state['point'] + 1})")
        first = load(os.path.join(out, "results.json"))["points"][0]
        status, stdout, stderr = resume(binary, sweep_config, out)
        check(status == 0, f"resumed sweep: exit {status} == 0\n{stderr}")
        check("point 1/3: batch_size=4 (kept from the interrupted sweep)" in stderr, "resumed sweep: point 1 kept")
        check("point 2/3: batch_size=8 (resumed after" in stderr, "resumed sweep: point 2 resumed")
        sweep = load(os.path.join(out, "results.json"))
        check(sweep["complete"] is True and len(sweep["points"]) == 3, "resumed sweep: complete, 3 points")
        check(sweep["points"][0] == first, "resumed sweep: point 1 is the interrupted run's, unchanged")
        for p in sweep["points"]:
            rounds = [v["repetition"]["rounds"] for v in p["result"]["variants"]]
            check(rounds == [80, 80], f"resumed sweep: {p['params']} has 80 rounds per variant ({rounds})")
        check(not os.path.exists(os.path.join(out, "resume.json")), "resumed sweep: resume.json removed")

        out = os.path.join(tmp, "server")
        status, _, stderr = interrupt_when(binary, server_config, out, signal.SIGINT, ["[server]"])
        check(status == 130, f"interrupted server run: exit {status} == 130\n{stderr}")
        state = load(os.path.join(out, "resume.json"))["state"]
        check(state["rounds"] == 3, f"interrupted server run: its 3 timed rounds saved ({state['rounds']})")
        status, _, stderr = resume(binary, server_config, out)
        check(status == 0, f"resumed server run: exit {status} == 0\n{stderr}")
        check("3 complete rounds kept" in stderr, "resumed server run: the rounds kept")
        res = load(os.path.join(out, "results.json"))
        rates = len(load(server_config)["server"]["rates"])
        check(res["complete"] is True, "resumed server run: complete")
        for v in res["variants"]:
            check(v["repetition"]["rounds"] == 3 and len(v["server"]) == rates,
                  f"resumed server run: {v['name']} has 3 rounds and all {rates} rates")


if __name__ == "__main__":
    main()
