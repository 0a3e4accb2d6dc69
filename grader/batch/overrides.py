"""The instructor's reviews: ``overrides.toml`` (or ``overrides.csv``) beside the course configuration.

One entry per student, named as in the gradebook's ``student_id`` column::

    [students."Wang Fang (王芳)"]
    points = 2                    # added to the total (negative: taken off)
    copy = "cleared"              # the copy flag was wrong ("cleared") or is right ("confirmed")
    late_penalty = 1.5            # points taken off for lateness
    late_percent = 10             # percent of the MAXIMUM score taken off for lateness, not of the points earned
                                  # (10 of a 140 maximum: 14 points); with late_penalty: both
    note = "task 3 regraded by hand"
    by = "Prof. Li"               # who reviewed and why: required when the entry changes the score or the
    why = "the check missed an equivalent formula"   # copy flag (a note alone needs neither)

or a CSV with the header ``student,points,copy,late_penalty,late_percent,note,by,why`` (any order and case;
columns may be left out; empty cells are absent values; UTF-8 with or without the BOM Excel writes).
``load`` validates everything and raises ``OverrideError`` saying where (file and line, or table), what was
expected and what came; a name not in the class is reported (``Overrides.messages``), not an error.

``apply`` turns a student's record (the judge's cached grading, never modified) into the final grade, in this
order: the copy decision (``cleared``: the points before the copy policy, ``raw_score`` and ``raw_tasks``,
come back, and the status becomes the next problem, or ok; ``confirmed``: 0 whatever the policy), then the late
penalty (at most the points earned so far), then the adjustment. The total is never below 0 and may exceed
the maximum (extra credit). The result carries ``review``: what was applied, for the outputs.

``shown`` and ``gradescope_output`` say a final record's review as the student's files show it; the files are
rendered once, from the grading and the final record, by ``grader.batch.outputs``: the report's headline (and
title) is the score that counts, with the score before the review, what changed and why beside it, when the
review changed the score (or decided the copy flag), and a box says the review in full; ``results.json`` carries
``review``; ``gradescope.json`` has the final score and the review after its output.
"""

import copy
import csv
import io
import json
import math
import unicodedata
from dataclasses import dataclass, field, replace
from html import escape
from pathlib import Path

from grader.batch.gradebook import number_cell, text_cell
from grader.config import COPY_POLICIES, _tomllib
from grader.messages import text
from grader.safetext import clean_data
from grader.views import html as html_view

FIELDS = ("points", "copy", "late_penalty", "late_percent", "note", "by", "why")
CHANGES = ("points", "copy", "late_penalty", "late_percent")
"""Fields that change the score or the copy flag: an entry with one of them needs ``by`` and ``why``."""
NUMBERS = ("points", "late_penalty", "late_percent")
COPY_DECISIONS = ("cleared", "confirmed")
CSV_COLUMNS = ("student",) + FIELDS
SUFFIXES = (".toml", ".csv")
BEGIN, END = html_view.REVIEW_MARKERS
"""The comments around the review box in ``report.html``."""
SCORE_CHANGES = ("copy", "late", "points")
"""What in a review changes the score the student reads first (the report's headline)."""


class OverrideError(ValueError):
    """The overrides file is invalid; the message says where, what was expected and what came."""


@dataclass(frozen=True)
class Override:
    """One student's review, validated."""

    student: str
    """The student's name: the class's spelling when ``load`` was given the class, else as written."""
    points: float = 0.0
    copy: str = ""
    """``""`` (no decision), ``"cleared"`` or ``"confirmed"``."""
    late_penalty: float = 0.0
    late_percent: float = 0.0
    note: str = ""
    by: str = ""
    why: str = ""
    place: tuple = field(default=(), compare=False)
    """``(file, line)`` of a CSV row or ``(file, table)`` of a TOML table."""

    def where(self, lang="en"):
        """Where the entry is written, for messages."""
        return _where(self.place, lang)

    @property
    def empty(self):
        """Whether the entry says nothing (every field empty or 0): ``load`` leaves such an entry out."""
        return not any(getattr(self, f) for f in FIELDS)


class Overrides(dict):
    """Student name -> ``Override``; ``unknown``: the entries naming nobody in the class."""

    def __init__(self, entries=(), *, unknown=()):
        super().__init__((o.student, o) for o in entries)
        self.unknown = list(unknown)
        self._by_key = {_key(o.student): o for o in entries}

    def for_student(self, student):
        """The review of ``student`` (a record's ``student``), or ``None``; names compare as the gradebook
        shows them (``gradebook.text_cell``: trimmed, formula signs quoted; Unicode NFC)."""
        return self._by_key.get(_key(student))

    def messages(self, lang="en"):
        """One warning per entry naming a student not in the class."""
        return [
            text("overrides.warning.unknown", lang, where=o.where(lang), student=repr(o.student)) for o in self.unknown
        ]


def _key(name):
    """``name`` as the gradebook shows it, in Unicode NFC: how names are compared."""
    return unicodedata.normalize("NFC", text_cell(name))


def same_student(a, b):
    """Whether the names ``a`` and ``b`` name the same student, as ``Overrides.for_student`` compares them."""
    return _key(a) == _key(b)


def _where(place, lang):
    file, spot = place
    if isinstance(spot, int):
        return text("overrides.where.line", lang, file=file, line=spot)
    return text("overrides.where.table", lang, file=file, table=spot)


def _error(lang, message, **params):
    return OverrideError(text(message, lang, **params))


# -- loading ----------------------------------------------------------------------------------------
def load(path, *, students=None, lang="en"):
    """The reviews in ``path`` (``.toml`` or ``.csv``) as ``Overrides``; ``OverrideError`` if invalid.

    ``students``: the class's names (the records' ``student``); entries naming anybody else are listed in
    ``unknown`` (and ``messages``), and the others are keyed by the class's spelling. ``lang``: the language
    of the error messages."""
    path = Path(path)
    file = str(path)
    if path.suffix.lower() not in SUFFIXES:
        raise _error(lang, "overrides.error.suffix", file=file)
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise _error(lang, "overrides.error.read", file=file, detail=exc.strerror or type(exc).__name__) from None
    try:
        content = raw.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise _error(lang, "overrides.error.encoding", file=file) from None
    rows = _toml_rows(content, file, lang) if path.suffix.lower() == ".toml" else _csv_rows(content, file, lang)
    seen, entries = {}, []
    for name, fields, place in rows:
        entry = _entry(name, fields, place, lang)
        key = _key(entry.student)
        if key in seen:
            raise _error(
                lang,
                "overrides.error.twice",
                where=entry.where(lang),
                student=repr(entry.student),
                first=seen[key].where(lang),
            )
        seen[key] = entry
        if not entry.empty:
            entries.append(entry)
    if students is None:
        return Overrides(entries)
    names = {_key(s): s for s in students}
    known = [replace(entry, student=names[_key(entry.student)]) for entry in entries if _key(entry.student) in names]
    return Overrides(known, unknown=[entry for entry in entries if _key(entry.student) not in names])


def _toml_rows(content, file, lang):
    """``(name, {field: value}, place)`` for each ``[students."NAME"]`` table."""
    toml = _tomllib()
    try:
        data = toml.loads(content)
    except toml.TOMLDecodeError as exc:
        raise _error(lang, "overrides.error.toml", file=file, detail=str(exc)) from None
    for key in data:
        if key != "students":
            raise _error(lang, "overrides.error.top", file=file, got=repr(key))
    students = data.get("students", {})
    if not isinstance(students, dict):
        raise _error(lang, "overrides.error.table", where=_where((file, "students"), lang), got=repr(students))
    rows = []
    for name, table in students.items():
        place = (file, "students." + json.dumps(name, ensure_ascii=False))
        if not isinstance(table, dict):
            raise _error(lang, "overrides.error.table", where=_where(place, lang), got=repr(table))
        rows.append((name, table, place))
    return rows


def _csv_rows(content, file, lang):
    """``(name, {field: text}, place)`` for each non-empty row (empty cells left out)."""
    reader = csv.reader(io.StringIO(content, newline=""))
    header = [cell.strip().lower() for cell in next(reader, [])]
    if not header:
        return []
    _check_header(header, (file, 1), lang)
    rows, last = [], reader.line_num
    for cells in reader:
        line, last = last + 1, reader.line_num
        if not any(cell.strip() for cell in cells):
            continue
        place = (file, line)
        if len(cells) > len(header):
            raise _error(lang, "overrides.error.cells", where=_where(place, lang), got=len(cells), expected=len(header))
        fields = {column: cell.strip() for column, cell in zip(header, cells) if cell.strip()}
        name = fields.pop("student", "")
        if not name:
            raise _error(lang, "overrides.error.no_student", where=_where(place, lang))
        rows.append((name, fields, place))
    return rows


def _check_header(header, place, lang):
    expected = ", ".join(CSV_COLUMNS)
    for column in header:
        if column not in CSV_COLUMNS:
            raise _error(lang, "overrides.error.column", where=_where(place, lang), got=repr(column), expected=expected)
        if header.count(column) > 1:
            raise _error(lang, "overrides.error.column_twice", where=_where(place, lang), got=repr(column))
    if "student" not in header:
        raise _error(lang, "overrides.error.header", where=_where(place, lang), got=repr("student"), expected=expected)


def entry(name, fields, place, *, lang="en"):
    """One student's review from ``fields`` (``{field: value}``: a TOML table's values, or text as a CSV row's
    cells, an empty cell left out), checked by the rules ``load`` applies to each table and row: ``OverrideError``
    saying where (``place``: ``(file, line)`` or ``(file, table)``), what was expected and what came. The course
    server checks its review form with it."""
    return _entry(name, fields, place, lang)


def _entry(name, fields, place, lang):
    """An ``Override`` from one table or row, every field checked."""
    where = _where(place, lang)
    for key in fields:
        if key not in FIELDS:
            raise _error(lang, "overrides.error.unknown_key", where=where, got=repr(key), expected=", ".join(FIELDS))
    values = {key: _number(fields[key], key, where, lang) for key in NUMBERS if key in fields}
    if values.get("late_penalty", 0) < 0:
        raise _error(
            lang, "overrides.error.negative", where=where, field="late_penalty", got=repr(fields["late_penalty"])
        )
    if not 0 <= values.get("late_percent", 0) <= 100:
        raise _error(lang, "overrides.error.percent", where=where, got=repr(fields["late_percent"]))
    for key in ("copy", "note", "by", "why"):
        value = fields.get(key, "")
        if not isinstance(value, str):
            raise _error(lang, "overrides.error.text", where=where, field=key, got=repr(value))
        values[key] = value.strip()
    if values["copy"]:
        values["copy"] = values["copy"].lower()
        if values["copy"] not in COPY_DECISIONS:
            raise _error(lang, "overrides.error.copy", where=where, got=repr(fields["copy"]))
    missing = [k for k in ("by", "why") if not values[k]]
    if missing and any(values.get(k) for k in CHANGES if k in fields):
        raise _error(lang, "overrides.error.reviewer", where=where, missing=", ".join(map(repr, missing)))
    return Override(student=unicodedata.normalize("NFC", name.strip()), place=place, **values)


def _number(value, key, where, lang):
    """A finite number from TOML (int or float, not a bool) or a CSV cell (its text)."""
    number = None
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        number = float(value)
    elif isinstance(value, str):
        try:
            number = float(value)
        except ValueError:
            pass
    if number is None or not math.isfinite(number):
        raise _error(lang, "overrides.error.number", where=where, field=key, got=repr(value))
    return number


# -- applying ---------------------------------------------------------------------------------------
def apply(record, override, *, copy_policy, lang="en"):
    """The final grade of ``record`` under ``override`` (or ``None``): a new dict, ``record`` untouched.

    Adds ``review`` = ``{points, copy, late, note, by, why, before, after}`` (``late``: the points the late
    penalty took; ``before``/``after``: the total before and after the review), and when the entry has a late
    penalty, what it asked, ``late_penalty`` (points) and ``late_percent`` (of the maximum), so that the student
    reads how ``late`` was reached. ``copy_policy`` (the batch's) words the reason of a confirmed copy;
    ``lang``: its language."""
    if copy_policy not in COPY_POLICIES:
        raise ValueError(f"copy_policy must be one of {', '.join(COPY_POLICIES)}, got {copy_policy!r}")
    final = copy.deepcopy(record)
    if override is None:
        return final
    before = float(record.get("score") or 0)
    score = before
    if override.copy:
        score = _decide_copy(final, record, override.copy, copy_policy, lang)
    late = min(score, override.late_penalty + override.late_percent / 100 * float(record.get("max_score") or 0))
    final["score"] = round(max(0.0, score - late + override.points), 4)
    final["review"] = {
        "points": override.points,
        "copy": override.copy,
        "late": round(late, 4),
        "note": override.note,
        "by": override.by,
        "why": override.why,
        "before": before,
        "after": final["score"],
    }
    if override.late_penalty or override.late_percent:
        final["review"].update(late_penalty=override.late_penalty, late_percent=override.late_percent)
    return final


def _decide_copy(final, record, decision, copy_policy, lang):
    """Apply the copy decision to ``final`` (tasks, problems, status, reason); the score it leaves."""
    if "problems" in record:
        problems = [p for p in record["problems"] if p["status"] != "copy"]
    else:  # a record that could not be graded: its one problem
        problems = (
            []
            if record.get("status", "ok") in ("ok", "copy")
            else [{"status": record["status"], "reason": record.get("reason", "")}]
        )
    if decision == "cleared":
        score = float(record.get("raw_score", record.get("score") or 0))
        final["tasks"] = dict(record.get("raw_tasks", record.get("tasks", {})))
    else:
        score = 0.0
        final["tasks"] = {task: 0.0 for task in record.get("tasks", {})}
        problems.insert(0, {"status": "copy", "reason": text(f"overrides.reason.confirmed_{copy_policy}", lang)})
    final["problems"] = problems
    final["status"] = problems[0]["status"] if problems else "ok"
    final["reason"] = "; ".join(p["reason"] for p in problems)
    return score


# -- the student's files ----------------------------------------------------------------------------
def shown(final, lang):
    """What the student's report shows of ``final``'s review (``html.render``'s ``review``), or ``None`` without
    one: the box's ``title`` and ``rows``; ``score``, the total that counts, when the review changed it (or decided
    the copy flag), else ``None``; ``beside``, what the headline says beside it (the score before the review, what
    changed and why) and ``link``, to the box."""
    review = final.get("review")
    if not review:
        return None
    max_score = final.get("max_score") or 0
    changed = any(review[key] for key in SCORE_CHANGES)
    return {
        "title": text("overrides.box.title", lang),
        "rows": _rows(review, max_score, lang),
        "score": float(final["score"]) if changed else None,
        "beside": _beside(review, max_score, lang) if changed else "",
        "link": text("overrides.headline.link", lang),
    }


def gradescope_output(judged, final, output_format, lang):
    """Gradescope's ``output`` for ``final``: ``judged`` (the grading's own output), then its review, if any, in
    ``output_format`` (``_gradescope_text``)."""
    review = final.get("review")
    if not review:
        return judged
    rows = _rows(review, final.get("max_score") or 0, lang)
    said = _gradescope_text(rows, text("overrides.box.title", lang), output_format, lang)
    return f"{judged}\n\n{said}" if judged else said


def _rows(review, max_score, lang):
    """``[(label, value)]`` of a review, for the report's box and the Gradescope output."""
    rows = [
        (text("overrides.box.score", lang), f"{number_cell(review['before'])} → {number_cell(review['after'])}")
    ] + _changes(review, max_score, lang)
    rows += [(text(f"overrides.box.{key}", lang), review[key]) for key in ("note", "by", "why") if review[key]]
    return clean_data(rows)


def _changes(review, max_score, lang):
    """``[(label, value)]`` of what changed the score: the copy decision, the late penalty, the adjustment."""

    def t(key, **params):
        return text(key, lang, **params)

    rows = []
    if review["copy"]:
        rows.append((t("overrides.box.copy"), t(f"overrides.copy.{review['copy']}")))
    if review["late"]:
        rows.append((t("overrides.box.late"), _late(review, max_score, lang)))
    if review["points"]:
        sign = "+" if review["points"] > 0 else "−"
        rows.append(
            (t("overrides.box.points"), t("overrides.points.value", points=sign + number_cell(abs(review["points"]))))
        )
    return rows


def _late(review, max_score, lang):
    """The late penalty as the student reads it: what the entry asked (a percentage is of the maximum score, not
    of the points earned, so the sentence names the maximum and the points it comes to) and what was taken,
    at most the points earned."""

    def t(key, **params):
        return text(key, lang, **params)

    taken = number_cell(review["late"])
    fixed, percent = review.get("late_penalty", 0.0), review.get("late_percent", 0.0)
    if not percent and not fixed:  # a review recorded without what was asked: the points alone
        return t("overrides.late.value", points=taken)
    share = percent / 100 * max_score
    parts = [t("overrides.late.fixed", points=number_cell(fixed))] if fixed else []
    if percent:
        parts.append(
            t(
                "overrides.late.percent_points" if fixed else "overrides.late.percent",
                percent=number_cell(percent),
                max=number_cell(max_score),
                points=number_cell(share),
            )
        )
    rule = " + ".join(parts)
    asked = round(fixed + share, 4)
    if review["late"] + 1e-9 < asked:  # more than was earned: the penalty stops at 0
        said = t("overrides.late.asked", rule=rule, points=number_cell(asked)) if percent else rule
        return t("overrides.late.capped", asked=said, points=taken)
    if not percent:
        return t("overrides.late.value", points=taken)
    return t("overrides.late.taken", rule=rule, points=taken)


def _beside(review, max_score, lang):
    """The text beside a reviewed headline: the score before the review, what changed it, and why."""

    def t(key, **params):
        return text(key, lang, **params)

    sentences = [t("overrides.headline.before", before=number_cell(review["before"]), max=number_cell(max_score))]
    sentences += [
        t("overrides.headline.item", label=label, value=value) for label, value in _changes(review, max_score, lang)
    ]
    if review["why"]:
        sentences.append(
            t("overrides.headline.why", by=review["by"], why=review["why"])
            if review["by"]
            else t("overrides.row", label=t("overrides.box.why"), value=review["why"])
        )
    elif review["by"]:
        sentences.append(t("overrides.row", label=t("overrides.box.by"), value=review["by"]))
    return clean_data(("" if lang == "zh" else " ").join(sentences))  # Chinese puts no space after 。


def _gradescope_text(rows, title, output_format, lang):
    """The review for Gradescope's ``output`` in its ``output_format``: a heading and one line per row; in
    ``html`` and ``md`` the text is HTML-escaped (a note's ``<`` shows as written, never as markup)."""
    lines = [text("overrides.row", lang, label=label, value=value) for label, value in rows]
    if output_format == "html":
        items = "".join(f"<li>{escape(line, quote=False)}</li>" for line in lines)
        return f"<h3>{escape(title, quote=False)}</h3><ul>{items}</ul>"
    quote = (lambda s: escape(s, quote=False)) if output_format == "md" else str
    return quote(title) + "\n\n" + "\n".join("- " + quote(line) for line in lines)
