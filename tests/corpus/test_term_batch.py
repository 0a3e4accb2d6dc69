"""The instructor's term, end to end: a class whose folders are named as LMS exports name them (spaces, CJK,
emoji, apostrophes, commas, a leading underscore), nested and zipped, one empty, one a copy of the reference,
graded with a course configuration and an overrides file; then graded again (nothing re-graded, the reviews
still in every output), and again with a review taken out."""

import csv
import json
import shutil
import zipfile
from pathlib import Path

import pytest

from grader.batch import cli, runner

TESTS = Path(__file__).resolve().parents[1]
ALT = TESTS / "submissions"
SOLUTION = TESTS.parent / "solution"
CONFIG = """tasks = ["masks"]
title = "HW1 masks"
[columns]
masks = "Q7 masks"
[limits]
call_timeout = 6
total_timeout = 20
"""
REVIEWS = """[students."Wang Fang (王芳)"]
points = 2
by = "TA Li"
why = "regrade request #3"
note = "well explained"

[students.copycat]
copy = "cleared"
by = "Prof. Zhang"
why = "written with the TA in office hours"
"""
NAMES = {
    "李雷": "alt_functional",
    "Wang Fang (王芳)": "alt_loops",
    "_canary": "alt_annotated",
    "O'Brien, Pat 🎉": "alt_einsum",
}


def _copy(src, dest):
    dest.mkdir(parents=True)
    for path in Path(src).glob("*.py"):
        (dest / path.name).write_bytes(path.read_bytes())


def _gradebook(out):
    text = (out / "gradebook.csv").read_text(encoding="utf-8-sig")
    return {r["student_id"]: r for r in csv.DictReader(text.splitlines())}


def _lms(out):
    text = (out / "lms.csv").read_text(encoding="utf-8-sig")
    return {r["SIS Login ID"]: r for r in csv.DictReader(text.splitlines())}


def _run(base, **kw):
    return runner.batch(
        submissions=base / "class",
        out=base / "out",
        jobs=2,
        profile="quick",
        config=base / "course" / "gradekit.toml",
        **kw,
    )


@pytest.fixture(scope="module")
def term(tmp_path_factory):
    base = tmp_path_factory.mktemp("term")
    cls = base / "class"
    for name, alt in NAMES.items():
        _copy(ALT / alt, cls / name)
    (cls / "李雷" / "笔记.py").write_text("# 我的笔记\n", encoding="utf-8")
    _copy(ALT / "alt_functional", cls / "ivan" / "my_transformer")  # a folder inside the student's folder
    (cls / "eve").mkdir()
    (cls / "eve" / "notes.txt").write_text("nothing yet")
    _copy(SOLUTION, cls / "copycat")
    with zipfile.ZipFile(cls / "carol.zip", "w") as zf:
        for path in sorted((ALT / "alt_einsum").glob("*.py")):
            zf.write(path, f"carol_hw1/{path.name}")
    (cls / ".git").mkdir()
    (cls / ".git" / "HEAD").write_text("ref")
    (base / "course").mkdir()
    (base / "course" / "gradekit.toml").write_text(CONFIG)
    (base / "course" / "overrides.toml").write_text(REVIEWS, encoding="utf-8")  # found beside the configuration
    first = _run(base)
    snapshot = {p.relative_to(base / "out"): p.read_bytes() for p in (base / "out").rglob("*") if p.is_file()}
    second = _run(base)
    return {"base": base, "out": base / "out", "first": first, "second": second, "files": snapshot}


def test_every_folder_is_a_student_with_a_row_and_a_report(term):
    rows = _gradebook(term["out"])
    expected = set(NAMES) | {"ivan", "eve", "copycat", "carol"}
    assert set(rows) == expected
    for record in term["first"].records:
        assert (term["out"] / record["folder"] / "report.html").is_file(), record["student"]
    for name in set(NAMES) | {"ivan", "carol"}:
        assert rows[name]["status"] == "ok" and rows[name]["Q7 masks"] == rows[name]["max"] != "0", rows[name]
    assert rows["eve"]["status"] == "error" and "empty submission" in rows["eve"]["reason"]


def test_the_reports_have_the_pictures_by_default_even_for_a_task_subset(term):
    """No figures option given, and the course grades ``masks`` only: every graded student's report still has the
    pictures (the attention map and the positional table), as ``gradekit batch`` draws them by default."""
    from grader.cli import build_parser

    assert build_parser().parse_args(["batch", "class", "--out", "out"]).figures is True
    graded = [r for r in term["first"].records if r["status"] != "error"]
    assert len(graded) == 7
    for record in graded:
        report = (term["out"] / record["folder"] / "report.html").read_text(encoding="utf-8")
        assert 'id="fig-attention"' in report and 'id="fig-positional"' in report, record["student"]


def test_the_closing_lines_name_what_was_skipped_and_not_graded(term):
    lines = cli.closing_lines(term["first"], "en")
    assert lines[0] == "skipped 1 entry that is not a submission: .git (hidden)"
    assert lines[-1] == "1 could not be graded: eve: empty submission (no .py file)"


def test_a_rerun_grades_nothing_and_writes_the_same_files(term):
    assert term["first"].graded == 7 and term["second"].graded == 0 and term["second"].cached == 7
    now = {p.relative_to(term["out"]): p.read_bytes() for p in term["out"].rglob("*") if p.is_file()}
    assert now == term["files"]


def test_a_review_shows_in_every_output(term):
    out, rows = term["out"], _gradebook(term["out"])
    wang = rows["Wang Fang (王芳)"]
    assert float(wang["total"]) == float(wang["max"]) + 2 and wang["adjustment"] == "2"
    assert (wang["reviewed_by"], wang["review_why"]) == ("TA Li", "regrade request #3")
    assert float(_lms(out)["Wang Fang (王芳)"]["HW1 masks"]) == float(wang["total"])
    record = next(r for r in term["second"].records if r["student"] == "Wang Fang (王芳)")
    folder = out / record["folder"]
    assert json.loads((folder / "gradescope.json").read_text())["score"] == float(wang["total"])
    assert json.loads((folder / "results.json").read_text())["review"]["by"] == "TA Li"
    report = (folder / "report.html").read_text()
    assert "regrade request #3" in report and "TA Li" in report
    page = (out / "index.html").read_text()
    assert f"{float(wang['total']):g} / {float(wang['max']):g}" in page


def test_a_cleared_copy_flag_restores_the_score_everywhere(term):
    out, rows = term["out"], _gradebook(term["out"])
    copycat = rows["copycat"]
    assert copycat["copy_review"] == "cleared" and copycat["status"] == "ok"
    assert copycat["total"] == copycat["max"] != "0" and copycat["before_review"] == "0"
    record = next(r for r in term["second"].records if r["student"] == "copycat")
    assert json.loads((out / record["folder"] / "gradescope.json").read_text())["score"] == float(copycat["total"])
    assert "written with the TA in office hours" in (out / record["folder"] / "report.html").read_text()


def test_taking_a_review_out_takes_it_out_of_every_output(term, tmp_path):
    base = tmp_path / "again"
    shutil.copytree(term["base"], base, symlinks=True)
    reviews = base / "course" / "overrides.toml"
    reviews.write_text(REVIEWS.split("[students.copycat]")[0], encoding="utf-8")
    result = _run(base)
    assert result.graded == 0
    rows = _gradebook(base / "out")
    assert rows["copycat"]["total"] == "0" and rows["copycat"]["status"] == "copy"
    assert "scored 0" in rows["copycat"]["reason"] and rows["copycat"]["copy_review"] == ""
    record = next(r for r in result.records if r["student"] == "copycat")
    folder = base / "out" / record["folder"]
    assert "office hours" not in (folder / "report.html").read_text()
    assert json.loads((folder / "gradescope.json").read_text())["score"] == 0
