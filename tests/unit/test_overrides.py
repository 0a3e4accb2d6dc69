"""The instructor's reviews (``grader.batch.overrides``), the gradebook's review and task columns, and the LMS
export (``grader.batch.exports``).

Records are built by hand (dicts, as the judge writes them); a student's files are rendered by the batch's one
writer (``grader.batch.outputs``) from a small hand-made ``GradeResult`` saved as the judge saves it. No batch is
run here.
"""

import copy
import csv
import json
import unicodedata
from pathlib import Path

import pytest

from grader.assignment import load as load_assignment
from grader.batch import exports, gradebook, judge, outputs, overrides
from grader.batch.overrides import Override, OverrideError
from grader.results import CheckResult, GradeResult, Message, TaskResult
from grader.views import gradescope, html, json_view

WANG = "Wang Fang (王芳)"
OBRIEN = "O'Brien, Seán"
CLASS = [WANG, OBRIEN, "王芳", "Anne Marie", "-dash"]
COPY_REASON = "flagged as a copy of the reference solution"
TIMEOUT_REASON = "a call into the code ran past its time limit and was stopped"
TINY = Path(__file__).resolve().parents[1] / "data" / "tiny_assignment"


# -- records and files ------------------------------------------------------------------------------
def _record(student=WANG, **changes):
    record = {
        "student": student,
        "folder": "s1",
        "hash": "abc",
        "status": "ok",
        "reason": "",
        "problems": [],
        "score": 8.0,
        "max_score": 10.0,
        "raw_score": 8.0,
        "tasks": {"sdpa": 5.0, "mha": 3.0},
        "raw_tasks": {"sdpa": 5.0, "mha": 3.0},
        "task_max": {"sdpa": 5.0, "mha": 5.0},
        "checks": {"sdpa.shape": "passed"},
        "diagnoses": [],
        "flags": {"copy_of_reference": {"copy": False, "score": 0.2, "matches": []}},
        "refused": [],
        "duration_s": 1.5,
    }
    record.update(changes)
    return record


def _copy_record(policy, *, timeout=True):
    """A submission flagged as a copy (with a timeout too, when ``timeout``), graded under ``policy``."""
    problems = [{"status": "copy", "reason": COPY_REASON}]
    if timeout:
        problems.append({"status": "timeout", "reason": TIMEOUT_REASON})
    zero = policy == "zero"
    return _record(
        status="copy",
        reason="; ".join(p["reason"] for p in problems),
        problems=problems,
        score=0.0 if zero else 9.0,
        raw_score=9.0,
        tasks={"sdpa": 0.0, "mha": 0.0} if zero else {"sdpa": 5.0, "mha": 4.0},
        raw_tasks={"sdpa": 5.0, "mha": 4.0},
        flags={"copy_of_reference": {"copy": True, "score": 0.97, "matches": ["sdpa"]}},
    )


def _override(**fields):
    fields.setdefault("student", WANG)
    if any(k in fields for k in ("points", "copy", "late_penalty", "late_percent")):
        fields.setdefault("by", "Prof. Li")
        fields.setdefault("why", "regrade request")
    return Override(**fields)


def _result(score=8.0):
    check = CheckResult(
        id="sdpa.values",
        task="sdpa",
        status="failed",
        score=score,
        max_score=10.0,
        message=Message("fail.mismatch", {"what": "output"}),
    )
    task = TaskResult(id="sdpa", score=score, max_score=10.0, checks=[check])
    return GradeResult(
        submission=WANG, score=score, max_score=10.0, seed=1, profile="quick", duration_s=1.0, tasks=[task]
    )


def _judge_files(folder, record):
    """The grading the judge saves for ``record`` (``judge.save_grading``)."""
    judge.save_grading(folder, _result(record["raw_score"]), record)


def _views(record, lang="en", output_format="md"):
    """What the views alone render of ``record``'s grading, without a review: ``{file name: bytes}``."""
    result = _result(record["raw_score"])
    data = json_view.to_data(result, lang=lang)
    data.update(
        student=record["student"],
        status=record["status"],
        reason=record["reason"],
        flags=record["flags"],
        gradebook_score=record["score"],
    )
    return {
        "results.json": (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode(),
        "report.html": html.render(result, lang=lang).encode(),
        "gradescope.json": gradescope.render(result, lang=lang, output_format=output_format).encode(),
    }


def _files(folder):
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())}


def _write(tmp_path, name, content):
    path = tmp_path / name
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content, encoding="utf-8", newline="")
    return path


TOML = """\
[students."Wang Fang (王芳)"]
points = 2
note = "task 3 regraded by hand"
by = "Prof. Li"
why = "the check missed an equivalent formula"

[students."O'Brien, Seán"]
copy = "cleared"
by = "TA Zhang"
why = "written in class, reviewed"

[students."王芳"]
late_penalty = 1.5
late_percent = 10
by = "Prof. Li"
why = "two days late"

[students."Anne Marie"]
note = "asked for feedback"
"""

CSV = (
    "student,points,copy,late_penalty,late_percent,note,by,why\r\n"
    "Wang Fang (王芳),2,,,,task 3 regraded by hand,Prof. Li,the check missed an equivalent formula\r\n"
    '"O\'Brien, Seán",,cleared,,,,TA Zhang,"written in class, reviewed"\r\n'
    "王芳,,,1.5,10,,Prof. Li,two days late\r\n"
    "Anne Marie,,,,,asked for feedback,,\r\n"
    ",,,,,,,\r\n"
)


# -- load: both formats -----------------------------------------------------------------------------
def _check_parsed(found):
    assert set(found) == {WANG, OBRIEN, "王芳", "Anne Marie"}
    assert found[WANG] == Override(
        student=WANG,
        points=2.0,
        note="task 3 regraded by hand",
        by="Prof. Li",
        why="the check missed an equivalent formula",
    )
    assert found[OBRIEN].copy == "cleared" and found[OBRIEN].why == "written in class, reviewed"
    assert (found["王芳"].late_penalty, found["王芳"].late_percent, found["王芳"].points) == (1.5, 10.0, 0.0)
    assert found["Anne Marie"].note == "asked for feedback" and not found["Anne Marie"].by
    assert found.unknown == []


def test_toml_entries_with_unicode_space_comma_and_apostrophe_names(tmp_path):
    found = overrides.load(_write(tmp_path, "overrides.toml", TOML), students=CLASS)
    _check_parsed(found)
    assert found[WANG].where() == f'{tmp_path / "overrides.toml"}, table [students."{WANG}"]'
    assert found[WANG].where("zh") == f'{tmp_path / "overrides.toml"} 的表 [students."{WANG}"]'


@pytest.mark.parametrize("bom", ["\ufeff", ""], ids=["excel-bom", "no-bom"])
def test_csv_entries_with_or_without_a_bom(tmp_path, bom):
    found = overrides.load(_write(tmp_path, "overrides.csv", bom + CSV), students=CLASS)
    _check_parsed(found)
    assert found[OBRIEN].where() == f"{tmp_path / 'overrides.csv'}, line 3"


def test_csv_headers_in_any_order_and_case_with_columns_left_out(tmp_path):
    path = _write(tmp_path, "overrides.csv", 'Note, Student ,Points,By,Why\nok,"O\'Brien, Seán",-1.5,Li,typo\n')
    found = overrides.load(path)
    assert found[OBRIEN].points == -1.5 and found[OBRIEN].note == "ok"


def test_a_name_is_matched_as_the_gradebook_shows_it(tmp_path):
    # NFD (as macOS names files) for NFC, spaces around, and the gradebook's quote before a formula sign.
    nfd = unicodedata.normalize("NFD", OBRIEN)
    assert nfd != OBRIEN
    toml = f'[students."{nfd}"]\nnote = "a"\n[students."  Anne Marie "]\nnote = "b"\n[students."\'-dash"]\nnote = "c"\n'
    found = overrides.load(_write(tmp_path, "overrides.toml", toml), students=CLASS)
    assert found.unknown == []
    assert [found.for_student(s).note for s in (OBRIEN, "Anne Marie", "-dash")] == ["a", "b", "c"]
    assert found.for_student(WANG) is None


def test_a_student_not_in_the_class_is_reported_not_dropped(tmp_path):
    path = _write(tmp_path, "overrides.csv", CSV.replace("Anne Marie", "Left Early"))
    found = overrides.load(path, students=CLASS)
    assert [o.student for o in found.unknown] == ["Left Early"]
    (en,), (zh,) = found.messages("en"), found.messages("zh")
    assert "Left Early" in en and "line 5" in en and "overrides.csv" in en
    assert "Left Early" in zh and "第 5 行" in zh
    assert found.for_student(WANG).points == 2  # the others still apply


def test_without_a_class_list_nothing_is_reported(tmp_path):
    assert overrides.load(_write(tmp_path, "overrides.toml", TOML)).messages("en") == []


BAD = [
    # (file name, content, fragments the message must hold)
    (
        "o.toml",
        '[students."A"]\npoints = 1\nby = "x"\nwhy = "y"\nbonus = 2\n',
        ['[students."A"]', "'bonus'", "points, copy, late_penalty, late_percent, note, by, why"],
    ),
    ("o.toml", '[students."A"]\npoints = "two"\nby = "x"\nwhy = "y"\n', ['[students."A"]', "points", "'two'"]),
    ("o.toml", '[students."A"]\npoints = true\nby = "x"\nwhy = "y"\n', ['[students."A"]', "points", "True"]),
    (
        "o.toml",
        '[students."A"]\ncopy = "maybe"\nby = "x"\nwhy = "y"\n',
        ['[students."A"]', '"cleared" or "confirmed"', "'maybe'"],
    ),
    ("o.toml", '[students."A"]\npoints = 3\n', ['[students."A"]', "'by'", "'why'"]),
    ("o.toml", '[students."A"]\ncopy = "confirmed"\nby = "x"\n', ['[students."A"]', "'why'"]),
    ("o.toml", '[students."A"]\nlate_percent = 120\nby = "x"\nwhy = "y"\n', ['[students."A"]', "0 and 100", "120"]),
    ("o.toml", '[students."A"]\nlate_penalty = -2\nby = "x"\nwhy = "y"\n', ['[students."A"]', "late_penalty", "-2"]),
    ("o.toml", '[students."A"]\npoints = inf\nby = "x"\nwhy = "y"\n', ['[students."A"]', "points", "inf"]),
    ("o.toml", '[students."A"]\nnote = 5\n', ['[students."A"]', "note", "5"]),
    ("o.toml", '[student."A"]\nnote = "x"\n', ["'student'", 'students."NAME"']),
    ("o.toml", "students = 3\n", ["students", "3"]),
    ("o.toml", "[students]\nA = 3\n", ['students."A"', "3"]),
    ("o.toml", '[students."A"\n', ["o.toml", "TOML"]),
    ("o.csv", "student,points,bonus\nA,1,2\n", ["o.csv", "line 1", "'bonus'", "student, points, copy"]),
    ("o.csv", "name,points\nA,1\n", ["o.csv", "line 1", "'name'", "student, points, copy"]),
    ("o.csv", "points,note\n1,x\n", ["o.csv", "line 1", "'student'"]),
    ("o.csv", "student,points,points\nA,1,2\n", ["o.csv", "line 1", "'points'"]),
    ("o.csv", "student,points,by,why\nA,two,x,y\n", ["o.csv", "line 2", "points", "'two'"]),
    ("o.csv", 'student,points,by,why\nA,"2,5",x,y\n', ["o.csv", "line 2", "points", "'2,5'"]),
    ("o.csv", "student,copy,by,why\nA,maybe,x,y\n", ["o.csv", "line 2", "'maybe'"]),
    ("o.csv", "student,points,by,why\nA,1,,\n", ["o.csv", "line 2", "'by'", "'why'"]),
    ("o.csv", "student,points\n,1\n", ["o.csv", "line 2", "student"]),
    ("o.csv", "student,note\nA,x\nB,y\n A ,z\n", ["o.csv", "line 4", "line 2", "A"]),
    ("o.csv", "student,note\nA,x,extra\n", ["o.csv", "line 2", "3", "2"]),
    ("o.csv", 'student,note\n"A\nB",x\n"C",\n"D",a,b\n', ["o.csv", "line 5"]),
    ("o.csv", "student,note\nWang Fang,王芳\n".encode("gbk"), ["o.csv", "UTF-8"]),
    ("o.txt", "student\n", ["o.txt", ".toml", ".csv"]),
]


@pytest.mark.parametrize("name, content, fragments", BAD, ids=[f"{i}-{b[0]}" for i, b in enumerate(BAD)])
def test_bad_input_says_where_what_was_expected_and_what_came(tmp_path, name, content, fragments):
    with pytest.raises(OverrideError) as info:
        overrides.load(_write(tmp_path, name, content))
    message = str(info.value)
    for fragment in fragments:
        assert fragment in message, (fragment, message)


def test_errors_in_chinese(tmp_path):
    path = _write(tmp_path, "o.csv", "student,points,by,why\nA,two,x,y\n")
    with pytest.raises(OverrideError) as info:
        overrides.load(path, lang="zh")
    assert "第 2 行" in str(info.value) and "'two'" in str(info.value)


def test_a_missing_file_is_an_error_naming_it(tmp_path):
    with pytest.raises(OverrideError, match="nowhere.toml"):
        overrides.load(tmp_path / "nowhere.toml")


def test_a_note_alone_needs_no_reviewer_and_an_empty_entry_is_no_override(tmp_path):
    found = overrides.load(_write(tmp_path, "o.toml", '[students."A"]\nnote = "n"\n[students."B"]\n'))
    assert found.for_student("A").note == "n" and found.for_student("B") is None


# -- apply ------------------------------------------------------------------------------------------
def test_without_an_override_the_record_comes_back_unchanged():
    record = _copy_record("zero")
    before = copy.deepcopy(record)
    final = overrides.apply(record, None, copy_policy="zero")
    assert final == before and final is not record and "review" not in final
    assert record == before


@pytest.mark.parametrize("policy", ["zero", "flag"])
def test_a_cleared_copy_gets_its_raw_points_back_and_the_next_problem(policy):
    record = _copy_record(policy)
    before = copy.deepcopy(record)
    final = overrides.apply(record, _override(copy="cleared"), copy_policy=policy)
    assert record == before  # the cache is never touched
    assert final["score"] == 9.0 and final["tasks"] == {"sdpa": 5.0, "mha": 4.0}
    assert final["status"] == "timeout" and final["reason"] == TIMEOUT_REASON
    assert final["problems"] == [{"status": "timeout", "reason": TIMEOUT_REASON}]
    assert final["review"] == {
        "points": 0.0,
        "copy": "cleared",
        "late": 0.0,
        "note": "",
        "by": "Prof. Li",
        "why": "regrade request",
        "before": record["score"],
        "after": 9.0,
    }


def test_a_cleared_copy_without_other_problems_is_ok():
    final = overrides.apply(_copy_record("zero", timeout=False), _override(copy="cleared"), copy_policy="zero")
    assert (final["status"], final["reason"], final["problems"], final["score"]) == ("ok", "", [], 9.0)


@pytest.mark.parametrize("policy", ["zero", "flag"])
def test_a_confirmed_copy_scores_zero_whatever_the_policy(policy):
    final = overrides.apply(_copy_record(policy), _override(copy="confirmed"), copy_policy=policy)
    assert final["score"] == 0 and final["tasks"] == {"sdpa": 0.0, "mha": 0.0}
    assert final["status"] == "copy" and [p["status"] for p in final["problems"]] == ["copy", "timeout"]
    assert COPY_REASON not in final["reason"] and "confirmed" in final["reason"]
    assert final["reason"].endswith("; " + TIMEOUT_REASON)
    assert final["review"]["after"] == 0 and final["review"]["copy"] == "confirmed"


def test_a_copy_the_detector_missed_can_be_confirmed():
    final = overrides.apply(_record(), _override(copy="confirmed"), copy_policy="flag")
    assert (final["status"], final["score"]) == ("copy", 0.0)
    assert (
        final["reason"]
        == overrides.apply(_copy_record("flag", timeout=False), _override(copy="confirmed"), copy_policy="flag")[
            "reason"
        ]
    )


def test_clearing_a_flag_the_record_does_not_have_changes_nothing_but_the_review():
    record = _record()
    final = overrides.apply(record, _override(copy="cleared"), copy_policy="zero")
    assert {k: v for k, v in final.items() if k != "review"} == record


def test_the_late_penalty_comes_before_the_adjustment_and_counts_percent_of_the_maximum():
    # 8 earned; late: 1.5 points + 10% of 10 = 2.5 -> 5.5; then +2 -> 7.5
    final = overrides.apply(_record(), _override(late_penalty=1.5, late_percent=10, points=2), copy_policy="zero")
    assert final["score"] == 7.5
    assert (final["review"]["late"], final["review"]["points"], final["review"]["before"]) == (2.5, 2.0, 8.0)
    assert (final["status"], final["tasks"]) == ("ok", {"sdpa": 5.0, "mha": 3.0})


def test_the_total_never_goes_below_zero():
    low = _record(score=2.0, raw_score=2.0)
    assert overrides.apply(low, _override(points=-5), copy_policy="zero")["score"] == 0
    # the late penalty takes at most what was earned; the adjustment then counts in full
    late = overrides.apply(low, _override(late_penalty=5, points=1), copy_policy="zero")
    assert late["score"] == 1 and late["review"]["late"] == 2
    confirmed = overrides.apply(
        _copy_record("flag"), _override(copy="confirmed", late_percent=50, points=-1), copy_policy="flag"
    )
    assert confirmed["score"] == 0 and confirmed["review"]["late"] == 0


def test_extra_credit_may_go_above_the_maximum():
    final = overrides.apply(_record(), _override(points=3.5), copy_policy="zero")
    assert final["score"] == 11.5 and final["max_score"] == 10.0


def test_a_note_alone_keeps_the_score():
    final = overrides.apply(_record(), _override(note="good work"), copy_policy="zero")
    assert final["score"] == 8.0 and final["review"]["note"] == "good work" and final["review"]["after"] == 8.0


def test_a_record_that_could_not_be_graded_keeps_its_status():
    record = {
        "student": WANG,
        "folder": "s1",
        "hash": "",
        "status": "error",
        "reason": "could not be graded: x",
        "score": 0.0,
        "max_score": 0.0,
        "raw_score": 0.0,
        "tasks": {},
        "task_max": {},
        "checks": {},
        "diagnoses": [],
        "flags": {},
        "duration_s": 0.0,
    }
    final = overrides.apply(record, _override(copy="cleared", points=4), copy_policy="zero")
    assert (final["status"], final["reason"], final["score"]) == ("error", record["reason"], 4.0)


def test_an_unknown_policy_is_refused():
    with pytest.raises(ValueError, match="copy_policy"):
        overrides.apply(_record(), _override(points=1), copy_policy="strict")


# -- the student's files ----------------------------------------------------------------------------
def _judged(tmp_path, name, record):
    folder = tmp_path / name
    _judge_files(folder, record)
    return folder


def _run(folder, record, override, policy="zero", lang="en", output_format="md"):
    final = overrides.apply(record, override, copy_policy=policy, lang=lang)
    assert outputs.publish(folder, final, lang=lang, output_format=output_format)
    return _files(folder)


def test_the_files_are_the_same_whatever_ran_before(tmp_path):
    record = _copy_record("zero")
    cleared = _override(copy="cleared", note="seen in the lab")
    changed = _override(copy="confirmed", points=1, why="same as another student")
    plain = _run(_judged(tmp_path, "plain", record), record, None)
    first = _run(_judged(tmp_path, "first", record), record, cleared)
    fresh_changed = _run(_judged(tmp_path, "fresh", record), record, changed)

    folder = _judged(tmp_path, "again", record)
    assert _run(folder, record, cleared) == first
    assert _run(folder, record, cleared) == first  # the same override again: the same files
    assert _run(folder, record, changed) == fresh_changed  # a changed override: as if it were the first
    assert _run(folder, record, None) == plain  # removed: as if there had never been one
    assert first != plain and fresh_changed != first
    assert json.loads(plain["record.json"]) == record == json.loads(first["record.json"])


def test_without_a_review_the_files_are_the_views_but_for_the_gradescope_score(tmp_path):
    record = _copy_record("zero")
    folder = _judged(tmp_path, "s", record)
    judged = _views(record)
    after = _run(folder, record, None)
    assert {k: v for k, v in after.items() if k in ("results.json", "report.html")} == {
        k: v for k, v in judged.items() if k != "gradescope.json"
    }
    gs_before, gs_after = json.loads(judged["gradescope.json"]), json.loads(after["gradescope.json"])
    assert gs_before["score"] == 9 and gs_after["score"] == 0  # the gradebook's score, after the copy policy
    assert {k: v for k, v in gs_after.items() if k not in ("score", "output")} == {
        k: v for k, v in gs_before.items() if k not in ("score", "output")
    }
    # The output opens with the score that counts, then says what the judge's view says
    said, judged_said = gs_after["output"].split("\n", 1), gs_before["output"].split("\n", 1)
    assert said[0].startswith("Score: 0 / 10") and judged_said[0].startswith("Score: 9 / 10")
    assert said[1:] == judged_said[1:]
    unflagged = _record()
    folder = _judged(tmp_path, "u", unflagged)
    after = _run(folder, unflagged, None)
    assert {k: v for k, v in after.items() if k in outputs.RENDERED} == _views(unflagged)


def test_the_review_shows_in_every_file(tmp_path):
    record = _copy_record("zero")
    override = _override(
        copy="cleared", late_penalty=1, points=0.5, note="<script>alert(1)</script> & co", by="Prof. <b>Li</b>"
    )
    files = _run(_judged(tmp_path, "s", record), record, override)
    report = files["report.html"].decode()
    box = report.split("<!-- gradekit:review -->")[1].split("<!-- /gradekit:review -->")[0]
    assert "Instructor&#39;s review" in box or "Instructor's review" in box
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in box and "<script>alert" not in report
    assert "Prof. &lt;b&gt;Li&lt;/b&gt;" in box and "regrade request" in box
    assert "0 → 8.5" in box and "cleared" in box and "+0.5" in box and "−1" in box
    score_card_end = report.index("</section>", report.index('id="score"'))
    assert score_card_end < report.index("<!-- gradekit:review -->") < report.index('id="tasks"')
    gs = json.loads(files["gradescope.json"])
    assert gs["score"] == 8.5
    assert gs["output_format"] == "md"  # the view's default: the instructor's text is escaped in it
    assert "&lt;script&gt;alert(1)&lt;/script&gt; &amp; co" in gs["output"] and "<script" not in gs["output"]
    assert "Prof. &lt;b&gt;Li&lt;/b&gt;" in gs["output"]
    judged_output = json.loads(gradescope.render(_result(9.0)))["output"]  # "Score: 9 / 10 ...": the grading's
    assert gs["output"].startswith(judged_output.replace("Score: 9 / 10", "Score: 8.5 / 10", 1))
    results = json.loads(files["results.json"])
    assert results["gradebook_score"] == 8.5 and results["status"] == "timeout"
    assert results["review"]["copy"] == "cleared" and results["review"]["late"] == 1


def test_the_review_in_chinese(tmp_path):
    record = _record()
    files = _run(_judged(tmp_path, "s", record), record, _override(points=-1, note="抄写了题目"), lang="zh")
    report = files["report.html"].decode()
    assert "教师复核" in report and "抄写了题目" in report
    assert "教师复核" in json.loads(files["gradescope.json"])["output"]


@pytest.mark.parametrize(
    "output_format, shown",
    [
        ("html", "&lt;img src=x onerror=alert(1)&gt;"),
        ("md", "&lt;img src=x onerror=alert(1)&gt;"),
        ("text", "<img src=x onerror=alert(1)>"),
    ],
)
def test_gradescope_output_follows_its_format(tmp_path, output_format, shown):
    record = _record()
    folder = _judged(tmp_path, "s", record)
    judged = _views(record, output_format=output_format)["gradescope.json"]
    output = json.loads(
        _run(folder, record, _override(note="<img src=x onerror=alert(1)>"), output_format=output_format)[
            "gradescope.json"
        ]
    )["output"]
    assert shown in output
    assert ("<img" in output) == (output_format == "text")  # text is shown as written, never as markup
    assert _run(folder, record, None, output_format=output_format)["gradescope.json"] == judged


def test_a_folder_without_a_grading_gets_no_files(tmp_path):
    folder = tmp_path / "s"
    folder.mkdir()
    final = overrides.apply(_record(), _override(points=1), copy_policy="zero")
    assert outputs.publish(folder, final, lang="en") is False
    assert list(folder.iterdir()) == []


# -- the gradebook ----------------------------------------------------------------------------------
def _class_records():
    return [
        overrides.apply(_copy_record("zero"), _override(copy="cleared", note='said "hi", =1+1'), copy_policy="zero"),
        _record(student="王芳, Li", score=7.25, raw_score=7.25),
        overrides.apply(
            _record(student="-dash"), _override(student="-dash", late_percent=5, points=-0.5), copy_policy="zero"
        ),
    ]


def test_gradebook_task_columns_use_the_course_names():
    tiny = load_assignment(TINY)
    records = [{"student": "s1", "score": 1, "max_score": 5, "status": "ok", "tasks": {"attend": 0, "softmax": 1}}]
    head = next(csv.reader(gradebook.render(records, tiny, headings={"softmax": "Q1 softmax, stable"}).splitlines()))
    assert head == ["student_id", "total", "max", "status", "Q1 softmax, stable", "attend", "reason"]


def test_gradebook_review_columns_exact_bytes(tmp_path):
    records = [dict(r, tasks={"masks": r["tasks"]["sdpa"]}) for r in _class_records()]
    gradebook.write(records, tmp_path / "gradebook.csv", load_assignment(), headings={"masks": "Q3 masks"})
    assert (tmp_path / "gradebook.csv").read_bytes() == (
        "\ufeffstudent_id,total,max,status,Q3 masks,reason,before_review,adjustment,late,copy_review,review_note,"
        "reviewed_by,review_why\r\n"
        f'{WANG},9,10,timeout,5,{TIMEOUT_REASON},0,0,0,cleared,"said ""hi"", \'=1+1",Prof. Li,'
        "regrade request\r\n"
        '"王芳, Li",7.25,10,ok,5,,,,,,,,\r\n'
        "'-dash,7,10,ok,5,,8,-0.5,0.5,,,Prof. Li,regrade request\r\n"
    ).encode()


def test_gradebook_review_columns_stay_when_asked_even_without_reviews():
    records = [_record(tasks={"masks": 5.0})]
    plain = next(csv.reader(gradebook.render(records, load_assignment()).splitlines()))
    kept = next(csv.reader(gradebook.render(records, load_assignment(), reviews=True).splitlines()))
    assert plain == ["student_id", "total", "max", "status", "masks", "reason"]
    assert kept == plain + list(gradebook.REVIEW)


# -- the LMS export ---------------------------------------------------------------------------------
def test_lms_csv_exact_bytes(tmp_path):
    ungraded = {
        "student": "Zed",
        "folder": "Zed",
        "hash": "",
        "status": "error",
        "reason": "could not be graded",
        "score": 0.0,
        "max_score": 0.0,
        "raw_score": 0.0,
        "tasks": {},
        "task_max": {},
    }
    path = exports.write_lms(_class_records() + [ungraded], tmp_path, title="HW2, Transformer", lang="en")
    assert path == tmp_path / "lms.csv"
    assert (
        path.read_bytes()
        == (
            '\ufeffStudent,ID,SIS User ID,SIS Login ID,Section,"HW2, Transformer"\r\n'
            f"{WANG},,,{WANG},,9\r\n"
            '"王芳, Li",,,"王芳, Li",,7.25\r\n'
            "'-dash,,,'-dash,,7\r\n"
            "Zed,,,Zed,,\r\n"
        ).encode()
    )


def test_lms_title_falls_back_to_the_assignments_title_in_the_language(tmp_path):
    title = load_assignment(TINY).title
    head = exports.write_lms([], tmp_path, title=title, lang="zh").read_text(encoding="utf-8-sig").splitlines()[0]
    assert head == "Student,ID,SIS User ID,SIS Login ID,Section,小型注意力作业"
    head = exports.write_lms([], tmp_path, title=title, lang="fr").read_text(encoding="utf-8-sig").splitlines()[0]
    assert head.endswith(",Tiny attention homework")
