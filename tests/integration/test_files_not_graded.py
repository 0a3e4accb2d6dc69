"""A grading of some tasks (``--tasks``, a course's ``tasks``, a kit built for some) is about the files those tasks and
the tasks beneath them use: a contract file none of them uses that is missing or does not import is not reported,
and does not make a batch row an ``error``. A file they do use still is, and a grading of every task reports every
file.
"""

import shutil

from grader import api
from grader.batch import judge
from grader.batch.judge import problems_of
from tests.conftest import TRANSFORMER

ROOT = TRANSFORMER.reference


def _only_masks(tmp_path):
    folder = tmp_path / "masks_only"
    folder.mkdir()
    shutil.copy(ROOT / "masks.py", folder / "masks.py")
    return folder


def test_files_no_selected_task_uses_are_not_reported(tmp_path):
    folder = _only_masks(tmp_path)
    result = api.check(path=folder, tasks=["masks"], profile="quick", diagnose=False)
    assert result.score == result.max_score > 0
    assert result.load_errors == {}
    assert problems_of(result, copy=False) == []  # the batch's row: ok, with no reason


def test_a_missing_file_a_selected_task_uses_is_still_reported(tmp_path):
    folder = _only_masks(tmp_path)
    mha = TRANSFORMER.task_by_id["mha"]
    result = api.check(path=folder, tasks=["mha"], profile="quick", diagnose=False)
    used = {TRANSFORMER.task_by_id[t].file for t in ("mha", *TRANSFORMER.all_deps("mha"))}
    assert set(result.load_errors) == used - {"masks.py"} and mha.file in result.load_errors
    assert [status for status, _ in problems_of(result, copy=False)] == ["error"]


def test_a_grading_of_every_task_reports_every_missing_file(tmp_path):
    folder = _only_masks(tmp_path)
    result = api.check(path=folder, profile="quick", diagnose=False, tasks=None)
    assert set(result.load_errors) == set(TRANSFORMER.contract_files) - {"masks.py"}
    assert judge.load_causes(result.load_errors)
