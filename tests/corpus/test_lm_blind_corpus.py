"""The decoder-only LM graded fairly on code written elsewhere: the blind corpus in tests/blind_lm.

A helper wrote it from docs/CONTRACT_LM.md and the skeleton alone, never the reference, the checks or the
catalogue: five correct submissions in other styles and three correct bases (full marks, in process and in a
sealed worker), and 58 cases of one mistake each over the bases (each loses points; the diagnosis names the
label another helper gave from the mistake itself and the catalogue, or nothing, never another bug).
The figures (named right, unnamed) are printed by bench/bench_lm_blind.py. Each grading's verdicts (scores and
names) are compared exactly with ``tests/golden/blind_lm.json`` (``tests/golden.py``): a change in any of them shows
as a diff in review.
"""

import json
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_lm_blind import CORPUS, DATA, case_folder, case_tasks, grade, verdict  # noqa: E402

from grader import api  # noqa: E402
from tests import golden  # noqa: E402

CORRECT = sorted(p for p in (DATA / "correct").iterdir() if p.is_dir())
BASES = sorted(p for p in (DATA / "bugs" / "bases").iterdir() if p.is_dir())
CASES = json.loads((DATA / "bugs" / "cases.json").read_text(encoding="utf-8"))
LABELS = json.loads((DATA / "bugs" / "labels.json").read_text(encoding="utf-8"))


def test_every_case_is_labelled():
    assert set(LABELS) == {c["key"] for c in CASES}


@pytest.mark.parametrize("folder", CORRECT + BASES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_correct_code_written_elsewhere_gets_full_marks(folder):
    result, failing, _, _ = grade(folder, "quick")
    golden.check(CORPUS, f"{folder.parent.name}/{folder.name}", golden.verdicts(result))
    assert result.score == result.max_score, failing


@pytest.mark.parametrize("folder", CORRECT[:2] + BASES[:1], ids=lambda p: f"{p.parent.name}/{p.name}")
def test_correct_code_written_elsewhere_gets_full_marks_in_a_sealed_worker(folder):
    result = api.check(path=str(folder), assignment="decoder_lm", profile="quick", sealed=True)
    assert result.score == result.max_score, [c.id for t in result.tasks for c in t.checks if c.status != "passed"]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c["key"])
def test_a_mistake_written_elsewhere_loses_points_and_is_never_misnamed(case, tmp_path):
    folder = case_folder(case, tmp_path)
    result, _, lost, named = grade(folder, "quick", case_tasks(case, folder))
    golden.check(CORPUS, case["key"], golden.verdicts(result))
    assert lost, f"false pass: {case['description']}"
    assert verdict(LABELS[case["key"]], named) != "wrong", (case["description"], LABELS[case["key"]], named)


def test_the_golden_file_holds_every_grading_and_no_other():
    if golden.UPDATE:
        pytest.skip("the records are being rewritten")
    expected = {f"{p.parent.name}/{p.name}" for p in CORRECT + BASES} | {c["key"] for c in CASES}
    assert golden.keys(CORPUS) == expected
