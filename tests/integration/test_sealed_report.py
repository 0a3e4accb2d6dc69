"""Whether a sealed grade is jailed is said where it is read ("isolation degrades to per-process and the report
says so"): a sealed worker jailed under a uid of its own (root) is jailed; one that ran as the grading user is not,
and the student's report, results.json, the batch's record and the class summary page say so."""

import json
import os

import pytest

from grader import api
from grader.batch import summary
from grader.views import html, json_view
from tests.conftest import SOLUTION_ROOT

ROOT_ONLY = pytest.mark.skipif(os.geteuid() != 0, reason="a jailed worker (a jail, a uid of its own) needs root")


def grade(**options):
    return api.check(path=SOLUTION_ROOT, tasks=["masks"], profile="quick", diagnose=False, **options)


def test_a_sealed_grading_as_the_graders_own_user_is_not_jailed_and_the_report_says_so():
    result = grade(sealed=True, run_as=None)
    assert result.sealed and not result.jailed and result.score == result.max_score
    page = html.render(result, lang="en")
    assert "not jailed" in page and "sealed worker process (jailed)" not in page
    data = json_view.to_data(result)
    assert data["sealed"] is True and data["jailed"] is False and "isolated" not in data
    assert "不在隔离环境中" in html.render(result, lang="zh")


@ROOT_ONLY
def test_a_sealed_grading_as_root_is_jailed():
    result = grade(sealed=True)
    assert result.sealed and result.jailed
    page = html.render(result, lang="en")
    assert "sealed worker process (jailed)" in page and "not jailed" not in page
    assert json_view.to_data(result)["jailed"] is True


def test_in_process_is_neither():
    result = grade()
    assert not result.sealed and not result.jailed
    assert "in process" in html.render(result, lang="en")
    data = json_view.to_data(result)
    assert data["sealed"] is False and data["jailed"] is False


def _records(jailed):
    base = {"max_score": 10, "score": 10, "status": "ok", "checks": {}, "tasks": {"masks": 10}}
    return [
        dict(base, student="ada", jailed=jailed[0]),
        dict(base, student="bo", jailed=jailed[1]),
        dict(base, student="cy"),
    ]  # a record from before the field: says nothing either way


@pytest.mark.parametrize(
    "lang, words",
    [("en", "2 submissions were graded in a worker that was not jailed"), ("zh", "有 2 份提交的子进程不在隔离环境中")],
)
def test_the_class_page_counts_the_unjailed_gradings(lang, words):
    assert words in summary.render(_records((False, False)), lang=lang)
    page = summary.render(_records((True, True)), lang=lang)
    assert "not jailed" not in page and "不在隔离环境中" not in page


def test_a_batch_record_carries_the_flag(tmp_path):
    from grader.batch import runner

    cls = tmp_path / "class"
    (cls / "ada").mkdir(parents=True)
    for f in SOLUTION_ROOT.glob("*.py"):
        (cls / "ada" / f.name).write_bytes(f.read_bytes())
    out = tmp_path / "out"
    runner.batch(submissions=cls, out=out, jobs=1, tasks=["masks"], profile="quick")
    data = json.loads((out / "ada" / "results.json").read_text(encoding="utf-8"))
    assert data["jailed"] is (os.geteuid() == 0)
    assert data["sealed"] is True  # a batch always grades sealed
