"""The Gradescope view: the ``results.json`` an autograder leaves in ``/autograder/results/``.

Per Gradescope's autograder specification: a top-level ``score`` (which Gradescope uses as the
total), ``execution_time`` (seconds), ``output`` (text about the whole submission) and
``tests``, one per check, each with ``name``, ``score``, ``max_score``, ``status``
(``"passed"``/``"failed"``), ``output``, ``visibility`` (``"visible"``, ``"hidden"``,
``"after_due_date"`` or ``"after_published"``, from ``CheckResult.visibility``) and ``tags``
(the task id). When a banned API withholds a task's points, its checks score 0 and say why,
so that the tests always add up to the total.
"""

import json
from pathlib import Path

from grader.messages import text
from grader.submission.snapshot import describe as describe_refused
from grader.views.junit import describe

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")


def _number(x):
    """Scores as JSON numbers: ints where whole (``10``), else floats (``1.5``)."""
    return int(x) if float(x).is_integer() else round(float(x), 4)


def to_data(result, *, lang="en"):
    """The ``results.json`` document as a dict."""
    tests = []
    for task in result.tasks:
        withheld = bool(task.banned) and task.score + 1e-9 < sum(c.score for c in task.checks)
        for c in task.checks:
            lines = [] if c.status == "passed" else [describe(c, lang)]
            score = c.score
            if withheld:
                score = 0
                lines.append(text("ui.banned_cost", lang))
            tests.append({
                "name": c.id,
                "score": _number(score),
                "max_score": _number(c.max_score),
                "status": "passed" if c.status == "passed" else "failed",
                "output": "\n".join(lines),
                "visibility": c.visibility if c.visibility in VISIBILITIES else "visible",
                "tags": [task.id],
            })
    return {
        "score": _number(result.score),
        "execution_time": max(0, round(result.duration_s)),
        "output": summary(result, lang=lang),
        "tests": tests,
    }


def summary(result, *, lang="en"):
    """The text about the whole submission: the score, files that did not import, banned APIs.

    Per-check messages stay in their tests, whose visibility Gradescope enforces.
    """
    seed = result.seed if result.seed is not None else text("ui.derandomized", lang)
    lines = [f"{text('ui.score', lang)}: {result.score:g} / {result.max_score:g}   "
             f"({text('ui.profile', lang)} {result.profile}, {text('ui.seed', lang)} {seed})"]
    lines += [describe_refused(r, lang) for r in getattr(result, "refused", None) or ()]
    for file, err in sorted(result.load_errors.items()):
        lines.append(text("ui.load_error", lang, file=file, detail=err.get("detail", "")))
    for f in result.banned_api:
        lines.append(text("ui.banned", lang, **f))
    not_implemented = [t.id for t in result.tasks if t.not_implemented]
    if not_implemented:
        lines.append(text("report.not_implemented_tasks", lang, tasks=", ".join(not_implemented)))
    return "\n".join(lines)


def render(result, *, lang="en"):
    """``results.json`` as a string."""
    return json.dumps(to_data(result, lang=lang), ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def write(result, path, *, lang="en"):
    Path(path).write_text(render(result, lang=lang), encoding="utf-8")
