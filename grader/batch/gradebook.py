"""``gradebook.csv``: one row per student, for spreadsheets.

Format decisions:

- UTF-8 **with** a byte-order mark: Excel opens a BOM-less UTF-8 CSV as the local code page
  (student names and reasons in Chinese turn into mojibake); LibreOffice, Google Sheets, Canvas,
  Moodle and Python's ``utf-8-sig`` read the BOM and drop it.
- RFC 4180: comma-separated, CRLF line ends, fields quoted when they hold a comma, quote or line
  break (``csv.QUOTE_MINIMAL``), quotes doubled.
- Stable columns: ``student_id, total, max, status``, then one column per task graded, in the
  assignment's task order, headed by the course's ``[columns]`` name (default: the task id), then
  ``reason``, then the instructor's review (``REVIEW``) when the class has one. Scores are plain
  decimals (``12.5``), never locale-formatted.
- ``total`` and the task columns are the final grade: after the copy policy and the instructor's review
  (``grader.batch.overrides.apply``); ``before_review`` keeps the grader's total beside it.
- A text cell starting with ``= + - @`` is prefixed with ``'`` so a spreadsheet never runs it as a
  formula (CSV injection).
"""

import csv
import io
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


def text_cell(s):
    """A text cell: one line, trimmed, a leading ``= + - @`` defused with ``'``."""
    s = str(s or "").replace("\r", " ").strip()
    return "'" + s if s[:1] in ("=", "+", "-", "@") else s


def columns(records, assignment):
    """The task columns: every task of ``assignment`` any record has, in the assignment's order."""
    present = {t for r in records for t in r.get("tasks", {})}
    return [t for t in assignment.task_ids if t in present]


def _review_cells(review):
    if not review:
        return [""] * len(REVIEW)
    return [number_cell(review["before"]), number_cell(review["points"]), number_cell(review["late"]),
            review["copy"], text_cell(review["note"]), text_cell(review["by"]), text_cell(review["why"])]


def render(records, assignment, *, headings=None, reviews=None):
    """The CSV text (without the BOM).

    ``headings``: task id -> column heading (the course's ``[columns]``). ``reviews``: whether the review
    columns are written (``None``: when a record has a review; the batch passes ``True`` whenever the course
    has an overrides file, so that the columns do not come and go with its entries)."""
    tasks = columns(records, assignment)
    names = [(headings or {}).get(t, t) for t in tasks]
    if reviews is None:
        reviews = any(r.get("review") for r in records)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(list(HEAD) + [text_cell(n) for n in names] + ["reason"] + (list(REVIEW) if reviews else []))
    for r in records:
        row = [text_cell(r["student"]), number_cell(r.get("score")), number_cell(r.get("max_score")),
               r.get("status", "error")]
        row += [number_cell(r["tasks"][t]) if t in r.get("tasks", {}) else "" for t in tasks]
        row.append(text_cell(r.get("reason", "")))
        if reviews:
            row += _review_cells(r.get("review"))
        writer.writerow(row)
    return buf.getvalue()


def write(records, path, assignment, *, headings=None, reviews=None):
    """Write ``render(...)`` to ``path`` with the BOM, atomically."""
    atomic_write(Path(path), "\ufeff" + render(records, assignment, headings=headings, reviews=reviews))
