"""What can go wrong when the grader runs student code, as plain data that crosses processes."""

import traceback
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class SubmissionError(Exception):
    """Student code could not be loaded or run; carries everything a message needs.

    ``kind`` is one of: ``missing_file``, ``import_error``, ``missing_name``,
    ``not_implemented``, ``exception``, ``contract``, ``bad_output``,
    ``timeout``, ``crashed``, ``banned``.
    """

    kind: str
    """What went wrong (see above)."""
    detail: str = ""
    """The exception text, or a sentence saying what was expected and what came."""
    file: str = ""
    """The submission file (relative to its folder) where it happened, if known."""
    line: int = 0
    """The line in ``file``, if known."""
    code: str = ""
    """The source line at ``file:line``."""
    trace: str = ""
    """The traceback, trimmed to the submission's own frames."""
    data: dict = field(default_factory=dict)
    """Structured extras (expected/found parameter lists, shapes) for the report."""

    def __reduce__(self):  # pickled by a second judge process (``grader.shards``): rebuilt from its fields
        return (type(self), (self.kind, self.detail, self.file, self.line, self.code, self.trace, self.data))

    def __str__(self):
        where = f" ({self.file}:{self.line})" if self.file else ""
        return f"{self.kind}: {self.detail}{where}"

    def to_dict(self):
        return {
            "kind": self.kind,
            "detail": self.detail,
            "file": self.file,
            "line": self.line,
            "code": self.code,
            "trace": self.trace,
            "data": self.data,
        }

    @classmethod
    def from_dict(cls, d):
        return cls(
            **{
                k: d.get(k, v)
                for k, v in (
                    ("kind", "exception"),
                    ("detail", ""),
                    ("file", ""),
                    ("line", 0),
                    ("code", ""),
                    ("trace", ""),
                    ("data", {}),
                )
            }
        )


SAY = "say"
"""The ``data`` key of an error the kit itself words (not the student's exception): its sentence as a phrase
(``messages.phrase``), which the report renders in the reader's language; ``detail`` keeps the English words for
logs and ``str``."""


def said(key, **params):
    """The ``detail`` and ``data`` of a ``SubmissionError`` the kit words: ``SubmissionError(kind=...,
    **said("say.not_module", name=...))``; the sentence ``key`` is rendered in the report's language."""
    from grader.messages import phrase, text

    return {"detail": text(key, "en", **params), "data": {SAY: phrase(key, **params)}}


def words(error, lang="en"):
    """What ``error`` (a ``SubmissionError``'s dict, as results hold it) says, in ``lang``: the kit's own sentence
    (``data[SAY]``) where it has one, else its ``detail`` (the student's exception text, as it came). Where an error
    is shown outside a message (a file that did not import)."""
    from grader.messages import is_phrase, text

    data = error.get("data") if isinstance(error, dict) else None
    say = data.get(SAY) if isinstance(data, dict) else None
    if isinstance(say, dict) and is_phrase(say):
        return text(say["phrase"], lang, **say["params"])
    return (error.get("detail") if isinstance(error, dict) else None) or ""


CRASH = "crash"
"""The ``data`` key that marks an error as a crash its worker lived through: the code called ``sys.exit``
(``"exit"``) or ran out of memory (``"memory"``: a ``MemoryError``, Python's own, not a class of that name). The
error's sentence (``detail``) says the same in words, which are for people only: ``crash_of`` reads the kind and
this key."""
CRASHES = ("exit", "memory")
"""The values of ``data[CRASH]``."""


def crash_of(error):
    """How ``error`` (a ``SubmissionError``, or its dict as results hold it) crashed: ``"crashed"`` (kind
    ``crashed``: the worker running the code died), ``"exit"`` or ``"memory"`` (``data[CRASH]``), else ``None`` (an
    ordinary error, whatever its text says)."""
    if isinstance(error, SubmissionError):
        error = error.to_dict()
    if not isinstance(error, dict):
        return None
    if error.get("kind") == "crashed":
        return "crashed"
    data = error.get("data")
    how = data.get(CRASH) if isinstance(data, dict) else None
    return how if isinstance(how, str) and how in CRASHES else None


def time_used_up(total, probe):
    """The error of a call not run because the ``total`` seconds all calls may take are used up (both runners)."""
    return SubmissionError(
        kind="timeout",
        detail=f"the time limit of {total:g} s for all calls together is used up; {probe!r} was not run",
        data={"limit": {"used_up": total}},
    )


def call_timed_out(who, seconds, *, call_timeout, total_timeout, where=None, data=None, relative=False):
    """The error of a call stopped after ``seconds`` (both runners): ``who`` did not finish; the limit was what was
    left of ``total_timeout`` when that is less than ``call_timeout``; ``where`` (a ``SubmissionError`` from
    ``from_exception``) is where the student's code was, if known. The limit goes into ``data["limit"]`` for the
    translated sentence (``engine._timeout_message``); ``relative``: the limit was one relative to the reference's
    time on the same call (``CheckContext.both``), which the check adds to it."""
    of_total = (
        total_timeout
        if total_timeout is not None and call_timeout is not None and seconds < call_timeout and not relative
        else None
    )
    detail = f"{who} did not finish within {seconds:g} s"
    if of_total is not None:
        detail += f" (what was left of the {of_total:g} s for all calls together)"
    at = {}
    if where is not None and where.file:
        detail += f" (it was at {where.file}:{where.line}: {where.code})"
        at = {"file": where.file, "line": where.line, "code": where.code, "trace": where.trace}
    limit = {"seconds": seconds, "of_total": of_total, **({"relative": True} if relative else {})}
    return SubmissionError(kind="timeout", detail=detail, data={**(data or {}), "limit": limit}, **at)


def from_exception(exc, root, kind=None):
    """Turn an exception raised by student code under ``root`` into a ``SubmissionError``."""
    if isinstance(exc, SubmissionError):
        return exc
    root = str(Path(root).resolve())
    frames = [f for f in traceback.extract_tb(exc.__traceback__) if _inside(f.filename, root)]
    if isinstance(exc, SyntaxError) and exc.filename and _inside(exc.filename, root):
        file, line, code = exc.filename, exc.lineno or 0, (exc.text or "").strip()
    elif frames:
        last = frames[-1]
        file, line, code = last.filename, last.lineno or 0, (last.line or "").strip()
    else:
        file, line, code = "", 0, ""
    if kind is None:
        # A stub raises NotImplementedError itself; torch raises it too (a meta tensor copied to the CPU),
        # and that is an ordinary error in the student's code, not a missing implementation.
        all_frames = traceback.extract_tb(exc.__traceback__)
        raised_here = (
            bool(all_frames)
            and _inside(all_frames[-1].filename, root)
            and (all_frames[-1].line or "").lstrip().startswith("raise")
        )
        kind = "not_implemented" if isinstance(exc, NotImplementedError) and raised_here else "exception"
    trace = "".join(traceback.format_list(frames)) if frames else ""
    rel = str(Path(file).resolve().relative_to(root)) if file else ""
    detail = f"{type(exc).__name__}: {exc}".strip()
    data = {CRASH: "memory"} if isinstance(exc, MemoryError) else {}  # Python's own, not a class of that name
    return SubmissionError(
        kind=kind, detail=detail[:2000], file=rel, line=line, code=code[:300], trace=trace[-4000:], data=data
    )


def _inside(filename, root):
    try:
        return str(Path(filename).resolve()).startswith(root + "/") or str(Path(filename).resolve()) == root
    except (OSError, ValueError):
        return False


def located(detail, file, line):
    """``detail`` with where it happened, ``detail (file:line)``, said once: nothing added where the detail already
    names the place (Python's ``SyntaxError: ... (attention.py, line 17)``), no line where there is none (a file
    that is missing has no line 0), nothing at all without a file."""
    detail = detail or ""
    if not file:
        return detail
    if (f"({file}, line {line})" in detail if line else file in detail) or f"{file}:{line}" in detail:
        return detail
    return f"{detail} ({file}:{line})" if line else f"{detail} ({file})"
