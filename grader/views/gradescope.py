"""The Gradescope view: the ``results.json`` an autograder leaves in ``/autograder/results/``.

Per Gradescope's autograder specification: a top-level ``score`` (which Gradescope uses as the
total), ``execution_time`` (seconds), ``output`` (text about the whole submission) and
``tests``, one per check, each with ``name``, ``score``, ``max_score``, ``status``
(``"passed"``/``"failed"``), ``output``, ``visibility`` (``"visible"``, ``"hidden"``,
``"after_due_date"`` or ``"after_published"``, from ``CheckResult.visibility``) and ``tags``
(the task id). When a banned API withholds a task's points, its checks score 0 and say why,
so that the tests always add up to the total.

Students read it: a failing check's rerun line is one they can type on their own computer
(``gradekit check <your folder> --only <check id>``), never the grading machine's command (its
temporary folder, ``--sealed``). ``output_format`` (``text``, ``md`` or ``html``, Gradescope's names)
is set at the top level and on each test: in ``md`` what may hold the student's text (exception text,
file names, tracebacks) is a fenced code block whose fence is longer than any backtick run inside; in
``html`` it is autoescaped; only the kit's own sentences are written as Markdown or HTML.
"""

import json
import re
import shlex
from dataclasses import dataclass, replace
from pathlib import Path

import jinja2

from grader.errors import located, words
from grader.messages import text
from grader.submission.snapshot import describe as describe_refused
from grader.views.junit import describe

VISIBILITIES = ("visible", "hidden", "after_due_date", "after_published")
FORMATS = ("text", "md", "html")
"""Gradescope's ``output_format`` values this view writes."""
_HTML = jinja2.Environment(autoescape=True).from_string(
    "{% for b in blocks %}{% if b.kind == 'code' %}<pre>{{ b.text }}</pre>"
    "{% elif b.kind == 'command' %}<p><strong>{{ b.label }}</strong></p><pre><code>{{ b.text }}</code></pre>"
    "{% else %}<p>{{ b.text }}</p>{% endif %}{% endfor %}"
)


@dataclass(frozen=True)
class Block:
    """One piece of an output: ``"sentence"`` (the kit's own words, no student text), ``"code"`` (lines that may
    hold the student's text, shown verbatim) or ``"command"`` (a command line under the sentence ``label``)."""

    kind: str
    text: str
    label: str = ""


def _fence(body):
    """``body`` as a Markdown fenced code block that no backtick run inside it can close."""
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{body}\n{fence}"


def render_blocks(blocks, output_format):
    """``blocks`` as one string in ``output_format`` (``text``, ``md`` or ``html``)."""
    if output_format == "html":
        return _HTML.render(blocks=blocks)
    if output_format == "md":
        return "\n\n".join(
            _fence(b.text)
            if b.kind == "code"
            else f"**{b.label}**\n\n{_fence(b.text)}"
            if b.kind == "command"
            else b.text
            for b in blocks
        )
    return "\n".join(f"{b.label}: {b.text}" if b.kind == "command" else b.text for b in blocks)


def number(x):
    """Scores as JSON numbers: ints where whole (``10``), else floats (``1.5``)."""
    return int(x) if float(x).is_integer() else round(float(x), 4)


def _format(output_format):
    if output_format not in FORMATS:
        raise ValueError(f"Gradescope output_format must be one of {', '.join(FORMATS)}, got {output_format!r}")
    return output_format


def rerun_command(check_id, result, lang="en"):
    """The command a student types to run one check again on their own copy: ``gradekit check <your folder>
    --only <check id>``, with the profile, seed and language of this grading where they are not the defaults."""
    parts = ["gradekit", "check", text("gradescope.your_folder", lang), "--only", shlex.quote(check_id)]
    if result.profile != "full":
        parts += ["--profile", shlex.quote(result.profile)]
    if result.seed is not None:
        parts += ["--seed", str(int(result.seed))]
    if lang != "en":
        parts += ["--lang", lang]
    return " ".join(parts)


def check_blocks(check, result, lang="en"):
    """What a check that did not pass says: why (``junit.describe``, without the grading machine's rerun
    command) and the student's own rerun command."""
    return [
        Block("code", describe(replace(check, reproduce=""), lang)),
        Block("command", rerun_command(check.id, result, lang), text("gradescope.rerun", lang)),
    ]


def to_data(result, *, lang="en", output_format="md", score=None):
    """The ``results.json`` document as a dict; ``output_format``: ``text``, ``md`` or ``html``; ``score``: the
    submission's score when it is not the grading's (a batch's, after the copy policy and the review), said first
    and given to Gradescope."""
    output_format = _format(output_format)
    tests = []
    for task in result.tasks:
        withheld = bool(task.banned) and task.score + 1e-9 < sum(c.score for c in task.checks)
        for c in task.checks:
            blocks = [] if c.status == "passed" else check_blocks(c, result, lang)
            earned = c.score
            if withheld:
                earned = 0
                blocks.append(Block("sentence", text("ui.banned_cost", lang)))
            tests.append(
                {
                    "name": c.id,
                    "score": number(earned),
                    "max_score": number(c.max_score),
                    "status": "passed" if c.status == "passed" else "failed",
                    "output": render_blocks(blocks, output_format),
                    "output_format": output_format,
                    "visibility": c.visibility if c.visibility in VISIBILITIES else "visible",
                    "tags": [task.id],
                }
            )
    return {
        "score": number(result.score if score is None else score),
        "execution_time": max(0, round(result.duration_s)),
        "output": render_blocks(summary_blocks(result, lang=lang, score=score), output_format),
        "output_format": output_format,
        "tests": tests,
    }


def summary_blocks(result, *, lang="en", score=None):
    """The output about the whole submission: the score (``score`` where given: see ``to_data``), then files that
    were refused or did not import, banned APIs and tasks not written yet. Per-check messages stay in their tests,
    whose visibility Gradescope enforces."""
    seed = result.seed if result.seed is not None else text("ui.derandomized", lang)
    said = result.score if score is None else score
    blocks = [
        Block(
            "sentence",
            f"{text('ui.score', lang)}: {said:g} / {result.max_score:g}   "
            f"({text('ui.profile', lang)} {result.profile}, {text('ui.seed', lang)} {seed})",
        )
    ]
    counts = getattr(result, "held_back_counts", None)
    if counts:
        blocks.append(Block("sentence", text("ui.held_back", lang, **counts)))
    lines = [describe_refused(r, lang) for r in getattr(result, "refused", None) or ()]
    for file, err in sorted(result.load_errors.items()):
        lines.append(
            text("ui.load_error", lang, file=file, detail=located(words(err, lang), err.get("file"), err.get("line")))
        )
    for f in result.banned_api:
        lines.append(text("ui.banned", lang, **f))
    not_implemented = [t.id for t in result.tasks if t.not_implemented]
    if not_implemented:
        lines.append(text("report.not_implemented_tasks", lang, tasks=", ".join(not_implemented)))
    if lines:
        blocks.append(Block("code", "\n".join(lines)))
    return blocks


def copy_test(verdict, *, zeroed, lang="en", output_format="md"):
    """The test that tells the instructor whether the code is a copy of the reference (``verdict``:
    ``similarity.Verdict.to_dict()``; ``zeroed``: the course's policy scored it 0). Hidden: Gradescope shows
    hidden tests to instructors, never to students. Worth no points: the verdict changes the total, not a test."""
    if verdict["copy"]:
        reason = "batch.reason.copy_zeroed" if zeroed else "batch.reason.copy"
    else:
        reason = "gradescope.copy.not_flagged"
    lines = [f"{name}: {ratio:.3f}" for name, ratio in verdict.get("matches", ())]
    blocks = [
        Block("sentence", text(reason, lang)),
        Block("sentence", text("gradescope.copy.share", lang, share=round(100 * verdict.get("score", 0)))),
    ]
    if lines:
        blocks.append(Block("code", "\n".join(lines)))
    return {
        "name": text("gradescope.copy.name", lang),
        "score": 0,
        "max_score": 0,
        "status": "failed" if verdict["copy"] else "passed",
        "output": render_blocks(blocks, output_format),
        "output_format": _format(output_format),
        "visibility": "hidden",
        "tags": ["copy_of_reference"],
    }


def render(result, *, lang="en", output_format="md"):
    """``results.json`` as a string."""
    data = to_data(result, lang=lang, output_format=output_format)
    return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=False) + "\n"


def write(result, path, *, lang="en", output_format="md"):
    Path(path).write_text(render(result, lang=lang, output_format=output_format), encoding="utf-8")
