"""Benchmark ``gradekit batch``: throughput at -j 2 and -j 1, parallel efficiency, cost of sealed grading.

    python bench/bench_batch.py [--n 40] [--tasks sdpa,masks] [--profile quick] [--sample 4] [--rounds 3]

Defaults: 40 submissions, every task, the quick profile (about 7 minutes on a 2-core machine).

Grades ``--n`` submissions cycling through correct alternatives (``tests/submissions``), catalogued
bugs (``Catalogue.write_mutant``), the skeleton (nothing implemented) and a syntax
error; once with ``-j 2`` and once with ``-j 1`` (fresh output folders, so nothing is cached).
Then grades a few of them with ``api.check`` in this process, sealed and not, to price the
worker. Prints the figures with the load average (the machine may be shared).
"""

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import speed  # noqa: E402 - bench/speed.py

from grader import api  # noqa: E402
from grader.assignment import load  # noqa: E402
from grader.batch import runner  # noqa: E402
from grader.bugs.catalogue import Catalogue  # noqa: E402

ASSIGNMENT = load()
CATALOGUE = Catalogue(ASSIGNMENT)
BUGS = CATALOGUE.bugs
TASK_IDS = ASSIGNMENT.task_ids


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
            CATALOGUE.write_mutant(bugs[i // 4 % len(bugs)], dest)
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


def _fmt(values):
    return "(" + ", ".join(f"{v:.2f}" for v in values) + ")"


def load():
    one, five, fifteen = os.getloadavg()
    return f"load average {one:.2f} {five:.2f} {fifteen:.2f}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--tasks", default=",".join(TASK_IDS), help="default: every task")
    parser.add_argument("--profile", default="quick")
    parser.add_argument("--sample", type=int, default=4, help="submissions for the sealed grading's overhead")
    parser.add_argument("--rounds", type=int, default=3, help="alternated rounds for the sealed grading's overhead")
    speed.add_argument(parser)
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
            cpu0 = speed.children_cpu_seconds()
            t0 = time.perf_counter()
            res = runner.batch(submissions=work / "class", out=work / f"out{jobs}", jobs=jobs, **opts)
            times[jobs] = time.perf_counter() - t0
            cores = (speed.children_cpu_seconds() - cpu0) / times[jobs]
            print(
                f"-j {jobs}: {times[jobs]:7.1f} s  {60 * args.n / times[jobs]:6.1f} submissions/min  "
                f"{cores:.2f} cores busy on average (graded {res.graded}; before: {before}; after: {load()})"
            )
        efficiency = times[1] / (2 * times[2])
        print(f"parallel efficiency time_j1 / (2 * time_j2) = {efficiency:.0%} (target >= 85%)")
        speed.record(
            "batch.efficiency",
            f"batch, {args.n} submissions, {'every task' if len(tasks) == len(TASK_IDS) else args.tasks}, "
            f"{args.profile}: `-j 2` vs `-j 1`",
            f"{times[2]:.1f} s vs {times[1]:.1f} s: parallel efficiency {efficiency:.0%}",
            ">= 85%",
            efficiency >= 0.85,
        )
        sample = sorted((work / "class").iterdir())[: args.sample]
        from grader.submission import forkserver

        if forkserver.supported():
            forkserver.shared().wait_ready()  # a batch judge keeps one fork server for all its submissions
        for sealed in (False, True):  # both paths warm, as in a judge that has graded a submission
            api.check(path=sample[0], sealed=sealed, **opts)
        rounds = {False: [], True: []}
        for _ in range(args.rounds):  # alternated, so that a change in the machine's speed hits both alike
            for sealed in (False, True):
                t0 = time.perf_counter()
                for sub in sample:
                    api.check(path=sub, sealed=sealed, **opts)
                rounds[sealed].append((time.perf_counter() - t0) / len(sample))
        cost = {k: statistics.median(v) for k, v in rounds.items()}
        print(
            f"per submission (median of {args.rounds} alternated rounds over {len(sample)} submissions): "
            f"in-process check {cost[False]:.2f} s {_fmt(rounds[False])}, sealed check {cost[True]:.2f} s "
            f"{_fmt(rounds[True])}, overhead {cost[True] / cost[False]:.2f}x (target <= 1.3x); "
            f"batch -j 1 {times[1] / args.n:.2f} s; {load()}"
        )
        speed.record(
            "batch.sealed_per_submission",
            f"a sealed check against an in-process one, per submission (median of {args.rounds} alternated rounds "
            f"over {len(sample)} submissions, {args.profile})",
            f"{cost[True]:.2f} s vs {cost[False]:.2f} s: {cost[True] / cost[False]:.2f}x",
            "<= 1.3x",
            cost[True] / cost[False] <= 1.3,
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
