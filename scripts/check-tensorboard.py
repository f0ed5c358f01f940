#!/usr/bin/env python3
# Checks that the PyTorch Profiler TensorBoard plugin (pip install torch-tb-profiler, in any venv)
# loads what `attnbench profile` wrote:  python scripts/check-tensorboard.py <out>/tensorboard
# Loads attnbench's TensorBoard traces with the torch-tb-profiler plugin's own parser, run by run,
# and prints what its views would show. Exceptions propagate (the plugin's loader swallows them).
import os, sys
from torch_tb_profiler import consts, io
from torch_tb_profiler.profiler.data import RunProfileData
from torch_tb_profiler.profiler.run_generator import RunGenerator
from torch_tb_profiler.profiler.loader import RunLoader

def main():
    logdir = sys.argv[1]
    for run in sorted(os.listdir(logdir)):
        run_dir = os.path.join(logdir, run)
        for f in sorted(os.listdir(run_dir)):
            m = consts.WORKER_PATTERN.match(f)
            assert m, f"{f} does not match the plugin's worker pattern"
            worker, span = m.group(1), m.group(2)
            data = RunProfileData.parse(worker, span[1:] if span else None, os.path.join(run_dir, f), None)
            profile = RunGenerator(worker, span, data).generate_run_profile()
            steps = profile.overview["steps"]["rows"] if profile.overview else []
            ops = profile.operation_table_by_name["data"] if hasattr(profile, "operation_table_by_name") and profile.operation_table_by_name else []
            print(f"run {run}: worker {worker} span {span}: views {[v.name for v in profile.views]}; "
                  f"{len(steps)} steps in the overview; {len(ops)} operators; memory view: {profile.memory_snapshot is not None if hasattr(profile,'memory_snapshot') else 'n/a'}")
        # and the plugin's own run loader (what `tensorboard --logdir` uses)
        r = RunLoader(run, run_dir, io.Cache()).load()
        print(f"  RunLoader: run {r.name}, workers {r.workers}, spans {r.get_spans()}, profiles {len(r.profiles)}")

if __name__ == "__main__":
    main()
