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


@functools.lru_cache(maxsize=None)
def environment():
    return jinja2.Environment(loader=jinja2.FileSystemLoader(TEMPLATES), autoescape=True,
                              undefined=jinja2.StrictUndefined, trim_blocks=True, lstrip_blocks=True)


def context(records, *, lang="en"):
    """Everything the page shows, as plain values."""
    def t(key, **params):
        return text(key, lang, **params)

    graded = [r for r in records if r.get("max_score")]
    bins = [0] * BINS
    for r in graded:
        frac = max(0.0, min(1.0, r["score"] / r["max_score"]))
        bins[min(BINS - 1, int(frac * BINS))] += 1
    tallest = max(bins) or 1
    histogram = [{"label": f"{i * 100 // BINS}–{(i + 1) * 100 // BINS}%", "count": n,
                  "height": round(120 * n / tallest, 1), "x": 40 + i * 44} for i, n in enumerate(bins)]
    checks = {}
    for r in records:
        for cid, status in r.get("checks", {}).items():
            c = checks.setdefault(cid, [0, 0])
            c[1] += 1
            c[0] += status == "passed"
    pass_rates = [{"id": cid, "passed": p, "total": n, "rate": round(100 * p / n)} for cid, (p, n) in checks.items()]
    bugs = Counter(b for r in records for b in r.get("diagnoses", []))
    top_bugs = [{"id": b, "name": t("bug." + b), "count": n} for b, n in sorted(bugs.items(),
                                                                              key=lambda kv: (-kv[1], kv[0]))[:TOP]]
    slowest = sorted(records, key=lambda r: (-r.get("duration_s", 0), r["student"]))[:TOP]
    statuses = Counter(r.get("status", "error") for r in records)
    mean = sum(r["score"] / r["max_score"] for r in graded) / len(graded) if graded else 0.0
    return {
        "lang": lang, "t": {k: t(f"batch.page.{k}") for k in (
            "title", "students", "mean", "histogram", "pass_rates", "bugs", "slowest", "all", "student",
            "score", "status", "reason", "report", "check", "passed", "bug", "count", "seconds", "none")},
        "n": len(records), "mean": round(100 * mean, 1),
        "statuses": [{"name": s, "count": statuses[s], "label": t(f"batch.status.{s}")} for s in STATUSES
                     if statuses[s]],
        "histogram": histogram, "pass_rates": pass_rates, "bugs": top_bugs,
        "slowest": [{"student": r["student"], "seconds": r.get("duration_s", 0), "status": r.get("status")}
                    for r in slowest],
        "students": [{"student": r["student"], "score": _number(r.get("score")), "max": _number(r.get("max_score")),
                      "status": r.get("status", "error"), "reason": r.get("reason", ""),
                      "report": f"{r.get('folder') or r['student']}/report.html"
                      if r.get("hash") or r.get("folder") else None} for r in records],
    }


def _number(x):
    x = float(x or 0)
    return f"{x:g}"


def render(records, *, lang="en"):
    return environment().get_template("index.html.j2").render(**context(records, lang=lang))


def write(records, path, *, lang="en"):
    atomic_write(Path(path), render(records, lang=lang))
