"""How well the diagnosis names mistakes it has never seen: the blind bug set (tests/blind_bugs).

108 buggy submissions, each one file of an independent writer's correct implementation with one mistake, written
from a plain description or (base W4) chosen by the writer (the writers never saw the catalogue, grader/bugs/ or the
reference); each is labelled
with the catalogue id a teacher would name, or "none". Every one is graded on the task(s) of its file and the
tasks built on them (quick profile, in-process, with diagnosis), and the named bugs are compared with the label:

- named right: the label is named, and nothing else (for a compound mistake, one of its two ids or both); for a
  mistake the catalogue does not have ("none"), no name at all;
- wrong name: some catalogued bug other than the label is named (for "none": any name at all);
- unnamed: no catalogued bug is named.

Prints the three figures and, with --details, a line per case. Goals: 0 wrong names, >= 90% named
right. By default the verdicts are read from the golden records (``tests/golden/blind_bugs.json``): the grading
``tests/corpus/test_diagnosis_blind.py`` compares exactly, so the figures are those of the grading the tests
passed, made once. ``--regrade`` grades every case again (minutes), says which gradings differ from the records,
and prints the time of grading with diagnosis against grading without it.

    python bench/bench_diagnosis.py [--regrade] [--details] [--only m001,m002]
"""

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import speed  # noqa: E402 - bench/speed.py

from grader import api  # noqa: E402
from grader.assignment import load  # noqa: E402
from tests import golden  # noqa: E402

ASSIGNMENT = load()
NAME_TO_FILE, TASK_BY_ID, TASK_IDS, all_deps = (
    ASSIGNMENT.name_to_file,
    ASSIGNMENT.task_by_id,
    ASSIGNMENT.task_ids,
    ASSIGNMENT.all_deps,
)

DATA = ROOT / "tests" / "blind_bugs"
CORPUS = "blind_bugs"
"""The corpus's golden file: ``tests/golden/blind_bugs.json``."""


def tasks_of(file):
    own = {TASK_BY_ID[t].id for t in TASK_IDS if TASK_BY_ID[t].file == file}
    above = {t for t in TASK_IDS if own & set(all_deps(t))}
    return sorted(own | above, key=TASK_IDS.index)


def named(result):
    """Catalogued bug ids the grade names, per task: {task: [ids]} (first diagnosis of each failing check)."""
    found = {}
    for t in result.tasks:
        for c in t.checks:
            for d in c.diagnoses:
                if d.kind == "bug":
                    found.setdefault(t.id, [])
                    if d.id not in found[t.id]:
                        found[t.id].append(d.id)
    return found


def grade_case(case, *, diagnose=True):
    with tempfile.TemporaryDirectory() as tmp:
        sub = Path(tmp) / "sub"
        shutil.copytree(DATA / "bases" / case["base"], sub)
        shutil.copy(DATA / "cases" / case["key"] / case["file"], sub / case["file"])
        t0 = time.perf_counter()
        result = api.check(path=sub, profile="quick", tasks=tasks_of(case["file"]), diagnose=diagnose)
        return result, time.perf_counter() - t0


def verdict(case, found):
    names = {n for ids in found.values() for n in ids}
    labels = {case["label"], case.get("label2")} - {None, "none"}
    if not names:
        return "right" if case["label"] == "none" else "unnamed"  # nothing catalogued to name: none is right
    if case["label"] == "none" or names - labels:
        return "wrong"
    return "right"


def _golden_verdicts(cases):
    """Each case's named bugs and score from the corpus test's golden records (``tests/golden/blind_bugs.json``, the
    grading ``tests/corpus/test_diagnosis_blind.py`` compares exactly): ``{key: (found, score)}``; a case without a
    record is left out and said."""
    records = golden.records(CORPUS)
    out = {}
    for case in cases:
        record = records.get(case["key"])
        if record is None:
            print(f"{case['key']}: no record in tests/golden/{CORPUS}.json (grade it with --regrade)")
            continue
        out[case["key"]] = (record["named"], record["score"][0])
    return out


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--details", action="store_true")
    ap.add_argument("--only", default="")
    ap.add_argument(
        "--regrade",
        action="store_true",
        help="grade every case again (and time diagnosis) instead of reading the golden records the tests compare",
    )
    ap.add_argument("--timing", type=int, default=12, help="with --regrade: cases also timed without diagnosis")
    speed.add_argument(ap)
    args = ap.parse_args(argv)
    cases = json.loads((DATA / "labels.json").read_text(encoding="utf-8"))
    if args.only:
        keep = set(args.only.split(","))
        cases = [c for c in cases if c["key"] in keep]
    counts = {"right": 0, "wrong": 0, "unnamed": 0}
    nothing = 0
    with_d, without_d = 0.0, 0.0
    read = None if args.regrade else _golden_verdicts(cases)
    records = golden.records(CORPUS) if args.regrade else {}
    differ = []
    for i, case in enumerate(cases):
        if read is not None:
            if case["key"] not in read:
                continue
            found, score = read[case["key"]]
        else:
            result, seconds = grade_case(case)
            found, score = named(result), result.score
            if records.get(case["key"]) != golden.verdicts(result):
                differ.append(case["key"])
            if i < args.timing:
                with_d += seconds
                without_d += grade_case(case, diagnose=False)[1]
        v = verdict(case, found)
        counts[v] += 1
        if v == "right" and case["label"] == "none":
            nothing += 1  # no catalogued mistake is this one, and none was named
        if args.details or v == "wrong":
            print(
                f"{case['key']} {v:8} label={case['label']}{'+' + case['label2'] if case.get('label2') else ''} "
                f"named={found} score={score:g}",
                flush=True,
            )
    n = sum(counts.values())
    named_right = counts["right"] - nothing
    named_any = named_right + counts["wrong"]
    source = "graded now" if read is None else f"read from tests/golden/{CORPUS}.json"
    print(f"cases: {n} ({source})")
    print(
        f"right: {counts['right']}/{n} = {100 * counts['right'] / max(n, 1):.1f}%: {named_right} named right, "
        f"{nothing} rightly named nothing (labelled none: no catalogued mistake is theirs)"
    )
    print(f"wrong names: {counts['wrong']}/{named_any} named = {100 * counts['wrong'] / max(named_any, 1):.1f}%")
    print(f"unnamed: {counts['unnamed']}/{n}")
    if read is None:
        print(f"gradings that differ from tests/golden/{CORPUS}.json: {len(differ)} {' '.join(differ)}".rstrip())
    if not args.only and n == len(cases):
        speed.record(
            "diagnosis.blind",
            f"diagnosis of {n} blind mistakes (`tests/blind_bugs`), quick ({source})",
            f"{named_right} named right, {nothing} rightly named nothing (no catalogued mistake is theirs), "
            f"{counts['wrong']} wrong, {counts['unnamed']} unnamed",
            "0 wrong, >= 90% right (named right or rightly nothing)",
            counts["wrong"] == 0 and counts["right"] >= 0.9 * n,
        )
    if without_d:
        print(
            f"time with diagnosis / without, first {min(args.timing, n)} cases: {with_d:.1f} s / {without_d:.1f} s "
            f"= {with_d / without_d:.2f}x"
        )
        if not args.only:
            speed.record("diagnosis.cost", "grading with diagnosis against without", f"{with_d / without_d:.2f}x")


if __name__ == "__main__":
    main()
