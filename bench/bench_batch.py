"""Benchmark ``gradekit batch``: throughput at -j 2 and -j 1, parallel efficiency, cost of isolation.

    python bench/bench_batch.py [--n 40] [--tasks sdpa,masks] [--profile quick]

Grades ``--n`` submissions cycling through correct alternatives (``tests/submissions``), catalogued
bugs (``grader.bugs.catalogue.write_mutant``), the skeleton (nothing implemented) and a syntax
error; once with ``-j 2`` and once with ``-j 1`` (fresh output folders, so nothing is cached).
Then grades a few of them with ``api.check`` in this process, isolated and not, to price the
worker. Prints the figures with the load average (the machine may be shared).
"""

import argparse
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from grader import api  # noqa: E402
from grader.batch import runner  # noqa: E402
from grader.bugs.catalogue import BUGS, write_mutant  # noqa: E402


def make_class(folder, n, tasks):
    folder.mkdir(parents=True)
    alts = sorted(p for p in (ROOT / "tests" / "submissions").iterdir() if p.is_dir())
    bugs = [b for b in BUGS if b.task in tasks] or list(BUGS)
    kinds = []
    for i in range(n):
        dest = folder / f"s{i:03d}"
        kind = i % 4
        if kind == 0:
            shutil.copytree(alts[i // 4 % len(alts)], dest)
            kinds.append("correct")
        elif kind == 1:
            write_mutant(bugs[i // 4 % len(bugs)], dest)
            kinds.append("buggy")
        elif kind == 2:
            shutil.copytree(ROOT / "skeleton", dest, ignore=shutil.ignore_patterns("__pycache__"))
            kinds.append("skeleton")
        else:
            shutil.copytree(alts[0], dest)
            (dest / "masks.py").write_text("def padding_mask(:\n")
            (dest / "attention.py").write_text("import torch\n\ndef scaled_dot_product_attention(q, k, v\n")
            kinds.append("syntax")
    return kinds


def load():
    return "load average %.2f %.2f %.2f" % os.getloadavg()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--tasks", default="sdpa,masks")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--sample", type=int, default=4, help="submissions for the isolation overhead")
    args = parser.parse_args(argv)
    tasks = args.tasks.split(",")
    work = Path(tempfile.mkdtemp(prefix="gradekit-bench-"))
    try:
        make_class(work / "class", args.n, tasks)
        opts = dict(tasks=tasks, profile=args.profile, call_timeout=30, total_timeout=120)
        print(f"{args.n} submissions, tasks {args.tasks}, profile {args.profile}; {os.cpu_count()} cores; {load()}")
        times = {}
        for jobs in (2, 1):
            before = load()
            t0 = time.perf_counter()
            res = runner.batch(submissions=work / "class", out=work / f"out{jobs}", jobs=jobs, **opts)
            times[jobs] = time.perf_counter() - t0
            print(f"-j {jobs}: {times[jobs]:7.1f} s  {60 * args.n / times[jobs]:6.1f} submissions/min  "
                  f"(graded {res.graded}; before: {before}; after: {load()})")
        print(f"parallel efficiency time_j1 / (2 * time_j2) = {times[1] / (2 * times[2]):.0%} (target >= 85%)")
        sample = sorted((work / "class").iterdir())[:args.sample]
        cost = {}
        for isolated in (False, True):
            t0 = time.perf_counter()
            for sub in sample:
                api.check(path=sub, isolated=isolated, **opts)
            cost[isolated] = (time.perf_counter() - t0) / len(sample)
        print(f"per submission: in-process check {cost[False]:.2f} s, isolated check {cost[True]:.2f} s, "
              f"overhead {cost[True] / cost[False]:.2f}x (target <= 1.3x); batch -j 1 "
              f"{times[1] / args.n:.2f} s; {load()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
