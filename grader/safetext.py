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
"""

import dataclasses
import re

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
