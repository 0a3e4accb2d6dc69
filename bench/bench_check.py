"""Wall time of ``gradekit check``: quick and full profiles, in-process and --sealed, and diagnosis cost.

Run: ``.venv/bin/python bench/bench_check.py [--assignment decoder_lm] [--repeat 5] [--no-record]`` (the venv that
``scripts/gradekit`` makes).
Prints figures; asserts nothing (speed targets live here, not in the test suite).

Each grading prints how many stand-in calls it answered (an isolated check's reference parts, computed by the
judge: ``grader.submission.standin``) and the time they took.

Targets on a 2-core machine: full <= 30 s, quick <= 8 s, --sealed within 1.15x of in-process,
a submission with three bugs within 1.5x of the solution (diagnosis runs only on failures).
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import speed  # noqa: I001 - bench/speed.py, first: it notes the load average at the start

from grader import api
from grader.assignment import load
from grader.bugs.catalogue import Catalogue, apply
from grader.submission import standin

ASSIGNMENT = load()
BUG_BY_ID = Catalogue(ASSIGNMENT).by_id
SOLUTION_ROOT = ASSIGNMENT.reference
CONTRACT_FILES = ASSIGNMENT.contract_files

THREE_BUGS = ("sdpa.fill_zero", "layernorm.unbiased_variance", "greedy.reads_first_position")


def three_bug_submission(dest):
    dest.mkdir(parents=True, exist_ok=True)
    for file in CONTRACT_FILES:
        source = (SOLUTION_ROOT / file).read_text()
        for bug_id in THREE_BUGS:
            if BUG_BY_ID[bug_id].file == file:
                source = apply(BUG_BY_ID[bug_id], source)
        (dest / file).write_text(source)
    return dest


LAST_STANDINS = [0, 0.0]
"""The stand-in calls of the last ``timed`` grading, and the seconds the judge spent answering them."""


def timed(label, **kwargs):
    before = dict(standin.STATS)
    start = time.perf_counter()
    result = api.check(**kwargs)
    seconds = time.perf_counter() - start
    calls = standin.STATS["messages"] - before["messages"]
    spent = standin.STATS["seconds"] - before["seconds"]
    LAST_STANDINS[:] = [calls, spent]
    print(
        f"{label:<44} {seconds:6.1f} s   score {result.score:g}/{result.max_score:g}   stand-in calls {calls} "
        f"({spent:.2f} s computing the reference's parts)",
        flush=True,
    )
    return seconds


def command(sealed, assignment):
    """``(wall, cpu)`` seconds of the whole command a student types: ``gradekit check solution [--sealed]``. The CPU
    time is that of every process the command started and waited for (judges, workers, the fork server): what the
    command costs a machine whose cores are all busy (a batch), where a second judge hides none of it. It runs as a
    user's Python runs it (``speed.users_env``: compiled modules written and kept)."""
    root = load(assignment).reference
    argv = [sys.executable, "-m", "grader", "check", str(root), "--quiet", "--assignment", assignment]
    argv += ["--sealed"] if sealed else []
    cpu = speed.children_cpu_seconds()
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=speed.users_env())
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(argv)} failed:\n{done.stdout}")
    return seconds, speed.children_cpu_seconds() - cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--skip-sealed", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each whole command, alternated (default 3)")
    parser.add_argument(
        "--assignment",
        default=ASSIGNMENT.name,
        help="the assignment whose reference is graded "
        "(default: transformer; the three-bug figure is the transformer's)",
    )
    speed.add_argument(parser)
    args = parser.parse_args()
    name = args.assignment
    label = {"transformer": "the Transformer", "decoder_lm": "the decoder LM"}.get(name, f"the {name}")
    root = load(name).reference
    print(f"cores {os.cpu_count()}, load average {os.getloadavg()[0]:.2f} at start; assignment {name}")
    timed(
        "warm-up (imports, first meta-device use)",
        path=root,
        assignment=name,
        profile="quick",
        tasks=[load(name).task_ids[0]],
    )
    quick = timed("check solution --profile quick", path=root, assignment=name, profile="quick")
    full = timed("check solution --profile full", path=root, assignment=name, profile="full")
    if name == ASSIGNMENT.name:
        with tempfile.TemporaryDirectory() as tmp:
            buggy = three_bug_submission(Path(tmp) / "three_bugs")
            bugs_full = timed("check three-bug submission --profile full", path=buggy, profile="full")
        print(f"three bugs / solution (full): {bugs_full / full:.2f}x   (target <= 1.5x)")
        speed.record(
            "check.three_bugs",
            "a submission with three bugs, full profile, against the solution (diagnosis runs only on failures)",
            f"{bugs_full / full:.2f}x",
            "<= 1.5x",
            bugs_full / full <= 1.5,
        )
    if not args.skip_sealed:
        from grader.submission import forkserver

        if forkserver.supported():
            forkserver.shared().wait_ready()  # as in a batch judge, which keeps one for every submission
        from grader import shards

        judges = shards.wanted(
            type("Runner", (), {"spawn": "fork" if forkserver.supported() else "exec", "twin": None})()
        )
        print(f"--sealed grades with {judges} judge(s) here (grader.shards: two where a core is spare)")
        cold = timed(
            "check solution --profile full --sealed, first", path=root, assignment=name, profile="full", sealed=True
        )
        calls, spent = LAST_STANDINS
        # every later submission a batch judge grades finds the reference's answers it shares between gradings
        sealed_full = statistics.median(
            timed(
                "check solution --profile full --sealed, again", path=root, assignment=name, profile="full", sealed=True
            )
            for _ in range(2)
        )
        print(
            f"sealed / in-process (full, in one process, fork server warm): {sealed_full / full:.2f}x   "
            f"(target <= 1.15x); the first sealed grading of the process: {cold / full:.2f}x"
        )
        speed.record(
            f"check.standin_calls.{name}",
            f"{label}: stand-in calls in a full `--sealed` grading, and the judges' time computing the reference's "
            "parts for them",
            f"{calls:,} calls, {spent:.1f} s",
        )
        in_one = f"{sealed_full / full:.2f}x"
        if judges > 1:
            one = timed(
                "check solution --profile full --sealed, one judge",
                path=root,
                assignment=name,
                profile="full",
                sealed=True,
                shards=1,
            )
            print(f"the same with one judge: {one / full:.2f}x")
            in_one += f" ({one / full:.2f}x)"
        speed.record(
            f"check.sealed_in_process.{name}",
            f"{label}: `--profile full --sealed` against in-process, in one process (fork server warm, as in a batch "
            f"judge: median of the 2nd and 3rd sealed gradings), {judges} judge(s)"
            + ("; in brackets, one judge" if judges > 1 else "")
            + "; the process's first sealed grading (its shared reference answers still empty) after the semicolon",
            in_one + f"; first {cold / full:.2f}x",
            "<= 1.15x",
            sealed_full / full <= 1.15,
        )
        runs, cpus = {False: [], True: []}, {False: [], True: []}
        for sealed in (False, True):  # untimed: what a user's first run leaves (the kit's modules compiled)
            command(sealed, name)
        for _ in range(args.repeat):  # alternated, so that a change in the machine's speed hits both alike
            for sealed in (False, True):
                wall, cpu = command(sealed, name)
                runs[sealed].append(wall)
                cpus[sealed].append(cpu)
        plain, sealed_cmd = statistics.median(runs[False]), statistics.median(runs[True])
        cpu_plain, cpu_sealed = statistics.median(cpus[False]), statistics.median(cpus[True])
        print(
            f"whole command, median of {args.repeat}: gradekit check solution {plain:.1f} s "
            f"{_fmt(runs[False])}; --sealed {sealed_cmd:.1f} s {_fmt(runs[True])}"
        )
        print(f"sealed / in-process (whole command): {sealed_cmd / plain:.2f}x   (target <= 1.15x)")
        print(
            f"CPU time of the whole command, median: {cpu_plain:.1f} s vs {cpu_sealed:.1f} s --sealed: "
            f"{cpu_sealed / cpu_plain:.2f}x (what a machine with no spare core pays)"
        )
        speed.record(
            f"check.sealed_whole.{name}",
            f"{label}: whole command `gradekit check solution` (full), in process vs `--sealed` ({judges} judge(s)), "
            f"median of {args.repeat} alternated runs after an untimed one of each; in brackets, their CPU time "
            "(every process they waited for: the cost where no core is spare)",
            f"{plain:.1f} s vs {sealed_cmd:.1f} s: {sealed_cmd / plain:.2f}x (CPU {cpu_plain:.1f} s vs "
            f"{cpu_sealed:.1f} s: {cpu_sealed / cpu_plain:.2f}x)",
            "<= 1.15x",
            sealed_cmd / plain <= 1.15,
        )
    for profile, seconds, target in (("quick", quick, 8), ("full", full, 30)):
        speed.record(
            f"check.{profile}.{name}",
            f"{label}: `check solution --profile {profile}`, in the grader's process, after imports",
            f"{seconds:.1f} s",
            f"<= {target} s",
            seconds <= target,
        )
    print(
        f"targets: quick {quick:.1f} s (<= 8 s), full {full:.1f} s (<= 30 s); "
        f"load average {os.getloadavg()[0]:.2f} at end"
    )


def _fmt(values):
    return "(" + ", ".join(f"{v:.1f}" for v in values) + ")"


if __name__ == "__main__":
    main()
