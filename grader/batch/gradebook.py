"""``gradebook.csv``: one row per student, for spreadsheets and LMS imports.

Format decisions:

- UTF-8 **with** a byte-order mark: Excel opens a BOM-less UTF-8 CSV as the local code page
  (student names and reasons in Chinese turn into mojibake); LibreOffice, Google Sheets, Canvas,
  Moodle and Python's ``utf-8-sig`` read the BOM and drop it.
- RFC 4180: comma-separated, CRLF line ends, fields quoted when they hold a comma, quote or line
  break (``csv.QUOTE_MINIMAL``), quotes doubled.
- Stable columns: ``student_id, total, max, status``, then one column per task graded, in the
  assignment's task order, then ``reason``. Scores are plain decimals (``12.5``), never locale-formatted.
- A text cell starting with ``= + - @`` is prefixed with ``'`` so a spreadsheet never runs it as a
  formula (CSV injection).
"""

import csv
import io
from pathlib import Path

from grader.batch.judge import atomic_write

HEAD = ("student_id", "total", "max", "status")


def _number(x):
    x = float(x or 0)
    return str(int(x)) if x.is_integer() else f"{x:.4f}".rstrip("0").rstrip(".")


def _text(s):
    s = str(s or "").replace("\r", " ").strip()
    return "'" + s if s[:1] in ("=", "+", "-", "@") else s


def columns(records, assignment):
    """The task columns: every task of ``assignment`` any record has, in the assignment's order."""
    present = {t for r in records for t in r.get("tasks", {})}
    return [t for t in assignment.task_ids if t in present]


def render(records, assignment):
    """The CSV text (without the BOM)."""
    tasks = columns(records, assignment)
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(list(HEAD) + tasks + ["reason"])
    for r in records:
        row = [_text(r["student"]), _number(r.get("score")), _number(r.get("max_score")), r.get("status", "error")]
        row += [_number(r["tasks"][t]) if t in r.get("tasks", {}) else "" for t in tasks]
        row.append(_text(r.get("reason", "")))
        writer.writerow(row)
    return buf.getvalue()


def write(records, path, assignment):
    atomic_write(Path(path), "\ufeff" + render(records, assignment))
