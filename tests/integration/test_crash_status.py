"""A gradebook row says ``crashed`` from the error's data as the engine records it (``SubmissionError`` kind and
``data["crash"]``: ``grader.errors.crash_of``), never from the words of its sentence.

A crash whose sentence is translated or reworded is still a crash; an ordinary exception of the student's whose
text starts as a crash's sentence does (``MemoryError: ...`` from a class of their own, an exception named ``the
code called sys.exit(0)``) is not. The errors are made by the engine itself (in-process checks of the ``masks`` task,
quick profile), then reworded as a translation would, and read by ``judge.problems_of`` as the batch reads them.
"""

import shutil
from types import SimpleNamespace

import pytest

from grader import api
from grader.batch import judge
from grader.errors import SubmissionError, from_exception
from tests import hostile

CAUSAL = "def causal_mask(size, device=None):\n"
BODIES = {
    "exits": "    import sys\n    sys.exit(3)\n",
    "out_of_memory": "    raise MemoryError('no memory left for the mask')\n",
    "own_memory_error": (
        "    class MemoryError(Exception):\n        pass\n\n    raise MemoryError('a name of my own')\n"
    ),
    "says_exit": "    raise type('the code called sys.exit(0)', (Exception,), {})('but it did not')\n",
}
"""``causal_mask`` of a correct submission made to do each of these instead."""
REWORDED = {"exits": "代码调用了 sys.exit(3)", "out_of_memory": "内存不足：无法为掩码分配内存"}


def _submission(tmp_path, case):
    folder = tmp_path / case
    shutil.copytree(hostile.BASE, folder, ignore=shutil.ignore_patterns("__pycache__"))
    (folder / "masks.py").write_text(hostile.CORRECT + "\n\n" + CAUSAL + BODIES[case], encoding="utf-8")
    return folder


def _errors(result):
    return [c.error for t in result.tasks for c in t.checks if c.error]


def _statuses(result):
    return [status for status, _ in judge.problems_of(result, copy=False)]


@pytest.fixture(scope="module")
def graded(tmp_path_factory):
    base = tmp_path_factory.mktemp("crash")
    return {
        case: api.check(path=_submission(base, case), tasks=["masks"], profile="quick", diagnose=False)
        for case in BODIES
    }


@pytest.mark.parametrize("case, crash", [("exits", "exit"), ("out_of_memory", "memory")])
def test_a_crash_is_a_crash_whatever_its_sentence_says(graded, case, crash):
    result = graded[case]
    errors = _errors(result)
    assert errors and all(e["kind"] == "exception" for e in errors), errors
    assert "crashed" in _statuses(result)
    for error in errors:  # as another language, or a later version of the kit, would word it
        error["detail"] = REWORDED[case]
    assert "crashed" in _statuses(result)
    from grader.errors import crash_of

    assert all(crash_of(e) == crash for e in errors), errors


@pytest.mark.parametrize(
    "case, starts",
    [("own_memory_error", "MemoryError: a name of my own"), ("says_exit", "the code called sys.exit(0)")],
)
def test_an_ordinary_exception_that_reads_like_a_crash_is_not_one(graded, case, starts):
    result = graded[case]
    errors = _errors(result)
    assert errors and all(e["kind"] == "exception" and e["detail"].startswith(starts) for e in errors), errors
    assert "crashed" not in _statuses(result)
    from grader.errors import crash_of

    assert all(crash_of(e) is None for e in errors)


def _result(*errors):
    checks = [SimpleNamespace(error=e) for e in errors]
    return SimpleNamespace(
        tasks=[SimpleNamespace(id="masks", checks=checks)],
        load_errors={},
        banned_api=[],
        allow_banned=False,
        refused=[],
    )


def test_the_status_reads_the_kind_and_the_data_only():
    worker_died = {"kind": "crashed", "detail": "der Prozess wurde beendet", "data": {"returncode": -9}}
    exited = {"kind": "exception", "detail": "", "data": {"crash": "exit"}}
    assert _statuses(_result(worker_died)) == ["crashed"]
    assert _statuses(_result(exited)) == ["crashed"]
    for text in ("MemoryError: not really", "the code called sys.exit(0), said the student"):
        assert _statuses(_result({"kind": "exception", "detail": text})) == []
        assert _statuses(_result({"kind": "exception", "detail": text, "data": "crash"})) == []
    assert _statuses(_result({"kind": "exception", "detail": "", "data": {"crash": "anything else"}})) == []


def _own_memory_error():
    class MemoryError(Exception):  # a student's own class of that name
        pass

    return MemoryError("mine")


def test_from_exception_records_a_real_memory_error_only(tmp_path):
    from grader.errors import crash_of

    for raised, crash in ((MemoryError("out"), "memory"), (_own_memory_error(), None)):
        try:
            raise raised
        except Exception as exc:  # noqa: BLE001 - either
            error = from_exception(exc, tmp_path)
        assert error.detail.startswith("MemoryError: ") and crash_of(error) == crash
        assert error.data == ({"crash": crash} if crash else {})
    assert crash_of(SubmissionError(kind="crashed", detail="anything")) == "crashed"
