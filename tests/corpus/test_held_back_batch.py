"""The final grade's held-back examples in a class graded by ``batch``: the replay loses there what it won from the
bank, correct submissions keep every point on both sets, two runs agree, the batch says what it did, and no output
holds the secret. (The replay, the kit and the course configuration: ``tests/integration/test_held_back.py``.)"""

import csv
import json
import shutil

import pytest
from markupsafe import escape

from grader.batch.cli import closing_lines
from grader.batch.runner import batch
from grader.config import held_back_seed
from grader.messages import text
from tests.held_back import CORRECT, NO_REPLAY, REPLAYED, SECRET, checks_of, course_file, module_fixtures

bank, replay = module_fixtures()


@pytest.fixture(scope="module")
def graded(tmp_path_factory, replay):
    """One class (the replay and three correct submissions) graded by ``batch -j 1``: with a secret, twice (the
    second forced), and without one."""
    base = tmp_path_factory.mktemp("held-back")
    cls = base / "class"
    cls.mkdir()
    shutil.copytree(replay, cls / "replay")
    for name, folder in CORRECT.items():
        shutil.copytree(folder, cls / name)
    runs = {}
    for label, secret, force in (("secret", SECRET, False), ("again", SECRET, True), ("none", None, False)):
        out = base / ("out-none" if secret is None else "out")
        config = course_file(base / f"course-{'none' if secret is None else 'secret'}", secret)
        result = batch(submissions=cls, out=out, jobs=1, profile="quick", config=config, figures=False, force=force)
        rows = {
            r["student_id"]: r
            for r in csv.DictReader((out / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines())
        }
        gradings = {
            name: json.loads((out / name / "grading.json").read_text(encoding="utf-8"))["result"] for name in rows
        }
        runs[label] = {"result": result, "rows": rows, "gradings": gradings, "out": out}
    return runs


def test_without_a_secret_the_final_grade_gives_the_replay_what_the_kit_gives(graded):
    checks = checks_of(graded["none"]["gradings"]["replay"])
    assert {c for c, v in checks.items() if v["status"] != "passed"} == NO_REPLAY
    assert graded["none"]["gradings"]["replay"]["held_back"] is None
    assert all(not v["sets"] for v in checks.values())


def test_with_a_secret_the_replay_loses_what_it_won_from_the_bank(graded):
    grading = graded["secret"]["gradings"]["replay"]
    checks = checks_of(grading)
    assert {c for c, v in checks.items() if v["status"] != "passed"} == NO_REPLAY | REPLAYED
    for c in REPLAYED:  # passed on the kit's examples, failed on the held-back ones, and says so
        assert checks[c]["sets"] == {"kit": "passed", "held_back": "failed"}
        assert "note.held_back_failed" in [n["key"] for n in checks[c]["notes"]]
        assert checks[c]["message"]["key"] == "fail.mismatch"
    lost = sum(checks[c]["max_score"] for c in REPLAYED)
    none = graded["none"]["rows"]["replay"]
    assert float(graded["secret"]["rows"]["replay"]["total"]) == pytest.approx(float(none["total"]) - lost)
    # 9 checks on the kit's examples, 8 on held-back ones (layernorm.contract draws none: its questions are the same)
    assert grading["held_back"] == {"kit": [7, 9], "held_back": [4, 8]}


# -- correct submissions, re-runs, what is said ---------------------------------------------------------------------


@pytest.mark.parametrize("name", sorted(CORRECT))
def test_correct_submissions_keep_every_point_on_both_sets(graded, name):
    row = graded["secret"]["rows"][name]
    grading = graded["secret"]["gradings"][name]
    assert grading["score"] == grading["max_score"] == float(row["max"]), row  # the reference's row: a copy, zeroed
    assert row["status"] == ("copy" if name == "reference" else "ok")
    assert grading["held_back"] == {"kit": [9, 9], "held_back": [8, 8]}  # layernorm.contract draws nothing
    columns = ("kit_passed", "kit_checks", "held_back_passed", "held_back_checks")
    assert [row[c] for c in columns] == ["9", "9", "8", "8"]


def test_two_runs_with_the_secret_give_the_same_scores_and_verdicts(graded):
    first, again = graded["secret"], graded["again"]
    assert again["result"].graded == len(CORRECT) + 1  # forced: every submission graded again
    for name in first["rows"]:
        a, b = checks_of(first["gradings"][name]), checks_of(again["gradings"][name])
        assert {c: (v["status"], v["score"], v["sets"]) for c, v in a.items()} == {
            c: (v["status"], v["score"], v["sets"]) for c, v in b.items()
        }
        assert first["rows"][name]["total"] == again["rows"][name]["total"]


def test_a_batch_without_a_secret_says_so_once_and_one_with_it_says_nothing(graded):
    said = text("batch.cli.no_held_back", "en")
    assert closing_lines(graded["none"]["result"], "en").count(said) == 1
    assert said not in closing_lines(graded["secret"]["result"], "en")
    header = (graded["none"]["out"] / "gradebook.csv").read_text(encoding="utf-8-sig").splitlines()[0]
    assert "held_back" not in header


def test_the_reports_say_how_many_checks_passed_on_each_set_in_both_languages(graded):
    out = graded["secret"]["out"] / "replay"
    grading = graded["secret"]["gradings"]["replay"]
    (kit_passed, kit_checks), (held, held_checks) = grading["held_back"]["kit"], grading["held_back"]["held_back"]
    counts = dict(kit=kit_passed, kit_total=kit_checks, held=held, held_total=held_checks)
    page = (out / "report.html").read_text(encoding="utf-8")
    assert str(escape(text("ui.held_back_short", "en", **counts))) in page  # as the report's template escapes
    assert text("ui.held_back", "en", **counts) in (out / "gradescope.json").read_text(encoding="utf-8")
    assert json.loads((out / "results.json").read_text(encoding="utf-8"))["held_back"] == grading["held_back"]
    zh = text("ui.held_back", "zh", **counts)
    assert str(held) in zh and str(held_checks) in zh and zh != text("ui.held_back", "en", **counts)


def test_no_output_holds_the_secret_or_the_seeds_made_of_it(graded):
    seed = held_back_seed(SECRET.encode())
    for path in graded["secret"]["out"].rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert SECRET.encode() not in data and str(seed).encode() not in data, path
