"""A batch writes each student's files once, from the grading and the review (``grader.batch.outputs``), and the
job a judge grades is one typed, frozen ``judge.Job`` that both pools build alike.

The judges are stood in for by a pool that saves a hand-made grading as a judge does (``judge.save_grading``), so
that every path of ``runner.batch`` is taken in seconds: a submission graded in this run, a cached one, one that
could not be graded, and re-runs that only change the reviews. One test grades for real, in process, to check that
a saved grading renders exactly as the result it was saved from.
"""

import dataclasses
import json
import pickle
import shutil
from collections import Counter
from pathlib import Path

import pytest

from grader import api
from grader.batch import judge, outputs, runner, sources
from grader.batch.judge import Job
from grader.batch.progress import Progress
from grader.results import CheckResult, GradeResult, Message, TaskResult
from tests import hostile

REVIEW = """[students.bob]
points = 2
by = "Prof. Li"
why = "regrade request"
"""
SCORES = {"ann": 10.0, "bob": 8.0}


def _grading(student, score):
    """A ``GradeResult`` as a judge leaves it: one task, one check."""
    passed = score >= 10
    check = CheckResult(
        id="masks.causal",
        task="masks",
        status="passed" if passed else "failed",
        score=score,
        max_score=10.0,
        message=None if passed else Message("fail.mismatch", {"what": "mask"}),
    )
    return GradeResult(
        submission=student,
        score=score,
        max_score=10.0,
        seed=None,
        profile="quick",
        duration_s=1.0,
        tasks=[TaskResult(id="masks", score=score, max_score=10.0, checks=[check])],
        sealed=True,
    )


def _record(sub, digest, result):
    """The judge's record of ``result`` (``judge.grade``'s fields)."""
    return {
        "student": sub.student,
        "folder": sub.folder,
        "hash": digest,
        "status": "ok",
        "reason": "",
        "problems": [],
        "score": result.score,
        "max_score": result.max_score,
        "raw_score": result.score,
        "tasks": {"masks": result.score},
        "raw_tasks": {"masks": result.score},
        "task_max": {"masks": 10.0},
        "checks": {"masks.causal": result.tasks[0].checks[0].status},
        "diagnoses": [],
        "flags": {"copy_of_reference": {"copy": False, "score": 0.1, "matches": []}},
        "refused": [],
        "load_causes": "",
        "jailed": False,
        "duration_s": 1.0,
    }


def _pool(todo, out, job, jobs, deadline_s, lang, bar, warnings):
    """Stands for the judges: saves each student's grading as a judge does, then yields the record."""
    for sub, digest in todo:
        result = _grading(sub.student, SCORES[sub.student])
        record = _record(sub, digest, result)
        judge.save_grading(out / sub.folder, result, record)
        yield record


@pytest.fixture
def written(monkeypatch):
    """``{(student folder, file): times written}`` and the students published, of the run in progress."""
    counts, published = Counter(), []
    real_write, real_publish = outputs.atomic_write, outputs.publish

    def counting_write(path, text):
        counts[Path(path).parent.name, Path(path).name] += 1
        real_write(path, text)

    def recording_publish(folder, final, **kwargs):
        published.append(final["student"])
        return real_publish(folder, final, **kwargs)

    monkeypatch.setattr(outputs, "atomic_write", counting_write)
    monkeypatch.setattr(outputs, "publish", recording_publish)
    return counts, published


def _class(base):
    cls = base / "class"
    for student in SCORES:
        (cls / student).mkdir(parents=True)
        (cls / student / "masks.py").write_text(f"# {student}\n", encoding="utf-8")
    (cls / "eve").mkdir()  # nothing to grade: a row of its own, and a report saying why
    return cls


def _batch(cls, out, reviews=None):
    return runner.batch(
        submissions=cls, out=out, jobs=1, tasks=["masks"], profile="quick", pool=_pool, overrides=reviews
    )


def _files(out):
    return {p.relative_to(out).as_posix(): p.read_bytes() for p in sorted(out.rglob("*")) if p.is_file()}


def test_every_output_is_written_once_a_run_from_the_grading_and_the_review(tmp_path, written):
    counts, published = written
    cls = _class(tmp_path)
    reviews = tmp_path / "overrides.toml"
    reviews.write_text(REVIEW, encoding="utf-8")
    out = tmp_path / "out"

    first = _batch(cls, out, reviews)
    assert (first.graded, first.cached) == (2, 0)
    assert sorted(published) == ["ann", "bob", "eve"]  # every path, one function
    for student in ("ann", "bob", "eve"):
        for name in outputs.RENDERED:
            assert counts[student, name] == 1, (student, name)
    page = (out / "bob" / "report.html").read_text(encoding="utf-8")
    assert "<title>" in page and page.split("<title>")[1].split("</title>")[0].endswith(": 10 / 10")
    assert 'id="review"' in page and "8 → 10" in page and "regrade request" in page
    assert json.loads((out / "bob" / "gradescope.json").read_text())["score"] == 10
    assert json.loads((out / "bob" / "results.json").read_text())["review"]["by"] == "Prof. Li"
    assert 'id="review"' not in (out / "ann" / "report.html").read_text(encoding="utf-8")
    assert "eve" in (out / "eve" / "report.html").read_text(encoding="utf-8")
    files = _files(out)

    counts.clear()
    published.clear()
    second = _batch(cls, out, reviews)  # cached: rendered again from the grading, the same bytes
    assert (second.graded, second.cached) == (0, 2)
    assert sorted(published) == ["ann", "bob", "eve"]
    assert _files(out) == files
    assert all(n <= 1 for n in counts.values()), counts

    counts.clear()
    reviews.write_text('[students.ann]\nnote = "well done"\n', encoding="utf-8")  # bob's review taken out
    third = _batch(cls, out, reviews)
    assert third.graded == 0 and all(n <= 1 for n in counts.values()), counts
    fresh = tmp_path / "fresh"
    _batch(cls, fresh, reviews)  # the same reviews from the start
    now, then = _files(out), _files(fresh)
    for key in now:
        if key.endswith(outputs.RENDERED):
            assert now[key] == then[key], key
    assert "well done" in (out / "ann" / "report.html").read_text(encoding="utf-8")
    assert "regrade request" not in (out / "bob" / "report.html").read_text(encoding="utf-8")


def test_a_saved_grading_renders_exactly_as_the_result_it_came_from(tmp_path):
    """A real grading (failing checks with their examples, errors and pictures) saved and read back renders every
    output to the same bytes as the result in memory: a cached result shows what a fresh one shows."""
    folder = hostile.build("buggy", tmp_path / "buggy")
    result = api.check(path=folder, tasks=["masks"], profile="quick", figures=True)
    assert result.score < result.max_score and result.figures
    sub = sources.Submission("buggy", folder)
    record = _record(sub, "h", _grading("buggy", 8.0)) | {"score": result.score, "max_score": result.max_score}
    judge.save_grading(tmp_path / "out", result, record)
    back = judge.load_grading(tmp_path / "out")
    assert back == result
    for lang in ("en", "zh"):
        for output_format in ("md", "html", "text"):
            assert outputs.render(back, record, lang=lang, output_format=output_format) == outputs.render(
                result, record, lang=lang, output_format=output_format
            )


# -- the job -----------------------------------------------------------------------------------------------
def _base():
    return Job(
        assignment="transformer",
        tasks=("masks",),
        profile="quick",
        call_timeout=6.0,
        total_timeout=12.0,
        memory_mb=2048,
        copy_policy="zero",
        figures=True,
        lang="zh",
        config="/course/gradekit.toml",
    )


def test_the_job_is_a_frozen_dataclass_with_each_field_said_once():
    import ast
    import inspect
    import textwrap

    job = _base()
    with pytest.raises(dataclasses.FrozenInstanceError):
        job.student = "someone"  # type: ignore[misc]
    tree = ast.parse(textwrap.dedent(inspect.getsource(Job)))
    body = tree.body[0].body
    documented = {
        node.target.id
        for node, after in zip(body, body[1:])
        if isinstance(node, ast.AnnAssign)
        and isinstance(after, ast.Expr)
        and isinstance(after.value, ast.Constant)
        and isinstance(after.value.value, str)
    }
    assert documented == {f.name for f in dataclasses.fields(Job)}


def test_the_job_crosses_as_plain_data(tmp_path):
    sub = sources.prepare(sources.Submission("s1", hostile.BASE), tmp_path / "scratch")
    job = dataclasses.replace(_base().for_submission(sub, "0123abcd"), path=str(sub.path), out=str(tmp_path), slot=1)
    data = job.to_data()
    assert json.loads(json.dumps(data)) == data  # a line of JSON to a local judge
    assert Job.from_data(json.loads(json.dumps(data))) == job
    assert pickle.loads(pickle.dumps(data)) == data  # what Dask ships: plain data, no class of ours
    with pytest.raises(ValueError, match="does not know: output_format"):
        Job.from_data(dict(data, output_format="md"))


class _FakeJudge:
    """Stands for ``runner.Judge``: keeps the jobs it is sent and answers each with a record."""

    sent = []

    def __init__(self, assignment):
        self.replies = [{"ready": True}]

    def send(self, job):
        self.sent.append(job)
        self.replies.append({"student": job.student, "folder": Path(job.out).name, "status": "ok"})

    def receive(self, deadline):
        return self.replies.pop(0)

    def stop(self, grace=5.0):
        pass


def test_both_pools_build_the_job_with_one_function(tmp_path, monkeypatch):
    pytest.importorskip("distributed", reason="Dask is an optional extra")
    from grader.batch import distributed as dask_batch

    shutil.copytree(hostile.BASE, tmp_path / "class" / "s1")
    sub = sources.prepare(sources.Submission("s1", tmp_path / "class" / "s1"), tmp_path / "scratch")
    calls = []
    real = Job.for_submission
    monkeypatch.setattr(Job, "for_submission", lambda self, *a: calls.append(a) or real(self, *a))
    monkeypatch.setattr(runner, "Judge", _FakeJudge)
    _FakeJudge.sent.clear()
    base = _base()
    [record] = runner._run_pool([(sub, "d1")], tmp_path / "out", base, 1, 60.0, "en", Progress(1, None, "en"), [])
    assert record["student"] == "s1"
    [local] = _FakeJudge.sent
    shipped = Job.from_data(dask_batch._job(sub, "d1", base))  # what the Dask client sends, as the worker reads it
    assert len(calls) == 2
    assert isinstance(local, Job) and local.slot == 0 and local.path == str(sub.path)
    assert shipped == dataclasses.replace(local, path="", out="", slot=None, config=None)


# -- Dask's error rows -----------------------------------------------------------------------------------------
COURSE = """tasks = ["masks"]
lang = "zh"
[gradescope]
output_format = "html"
"""


def test_a_dask_error_row_is_written_as_the_courses_outputs_are(tmp_path, monkeypatch):
    """A worker that grades with another grader than the batch's gives an error row: its files are in the course's
    language and Gradescope format, as the local batch's error rows (here: an empty folder) are."""
    pytest.importorskip("distributed", reason="Dask is an optional extra")
    from grader.batch import distributed as dask_batch
    from tests.corpus.test_batch import OPTIONS

    cls = tmp_path / "class"
    shutil.copytree(hostile.BASE, cls / "s1", ignore=shutil.ignore_patterns("__pycache__"))
    (cls / "empty").mkdir()
    (tmp_path / "course").mkdir()
    (tmp_path / "course" / "gradekit.toml").write_text(COURSE, encoding="utf-8")
    monkeypatch.setattr(runner, "grader_fingerprint", lambda assignment: "not the workers'")
    out = tmp_path / "out"
    result = dask_batch.batch(
        "local:1", submissions=cls, out=out, config=tmp_path / "course" / "gradekit.toml", **OPTIONS
    )
    rows = {r["student"]: r for r in result.records}
    assert rows["s1"]["status"] == "error" and "not the workers'" in rows["s1"]["reason"]
    assert rows["empty"]["status"] == "error"
    for student in ("s1", "empty"):
        gs = json.loads((out / student / "gradescope.json").read_text(encoding="utf-8"))
        assert gs["output_format"] == "html", (student, gs)
        assert '<html lang="zh-CN">' in (out / student / "report.html").read_text(encoding="utf-8"), student
