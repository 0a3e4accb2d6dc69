"""What can go wrong when the grader runs student code, as plain data that crosses processes."""

import math
import traceback
from dataclasses import dataclass, field
from pathlib import Path


class Said(Exception):
    """An error said by a message key and its parameters (``grader.messages``): ``say(lang)`` in the user's language,
    ``str`` the English sentence. Put first among an error's bases (``class KitError(Said, AssignmentError)``)."""

    def __init__(self, key, **params):
        self.key = key
        self.params = params
        super().__init__(self.say("en"))

    def say(self, lang="en"):
        from grader.messages import text

        return text(self.key, lang, **self.params)


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


def sentence(err):
    """The message key and parameters that say ``err`` (a ``SubmissionError``) to a reader: the kit's own words
    (``data[SAY]``) and a time limit of the runner's in the reader's language, the student's exception text as it
    came. How a check's error is said (``engine``), and a figure's (``figure_data.failure``)."""
    from grader.messages import is_phrase

    params = {"detail": err.detail, "file": err.file, "line": err.line, "code": err.code}
    if is_phrase(err.data.get(SAY)):  # the kit's own words, said in the reader's language
        params["detail"] = err.data[SAY]
    key = f"error.{err.kind}"
    timed = _timeout_message(err.data.get("limit"), params) if err.kind == "timeout" else None
    if timed is not None:  # a time limit of the runner's: said in the student's language, not as its detail
        key, params = timed
    if err.kind == "import_error" and isinstance(params["detail"], str):
        # the place once: Python's own SyntaxError text names it already
        params["detail"] = located(err.detail, err.file, err.line)
    if err.kind == "contract":
        params.update({k: v for k, v in err.data.items() if k != SAY})
        lists = ("missing", "unexpected", "wrong_shape", "shared")
        if not set(lists) & set(err.data):
            key = "error.contract_detail"  # a contract error that is not about the parameters: its detail says all
        for name in lists:  # each list the sentence shows, "none" where the error named nothing of that kind
            params.setdefault(name, [])
    return key, params


def _seconds(value):
    """``value`` as the runners write a number of seconds (``"1.5"``), or ``None`` when it is not a plain number."""
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    return f"{value:g}" if ok else None


def _timeout_message(limit, params):
    """The message key and parameters of a time-limit error: ``limit`` is ``{"used_up": total}`` (the call did not
    run) or ``{"seconds": s, "of_total": total or None}``, and ``params["file"]`` is where the code was, if known.
    ``None`` for anything else: an error the submission raised itself can carry any data, and is told by its
    detail (``error.timeout``)."""
    if not isinstance(limit, dict):
        return None
    if "used_up" in limit:
        total = _seconds(limit["used_up"])
        return None if total is None else ("error.timeout_used_up", {**params, "total": total})
    seconds, of_total = _seconds(limit.get("seconds")), limit.get("of_total")
    if seconds is None or (of_total is not None and _seconds(of_total) is None):
        return None
    if isinstance(limit.get("again"), str):
        return "error.timeout_again", {**params, "seconds": seconds, "check": limit["again"]}
    key = "error.timeout_at" if params.get("file") else "error.timeout_in"
    params = {**params, "seconds": seconds}
    reference = limit.get("reference")
    if limit.get("relative") and isinstance(reference, float) and math.isfinite(reference):
        return key + "_slow", {**params, "reference": f"{reference:.2g}"}
    if of_total is not None:
        key, params["total"] = key + "_total", _seconds(of_total)
    return key, params


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
    translated sentence (``_timeout_message``); ``relative``: the limit was one relative to the reference's
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


class UsageError(ValueError):
    """Bad arguments: the CLI prints the message and exits with status 2 (``grader.api.UsageError`` too: defined
    here, where a command that grades nothing can take it without importing torch)."""
