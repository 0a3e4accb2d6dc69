"""Verdicts over stand-ins against verdicts over the reference's parts themselves, case by case.

    python bench/standin_verdicts.py [--which catalogue|blind|all] [--jobs 2]

Grades each case twice in this process, quick profile, the case's task and the tasks built on it: once with the
reference's parts (the in-process default) and once over stand-ins answered through the wire format
(``CheckOptions.stand_ins``: what a sealed worker's isolated checks use, without the pipe). Prints every check whose
status, score, message or diagnoses differ, and a count. Cases: every catalogued mutant of both assignments and the
first assignment's blind bugs (``tests/blind_bugs``), in a fixed shuffled order so that a part of a run is a fair
sample. ``--jobs N`` grades them in N processes of this script, each a shard (``--shard i --shards N``: every N-th
case from the i-th), adds up their counts and records the whole run as one figure (a shard run alone prints its own
and records nothing). All of them took about 40 minutes in one process here, 14 with ``--jobs 2`` on 2 cores.
"""

import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import speed  # noqa: E402 - bench/speed.py

from grader import api  # noqa: E402
from grader.assignment import load  # noqa: E402
from grader.bugs.catalogue import Catalogue  # noqa: E402


def signature(result):
    out = {}
    for t in result.tasks:
        for c in t.checks:
            key = c.message.key if c.message is not None else None
            out[c.id] = (c.status, c.score, key, tuple((d.kind, d.id) for d in c.diagnoses))
    return out


def cases(which):
    items = []
    if which in ("catalogue", "all"):
        for name in ("transformer", "decoder_lm"):
            items += [("catalogue", name, bug) for bug in Catalogue(load(name)).bugs]
    if which in ("blind", "all"):
        from bench_diagnosis import DATA

        items += [("blind", "transformer", case) for case in json.loads((DATA / "labels.json").read_text())]
    random.Random(27).shuffle(items)
    return items


def build(kind, name, item, dest):
    """Write the case into ``dest``; return its name and the tasks to grade."""
    if kind == "catalogue":
        a = load(name)
        Catalogue(a).write_mutant(item, dest)
        return item.id, [item.task] + [t for t in a.task_ids if item.task in a.all_deps(t)]
    from bench_diagnosis import DATA, tasks_of

    shutil.copytree(DATA / "bases" / item["base"], dest)
    shutil.copy(DATA / "cases" / item["key"] / item["file"], dest / item["file"])
    return item["key"], tasks_of(item["file"])


def grade_shard(which, shard, shards):
    """Grade every ``shards``-th case from the ``shard``-th, printing each; ``(cases, checks, checks that differ)``."""
    diffs = checks = n = 0
    start = time.time()
    for kind, name, item in cases(which)[shard::shards]:
        with tempfile.TemporaryDirectory() as tmp:
            dest = Path(tmp) / "sub"
            key, tasks = build(kind, name, item, dest)
            options = dict(path=dest, assignment=name, profile="quick", tasks=tasks)
            parts, standins = signature(api.check(**options)), signature(api.check(**options, stand_ins=True))
        n += 1
        checks += len(parts)
        for check in sorted(set(parts) | set(standins)):
            if parts.get(check) != standins.get(check):
                diffs += 1
                print("DIFF", kind, name, key, check, parts.get(check), standins.get(check), flush=True)
        print(f"case {n} {name} {key}: {len(parts)} checks", flush=True)
    print(f"shard {shard}: {n} cases, {checks} checks, {diffs} differ, {time.time() - start:.0f} s", flush=True)
    return n, checks, diffs


def in_processes(which, jobs):
    """``grade_shard`` in ``jobs`` processes of this script at once (their lines interleaved); the counts added up."""
    with tempfile.TemporaryDirectory() as tmp:
        counts = [Path(tmp) / f"shard{i}.json" for i in range(jobs)]
        procs = [
            subprocess.Popen(
                [sys.executable, __file__, "--which", which, "--shard", str(i), "--shards", str(jobs)],
                env={**os.environ, "GRADEKIT_VERDICTS_COUNTS": str(counts[i])},
            )
            for i in range(jobs)
        ]
        failed = [i for i, proc in enumerate(procs) if proc.wait() != 0 or not counts[i].exists()]
        if failed:
            raise SystemExit(f"shard(s) {failed} of {jobs} did not finish: nothing recorded")
        totals = [json.loads(path.read_text()) for path in counts]
    return tuple(sum(t[k] for t in totals) for k in range(3))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--which", choices=("catalogue", "blind", "all"), default="all")
    parser.add_argument("--jobs", type=int, default=1, help="processes grading the cases (one shard each)")
    parser.add_argument("--shard", type=int, default=0, help="grade only this shard of --shards (no record)")
    parser.add_argument("--shards", type=int, default=1)
    speed.add_argument(parser)
    args = parser.parse_args()
    if args.jobs > 1:
        start = time.time()
        n, checks, diffs = in_processes(args.which, args.jobs)
        print(f"{args.jobs} shards: {n} cases, {checks} checks, {diffs} differ, {time.time() - start:.0f} s")
    else:
        n, checks, diffs = grade_shard(args.which, args.shard, args.shards)
        counts = os.environ.get("GRADEKIT_VERDICTS_COUNTS")
        if counts:  # a shard of ``--jobs``: its counts for the parent to add up
            Path(counts).write_text(json.dumps([n, checks, diffs]))
    if args.shards == 1 and args.which == "all":  # a shard's figure is part of one: the whole run is recorded
        speed.record(
            "standin.verdicts",
            "verdicts over stand-ins against over the reference's parts (every catalogued mistake and blind bug)",
            f"{n} cases, {checks:,} checks: {'none differs' if not diffs else f'{diffs} differ'}",
            "none differs",
            diffs == 0,
        )


if __name__ == "__main__":
    main()
