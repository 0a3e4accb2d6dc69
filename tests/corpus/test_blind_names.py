"""Names of catalogued mistakes on code their catalogue entries never saw: the cases in ``tests/blind_names``.

One-file edits of independent correct Transformers (``tests/blind_bugs/bases``: W2, W3, W4), written by writers who
saw only the contract and those bases: never the reference, the catalogue or the tests. Each case grades the task of
the code it edits (and the tasks beneath it, as the kit grades a task):

- mistakes, two or three spellings of each of ten, labelled with the catalogue id a teacher would name: each loses
  points in that task and is named by that id and no other;
- correct rewrites (a loss or its label smoothing computed by hand, a scale kept as a float, a mask made with ``ne``
  and ``view``, a schedule in two branches): full marks, nothing named;
- near misses, wrong in a way none of the ten is (log-probabilities instead of logits, a loss averaged per row, the
  Annotated Transformer's smoothing with a KL divergence): they lose points and are called by none of the ten names.

g07 was written as a near miss (label smoothing by hand, the mean over every position): it is the diluted mean, and is
labelled so.
"""

import json
import shutil
from pathlib import Path

import pytest

from grader import api
from tests import golden

ROOT = Path(__file__).resolve().parents[2]
DATA = ROOT / "tests" / "blind_names"
BASES = ROOT / "tests" / "blind_bugs" / "bases"
CASES = json.loads((DATA / "labels.json").read_text(encoding="utf-8"))
BY_KEY = {c["key"]: c for c in CASES}
TEN = {c["label"] for c in CASES if c["kind"] == "mistake"}


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    """``graded(key)``: the case's grading, made once."""
    tmp, done = tmp_path_factory.mktemp("blind-names"), {}

    def grade(key):
        if key not in done:
            case = BY_KEY[key]
            sub = tmp / key
            shutil.copytree(BASES / case["base"], sub, ignore=shutil.ignore_patterns("__pycache__"))
            shutil.copy(DATA / "cases" / key / case["file"], sub / case["file"])
            done[key] = api.check(path=sub, assignment="transformer", profile="quick", tasks=[case["task"]])
        return done[key]

    return grade


def _everywhere(result):
    """Every catalogued mistake the grading names, in any task."""
    return set(golden.named_ids(golden.verdicts(result)))


def test_the_corpus_holds_two_spellings_or_more_of_each_of_ten_mistakes_correct_code_and_near_misses():
    kinds = [c["kind"] for c in CASES]
    assert (kinds.count("mistake"), kinds.count("correct"), kinds.count("near_miss")) == (22, 6, 3)
    mistakes = [c["label"] for c in CASES if c["kind"] == "mistake"]
    assert len(TEN) == 10 and all(mistakes.count(n) >= 2 for n in TEN)
    for c in CASES:
        assert (DATA / "cases" / c["key"] / c["file"]).is_file(), c["key"]


@pytest.mark.parametrize("key", [c["key"] for c in CASES if c["kind"] == "mistake"])
def test_a_mistake_loses_points_in_its_task_and_is_named_by_its_id_alone(graded, key):
    case = BY_KEY[key]
    result = graded(key)
    task = next(t for t in result.tasks if t.id == case["task"])
    assert task.score < task.max_score, case["description"]
    assert _everywhere(result) == {case["label"]}, (case["description"], _everywhere(result))


@pytest.mark.parametrize("key", [c["key"] for c in CASES if c["kind"] == "correct"])
def test_correct_code_in_another_spelling_keeps_full_marks_and_is_named_nothing(graded, key):
    case = BY_KEY[key]
    result = graded(key)
    assert result.score == result.max_score > 0, case["description"]
    assert not _everywhere(result)


@pytest.mark.parametrize("key", [c["key"] for c in CASES if c["kind"] == "near_miss"])
def test_a_near_miss_loses_points_and_is_called_by_none_of_the_ten(graded, key):
    case = BY_KEY[key]
    result = graded(key)
    task = next(t for t in result.tasks if t.id == case["task"])
    assert task.score < task.max_score, case["description"]
    assert not (_everywhere(result) & TEN), (case["description"], _everywhere(result))
