"""Benchmark the batch on Dask: local batch -j 2 vs Dask ``local:2`` vs ``local:1``, on the same class.

    python bench/bench_dask.py [--n 40] [--tasks sdpa,masks] [--profile quick]

Defaults: 40 submissions, every task, the quick profile (about 4 minutes on a 2-core machine). The class is
``bench_batch.make_class``'s (correct alternatives, catalogued bugs, the skeleton, syntax errors). Each run grades
it into a fresh output folder (nothing cached) and is timed whole, as ``gradekit batch`` would be: for Dask that
includes starting and closing the local cluster (timed alone first). Prints each run's throughput, the Dask
overhead per submission against the local batch (goal: Dask local:2 within 10% of the local batch's throughput),
the scaling efficiency ``time(local:1) / (2 * time(local:2))`` (goal >= 85%) and submissions per hour per core.
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
sys.path.insert(0, str(ROOT / "bench"))

import speed  # noqa: E402 - bench/speed.py
from bench_batch import TASK_IDS, make_class  # noqa: E402
from bench_batch import load as load_average  # noqa: E402

from grader.batch import distributed, runner  # noqa: E402


def on_dask(scheduler, **kwargs):
    """``gradekit batch --scheduler``: ``runner.batch`` on Dask."""
    return distributed.batch(scheduler, **kwargs)


def cluster_start_s(n):
    """Seconds to start and close a ``local:n`` cluster (no judge started)."""
    t0 = time.perf_counter()
    with distributed.connect(f"local:{n}") as client:
        client.wait_for_workers(n)
    return time.perf_counter() - t0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=40)
    parser.add_argument("--tasks", default=",".join(TASK_IDS), help="default: every task")
    parser.add_argument("--profile", default="quick")
    speed.add_argument(parser)
    args = parser.parse_args(argv)
    tasks = args.tasks.split(",")
    work = Path(tempfile.mkdtemp(prefix="gradekit-bench-dask-"))
    try:
        make_class(work / "class", args.n, tasks)
        opts = dict(submissions=work / "class", tasks=tasks, profile=args.profile, call_timeout=30, total_timeout=120)
        print(
            f"{args.n} submissions, tasks {args.tasks}, profile {args.profile}; {os.cpu_count()} cores; "
            f"{load_average()}"
        )
        print(f"a local:2 cluster alone (start, wait for the workers, close): {cluster_start_s(2):.1f} s")
        runs = {
            "local batch -j 2": lambda out: runner.batch(out=out, jobs=2, **opts),
            "dask local:2": lambda out: on_dask("local:2", out=out, **opts),
            "dask local:1": lambda out: on_dask("local:1", out=out, **opts),
        }
        times, gradebooks = {}, {}
        for i, (name, run) in enumerate(runs.items()):
            before = load_average()
            t0 = time.perf_counter()
            result = run(work / f"out{i}")
            times[name] = time.perf_counter() - t0
            gradebooks[name] = (work / f"out{i}" / "gradebook.csv").read_text(encoding="utf-8")
            failed = sum(1 for r in result.records if r.get("status") == "error" and not r.get("hash"))
            print(
                f"{name:17s} {times[name]:7.1f} s  {60 * args.n / times[name]:6.1f} submissions/min  (graded "
                f"{result.graded}, not completed {failed}; before: {before}; after: {load_average()})"
            )
        local, dask2, dask1 = times["local batch -j 2"], times["dask local:2"], times["dask local:1"]
        same = len(set(gradebooks.values())) == 1
        print(
            f"Dask local:2 throughput = {local / dask2:.0%} of the local batch's (goal >= 90%); overhead "
            f"{(dask2 - local) / args.n:+.2f} s per submission"
        )
        print(f"scaling efficiency time(local:1) / (2 * time(local:2)) = {dask1 / (2 * dask2):.0%} (goal >= 85%)")
        print(
            f"per core: local:1 {3600 * args.n / dask1:.0f} submissions/hour, local:2 "
            f"{3600 * args.n / (2 * dask2):.0f} submissions/hour/core; the three gradebooks "
            f"{'are identical' if same else 'DIFFER'}; {load_average()}"
        )
        what = f"{args.n} submissions, {'every task' if len(tasks) == len(TASK_IDS) else args.tasks}, {args.profile}"
        speed.record(
            "dask.vs_batch",
            f"Dask `local:2` against the local batch `-j 2`, {what}",
            f"{dask2:.1f} s vs {local:.1f} s: {local / dask2:.0%} of its throughput; the gradebooks "
            + ("identical" if same else "DIFFER"),
            ">= 90%, the same gradebook",
            local / dask2 >= 0.9 and same,
        )
        speed.record(
            "dask.scaling",
            "Dask scaling, `local:1` to `local:2`",
            f"{dask1:.1f} s to {dask2:.1f} s: {dask1 / (2 * dask2):.0%}",
            ">= 85%",
            dask1 / (2 * dask2) >= 0.85,
        )
        speed.record(
            "dask.hourly",
            f"Dask submissions an hour a core ({args.profile})",
            f"{3600 * args.n / (2 * dask2):,.0f}-{3600 * args.n / dask1:,.0f}",
        )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
