"""The instructor's term, before any grading: which entries of a class folder are submissions, how a folder
inside a folder is unwrapped (the same for folders, zips and a self-check), what an empty submission says, and
what a batch says when done. Fast: nothing here runs a batch."""

import os
import zipfile
from pathlib import Path
from types import SimpleNamespace

import pytest

from grader import api
from grader.batch import cli, judge, runner, sources
from grader.submission.snapshot import has_code, unwrap

SUBMISSIONS = Path(__file__).resolve().parents[1] / "submissions"
GOOD = SUBMISSIONS / "alt_einsum"


def _copy(src, dest):
    dest.mkdir(parents=True)
    for path in src.glob("*.py"):
        (dest / path.name).write_bytes(path.read_bytes())
    return dest


def test_unwrap_takes_the_only_folder_and_nothing_else(tmp_path):
    inner = _copy(GOOD, tmp_path / "ivan" / "my_transformer")
    (tmp_path / "ivan" / ".DS_Store").write_text("x")  # hidden entries do not count
    (tmp_path / "ivan" / "__MACOSX").mkdir()
    assert unwrap(tmp_path / "ivan") == inner
    assert unwrap(inner) == inner  # one level: a folder of files stays
    (tmp_path / "ivan" / "notes.txt").write_text("mine")
    assert unwrap(tmp_path / "ivan") == tmp_path / "ivan"  # a file beside it: not a wrapper
    two = tmp_path / "two"
    _copy(GOOD, two / "a")
    _copy(GOOD, two / "b")
    assert unwrap(two) == two  # two folders: which one? neither
    linked = tmp_path / "linked"
    linked.mkdir()
    os.symlink(inner, linked / "to_inner")
    assert unwrap(linked) == linked  # a link is never followed


def test_discover_lists_what_it_skips_and_why(tmp_path):
    cls = tmp_path / "class"
    for name in ("alice", ".git", "__MACOSX", "李雷", "_canary"):
        (cls / name).mkdir(parents=True)
    (cls / "roster.csv").write_text("id\n")
    skipped = []
    found = sources.discover(cls, skipped)
    assert [s.student for s in found] == ["_canary", "alice", "李雷"]
    assert sorted((s.name, s.why) for s in skipped) == [
        (".git", "hidden"),
        ("__MACOSX", "system"),
        ("roster.csv", "file"),
    ]


@pytest.mark.parametrize("layout", ["folder", "nested folder", "zip", "zip with a top folder"])
def test_one_wrapping_folder_is_unwrapped_the_same_for_folders_and_zips(tmp_path, layout):
    cls = tmp_path / "class"
    cls.mkdir()
    if layout == "folder":
        _copy(GOOD, cls / "ivan")
    elif layout == "nested folder":
        _copy(GOOD, cls / "ivan" / "my_transformer")
    else:
        with zipfile.ZipFile(cls / "ivan.zip", "w") as zf:
            for path in sorted(GOOD.glob("*.py")):
                zf.write(path, f"my_transformer/{path.name}" if layout.endswith("top folder") else path.name)
    (sub,) = sources.discover(cls)
    (tmp_path / "scratch").mkdir()
    sources.prepare(sub, tmp_path / "scratch")
    assert sub.problem == "" and (sub.path / "attention.py").is_file(), (layout, sub.path)


@pytest.mark.parametrize("content", [None, "notes.txt", "sub/README.md"])
def test_an_empty_submission_is_said_once(tmp_path, content):
    student = tmp_path / "class" / "eve"
    student.mkdir(parents=True)
    if content:
        (student / content).parent.mkdir(parents=True, exist_ok=True)
        (student / content).write_text("no code here")
    (sub,) = sources.discover(tmp_path / "class")
    (tmp_path / "scratch").mkdir()
    sources.prepare(sub, tmp_path / "scratch")
    assert sub.path is None and sub.problem_key == "batch.reason.empty"
    record = runner.problem_record(sub, "en")
    assert record["status"] == "error" and record["reason"] == "could not be graded: empty submission (no .py file)"
    assert "空提交" in runner.problem_record(sub, "zh")["reason"]


def test_a_submission_with_code_is_not_empty(tmp_path):
    (tmp_path / "deep" / "er").mkdir(parents=True)
    assert not has_code(tmp_path)
    (tmp_path / "deep" / "er" / "x.py").write_text("")
    assert has_code(tmp_path)


def test_a_self_check_says_empty_once_and_unwraps_a_wrapper(tmp_path):
    (tmp_path / "empty").mkdir()
    with pytest.raises(
        api.UsageError, match="is an empty submission: it holds no .py file; expected a folder holding attention.py"
    ):
        api.check(path=tmp_path / "empty", tasks=["masks"], profile="quick")
    _copy(GOOD, tmp_path / "wrapper" / "inner")
    result = api.check(path=tmp_path / "wrapper", only=("masks",), profile="quick")
    assert result.max_score > 0 and result.score == result.max_score and not result.load_errors


def test_only_takes_a_task_id_and_refuses_an_unknown_id(tmp_path):
    result = api.check(path=GOOD, only=("masks",), profile="quick")
    assert {t.id for t in result.tasks} == {"masks"} and len(result.tasks[0].checks) > 1
    with pytest.raises(api.UsageError, match="--only 'masks.nope' is neither a check id"):
        api.check(path=GOOD, only=("masks.nope",), profile="quick")


def _result(*, load=None, banned=(), refused=(), kinds=()):
    checks = [SimpleNamespace(error={"kind": k, "detail": ""}) for k in kinds]
    return SimpleNamespace(
        tasks=[SimpleNamespace(id="sdpa", checks=checks)],
        load_errors=load or {},
        banned_api=list(banned),
        allow_banned=False,
        refused=list(refused),
    )


def test_a_copy_does_not_hide_the_other_problems():
    result = _result(load={"masks.py": {"kind": "error"}}, banned=[{"task": "sdpa"}], kinds=["timeout"])
    assert [s for s, _ in judge.problems_of(result, copy=True)] == ["copy", "banned-api", "timeout", "error"]
    assert judge.problems_of(result, copy=True, policy="zero")[0][1] == "batch.reason.copy_zeroed"
    assert judge.problems_of(result, copy=True, policy="flag")[0][1] == "batch.reason.copy"
    assert judge.status_of(_result(), copy=False) == ("ok", "")


def test_the_copy_reason_says_what_the_policy_did():
    from grader.messages import text

    assert "scored 0" in text("batch.reason.copy_zeroed", "en") and "review before" not in text(
        "batch.reason.copy_zeroed", "en"
    )
    assert "review before releasing" in text("batch.reason.copy", "en")


def test_the_last_line_names_every_submission_not_graded(tmp_path):
    records = [
        {"student": "alice", "status": "ok", "max_score": 10.0, "reason": ""},
        {"student": "frank", "status": "error", "max_score": 10.0, "reason": "could not be imported: masks.py"},
        {
            "student": "Wang Fang (王芳)",
            "status": "error",
            "max_score": 0.0,
            "reason": "x",
            "detail": "empty submission (no .py file)",
        },
        {"student": "carol\x1b[2J", "status": "error", "max_score": 0.0, "reason": "grading did not complete"},
    ]
    result = runner.BatchResult(
        out=tmp_path,
        records=records,
        graded=4,
        skipped=[sources.Skipped(".git", "hidden"), sources.Skipped("roster.csv", "file")],
    )
    lines = cli.closing_lines(result, "en")
    assert lines[0] == "skipped 2 entries that are not submissions: .git (hidden); roster.csv (not a folder or .zip)"
    assert lines[-1].startswith("2 could not be graded: Wang Fang (王芳): empty submission (no .py file); carol")
    assert "frank" not in lines[-1] and "\x1b" not in lines[-1]  # graded (with an import error); no escape codes
    assert "无法评分" in cli.closing_lines(result, "zh")[-1]


def _gradescope(tmp_path, files, **settings):
    """Run the Gradescope runner in-process on a submission of ``files`` ({relative path: text}); results.json."""
    import json

    from grader.batch import gradescope_run

    root = tmp_path / "autograder"
    (root / "source").mkdir(parents=True)
    (root / "source" / "settings.json").write_text(
        json.dumps({"assignment": "assignments.transformer", "call_timeout": 10, "total_timeout": 30, **settings})
    )
    for rel, content in files.items():
        (root / "submission" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "submission" / rel).write_text(content, encoding="utf-8")
    assert gradescope_run.main(["--root", str(root)]) == 0
    return json.loads((root / "results" / "results.json").read_text())


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_gradescope_says_an_empty_submission_is_empty(tmp_path, lang):
    data = _gradescope(tmp_path, {"hw/README.txt": "I will do it later"}, lang=lang)
    assert data["score"] == 0 and data["tests"] == []
    assert ("Your submission is empty" if lang == "en" else "你的提交是空的") in data["output"]
    assert "attention.py" in data["output"] and str(tmp_path) not in data["output"]


def test_gradescope_grades_a_notebook_in_a_folder(tmp_path):
    nbformat = pytest.importorskip("nbformat")
    nb = nbformat.v4.new_notebook()
    code = (GOOD / "masks.py").read_text(encoding="utf-8")
    nb.cells = [nbformat.v4.new_code_cell("!pip install torch"), nbformat.v4.new_code_cell(code)]
    data = _gradescope(tmp_path, {"hw1/homework.ipynb": nbformat.writes(nb)}, tasks=["masks"], profile="quick")
    masks = [t for t in data["tests"] if t["name"].startswith("masks.")]
    assert (
        masks
        and all(t["status"] == "passed" for t in masks)
        and data["score"] == sum(t["max_score"] for t in masks) > 0
    )
