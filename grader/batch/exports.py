"""``lms.csv``: the final totals in the CSV that Canvas's and Moodle's gradebook imports read as they are.

Columns: ``Student, ID, SIS User ID, SIS Login ID, Section``, then one column headed by the assignment's
title (the course configuration's ``title``, else the assignment's own title) holding each student's final
total (after the copy policy and the instructor's review; empty for a submission that could not be graded
at all, so that the import leaves that grade alone rather than writing a 0 nobody decided).

- Canvas (Grades > Import): the first five headings are those of Canvas's own gradebook export, which its
  import requires; it matches a row to a student by ``ID``, ``SIS User ID`` or ``SIS Login ID``. gradekit
  knows each student by the id the submissions were named by (the gradebook's ``student_id``) and writes it
  under ``SIS Login ID`` (and as the name under ``Student``); ``ID``, ``SIS User ID`` and ``Section`` stay
  empty. Every later column is an assignment: one whose heading is an existing assignment's name gets
  the scores, another is created (set its points possible in Canvas). So: name the submission folders by
  the students' SIS login ids (what Canvas's bulk download and most rosters give) and the title as the
  Canvas assignment is named.
- Moodle (Grades > Import > CSV file): any columns; on the import page map "Identify user by" from
  ``SIS Login ID`` to the user field the folders are named by (username, ID number or email address), and
  map the title's column to the grade item (or to a new one). The other columns stay "ignore".

Both read UTF-8 with the byte-order mark and RFC 4180 quoting (``gradebook.py`` explains the format); text
cells are defused as in the gradebook (``gradebook.text_cell``: no spreadsheet runs a formula from them, whatever
separator it splits on): a student id or title in which a formula sign starts the text or follows a separator
gets an apostrophe before the sign, which the LMS then reads as part of the id or title.
"""

import csv
import io
from pathlib import Path

from grader.batch.gradebook import number_cell, text_cell
from grader.batch.judge import atomic_write

FILE_NAME = "lms.csv"
HEAD = ("Student", "ID", "SIS User ID", "SIS Login ID", "Section")


def title_of(title, lang="en"):
    """The total's heading: ``title`` (a string, or a ``{lang: title}`` dict such as ``Assignment.title``) in
    ``lang``, else in English, else its first language."""
    if isinstance(title, dict):
        title = title.get(lang) or title.get("en") or next(iter(title.values()), "")
    title = str(title or "").strip()
    if not title:
        raise ValueError("the LMS export needs the assignment's title (the course's title or the assignment's)")
    return title


def render_lms(records, *, title, lang="en"):
    """The CSV text of ``lms.csv`` (without the BOM): one row per record, in the records' order."""
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerow(list(HEAD) + [text_cell(title_of(title, lang))])
    for r in records:
        student = text_cell(r["student"])
        ungraded = r.get("status") == "error" and not r.get("max_score") and not r.get("review")
        writer.writerow([student, "", "", student, "", "" if ungraded else number_cell(r.get("score"))])
    return buf.getvalue()


def write_lms(records, out, *, title, lang="en"):
    """Write ``lms.csv`` into the folder ``out`` (UTF-8 with the BOM, CRLF, atomically); its path.

    ``records``: the final records (``overrides.apply``); ``title``: as in ``title_of``; ``lang``: the language
    of a ``{lang: title}`` title (the headings Canvas matches are English in every language)."""
    path = Path(out) / FILE_NAME
    atomic_write(path, "\ufeff" + render_lms(records, title=title, lang=lang))
    return path
