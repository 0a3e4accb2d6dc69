"""Whether a grade is sealed is said where it is read (issue 18: "isolation degrades to per-process and the report
says so"): a worker jailed under a uid of its own (root) is sealed; one that ran as the grading user is not, and
the student's report, results.json, the batch's record and the class summary page say so."""

import json
import os

import pytest

from grader import api
from grader.batch import summary
from grader.views import html, json_view
from tests.conftest import SOLUTION_ROOT

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="a sealed worker (a jail, a uid of its own) needs root")


def grade(**options):
    return api.check(path=SOLUTION_ROOT, tasks=["masks"], profile="quick", diagnose=False, **options)


def test_an_isolated_grading_as_the_graders_own_user_is_not_sealed_and_the_report_says_so():
    result = grade(isolated=True, run_as=None)
    assert result.isolated and not result.sealed and result.score == result.max_score
    page = html.render(result, lang="en")
    assert "not sealed" in page and "worker process (isolated)" not in page
    assert json_view.to_data(result)["sealed"] is False
    assert "未封闭" in html.render(result, lang="zh")


@ROOT_ONLY
def test_an_isolated_grading_as_root_is_sealed():
    result = grade(isolated=True)
    assert result.isolated and result.sealed
    page = html.render(result, lang="en")
    assert "worker process (isolated)" in page and "not sealed" not in page
    assert json_view.to_data(result)["sealed"] is True


def test_in_process_is_neither():
    result = grade()
    assert not result.isolated and not result.sealed
    assert "in process" in html.render(result, lang="en")


def _records(sealed):
    base = {"max_score": 10, "score": 10, "status": "ok", "checks": {}, "tasks": {"masks": 10}}
    return [dict(base, student="ada", sealed=sealed[0]), dict(base, student="bo", sealed=sealed[1]),
            dict(base, student="cy")]  # a record from before the field: says nothing either way


@pytest.mark.parametrize("lang, words", [("en", "2 submissions were graded in a worker that was not sealed"),
                                         ("zh", "有 2 份提交是在未封闭的子进程中评分的")])
def test_the_class_page_counts_the_unsealed_gradings(lang, words):
    assert words in summary.render(_records((False, False)), lang=lang)
    page = summary.render(_records((True, True)), lang=lang)
    assert "not sealed" not in page and "未封闭" not in page


def test_a_batch_record_carries_the_flag(tmp_path):
    from grader.batch import runner

    cls = tmp_path / "class"
    (cls / "ada").mkdir(parents=True)
    for f in SOLUTION_ROOT.glob("*.py"):
        (cls / "ada" / f.name).write_bytes(f.read_bytes())
    out = tmp_path / "out"
    runner.batch(submissions=cls, out=out, jobs=1, tasks=["masks"], profile="quick")
    data = json.loads((out / "ada" / "results.json").read_text(encoding="utf-8"))
    assert data["sealed"] is (os.geteuid() == 0)
