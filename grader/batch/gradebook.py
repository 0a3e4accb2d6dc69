"""``gradebook.csv``: one row per student, for spreadsheets.

Format decisions:

- UTF-8 **with** a byte-order mark: Excel opens a BOM-less UTF-8 CSV as the local code page
  (student names and reasons in Chinese turn into mojibake); LibreOffice, Google Sheets, Canvas,
  Moodle and Python's ``utf-8-sig`` read the BOM and drop it.
- RFC 4180: comma-separated, CRLF line ends, fields quoted when they hold a comma, quote or line
  break (``csv.QUOTE_MINIMAL``), quotes doubled.
- Stable columns: ``student_id, total, max, status``, then one column per task graded, in the
  assignment's task order, headed by the course's ``[columns]`` name (default: the task id), then
  ``reason``, then the counts on each set of examples (``HELD_BACK``) when the course has a secret, then the
  instructor's review (``REVIEW``) when the class has one. Scores are plain
  decimals (``12.5``), never locale-formatted.
- ``total`` and the task columns are the final grade: after the copy policy and the instructor's review
  (``grader.batch.overrides.apply``); ``before_review`` keeps the grader's total beside it.
- No text cell holds a formula under any separator a spreadsheet may split the file on (CSV injection;
  ``text_cell``): a spreadsheet set to ``;`` (usual where the decimal mark is a comma), tab or ``|`` cuts a
  cell into fragments there, and each fragment that would start with a formula sign, after spaces or a quote,
  gets an apostrophe before the sign (OWASP's remedy): ``x;=HYPERLINK(...)`` is written ``x;'=HYPERLINK(...)``.
  Scores are written by ``number_cell`` and stay numbers (``-0.5``).
"""

import csv
import io
import re
from pathlib import Path

from grader.batch.judge import atomic_write

HEAD = ("student_id", "total", "max", "status")
REVIEW = ("before_review", "adjustment", "late", "copy_review", "review_note", "reviewed_by", "review_why")
"""The review's columns: the total before it, the points added (or taken), the late penalty taken, the copy
decision (``cleared``/``confirmed``), the note, who reviewed and why. Empty on a row without a review."""


def number_cell(x):
    """A score as a plain decimal: ``12``, ``12.5``, at most 4 decimals."""
    x = float(x or 0)
    return str(int(x)) if x.is_integer() else f"{x:.4f}".rstrip("0").rstrip(".")


SEPARATORS = ",;\t|\n\v\f\x1c\x1d\x1e\x85\u2028\u2029"
"""Where a spreadsheet may cut a cell: the separators it may be set to (comma, semicolon, tab, bar) and the
line breaks (a reader that ignores the quotes starts a row there)."""
FORMULA_SIGNS = "=+-@\uff1d\uff0b\uff0d\uff20"
"""What starts a formula: ``= + - @`` and their full-width forms ``＝ ＋ － ＠``, which some spreadsheets take
for them (tab, carriage return and NUL, which start one too, never reach a cell: ``text_cell`` makes them
spaces)."""
_FRAGMENT_FORMULA = re.compile(rf'(^|[{re.escape(SEPARATORS)}])([\s"]*)(?=[{re.escape(FORMULA_SIGNS)}])')


def text_cell(s):
    """A text cell that no spreadsheet runs as a formula, whatever separator it splits the file on: trimmed;
    tab, carriage return and NUL made spaces; an apostrophe before the formula sign (``FORMULA_SIGNS``) that
    starts the cell or any fragment after a ``SEPARATORS`` character (after spaces or a double quote). The
    apostrophe is OWASP's remedy and reads as a quote: ``x; =1`` becomes ``x; '=1``. Idempotent: a defused
    text is written as it is, so a name copied from the gradebook names the same student."""
    s = str(s or "").replace("\t", " ").replace("\r", " ").replace("\0", " ").strip()
    return _FRAGMENT_FORMULA.sub(r"\1\2'", s)


def columns(records, assignment):
    """The task columns: every task of ``assignment`` any record has, in the assignment's order."""
    present = {t for r in records for t in r.get("tasks", {})}
    return [t for t in assignment.task_ids if t in present]


def review_cells(review):
    """The ``REVIEW`` cells of a final record's ``review`` (all empty without one); the course server's gradebook
    writes them too."""
    if not review:
        return [""] * len(REVIEW)
    return [
        number_cell(review["before"]),
        number_cell(review["points"]),
        number_cell(review["late"]),
        text_cell(review["copy"]),
        text_cell(review["note"]),
        text_cell(review["by"]),
        text_cell(review["why"]),
    ]


HELD_BACK = ("kit_passed", "kit_checks", "held_back_passed", "held_back_checks")
"""With held-back examples (a course secret): how many checks passed on the student kit's examples, of how many,
and on the held-back ones (the checks that draw examples), of how many; numbers (a ``3/5`` would be a date to a
spreadsheet). Empty on a row that was not graded."""


def _held_back_cells(counts):
    if not counts:
        return [""] * len(HELD_BACK)
    return [number_cell(n) for k in ("kit", "held_back") for n in counts[k]]


def render(records, assignment, *, headings=None, reviews=None, held_back=None):
    """The CSV text (without the BOM).

    ``held_back``: whether the columns of ``HELD_BACK`` are written, after ``reason`` (``None``: when a record
    has the counts; the batch passes whether the course has a secret).

    ``headings``: task id -> column heading (the course's ``[columns]``). ``reviews``: whether the review
    columns are written (``None``: when a record has a review; the batch passes ``True`` whenever the course
    has an overrides file, so that the columns do not come and go with its entries)."""
    tasks = columns(records, assignment)
    names = [(headings or {}).get(t, t) for t in tasks]
    if reviews is None:
        reviews = any(r.get("review") for r in records)
    if held_back is None:
        held_back = any(r.get("held_back") for r in records)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(
        list(HEAD)
        + [text_cell(n) for n in names]
        + ["reason"]
        + (list(HELD_BACK) if held_back else [])
        + (list(REVIEW) if reviews else [])
    )
    for r in records:
        row = [
            text_cell(r["student"]),
            number_cell(r.get("score")),
            number_cell(r.get("max_score")),
            text_cell(r.get("status", "error")),
        ]
        row += [number_cell(r["tasks"][t]) if t in r.get("tasks", {}) else "" for t in tasks]
        row.append(text_cell(r.get("reason", "")))
        if held_back:
            row += _held_back_cells(r.get("held_back"))
        if reviews:
            row += review_cells(r.get("review"))
        writer.writerow(row)
    return buf.getvalue()


def write(records, path, assignment, *, headings=None, reviews=None, held_back=None):
    """Write ``render(...)`` to ``path`` with the BOM, atomically."""
    atomic_write(
        Path(path), "\ufeff" + render(records, assignment, headings=headings, reviews=reviews, held_back=held_back)
    )
