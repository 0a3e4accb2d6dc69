"""The class summary page ``index.html``: one self-contained file (inline CSS and SVG, no request, no script).

Data first: ``context(records, lang=...)`` reduces the per-student records to plain numbers and
sentences (from the message catalogue); ``templates/index.html.j2`` lays them out, autoescaped,
with the histogram drawn as SVG elements from those numbers (nothing is marked safe).
"""

import functools
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
WORDS = ("title", "students", "mean", "histogram", "pass_rates", "bugs", "slowest", "all", "student", "score",
         "status", "check", "bug", "count", "seconds", "none", "rate", "axis",
         "similar", "similar_note", "members", "likeness", "compare", "colon", "all_note")
"""The page's own words: ``batch.page.<word>``."""


@functools.cache
def environment():
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


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
    return {"width": 2 * LEFT + BINS * PITCH, "base": BASE, "left": LEFT, "right": LEFT + BINS * PITCH,
            "bars": [{"count": n, "height": round(TALLEST * n / tallest, 1), "x": LEFT + i * PITCH + (PITCH - BAR) / 2,
                      "width": BAR, "range": f"{i * step}–{(i + 1) * step}%"} for i, n in enumerate(bins)],
            "ticks": [{"x": LEFT + i * PITCH, "label": str(i * step)} for i in range(BINS + 1)]}


def pass_rates(records):
    """Each check's pass rate, worst first (lowest rate, then check id), with its task (the id's first part)."""
    checks = {}
    for r in records:
        for cid, status in r.get("checks", {}).items():
            c = checks.setdefault(cid, [0, 0])
            c[1] += 1
            c[0] += status == "passed"
    ranked = sorted(checks.items(), key=lambda kv: (kv[1][0] / kv[1][1], kv[0]))
    return [{"id": cid, "task": cid.split(".", 1)[0], "passed": p, "total": n, "rate": round(100 * p / n)}
            for cid, (p, n) in ranked]


def context(records, *, lang="en", similar=(), skipped=()):
    """Everything the page shows, as plain values. ``similar``: groups of submissions much like each other,
    ``{members: [display names], score: likeness 0-1, link: a page comparing them or None}``; ``skipped``: entries
    of the hand-in folder that are not submissions, ``{name, why}``. Each section is shown only when it has rows;
    checks every student passed are folded away under the ones some failed."""
    def t(key, **params):
        return text(key, lang, **params)

    def label(status):
        return t(f"batch.status.{status}")

    graded = [r for r in records if r.get("max_score")]
    rates = pass_rates(records)
    bugs = Counter(b for r in records for b in r.get("diagnoses", []))
    top_bugs = [{"id": b, "name": t("bug." + b), "count": n} for b, n in sorted(bugs.items(),
                                                                              key=lambda kv: (-kv[1], kv[0]))[:TOP]]
    slowest = sorted(records, key=lambda r: (-r.get("duration_s", 0), r["student"]))[:TOP]
    statuses = Counter(r.get("status", "error") for r in records)
    mean = sum(r["score"] / r["max_score"] for r in graded) / len(graded) if graded else 0.0
    # Graded in a worker without a jail of its own (records from before this field say nothing either way).
    unsealed = sum(1 for r in graded if r.get("sealed") is False)
    return {
        "lang": lang, "t": {k: t(f"batch.page.{k}") for k in WORDS},
        "n": len(records), "mean": round(100 * mean, 1),
        "statuses": [{"name": s, "count": statuses[s], "label": label(s)} for s in STATUSES if statuses[s]],
        "histogram": histogram(records), "pass_rates": rates, "bugs": top_bugs,
        "slowest": [{"student": r["student"], "seconds": r.get("duration_s", 0), "status": r.get("status", "error"),
                     "label": label(r.get("status", "error"))} for r in slowest],
        "students": [{"student": r["student"], "score": _number(r.get("score")), "max": _number(r.get("max_score")),
                      "status": r.get("status", "error"), "label": label(r.get("status", "error")),
                      "reason": r.get("reason", ""),
                      "report": f"{r.get('folder') or r['student']}/report.html"
                      if r.get("hash") or r.get("folder") else None} for r in records],
        "similar": [{"members": [str(m) for m in g["members"]], "score": round(100 * float(g["score"])),
                     "link": g.get("link") or None} for g in similar],
        "skipped": [{"name": str(s["name"]), "why": str(s["why"])} for s in skipped],
        "skipped_title": t("batch.page.skipped", n=len(skipped)),
        "unsealed": t("batch.page.unsealed", n=unsealed) if unsealed else "",
        "all_passed_title": t("batch.page.all_passed", n=sum(1 for c in rates if c["rate"] == 100)),
    }


def _number(x):
    x = float(x or 0)
    return f"{x:g}"


def render(records, *, lang="en", similar=(), skipped=()):
    """The page as a string (``context`` for the arguments)."""
    return environment().get_template("index.html.j2").render(**context(records, lang=lang, similar=similar,
                                                                        skipped=skipped))


def write(records, path, *, lang="en", similar=(), skipped=()):
    atomic_write(Path(path), render(records, lang=lang, similar=similar, skipped=skipped))
