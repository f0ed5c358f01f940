#!/usr/bin/env python3
"""`attnbench run --tensorboard DIR` against TensorBoard's own reader (issue 18, part 2).

Runs the server fixture (throughput per timed pass, memory, latency percentiles per offered rate)
and the train fixture (loss per step) with --tensorboard, then reads every events file with
tensorboard.backend.event_processing.event_accumulator, in the test-only environment
scripts/setup.sh makes (default /opt/attnbench/tools-venv, not the LibTorch one), and checks every
scalar: its tags, its steps and values against results.json. Skips (77, with the reason) only
when that environment has no tensorboard.

    test_tensorboard_events.py ATTNBENCH SERVER_CONFIG TRAIN_CONFIG TOOLS_PYTHON
"""
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

SKIP = 77

# Runs under the tools environment's python: every scalar of every run under the log dir.
READER = r"""
import json, sys
from tensorboard.backend.event_processing import event_accumulator as ea
out = {}
for run in sys.argv[2:]:
    acc = ea.EventAccumulator(run, size_guidance={ea.SCALARS: 0})
    acc.Reload()
    out[run] = {tag: [[e.step, e.value] for e in acc.Scalars(tag)] for tag in acc.Tags()["scalars"]}
json.dump(out, open(sys.argv[1], "w"))
"""


def run(attnbench, config, out, board):
    r = subprocess.run([attnbench, "run", config, "--out", out, "--quiet", "--tensorboard", board],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, f"attnbench exited {r.returncode}:\n{r.stdout}{r.stderr}"
    return json.load(open(os.path.join(out, "results.json")))


def read_back(tools_python, board, variants, tmp):
    runs = [os.path.join(board, "tensorboard", v) for v in variants]
    for r in runs:
        files = [f for f in os.listdir(r) if "tfevents" in f]
        assert len(files) == 1, (r, files)
    dump = os.path.join(tmp, "scalars.json")
    subprocess.run([tools_python, "-c", READER, dump] + runs, check=True, timeout=120)
    got = json.load(open(dump))
    return {os.path.basename(k): v for k, v in got.items()}


def close(a, b):  # float32 in the file
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9)


def main():
    attnbench, server_cfg, train_cfg, tools_python = sys.argv[1:5]
    if not os.path.exists(tools_python) or subprocess.run(
            [tools_python, "-c", "import tensorboard"], capture_output=True).returncode != 0:
        print(f"SKIPPED: no tensorboard in {tools_python}'s environment (scripts/setup.sh installs it into "
              "the test-only /opt/attnbench/tools-venv)")
        return SKIP
    tmp = tempfile.mkdtemp(prefix="attnbench-tb-")
    try:
        # The server scenario: throughput per timed pass, memory, latency per offered rate.
        board = os.path.join(tmp, "board")
        res = run(attnbench, server_cfg, os.path.join(tmp, "server"), board)
        names = [v["name"] for v in res["variants"]]
        scalars = read_back(tools_python, board, names, tmp)
        for v in res["variants"]:
            s = scalars[v["name"]]
            reps = len(v["throughput"]["samples"])
            assert [st for st, _ in s["throughput/samples_per_s"]] == list(range(reps)), s["throughput/samples_per_s"]
            # The same passes the report's statistics come from, in order.
            for (_, got), want in zip(s["throughput/samples_per_s"], v["throughput"]["samples"]):
                assert close(got, want), (v["name"], got, want)
            assert all(val > 0 for _, val in s["throughput/tokens_per_s"])
            assert all(val > 1e6 for _, val in s["memory/process_resident_bytes"])
            assert [val for _, val in s["memory/check_peak_bytes"]] == [float(v["peak_memory_bytes"])] or \
                close(s["memory/check_peak_bytes"][0][1], v["peak_memory_bytes"])
            for key in ("p50_ms", "p90_ms", "p99_ms"):
                got = s["server/" + key]
                assert [st for st, _ in got] == [round(p["offered_rate"]) for p in v["server"]], got
                for (_, val), p in zip(got, v["server"]):
                    assert close(val, p[key]), (key, val, p[key])
            assert len(s["server/achieved_rate"]) == len(v["server"])

        # The train scenario: the check pass's loss per step.
        board = os.path.join(tmp, "train-board")
        res = run(attnbench, train_cfg, os.path.join(tmp, "train"), board)
        scalars = read_back(tools_python, board, [v["name"] for v in res["variants"]], tmp)
        for v in res["variants"]:
            losses = scalars[v["name"]]["train/loss"]
            want = v["train"]["losses"]
            assert [st for st, _ in losses] == list(range(len(want))), losses
            assert all(close(got, w) for (_, got), w in zip(losses, want)), (losses, want)
        print(f"tensorboard test: every scalar read back with TensorBoard's event_accumulator")
        return 0
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
