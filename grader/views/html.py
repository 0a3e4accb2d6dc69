"""The HTML report: one self-contained file (inline CSS, inline SVG, no external request of any kind).

Data first, rendering second: ``context(result, lang=...)`` turns the results object into plain
values (every sentence rendered from the message catalogue, every picture drawn by ``svg``), and
the Jinja2 templates in ``templates/`` lay them out. The environment autoescapes everything;
the only values the templates mark safe are the SVG strings drawn here from numbers (their
labels escaped by ``svg``). A Content-Security-Policy forbids any request and any script
but the report's own print helper.
"""

import base64
import functools
import hashlib
import math
import re
from pathlib import Path

import jinja2
from markupsafe import Markup

from grader.errors import words
from grader.messages import CATALOGUES, PHRASE, is_phrase, text
from grader.messages import render as render_message
from grader.submission.snapshot import describe as describe_refused
from grader.views import svg
from grader.views.json_view import check_notes

TEMPLATES = Path(__file__).resolve().parent / "templates"
PRINT_SCRIPT = "print.js"
"""The one inline script: opens every ``<details>`` before printing."""
EXAMPLE_KEYS = ("config", "shapes", "first_index", "max_abs_error", "max_rel_error", "mismatched", "total")
"""Example fields shown first, in this order; the rest follow in their own order."""
REVIEW_MARKERS = ("<!-- gradekit:review -->", "<!-- /gradekit:review -->")
"""The comments around the instructor's review box in a reviewed report (``render``'s ``review``), as the template
writes them: where the box starts and ends, for whoever reads the page."""


@functools.cache
def environment():
    """The Jinja2 environment (built on first use): autoescaped, undefined names are errors."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def _script_hash():
    env = environment()
    source, _, _ = env.loader.get_source(env, PRINT_SCRIPT)
    # Jinja drops a single trailing newline from an included template; hash what is emitted.
    emitted = source[:-1] if source.endswith("\n") else source
    return "sha256-" + base64.b64encode(hashlib.sha256(emitted.encode("utf-8")).digest()).decode("ascii")


def render(result, *, lang="en", review=None):
    """The report as one HTML string; ``review``: the instructor's review of it (``context``), or ``None``."""
    return environment().get_template("report.html.j2").render(**context(result, lang=lang, review=review))


def write(result, path, *, lang="en"):
    """Write the report to ``path`` (UTF-8)."""
    Path(path).write_text(render(result, lang=lang), encoding="utf-8")


def headline(score, max_score, *, review=None):
    """The score card's headline: the total that counts, its percentage and bar. ``review`` (``{"text", "link"}``,
    plain text; ``link`` leads to the review box): said beside a total that a review changed, what it was before
    and why."""
    return Markup(
        environment()
        .get_template("headline.html.j2")
        .render(
            score=_score(score),
            max_score=_score(max_score),
            percent=0 if not max_score else round(100 * score / max_score),
            bar=svg.bar(score, max_score, label=total(score, max_score)),
            review=review,
        )
    )


def total(score, max_score):
    """A total as the report shows it: ``32 / 140``."""
    return f"{_score(score)} / {_score(max_score)}"


# -- the view model --------------------------------------------------------------------------------
def context(result, *, lang="en", review=None):
    """Everything the template shows, as plain values.

    ``review``: the instructor's review (``grader.batch.overrides.shown``), its words already in ``lang``:
    ``{"title", "rows": [(label, value)], "score", "beside", "link"}``. Its box follows the score card; when it
    changed the score (``score`` is not ``None``) the headline and the page title show that score, with ``beside``
    (the score before the review, what changed and why) next to it, so that the student reads first the score that
    counts. ``None``: the grading as it is."""

    def t(key, **params):
        return text(key, lang, **params)

    checks = [c for task in result.tasks for c in task.checks]
    waiting = [c for c in checks if c.status != "passed" and (c.error or {}).get("kind") == "not_implemented"]
    counts = {
        s: sum(1 for c in checks if c.status == s and c not in waiting)
        for s in ("passed", "failed", "error", "skipped")
    }
    counts["todo"] = len(waiting)  # code not written yet is not an error: counted apart
    failed = len(checks) - counts["passed"] - len(waiting)
    if failed or waiting:
        verdict = " ".join(
            ([t("ui.some_failed", failed=failed, total=len(checks))] if failed else [])
            + ([t("ui.todo", count=len(waiting))] if waiting else [])
        )
    elif result.score < result.max_score:
        verdict = t("ui.banned_withheld", tasks=", ".join(task.id for task in result.tasks if task.banned))
    elif result.hidden_checks:
        verdict = t("ui.public_passed", hidden=result.hidden_checks)
    else:
        verdict = t("ui.all_passed")
    env = result.environment or {}
    seed = result.seed if result.seed is not None else t("ui.derandomized")
    allow_banned = getattr(result, "allow_banned", False)
    shown = result.score
    beside = None
    if review and review.get("score") is not None:
        shown = float(review["score"])
        beside = {"text": review["beside"], "link": review["link"]}
    return {
        "t": t,
        "html_lang": "zh-CN" if lang == "zh" else lang,
        "csp_script": _script_hash(),
        "print_script": PRINT_SCRIPT,
        "when": env.get("when", ""),
        "meta": [
            (t("ui.submission"), result.submission),
            (t("ui.when"), env.get("when", "")),
            (t("ui.profile"), result.profile),
            (t("ui.seed"), seed),
            (t("ui.duration"), f"{result.duration_s:.1f} s"),
            (
                t("ui.mode"),
                t("ui.mode_in_process")
                if not result.sealed
                else t("ui.mode_jailed")
                if result.jailed
                else t("ui.mode_unjailed"),
            ),
            *([(t("kit.answers"), t("kit.answers_banked"))] if getattr(result, "banked", False) else []),
            *(
                [(t("ui.skipped"), t("kit.unjudged_short", points=f"{result.unjudged:g}"))]
                if getattr(result, "unjudged", 0)
                else []
            ),
            *(
                [(t("ui.held_back_label"), t("ui.held_back_short", **result.held_back_counts))]
                if getattr(result, "held_back_counts", None)
                else []
            ),
        ],
        "environment": [(k, _plain(v)) for k, v in env.items() if k != "when"],
        "score": _score(shown),
        "max_score": _score(result.max_score),
        "headline": headline(shown, result.max_score, review=beside),
        "review": {"title": review["title"], "rows": list(review["rows"])} if review else None,
        "review_markers": [Markup(m) for m in REVIEW_MARKERS],  # the kit's own comments, not text to escape
        "verdict": verdict,
        "all_passed": result.passed,
        "counts": [(t(f"report.count.{s}", count=n), s) for s, n in counts.items() if n],
        "load_errors": [
            {
                "file": f,
                "detail": words(e, lang),
                "where": _where(e),
                "code": e.get("code", ""),
                "trace": e.get("trace", ""),
            }
            for f, e in sorted(result.load_errors.items())
        ],
        "refused": [describe_refused(r, lang) for r in getattr(result, "refused", None) or ()],
        "tasks": [_task(task, t, lang, allow_banned) for task in result.tasks],
        "not_implemented": [task.id for task in result.tasks if task.not_implemented],
        "banned": [dict(f, where=_where(f)) for f in result.banned_api],
        "allow_banned": allow_banned,
        "figures": _figures(result, t),
        "version": env.get("gradekit", ""),
    }


def _score(x):
    return f"{x:g}"


def _plain(value):
    if isinstance(value, (list, tuple)):
        return ", ".join(str(v) for v in value)
    return str(value)


def _where(d):
    if not d.get("file"):
        return ""
    return f"{d['file']}:{d['line']}" if d.get("line") else str(d["file"])


def _task(task, t, lang, allow_banned):
    ok = all(c.status == "passed" for c in task.checks)
    if task.not_implemented:
        state, note = "todo", t("ui.not_implemented")
    elif task.banned and not allow_banned:
        state, note = "banned", t("ui.banned_cost")
    elif ok:
        state, note = "ok", ""
    elif task.blocked_by:
        state, note = "blocked", t("ui.blocked_by", tasks=", ".join(task.blocked_by))
    else:
        state, note = "fail", ""
    failing = [c for c in task.checks if c.status != "passed"]
    notes = [(c.id, n) for c in task.checks if c.status == "passed" for n in check_notes(c, lang)]
    return {
        "id": task.id,
        "score": _score(task.score),
        "max_score": _score(task.max_score),
        "bar": svg.bar(task.score, task.max_score, label=f"{task.id}: {_score(task.score)} / {_score(task.max_score)}"),
        "state": state,
        "note": note,
        "detailed": not task.not_implemented and (bool(failing) or bool(task.banned) or bool(notes)),
        "failing": [_check(c, t, lang) for c in failing],
        "passed": [c.id for c in task.checks if c.status == "passed"],
        "notes": notes,
        "banned": [dict(f, where=_where(f)) for f in task.banned],
    }


def _check(c, t, lang):
    return {
        "id": c.id,
        "status": c.status,
        "status_text": t(f"ui.{c.status}"),
        "score": _score(c.score),
        "max_score": _score(c.max_score),
        "message": render_message(c.message, lang),
        "diagnoses": [_diagnosis(d, t) for d in c.diagnoses],
        "example": _example(c.example, t),
        "error": _error(c.error, lang),
        "mismatch": _mismatch(c, t),
        # Word by word, so that a narrow screen wraps the command between words, not inside "--only".
        "reproduce": c.reproduce.split(" ") if c.reproduce else [],
        "visibility": "" if c.visibility == "visible" else t(f"report.visibility.{c.visibility}"),
        "notes": check_notes(c, lang),
    }


def _diagnosis(d, t):
    if d.kind == "hint" or d.id.startswith("hint."):
        return {"kind": "hint", "label": t("ui.hint"), "text": t("bug." + d.id, **d.params), "hint": ""}
    hint_key = "bughint." + d.id
    return {
        "kind": "bug",
        "label": t("ui.diagnosis"),
        "text": t("bug." + d.id, **d.params),
        "hint": t(hint_key, **d.params) if hint_key in CATALOGUES["en"] else "",
    }


def _example(example, t):
    rows = []
    keys = [k for k in EXAMPLE_KEYS if k in example] + [k for k in example if k not in EXAMPLE_KEYS]
    for k in keys:
        label_key = f"report.example.{k}"
        label = t(label_key) if label_key in CATALOGUES["en"] else k
        rows.append((label, _value(example[k], t)))
    return rows


def _value(v, t):
    """A value of an example as it reads; a phrase (words of the check's, ``messages.phrase``) said by ``t``."""
    if is_phrase(v):
        return t(v[PHRASE], **v["params"])
    if isinstance(v, dict):
        return ", ".join(f"{k}={_value(x, t)}" for k, x in v.items())
    if isinstance(v, float):
        return svg.label_number(v) if math.isfinite(v) else str(v)
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(_value(x, t) for x in v) + "]"
    return str(v)


def _error(error, lang):
    if not error:
        return None
    return {
        "kind": error.get("kind", ""),
        "detail": words(error, lang),
        "where": _where(error),
        "code": error.get("code", ""),
        "trace": error.get("trace", ""),
    }


def _mismatch(c, t):
    """The check's mismatch map, or ``None``. An exact comparison (booleans, integers) maps each entry to
    differs (1) or matches (0), and its legend names the two colours; a numeric one maps the error, on a
    colour bar."""
    grid = c.artifacts.get("mismatch") if c.artifacts else None
    if not grid or not isinstance(grid, list) or not all(isinstance(r, list) for r in grid):
        return None
    exact = c.message is not None and c.message.key == "fail.values_exact"
    what = (c.message.params.get("what") if c.message else "") or c.id
    picture = svg.heatmap(
        _numbers(grid),
        x_label=t("report.axis_last"),
        y_label=t("report.axis_second_last"),
        scale="error",
        vmin=0.0,
        legend="" if exact else t("report.mismatch_legend"),
        binary=(t("report.legend_differs"), t("report.legend_matches")) if exact else None,
        missing_label=t("report.legend_nonfinite"),
        label=t("report.mismatch_title", what=what),
    )
    return {
        "title": t("report.mismatch_title", what=what),
        "svg": picture,
        "note": t("report.mismatch_note_exact" if exact else "report.mismatch_note"),
    }


def _numbers(grid):
    return [
        [float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None for v in row] for row in grid
    ]


# -- pictures -------------------------------------------------------------------------------------
def _figures(result, t):
    """The pictures whose data the result holds, each drawn only then: any number of heat-map figures
    (``result.figures["heatmaps"]``, gathered by the assignment's ``figures`` function) and a check's loss curve
    (its ``loss_curve`` artifact). A result with none of them has no pictures section."""
    figs = result.figures or {}
    out = {"heatmaps": [_heatmap_figure(f, t) for f in figs.get("heatmaps") or () if isinstance(f, dict)], "loss": None}
    trained = _loss_check(result)
    if trained is not None:
        out["loss"] = _loss(trained, t)
    out["any"] = any(v for v in out.values())
    return out


def _error_text(err, t):
    return t(err["key"], **err.get("params", {})) if err else ""


def _error_class(err):
    return "todo" if err and err.get("kind") == "not_implemented" else "bad"


def _say(message, t):
    """A sentence given as data: a message key, or ``{"key": ..., "params": {...}}``; ``""`` for ``None``."""
    if not message:
        return ""
    if isinstance(message, str):
        return t(message)
    return t(message["key"], **(message.get("params") or {}))


LANG_TAG = re.compile(r"[A-Za-z]{2,3}(?:-[A-Za-z0-9]{1,8})*")
"""A language tag as a quoted piece of a figure may name it (``zh-CN``); anything else is dropped."""
MAX_DECIMALS = 6
"""The most places a panel's ``decimals`` may ask for."""


def _quote(pieces):
    """A figure's ``quote``: the text it was drawn from, each piece a string or ``{"text", "lang", "italic"}``."""
    out = []
    for piece in pieces if isinstance(pieces, (list, tuple)) else ():
        piece = {"text": piece} if isinstance(piece, str) else piece
        if not isinstance(piece, dict) or not piece.get("text"):
            continue
        lang = piece.get("lang")
        out.append(
            {
                "text": str(piece["text"]),
                "italic": bool(piece.get("italic")),
                "lang": lang if isinstance(lang, str) and LANG_TAG.fullmatch(lang) else "",
            }
        )
    return out


def _value_format(decimals):
    """How a panel writes its values: ``decimals`` places (``0.25`` -> ``0.25``, ``1`` -> ``1.00`` with 2), or the
    default short label."""
    if isinstance(decimals, int) and not isinstance(decimals, bool) and 0 <= decimals <= MAX_DECIMALS:
        return lambda v: f"{v:.{decimals}f}"
    return None


def _heatmap_figure(fig, t):
    """A generic figure of titled heat-map panels side by side, every sentence a message key of the assignment's.

    ``fig`` (one item of ``result.figures["heatmaps"]``): ``id`` (the anchor ``fig-<id>``), ``title``, ``note``,
    ``quote`` (the text the picture is drawn from, shown after the note as it is: pieces, each a string or
    ``{"text", "lang", "italic"}``), ``comparison`` (a list: sentences under the panels), ``error`` (a figure
    error: ``{"key", "params", "kind"}``) and ``panels``, each with ``values`` (rows of numbers, ``None`` where not
    finite) and optionally ``title``, ``note`` (a sentence above its picture), ``row_labels``, ``col_labels``,
    ``x_label``, ``y_label``, ``legend``, ``scale`` (a name in ``svg.SCALES``), ``vmin``, ``vmax``, ``blocked`` (rows
    of booleans: the cells hatched), ``blocked_label``, ``show_values``, ``decimals`` (the places a value is
    written with in its cell). A sentence is a message key or ``{"key": ..., "params": {...}}``; other fields of
    ``fig`` are the assignment's own data, not drawn. ``docs/ASSIGNMENTS.md`` says the same to assignment authors."""
    panels = []
    figure_title = _say(fig.get("title"), t)
    for p in fig.get("panels") or ():
        values = p.get("values") if isinstance(p, dict) else None
        if not values:
            continue
        title = _say(p.get("title"), t)
        rows, cols = p.get("row_labels"), p.get("col_labels")
        bounds = {k: float(p[k]) for k in ("vmin", "vmax") if isinstance(p.get(k), (int, float))}
        blocked = p.get("blocked")
        panels.append(
            {
                "title": title,
                "note": _say(p.get("note"), t),
                "svg": svg.heatmap(
                    _numbers(values),
                    row_labels=[str(r) for r in rows] if rows else None,
                    col_labels=[str(c) for c in cols] if cols else None,
                    x_label=_say(p.get("x_label"), t),
                    y_label=_say(p.get("y_label"), t),
                    scale=p.get("scale") if p.get("scale") in svg.SCALES else "sequential",
                    legend=_say(p.get("legend"), t),
                    label=f"{figure_title}: {title}" if title else figure_title,
                    show_values=p.get("show_values"),
                    value_format=_value_format(p.get("decimals")),
                    missing_label=t("report.legend_nonfinite"),
                    blocked=[[bool(b) for b in row] for row in blocked] if blocked else None,
                    blocked_label=_say(p.get("blocked_label"), t),
                    **bounds,
                ),
            }
        )
    error = fig.get("error")
    return {
        "id": str(fig.get("id") or "heatmap"),
        "title": figure_title,
        "note": _say(fig.get("note"), t),
        "quote": _quote(fig.get("quote")),
        "panels": panels,
        "comparison": " ".join(s for s in (_say(c, t) for c in fig.get("comparison") or ()) if s),
        "error": _error_text(error, t),
        "error_class": _error_class(error),
    }


def _loss_check(result):
    """The first check that left a loss curve (a training run's ``loss_curve`` artifact), or ``None``."""
    for task in result.tasks:
        for c in task.checks:
            if isinstance((c.artifacts or {}).get("loss_curve"), list):
                return c
    return None


def _loss(check, t):
    """The loss curve; where the loss became NaN or inf, the sentence and the picture say which and at what
    step (the picture marks it even when no step had a finite loss)."""
    curve = check.artifacts["loss_curve"]
    # The target is drawn when the check says what it was (the result never imports the checks).
    target = check.artifacts.get("loss_target", (check.message.params if check.message else {}).get("target"))
    target = target if isinstance(target, (int, float)) and target > 0 else None
    planned = check.artifacts.get("loss_steps")
    ys = [float(v) if isinstance(v, (int, float)) and math.isfinite(v) else None for v in curve]
    bad = next((i for i, v in enumerate(ys) if v is None), None)
    value = _nonfinite_name(curve[bad]) if bad is not None else ""
    picture = svg.line_chart(
        ys,
        xs=list(range(1, len(ys) + 1)),
        x_label=t("report.axis_step"),
        y_label=t("report.axis_loss"),
        reference_line=target,
        reference_label=t("report.loss_target", target=target) if target else "",
        label=t("report.loss_title"),
        x_max=planned if isinstance(planned, int) and planned > len(ys) else None,
        stop=(bad + 1, t("report.loss_stop", value=value, step=bad + 1)) if value else None,
    )
    finite = [v for v in ys[:bad] if v is not None]  # ys[:None]: all of it
    summary = t("report.loss_summary", first=finite[0], last=finite[-1], steps=len(finite)) if finite else ""
    return {
        "title": t("report.loss_title"),
        "svg": picture if finite or value else None,
        "summary": summary,
        "nonfinite": t("report.loss_nonfinite", value=value, step=bad + 1) if value else "",
    }


def _nonfinite_name(v):
    """How a loss that is not a finite number reads: ``inf``, ``-inf``, else ``NaN`` ("not a number")."""
    if isinstance(v, (int, float)) and math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return "NaN"
