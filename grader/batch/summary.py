"""The class summary page ``index.html``: one self-contained file (inline CSS and SVG, no request, no script).

Data first: ``context(records, lang=...)`` reduces the per-student records to plain numbers and
sentences (from the message catalogue); ``templates/index.html.j2`` lays them out, autoescaped,
with the histogram drawn as SVG elements from those numbers (nothing is marked safe). The tasks come
first, one row each with its checks folded under it, so that a class's many checks read as a few tasks.

Both class pages (this one and ``similarity.html``, ``classsim.render``) extend ``templates/frame.html.j2``:
one head, one stylesheet (``templates/pages.css``) and one header linking the two (``frame``).
"""

import functools
import statistics
from collections import Counter
from pathlib import Path

import jinja2

from grader.batch.judge import STATUSES, atomic_write
from grader.messages import text

TEMPLATES = Path(__file__).resolve().parent / "templates"
BINS = 10
"""Histogram bars: score fractions 0-10 %, ..., 90-100 %."""
TOP = 10
"""Rows in the 'most frequent bugs' and 'slowest submissions' tables."""
PITCH, BAR, LEFT, BASE, TALLEST = 44, 40, 16, 140, 120
"""The histogram's geometry in SVG units: a bar every ``PITCH`` (``BAR`` wide), the first bin's left edge at
``LEFT``, the axis at ``BASE``, the tallest bar ``TALLEST`` high. Its width, ``2 * LEFT + BINS * PITCH``, is
the viewBox's: the page scales the picture to its own width."""
WORDS = (
    "title",
    "students",
    "mean",
    "histogram",
    "pass_rates",
    "bugs",
    "slowest",
    "all",
    "student",
    "score",
    "status",
    "check",
    "bug",
    "count",
    "seconds",
    "none",
    "rate",
    "axis",
    "similar",
    "similar_note",
    "members",
    "likeness",
    "compare",
    "colon",
    "all_note",
    "tasks",
    "tasks_note",
    "task",
    "points",
    "task_mean",
    "task_median",
    "full",
    "partial",
    "zero",
    "mistake",
    "no_mistake",
)
"""The page's own words: ``batch.page.<word>``."""
PAGES = (("index", "index.html", "batch.nav.summary"), ("similarity", "similarity.html", "batch.nav.similarity"))
"""The class pages the header links, side by side in the batch's output folder: (name, file, its words)."""


def frame(page, lang="en", pages=PAGES):
    """What the shared header of the class pages shows (``templates/frame.html.j2``), so that the summary and
    the similarity page look and read alike and each links the other; ``page``: the one showing it; ``pages``:
    the pages linked, as ``PAGES`` (the course server serves them beside its gradebook page)."""
    return {
        "label": text("batch.nav.label", lang),
        "wide": page == "similarity",
        "links": [{"href": href, "text": text(key, lang), "current": name == page} for name, href, key in pages],
    }


@functools.cache
def environment():
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader(TEMPLATES),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def histogram(records):
    """The score distribution as SVG geometry: a bar per tenth of the maximum (its count, height, left edge and
    range) and a tick per bin edge labelled with its percentage (``0``, ``10``, ... ``100``: short labels that
    never run into each other)."""
    bins = [0] * BINS
    for r in records:
        if r.get("max_score"):
            frac = max(0.0, min(1.0, r["score"] / r["max_score"]))
            bins[min(BINS - 1, int(frac * BINS))] += 1
    tallest = max(bins) or 1
    step = 100 // BINS
    return {
        "width": 2 * LEFT + BINS * PITCH,
        "base": BASE,
        "left": LEFT,
        "right": LEFT + BINS * PITCH,
        "bars": [
            {
                "count": n,
                "height": round(TALLEST * n / tallest, 1),
                "x": LEFT + i * PITCH + (PITCH - BAR) / 2,
                "width": BAR,
                "range": f"{i * step}–{(i + 1) * step}%",
            }
            for i, n in enumerate(bins)
        ],
        "ticks": [{"x": LEFT + i * PITCH, "label": str(i * step)} for i in range(BINS + 1)],
    }


def pass_rates(records):
    """Each check's pass rate, worst first (lowest rate, then check id), with its task (the id's first part)."""
    checks = {}
    for r in records:
        for cid, status in r.get("checks", {}).items():
            c = checks.setdefault(cid, [0, 0])
            c[1] += 1
            c[0] += status == "passed"
    ranked = sorted(checks.items(), key=lambda kv: (kv[1][0] / kv[1][1], kv[0]))
    return [
        {"id": cid, "task": cid.split(".", 1)[0], "passed": p, "total": n, "rate": round(100 * p / n)}
        for cid, (p, n) in ranked
    ]


def _stat(x):
    """A mean or median as the page writes it: at most two decimals, no trailing zeros (``6.8``, ``10``)."""
    return f"{round(x, 2):g}"


def tasks(records, rates, lang="en"):
    """One row per task: its points, the mean and median of the points the students graded in it got (as the
    gradebook's column, so the page and the spreadsheet agree), how many got full marks, part of them or none,
    its most frequent diagnosed mistake, and its checks, worst first (``rates``, ``pass_rates``). Tasks come in
    the records' order (the assignment's, as the gradebook's columns); a task known only from its checks
    (records from before the per-task fields) has its checks and no numbers."""
    order = {}
    for r in records:
        for task in r.get("tasks", {}):
            order.setdefault(task, len(order))
    for c in rates:
        order.setdefault(c["task"], len(order))
    rows = []
    for task in order:
        scores = [float(r["tasks"][task] or 0) for r in records if task in r.get("tasks", {})]
        tops = {float(r["task_max"][task]) for r in records if task in (r.get("task_max") or {})}
        top = max(tops) if tops else None
        full = sum(1 for s in scores if s >= top - 1e-9) if top else None
        zero = sum(1 for s in scores if s <= 0)
        named = Counter(
            b
            for r in records
            if task in r.get("tasks", {})
            for b in r.get("diagnoses", [])
            if b.split(".", 1)[0] == task
        )
        mistake = None
        if named:
            bug, n = min(named.items(), key=lambda kv: (-kv[1], kv[0]))
            mistake = {
                "id": bug,
                "name": text("bug." + bug, lang),
                "count": text("batch.page.mistake_count", lang, n=n, graded=len(scores)),
            }
        checks = [c for c in rates if c["task"] == task]
        failing = sum(1 for c in checks if c["rate"] < 100)
        summary = (
            text("batch.page.task_checks", lang, n=len(checks))
            + " · "
            + (text("batch.page.task_failing", lang, n=failing) if failing else text("batch.page.task_passed", lang))
        )
        rows.append(
            {
                "id": task,
                "points": _number(top) if top is not None else "–",
                "mean": _stat(statistics.mean(scores)) if scores else "–",
                "median": _stat(statistics.median(scores)) if scores else "–",
                "full": full if full is not None else "–",
                "zero": zero if scores else "–",
                "partial": len(scores) - full - zero if full is not None else "–",
                "mistake": mistake,
                "checks": checks,
                "summary": summary,
            }
        )
    return rows


def context(records, *, lang="en", similar=(), skipped=(), pages=PAGES, report=None):
    """Everything the page shows, as plain values. ``similar``: groups of submissions much like each other,
    ``{members: [display names], score: likeness 0-1, link: a page comparing them or None}``; ``skipped``: entries
    of the hand-in folder that are not submissions, ``{name, why}``. Each section is shown only when it has rows;
    checks every student passed are folded away under the ones some failed. ``pages``: the header's links
    (``frame``); ``report``: a record's report address, or ``None`` (default: ``<folder>/report.html`` beside
    the page, as the batch writes it)."""

    def t(key, **params):
        return text(key, lang, **params)

    def label(status):
        return t(f"batch.status.{status}")

    graded = [r for r in records if r.get("max_score")]
    rates = pass_rates(records)
    bugs = Counter(b for r in records for b in r.get("diagnoses", []))
    top_bugs = [
        {"id": b, "name": t("bug." + b), "count": n}
        for b, n in sorted(bugs.items(), key=lambda kv: (-kv[1], kv[0]))[:TOP]
    ]
    slowest = sorted(records, key=lambda r: (-r.get("duration_s", 0), r["student"]))[:TOP]
    statuses = Counter(r.get("status", "error") for r in records)
    mean = sum(r["score"] / r["max_score"] for r in graded) / len(graded) if graded else 0.0
    # Graded in a worker without a jail of its own (records from before this field say nothing either way).
    unjailed = sum(1 for r in graded if r.get("jailed") is False)
    return {
        "lang": lang,
        "t": {k: t(f"batch.page.{k}") for k in WORDS},
        "frame": frame("index", lang, pages),
        "tasks": tasks(records, rates, lang),
        "n": len(records),
        "mean": round(100 * mean, 1),
        "statuses": [{"name": s, "count": statuses[s], "label": label(s)} for s in STATUSES if statuses[s]],
        "histogram": histogram(records),
        "pass_rates": rates,
        "bugs": top_bugs,
        "slowest": [
            {
                "student": r["student"],
                "seconds": r.get("duration_s", 0),
                "status": r.get("status", "error"),
                "label": label(r.get("status", "error")),
            }
            for r in slowest
        ],
        "students": [
            {
                "student": r["student"],
                "score": _number(r.get("score")),
                "max": _number(r.get("max_score")),
                "status": r.get("status", "error"),
                "label": label(r.get("status", "error")),
                "reason": r.get("reason", ""),
                "report": report(r) if report is not None else _report(r),
            }
            for r in records
        ],
        "similar": [
            {
                "members": [str(m) for m in g["members"]],
                "score": round(100 * float(g["score"])),
                "link": g.get("link") or None,
            }
            for g in similar
        ],
        "skipped": [{"name": str(s["name"]), "why": str(s["why"])} for s in skipped],
        "skipped_title": t("batch.page.skipped", n=len(skipped)),
        "unjailed": t("batch.page.unjailed", n=unjailed) if unjailed else "",
        "all_passed_title": t("batch.page.all_passed", n=sum(1 for c in rates if c["rate"] == 100)),
        "flat_title": t("batch.page.flat", n=len(rates), failing=sum(1 for c in rates if c["rate"] < 100)),
    }


def _report(record):
    """Where the batch writes a record's report, beside the page; ``None`` for a record with no folder."""
    if record.get("hash") or record.get("folder"):
        return f"{record.get('folder') or record['student']}/report.html"
    return None


def _number(x):
    x = float(x or 0)
    return f"{x:g}"


def render(records, *, lang="en", similar=(), skipped=(), pages=PAGES, report=None):
    """The page as a string (``context`` for the arguments)."""
    return (
        environment()
        .get_template("index.html.j2")
        .render(**context(records, lang=lang, similar=similar, skipped=skipped, pages=pages, report=report))
    )


def write(records, path, *, lang="en", similar=(), skipped=()):
    atomic_write(Path(path), render(records, lang=lang, similar=similar, skipped=skipped))
