"""Text that came from a submission, made safe to store and to show.

Every byte a submission supplies is data: exception text, file and folder names, source lines. Such text
may hold lone surrogates (a non-UTF-8 name read with ``surrogateescape``, or ``"\\udcff"`` in an exception),
NULs, escape codes and bidirectional overrides. Written raw, it stops a UTF-8 writer (no gradebook, no
``results.json``), is refused by XML, or redraws a terminal. So:

- ``clean_text`` (and ``clean_data``, ``clean_result`` for whole structures) replaces each such character
  by a visible backslash escape (``\\x1b``, ``\\udcff``, ``\\u202e``); tab and newline stay. It is applied
  where a results object is built from what the submission supplied (``api.check``), so every writer
  (JSON, HTML, JUnit, Gradescope, the gradebook, the summary page) gets valid, inert text.
- ``for_terminal`` also escapes the newline: a value printed inside our own layout cannot start a line
  of its own (a fake "Score: 140 / 140"). The terminal views apply it to every value they did not write.
- ``display_name`` shows a raw file or folder name (bytes, or a ``surrogateescape`` string) as text,
  one to one: different names never look the same (a backslash is escaped too).
- ``bound_result`` keeps a results object's text from the submission small: a report is feedback, not a way
  to carry data out of a sealed grading (an exception whose message holds a megabyte). Each piece of it
  (``ITEM_CHARS``), each check's (``CHECK_CHARS``) and the whole report's (``REPORT_CHARS``) are bounded, with
  a marker in the report's language where text was cut. ``api.check`` applies it after ``clean_result``, so
  that every writer, from either runner, gets the same bounded text; the kit's own words are not cut.
"""

import contextlib
import dataclasses
import re
import string
import unicodedata

from grader.results import Message

_UNSAFE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
"""C0 controls but tab and newline, DEL, C1 controls, lone surrogates, bidirectional controls."""
_UNSAFE_TERMINAL = re.compile(_UNSAFE.pattern[:-1] + "\n]")
_NAME_CONTROLS = re.compile(_UNSAFE.pattern[:-1] + "\t\n]")
_UNSAFE_NAME = re.compile(_UNSAFE.pattern[:-1] + "\t\n\\\\]")


def _escape(ch):
    code = ord(ch)
    if ch == "\\":
        return "\\\\"
    if 0xDC80 <= code <= 0xDCFF:  # a byte that was not UTF-8 (surrogateescape)
        return f"\\x{code - 0xDC00:02x}"
    if ch == "\n":
        return "\\n"
    if ch == "\r":
        return "\\r"
    if ch == "\t":
        return "\\t"
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def clean_text(s):
    """``s`` as valid, inert Unicode: control characters (but tab and newline), lone surrogates and
    bidirectional controls become backslash escapes. Not a string: ``str(s)`` cleaned."""
    if not isinstance(s, str):
        s = str(s)
    return _UNSAFE.sub(lambda m: _escape(m.group()), s) if _UNSAFE.search(s) else s


def for_terminal(s):
    """``clean_text`` that escapes the newline too: one value, one line of our layout."""
    if not isinstance(s, str):
        s = str(s)
    return _UNSAFE_TERMINAL.sub(lambda m: _escape(m.group()), s) if _UNSAFE_TERMINAL.search(s) else s


def clean_data(value):
    """``value`` with every string in it (dict keys included) cleaned; lists, tuples and dicts are rebuilt."""
    if isinstance(value, str):
        return clean_text(value)
    if isinstance(value, dict):
        return {clean_text(k) if isinstance(k, str) else k: clean_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [clean_data(v) for v in value]
    if isinstance(value, tuple):
        return tuple(clean_data(v) for v in value)
    return value


def clean_result(result):
    """Clean every string of a results object (``GradeResult`` and what it holds) in place; returns it."""
    _clean_fields(result)
    return result


def _clean_fields(obj):
    for f in dataclasses.fields(obj):
        setattr(obj, f.name, _clean_any(getattr(obj, f.name)))


def _clean_any(value):
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        _clean_fields(value)
        return value
    if isinstance(value, dict):
        return {clean_text(k) if isinstance(k, str) else k: _clean_any(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_clean_any(v) for v in value]
    if isinstance(value, tuple):
        return tuple(_clean_any(v) for v in value)
    if isinstance(value, str):
        return clean_text(value)
    return value


def display_name(name):
    """A file or folder name as text: ``bytes`` or a ``str`` (as ``os`` returns it, non-UTF-8 bytes as
    surrogates). Bytes that are not UTF-8, control characters, tab, newline and the backslash itself are
    backslash escapes (``b"stud\\xe9nt"`` -> ``stud\\xe9nt``), so two names never display alike."""
    if isinstance(name, bytes):
        name = name.decode("utf-8", "surrogateescape")
    return _UNSAFE_NAME.sub(lambda m: _escape(m.group()), name) if _UNSAFE_NAME.search(name) else name


def is_clean_name(name):
    """Whether a name (``str`` from ``os``) is valid UTF-8 without control characters: shown as it is."""
    return not _NAME_CONTROLS.search(name)


# -- how much of a submission's text a report holds ----------------------------------------------------------------
ITEM_CHARS = 2_000
"""The most characters of one piece of the submission's text a report holds: an exception's message (as long
as ``errors.from_exception`` keeps one), a source line, a file name, the tail of what the code printed, a
traceback (a dozen frames of the student's own code under a long folder name, whole; of a deep recursion, its
innermost frames). A longer piece keeps its start (a traceback and printed output, their end) and says how much
was cut."""
CHECK_CHARS = 8_000
"""The most characters of the submission's text one check holds, in its message, error, notes and pictures
together: a whole error (message, source line, traceback) and a whole contract error of the Transformer (the
expected and found parameter names and shapes, about 5,000). The same share bounds each file that did not
import, the banned-API findings together, the refused entries together and the report's pictures together."""
REPORT_CHARS = 20_000
"""The most characters of the submission's text one report holds, over all its checks: every format written
from it (terminal, HTML, JSON, JUnit, Gradescope, the gradebook) shows no more, each text in one or two places
of its own (a sentence and the error's fields). A text seen before in the report costs nothing (a submission
failing every check for the same reason shows every one whole); twenty thousand characters tell a student all
a report can usefully say, and make the report no way to carry data out of a sealed grading. The checks come
first in the order of the report: a later one whose share is spent says that its text was cut."""
NAME_CHARS = 64
"""A string of the kit's own sentences and pictures (a name or a dtype in a failure's sentence, a token of a
figure) this short is kept whole even when the report's share is spent: it says what the check found and can
carry little (the kit's own lists of names hold a dozen at most)."""
LISTED = 100
"""The most banned-API findings a report lists (the rest are counted in one entry): each is a source line of
the submission."""
ENTRIES = 4_096
"""The most entries of one list or mapping in a report's data (a picture's rows, an error's data)."""
NUMBERS = 65_536
"""The most numbers of the kit's data (pictures, examples, a check's artifacts: a mismatch map, a loss curve)
one share holds, free of its characters: numbers from the submission's results are fine, in a bounded count
(the kit's pictures hold a few thousand)."""

KIT_MESSAGES = ("error.reference", "error.internal")
"""Error messages about the kit, not the submission: their text is the reference's or the grader's."""
TEXT_KEYS = ("detail", "code", "trace", "output")
"""Parameters and fields that hold free text of the submission's (never kept whole past its share)."""
TAIL_KEYS = ("trace", "output")
"""Of those, the ones whose end matters most: a cut keeps the end."""
ERROR_FIELDS = ("kind", "detail", "file", "line", "code", "trace", "data")
"""The fields of a ``SubmissionError`` dict: kept, each bounded, however little share is left."""
FINDING_FIELDS = ("name", "file", "line", "code", "task")
_ELIDED = "\u2026"
"""The key of a mapping's entry that counts the entries cut."""
_NUMBER = re.compile(r"[0-9.eE+-]{1,24}")
_VOCABULARY = {"kind": re.compile(r"[a-z_]{1,32}"), "task": re.compile(r"[a-z0-9_,]{0,200}")}
"""Fields whose short values are the kit's words (an error's kind, the tasks of a finding): kept whole, counted."""
_FIELDS = {}


def bound_result(result, *, lang="en"):
    """Bound the submission's text in a results object (``GradeResult``) in place; returns it.

    What the submission controls is bounded: the errors of its checks (``CheckResult.error``: detail, file,
    source line, traceback, data), the parameters of ``error.*`` messages and the free text (``TEXT_KEYS``) of
    any message or note, the files that did not import, banned-API findings (source lines, file names), refused
    entries' names, the errors of its pictures; names in the kit's own sentences, pictures and examples longer
    than ``NAME_CHARS`` too. What the kit writes is not: the sentences, message keys and error kinds, numbers
    (shapes, error sizes, time limits), the reference's errors. ``lang``: the language of the cut marker
    (``ui.cut``), the report's."""
    b = _Bounds(lang)
    loads, dropped = {}, 0
    for name, error in (result.load_errors or {}).items():
        if loads and b.left() <= 0:
            dropped += 1
            continue
        with b.share(CHECK_CHARS):
            loads[b.data(name) if isinstance(name, str) else name] = b.data(error, fixed=ERROR_FIELDS)
    if dropped:  # one more "file" that says how many more did not import
        loads[_ELIDED] = dict.fromkeys(ERROR_FIELDS, "") | {
            "kind": "error",
            "detail": b.entries(dropped),
            "line": 0,
            "data": {},
        }
    result.load_errors = loads
    with b.share(CHECK_CHARS):
        result.banned_api = b.findings(result.banned_api)
        for task in result.tasks:
            task.banned = b.findings(task.banned)
    with b.share(CHECK_CHARS):
        result.refused = [b.data(r, fixed=tuple(r)) if isinstance(r, dict) else r for r in result.refused]
    for task in result.tasks:
        for check in task.checks:
            with b.share(CHECK_CHARS):
                check.message = b.message(check.message)
                check.error = None if check.error is None else b.data(check.error, fixed=ERROR_FIELDS)
                check.notes = [b.message(n) for n in check.notes]
                check.example = b.data(check.example, kit=True)
                check.artifacts = b.data(check.artifacts, kit=True)
    with b.share(CHECK_CHARS):
        result.figures = b.data(result.figures, kit=True)
    return result


def _fields(key):
    """The ``{placeholders}`` of message ``key`` in every language."""
    if key not in _FIELDS:
        from grader.messages import CATALOGUES

        found = set()
        for catalogue in CATALOGUES.values():
            template = catalogue.get(key)
            if isinstance(template, str):
                with contextlib.suppress(ValueError):
                    found |= {f.split(".")[0].split("[")[0] for _, f, _, _ in string.Formatter().parse(template) if f}
        _FIELDS[key] = frozenset(found)
    return _FIELDS[key]


class _Bounds:
    """The shares left while a results object is walked, and the texts already seen (each costs once)."""

    def __init__(self, lang):
        from grader.messages import has_text, text

        self.lang, self.has_text, self.say = lang, has_text, text
        self.report = self.part = REPORT_CHARS
        self.numbers = NUMBERS
        self.seen = {}

    @contextlib.contextmanager
    def share(self, chars):
        """Within: also at most ``chars`` (one check's share)."""
        self.part, self.numbers = chars, NUMBERS
        try:
            yield
        finally:
            self.part = REPORT_CHARS

    def left(self):
        return max(0, min(self.part, self.report))

    def charge(self, n):
        self.part -= n
        self.report -= n

    def count(self, kit, chars):
        """A number: of the kit's data, one of ``NUMBERS``; of the submission's, its characters."""
        if kit:
            self.numbers -= 1
        else:
            self.charge(chars)

    def entries(self, n):
        return self.say("ui.cut_entries", self.lang, n=n)

    def text(self, s, *, floor=0, tail=False):
        """``s`` whole, or cut to what is left of the shares (at least ``floor``, at most ``ITEM_CHARS``) with a
        marker saying how much was cut."""
        seen = self.seen.get((s, tail))
        if seen is not None:
            return seen
        keep = min(ITEM_CHARS, max(floor, self.left()))
        if len(s) <= keep:
            out = s
            self.charge(len(s))
        else:
            marker = self.say("ui.cut", self.lang, n=len(s) - keep)
            out = marker + s[len(s) - keep :] if tail else s[:keep] + marker
            self.charge(keep)
        self.seen[s, tail] = out
        return out

    def data(self, value, *, kit=False, key=None, fixed=()):
        """``value`` (plain data) bounded: of the submission's (``kit=False``) every string and number counts and a
        list or mapping ends with a count of what was cut where the share is spent (but the ``fixed`` keys of a
        mapping); of the kit's (``kit=True``) numbers are free and strings count but are not cut below
        ``NAME_CHARS`` (but free text, ``TEXT_KEYS``).
        ``key``: the mapping key ``value`` is under (``TEXT_KEYS``, ``TAIL_KEYS``; ``kind`` and message ``key``
        are vocabulary, kept)."""
        if isinstance(value, str):
            if (key in _VOCABULARY and _VOCABULARY[key].fullmatch(value)) or (key == "key" and self.has_text(value)):
                self.charge(len(value))
                return value
            floor = NAME_CHARS if kit and key not in TEXT_KEYS else 0
            return self.text(value, floor=floor, tail=key in TAIL_KEYS)
        if value is None or isinstance(value, bool):
            self.count(kit, 4)
            return value
        if isinstance(value, int):
            if value.bit_length() > 64:  # its digits are text: a number of a thousand digits is a message
                return self.say("ui.cut", self.lang, n=int(value.bit_length() * 0.30103) + 1)
            self.count(kit, len(str(value)))
            return value
        if isinstance(value, float):
            self.count(kit, len(repr(value)))
            return value
        if isinstance(value, dict):
            return self._mapping(value, kit=kit, fixed=fixed)
        if isinstance(value, (list, tuple)):
            out: list = []
            for i, item in enumerate(value):
                if i >= ENTRIES or (self.numbers <= 0 if kit else self.left() <= 0):
                    out.append(self.entries(len(value) - i))
                    break
                out.append(self.data(item, kit=kit, key=key))
            return out if isinstance(value, list) else tuple(out)
        return self.text(clean_text(value))

    def _mapping(self, d, *, kit, fixed):
        out, dropped = {}, 0
        for i, (k, v) in enumerate(d.items()):
            if k not in fixed and (i >= ENTRIES or (not kit and self.left() <= 0)):
                dropped += 1
                continue
            name = k if not isinstance(k, str) or k in fixed else self.data(k, kit=kit)
            if kit and isinstance(k, str) and k.endswith("error") and isinstance(v, dict):
                out[name] = self._figure_error(v)  # a picture's error: what the submission raised
            else:
                out[name] = self.data(v, kit=kit, key=k)
        if dropped:
            out[_ELIDED] = self.entries(dropped)
        return out

    def _figure_error(self, error):
        if "key" not in error:
            return self.data(error)
        m = self.message(Message(error["key"], error.get("params") or {}), submitted=True)
        rest = self.data({k: v for k, v in error.items() if k not in ("key", "params")}, fixed=("kind",))
        return {**rest, "key": m.key, "params": m.params}

    def message(self, message, *, submitted=None):
        """A ``Message`` (or its dict form, kept so) bounded: an ``error.*`` message of the submission's (or one
        whose key is not the kit's: a ``SubmissionError`` of any kind can be raised) is the submission's text
        but its time limits; any other is the kit's, with the submission's text in its ``TEXT_KEYS``."""
        if message is None:
            return None
        as_dict = isinstance(message, dict)
        m = Message.of(message)
        known = isinstance(m.key, str) and self.has_text(m.key)
        key = m.key if known else self.data(m.key)
        if submitted is None:
            submitted = not known or (str(key).startswith("error.") and key not in KIT_MESSAGES)
        fields = _fields(key) | {"flaky"} if known else frozenset()
        params, dropped = {}, 0
        for k, v in m.params.items():
            if submitted and k in ("seconds", "total") and isinstance(v, str) and _NUMBER.fullmatch(v):
                params[k] = v  # the engine's own numbers (the time limits)
                continue
            if k not in fields and (len(params) >= ENTRIES or (submitted and self.left() <= 0)):
                dropped += 1
                continue
            name = k if k in fields or not isinstance(k, str) else self.data(k, kit=not submitted)
            params[name] = self.data(v, kit=not submitted, key=k)
        if dropped:
            params[_ELIDED] = self.entries(dropped)
        bounded = Message(key, params)
        return {"key": bounded.key, "params": bounded.params} if as_dict else bounded

    def findings(self, findings):
        """Banned-API findings, at most ``LISTED`` (the rest counted in one, which keeps their tasks)."""
        out = []
        for i, f in enumerate(findings or ()):
            if i >= LISTED or (out and self.left() <= 0):
                rest = [r for r in findings[i:] if isinstance(r, dict)]
                tasks = dict.fromkeys(t for r in rest for t in str(r.get("task", "")).split(",") if t)
                summary = {
                    "name": self.entries(len(findings) - i),
                    "line": 0,
                    "task": self.data(",".join(tasks), key="task"),
                }
                out.append(dict.fromkeys(FINDING_FIELDS, "") | summary)
                break
            out.append(self.data(f, fixed=FINDING_FIELDS))
        return out


def columns(s):
    """Terminal columns of ``s``: a wide (CJK) character takes two, so that Chinese lines up with English."""
    return sum(2 if unicodedata.east_asian_width(ch) in "WF" else 1 for ch in s)


def pad(s, cols):
    """``s`` followed by spaces up to ``cols`` terminal columns (``columns``)."""
    return s + " " * max(0, cols - columns(s))
