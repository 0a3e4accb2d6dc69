"""The instructor's overrides file edited for one student: how the review form of the gradebook page saves.

The file stays the one source of truth: ``gradekit batch`` reads it, the server reads it, and the page writes into it
only the student's own entry, every other byte left as it was (comments, order, the other entries, the line
endings, a BOM). In ``overrides.toml`` that is the student's table, ``[students."ID"]``: its keys replaced under its
own header line, the table added at the end of the file, or taken out with its header line (and the blank line
before it) when the form is emptied; the comment lines and blank lines after its last key are left, as they belong
to what follows. In ``overrides.csv`` it is the student's row: rewritten, added at the end or taken out; the header
and the other rows stay as they are. Without a file, saving creates ``overrides.toml`` beside the course
configuration.

The entry is checked by the batch's own rules (``overrides.entry``): a bad form raises the batch's
``OverrideError`` and nothing is written. The new text is written to a temporary file beside the file and read back
whole with the batch's ``overrides.load``; only when that gives the reviews the file gave with this student's entry
alone changed does it replace the file (``os.replace``, the file's permissions kept), so that the file never holds
anything else, even for a moment. A layout the edit cannot handle (the student's entry written as an inline table or
with dotted keys, a CSV header without a column the review needs, anything the reading back finds) leaves the file
as it was and raises ``ByHand``: the instructor edits that entry by hand. Saves are one at a time (one lock around
the reading, the edit and the writing), so that two at once never lose one.
"""

import codecs
import csv
import io
import os
import re
import stat
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from grader.batch import overrides
from grader.batch.gradebook import text_cell
from grader.config import _tomllib

NAME = "overrides.toml"
"""The file a save creates beside the course configuration when the course has none."""
_LOCK = threading.Lock()
"""Held by each save from its reading of the file to its replacement."""
_HEADER = re.compile(r"[ \t]*\[")
"""A line that may open a table (``[name]``) or an array of tables (``[[name]]``)."""
_BARE = re.compile(r"[A-Za-z0-9_-]+")
"""A TOML key written without quotes."""


class ByHand(Exception):
    """The entry cannot be written into the file without touching the rest of it; ``key`` (a message,
    ``server.review.why.*``) and ``params`` say why."""

    def __init__(self, key, **params):
        super().__init__(key)
        self.key, self.params = key, params


class Unusable(Exception):
    """The file as it is now cannot be used (the batch's ``OverrideError`` message); nothing is written into it."""


@dataclass(frozen=True)
class Saved:
    """What a save did."""

    path: Path
    entry: overrides.Override | None
    """The student's review in the file now; ``None``: none."""
    written: bool
    """Whether the file was written (``False``: the review was already so)."""
    created: bool
    """Whether the file was made by this save."""


def target(course, config_path):
    """The file a review is saved in: the course's overrides file (``CourseConfig.overrides``), else ``NAME`` beside
    the course configuration ``config_path``."""
    if course.overrides is not None:
        return Path(course.overrides)
    return Path(config_path).resolve().parent / NAME


def current(path, lang="en"):
    """The reviews in ``path`` as they are now (none when there is no file); ``Unusable`` with the batch's message
    for a file that cannot be used."""
    path = Path(path)
    if not path.exists():
        return overrides.Overrides()
    try:
        return overrides.load(path, lang=lang)
    except overrides.OverrideError as exc:
        raise Unusable(str(exc)) from None


def save(path, student, fields, *, lang="en", mode=0o644):
    """Write ``student``'s review, ``fields`` (``{field: text}``, an empty field left out, as a CSV row's cells),
    into the overrides file ``path``, replacing theirs; no field that says anything: their entry taken out.
    ``mode``: the permissions of a file made by this save. ``Saved``; ``OverrideError`` (the batch's message) for a
    bad entry, ``Unusable`` for a file that cannot be used now, ``ByHand`` for a layout the edit cannot handle, an
    ``OSError`` when the file cannot be read or written: in each case the file is left as it was."""
    with _LOCK:
        return _save(Path(path), student, fields, lang, mode)


def _save(path, student, fields, lang, mode):
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        raw = None
    old = current(path, lang) if raw is not None else overrides.Overrides()
    bom = raw is not None and raw.startswith(codecs.BOM_UTF8)
    content = raw.decode("utf-8-sig") if raw is not None else ""  # it loaded: UTF-8
    is_csv = path.suffix.lower() == ".csv"
    if is_csv:
        # A spreadsheet opens this file too: its text cells are written defused, as the gradebook writes them
        # (``text_cell``: idempotent, so the gradebook shows them as it would have, and names still match).
        student = text_cell(student)
        fields = {f: v if f in overrides.NUMBERS else text_cell(v) for f, v in fields.items()}
    doc = (_Csv if is_csv else _Toml)(content, student)
    entry = overrides.entry(student, fields, doc.place(str(path)), lang=lang)
    keep = None if entry.empty else entry
    if old.for_student(student) == keep:
        return Saved(path, keep, written=False, created=False)
    try:
        data = (codecs.BOM_UTF8 if bom else b"") + doc.edit(keep).encode("utf-8")
    except UnicodeEncodeError:
        raise ByHand("server.review.why.text") from None
    expected = {name: o for name, o in old.items() if not overrides.same_student(name, student)}
    if keep is not None:
        expected[keep.student] = keep
    _replace(path, data, expected, lang, mode if raw is None else stat.S_IMODE(path.stat().st_mode))
    return Saved(path, keep, written=True, created=raw is None)


def _replace(path, data, expected, lang, mode):
    """Write ``data`` to a temporary file beside ``path``, read it back with ``overrides.load``, and replace ``path``
    with it when it gives the reviews ``expected``; else remove it and raise ``ByHand``."""
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=path.suffix, dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.chmod(tmp, mode)
        try:
            found = overrides.load(tmp, lang=lang)
        except overrides.OverrideError:
            found = None
        if found is None or dict(found) != expected:
            raise ByHand("server.review.why.check")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    try:  # the rename itself, on the disk
        folder = os.open(path.parent, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(folder)
    except OSError:
        pass
    finally:
        os.close(folder)


def _newline(content):
    """The line ending of ``content``'s first line (``\\n`` for a text without one)."""
    match = re.search(r"\r\n|\n|\r", content)
    return match.group(0) if match else "\n"


def _ends_line(text):
    return text.endswith(("\n", "\r"))


def number(x):
    """A number as the file holds it: ``2``, ``-1.5``; read back, the same float."""
    return str(int(x)) if float(x).is_integer() and abs(x) < 2**53 else repr(float(x))


def form_values(entry):
    """The review form's values (``{field: text}``) of an entry (``None``: every field empty): the numbers as the
    file holds them, so that the form sent back as it came changes nothing."""
    if entry is None:
        return {}
    return {f: number(v) if f in overrides.NUMBERS else v for f, v in _values(entry)}


def _values(entry):
    """``[(field, value)]`` of what ``entry`` says, in ``overrides.FIELDS``'s order."""
    return [(f, getattr(entry, f)) for f in overrides.FIELDS if getattr(entry, f)]


# -- TOML -------------------------------------------------------------------------------------------
def toml_string(s):
    """``s`` as a TOML basic string (quotes, backslashes and control characters escaped)."""
    out = []
    for ch in s:
        if ch in '"\\':
            out.append("\\" + ch)
        elif ch in "\n\t\r\b\f":
            out.append({"\n": "\\n", "\t": "\\t", "\r": "\\r", "\b": "\\b", "\f": "\\f"}[ch])
        elif ord(ch) < 0x20 or ord(ch) == 0x7F:
            out.append(f"\\u{ord(ch):04X}")
        else:
            out.append(ch)
    return '"' + "".join(out) + '"'


def _parses(text):
    try:
        _tomllib().loads(text)
    except _tomllib().TOMLDecodeError:
        return False
    return True


def _header_path(line):
    """The key path a table header ``line`` opens (``["students", "alice"]``), or ``None`` for anything else."""
    if line.lstrip().startswith("[["):
        return None
    try:
        data = _tomllib().loads(line)
    except _tomllib().TOMLDecodeError:
        return None
    path = []
    while isinstance(data, dict) and len(data) == 1:
        ((key, data),) = data.items()
        path.append(key)
    return path if data == {} and path else None


class _Toml:
    """``overrides.toml``'s text and where the student's table is in it."""

    def __init__(self, content, student):
        self.content = content
        self.student = student
        self.span = None
        """``(start, body, end)``: the student's header line's start, its end (where the keys begin), and the end
        of its last key's line; ``None`` when the file has no table of the student's."""
        lines, at = [], 0
        for line in _lines(content):
            lines.append((at, line))
            at += len(line)
        headers = [(i, start) for i, (start, line) in enumerate(lines) if _HEADER.match(line)]

        def opens(start):  # a header's line, not a line of a multi-line string or array: the text before it parses
            return _parses(content[:start])

        mine = []
        for i, start in headers:
            path = _header_path(lines[i][1])
            if path and len(path) == 2 and path[0] == "students" and overrides.same_student(path[1], student):
                if opens(start):
                    mine.append(i)
        students = _tomllib().loads(content).get("students", {}) if content else {}
        named = [n for n in students if overrides.same_student(n, student)]
        if len(mine) > 1 or (named and not mine):
            raise ByHand("server.review.why.layout", student=student)
        if not mine:
            return
        i = mine[0]
        last = next((j for j, start in headers if j > i and opens(start)), len(lines))  # the line after the table
        while last > i + 1 and _blank_or_comment(lines[last - 1][1]) and opens(lines[last - 1][0]):
            last -= 1  # the comments and blank lines after its keys belong to what follows
        end = lines[last - 1][0] + len(lines[last - 1][1])
        self.span = (lines[i][0], lines[i][0] + len(lines[i][1]), end)

    def place(self, file):
        return (file, "students." + _toml_key(self.student))

    def edit(self, entry):
        """The file's text with the student's table saying ``entry`` (``None``: taken out)."""
        content, nl = self.content, _newline(self.content)
        keys = "".join(f"{f} = {_toml_value(f, v)}{nl}" for f, v in _values(entry)) if entry else ""
        if self.span is None:
            if entry is None:
                return content
            sep = nl if content and not _ends_line(content) else ""
            if content.strip() and not _ends_blank(content + sep):
                sep += nl  # a blank line before the new table
            return f"{content}{sep}[students.{_toml_key(self.student)}]{nl}{keys}"
        start, body, end = self.span
        if entry is None:
            return _cut(content, start, end)
        if not _ends_line(content[:body]):  # a header on the file's last line, without a line ending
            keys = nl + keys
        elif end == len(content) and not _ends_line(content):  # its last key ended the file without one
            keys = keys[: -len(nl)]
        return content[:body] + keys + content[end:]


def _toml_value(field, value):
    return number(value) if field in overrides.NUMBERS else toml_string(value)


def _toml_key(name):
    return name if _BARE.fullmatch(name) else toml_string(name)


def _blank_or_comment(line):
    return not line.strip() or line.lstrip().startswith("#")


def _cut(content, start, end):
    """``content`` without ``[start, end)`` (a table or a row), and without the blank line that set it apart: the one
    before it when it ended the file, else the one after it when one is before it too."""
    before, after = content[:start], content[end:]
    if not after and _ends_blank(before):
        before = before[: -len(_lines(before)[-1])]
    elif (not before or _ends_blank(before)) and after:
        first = _lines(after)[0]
        if not first.strip() and _ends_line(first):
            after = after[len(first) :]
    return before + after


def _lines(text):
    """``text``'s lines, each with its line ending (``\r\n``, ``\n`` or ``\r``)."""
    return list(io.StringIO(text, newline=""))


def _ends_blank(text):
    """Whether ``text`` ends with a blank line (and its line ending)."""
    lines = _lines(text)
    return bool(lines) and _ends_line(text) and not lines[-1].strip()


# -- CSV --------------------------------------------------------------------------------------------
class _Csv:
    """``overrides.csv``'s text and where the student's row is in it."""

    def __init__(self, content, student):
        self.content = content
        self.student = student
        lines = _lines(content)
        self.offsets = [0]
        for line in lines:
            self.offsets.append(self.offsets[-1] + len(line))
        consumed = 0

        def feed():
            nonlocal consumed
            for line in lines:
                consumed += 1
                yield line

        records, first = [], 0
        for cells in csv.reader(feed()):
            records.append((first, consumed, cells))
            first = consumed
        self.header = [cell.strip().lower() for cell in records[0][2]] if records else []
        self.span, self.line = None, len(lines) + 1
        """``(start, end)`` of the student's row (its lines), and the line it starts on (or would start on)."""
        if "student" not in self.header:
            return
        column = self.header.index("student")
        mine = [
            (a, b)
            for a, b, cells in records[1:]
            if column < len(cells) and cells[column].strip() and overrides.same_student(cells[column], student)
        ]
        if len(mine) > 1:
            raise ByHand("server.review.why.layout_csv", student=student)
        if mine:
            a, b = mine[0]
            self.span, self.line = (self.offsets[a], self.offsets[b]), a + 1

    def place(self, file):
        return (file, self.line)

    def edit(self, entry):
        """The file's text with the student's row saying ``entry`` (``None``: taken out)."""
        content, nl = self.content, _newline(self.content)
        if entry is None:
            return content if self.span is None else content[: self.span[0]] + content[self.span[1] :]
        header = self.header
        if not header:
            if content.strip():
                raise ByHand("server.review.why.layout_csv", student=self.student)
            header = list(overrides.CSV_COLUMNS)
        missing = [f for f, _ in _values(entry) if f not in header]
        if missing:
            raise ByHand("server.review.why.columns", columns=", ".join(missing))
        said = dict(_values(entry))
        cells = [
            self.student
            if column == "student"
            else (number(said[column]) if column in overrides.NUMBERS else said[column])
            if column in said
            else ""
            for column in header
        ]
        buf = io.StringIO()
        writer = csv.writer(buf, lineterminator=nl)
        if not self.header:
            writer.writerow(overrides.CSV_COLUMNS)
        writer.writerow(cells)
        row = buf.getvalue()
        if self.span is None:
            return content + (nl if content and not _ends_line(content) else "") + row
        start, end = self.span
        if end == len(content) and not _ends_line(content):
            row = row[: -len(nl)]
        return content[:start] + row + content[end:]
