"""The decoder-only LM's checks on code written elsewhere: the blind corpus (tests/blind_lm).

A helper wrote it from docs/CONTRACT_LM.md and the skeleton alone (never the reference, the checks or the
catalogue): correct submissions in other styles, and 58 cases of one mistake each over three other correct bases.
Grades each with the quick profile (in-process, with diagnosis) and prints:

- correct submissions: the score (anything below full marks is a false fail, listed with its failing checks);
- bases: the same (they are correct too);
- cases, each graded on the tasks its file can reach (``tests/reach.py``: its base keeps full marks on the others):
  caught (lost points somewhere) or a false pass (full marks), the tasks that lost points, and the catalogued
  bugs the diagnosis named. With labels (tests/blind_lm/bugs/labels.json: {key: bug id or "none"}), the named
  ones are compared: named right, wrong name, unnamed (the rules of bench/bench_diagnosis.py).

By default the quick profile's verdicts are read from the golden records (``tests/golden/blind_lm.json``): the grading
``tests/corpus/test_lm_blind_corpus.py`` compares exactly, so the figures are those of the grading the tests passed,
made once. ``--regrade`` (and ``--profile full``) grades the corpus again, timed, and says which gradings differ.

    python bench/bench_lm_blind.py [--regrade] [--profile quick|full] [--only m001,m002] [--details]
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
from tests.reach import reached_tasks  # noqa: E402

DATA = ROOT / "tests" / "blind_lm"
ASSIGNMENT = "decoder_lm"
CORPUS = "blind_lm"
"""The corpus's golden file: ``tests/golden/blind_lm.json``."""


def grade(path, profile, tasks=None):
    result = api.check(path=path, assignment=ASSIGNMENT, profile=profile, tasks=tasks)
    failing = [c.id for t in result.tasks for c in t.checks if c.status != "passed"]
    lost = [t.id for t in result.tasks if t.score < t.max_score]
    named = []
    for t in result.tasks:
        for c in t.checks:
            for d in c.diagnoses:
                if d.kind == "bug" and d.id not in named:
                    named.append(d.id)
    return result, failing, lost, named


def case_folder(case, tmp):
    folder = Path(tmp) / case["key"]
    shutil.copytree(DATA / "bugs" / "bases" / case["base"], folder)
    shutil.copy(DATA / "bugs" / "cases" / case["key"] / case["file"], folder / case["file"])
    return folder


def case_tasks(case, folder):
    """The tasks a case is graded on: those its file can reach in its base (``tests.reach``); its base keeps full
    marks on every task, so the others cannot lose a point."""
    return reached_tasks(load(ASSIGNMENT), folder, [case["file"]])


def verdict(label, named):
    if label is None:
        return None
    if label == "none":
        return "right" if not named else "wrong"
    if not named:
        return "unnamed"
    return "right" if set(named) <= set(label.split("|")) and set(named) & set(label.split("|")) else "wrong"


def _folder_key(folder):
    """A correct submission's key in the golden file: ``correct/<name>`` or ``bases/<name>``."""
    return f"{folder.parent.name}/{folder.name}"


class _Read:
    """A grading read from the golden records (``tests/golden/blind_lm.json``) instead of made again: its score and
    most, the tasks that lost points (below their full marks, known from the reference's record) and the names."""

    def __init__(self, record, full_tasks):
        self.score, self.max_score = record["score"]
        self.lost = [t for t, s in record["tasks"].items() if s < full_tasks.get(t, s)]
        self.named = golden.named_ids(record)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--profile", default="quick", choices=("quick", "full"))
    parser.add_argument("--only", default=None, help="comma-separated case keys")
    parser.add_argument("--details", action="store_true")
    parser.add_argument(
        "--regrade",
        action="store_true",
        help="grade the corpus again (and time it) instead of reading the golden records the tests compare "
        "(always so with --profile full: the records are the quick profile's)",
    )
    speed.add_argument(parser)
    args = parser.parse_args(argv)
    regrade = args.regrade or args.profile != "quick"
    records = golden.records(CORPUS)
    differ = []

    def graded(folder, key, tasks=None):
        """(score, most, failing-or-lost tasks, names) of one grading: made now, or read from its golden record."""
        if regrade:
            result, failing, lost, named = grade(folder, args.profile, tasks)
            if args.profile == "quick" and records.get(key) != golden.verdicts(result):
                differ.append(key)
            return result.score, result.max_score, failing, lost, named
        record = records[key]
        read = _Read(record, full_tasks)
        return read.score, read.max_score, read.lost, read.lost, read.named

    started = time.perf_counter()
    correct_line = ""
    cases = json.loads((DATA / "bugs" / "cases.json").read_text(encoding="utf-8"))
    labels_file = DATA / "bugs" / "labels.json"
    labels = json.loads(labels_file.read_text(encoding="utf-8")) if labels_file.is_file() else {}
    correct = sorted(p for p in (DATA / "correct").iterdir() if p.is_dir())
    bases = sorted(p for p in (DATA / "bugs" / "bases").iterdir() if p.is_dir())
    full_tasks = records[_folder_key(correct[0])]["tasks"] if not regrade else {}
    if args.only:
        keep = set(args.only.split(","))
        cases = [c for c in cases if c["key"] in keep]
    else:
        false_fails = 0
        for folder in correct + bases:
            score, most, failing, _, _ = graded(folder, _folder_key(folder))
            full = score == most
            false_fails += not full
            print(
                f"correct {_folder_key(folder)}: {score:g}/{most:g}"
                + ("" if full else f"  FALSE FAIL: {', '.join(failing)}")
            )
        correct_line = (
            f"correct submissions: {len(correct) + len(bases) - false_fails}/{len(correct) + len(bases)} "
            f"full marks ({false_fails} false fails)"
        )
        print(correct_line)
    caught = 0
    tally = {"right": 0, "wrong": 0, "unnamed": 0}
    with tempfile.TemporaryDirectory() as tmp:
        for case in cases:
            folder = case_folder(case, tmp) if regrade else None
            _, _, _, lost, named = graded(folder, case["key"], case_tasks(case, folder) if regrade else None)
            caught += bool(lost)
            v = verdict(labels.get(case["key"]), named)
            if v:
                tally[v] += 1
            line = (
                f"{case['key']} {case['file']:<15} {'caught' if lost else 'FALSE PASS'}  lost in: "
                f"{', '.join(lost) or '-'}  named: {', '.join(named) or '-'}"
                + (f"  label: {labels.get(case['key'])} -> {v}" if v else "")
            )
            if args.details or not lost or v == "wrong":
                print(line)
    print(f"cases: {caught}/{len(cases)} caught ({len(cases) - caught} false passes)")
    if any(tally.values()):
        print(f"labelled cases: named right {tally['right']}, wrong name {tally['wrong']}, unnamed {tally['unnamed']}")
    source = "graded now" if regrade else f"read from tests/golden/{CORPUS}.json"
    if regrade and args.profile == "quick":
        print(f"gradings that differ from tests/golden/{CORPUS}.json: {len(differ)} {' '.join(differ)}".rstrip())
    seconds = time.perf_counter() - started
    if regrade:
        print(f"time: {seconds:.0f} s")
    if not args.only:
        speed.record(
            "lm_blind.verdicts",
            f"the decoder-only LM's blind corpus (`tests/blind_lm`), {args.profile} ({source})",
            f"{correct_line}; {caught}/{len(cases)} mistakes caught; labelled: named right {tally['right']}, "
            f"wrong name {tally['wrong']}, unnamed {tally['unnamed']}",
            "no false fail, no false pass, no wrong name",
            "(0 false fails)" in correct_line and caught == len(cases) and tally["wrong"] == 0,
        )
        if regrade:
            speed.record("lm_blind.time", "the same corpus's running time", f"{seconds:.0f} s")


if __name__ == "__main__":
    main()
