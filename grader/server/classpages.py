"""The instructor's pages on the server: the gradebook page, and the batch's class summary and similarity page built
from the server's gradings of the submissions that count.

The class pages are the batch's own (``summary.render``, ``classsim.compare_class`` and ``classsim.render``, their
templates and stylesheet), fed what the batch feeds them from its output folder: each counted submission's final
record (the judge's ``record.json`` with the review applied, ``reviews.final_record``) and its snapshot, taken by
the batch's rules (``sources.prepare``) into a scratch folder that is removed once the pages are rendered. The three
pages share the batch's frame (``templates/frame.html.j2``), its header linking all three. Every value reaches the
page through Jinja's autoescape: a name or a file of a submission is text, never markup.

The class pages are built again only when the submissions that count change (a new grading, a regrade) or the
reviews do (a review saved from the gradebook page), in both languages at once, and kept in memory until then.
"""

import functools
import shutil
import tempfile
import threading
from pathlib import Path

import jinja2

from grader.batch import classsim, sources, summary
from grader.messages import LANGS, text
from grader.server import reviews

TEMPLATES = Path(__file__).resolve().parent / "templates"
WORDS = (
    "server.instructor.title",
    "server.instructor.intro",
    "server.instructor.csv",
    "server.instructor.lms",
    "server.instructor.signed_in",
    "server.instructor.logout",
    "server.instructor.other_lang",
    "server.instructor.student",
    "server.instructor.name",
    "server.instructor.score",
    "server.instructor.status",
    "server.instructor.submitted",
    "server.instructor.late",
    "server.instructor.report",
    "server.instructor.history",
    "server.instructor.nothing",
    "server.instructor.pending",
    "server.instructor.late_counted",
    "server.instructor.reviewed",
    "server.instructor.number",
    "server.instructor.regrade",
    "server.instructor.regrade_what",
    "server.instructor.review",
    "server.instructor.review_link",
)
"""The gradebook page's words (``t.<last part>`` in its template)."""


def pages(lang):
    """The header's links of the three instructor pages, relative to ``/instructor/``, in ``lang``."""
    return (
        ("gradebook", f"./?lang={lang}", "server.instructor.nav"),
        ("index", f"index.html?lang={lang}", "batch.nav.summary"),
        ("similarity", f"similarity.html?lang={lang}", "batch.nav.similarity"),
    )


def label(student, name):
    """How a student is shown on the class pages: the roster's name and the id."""
    return f"{name} ({student})" if name else student


@functools.cache
def environment():
    """The server's templates, and the batch's beside them (the frame, the stylesheet)."""
    return jinja2.Environment(
        loader=jinja2.FileSystemLoader([TEMPLATES, summary.TEMPLATES]),
        autoescape=True,
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )


def gradebook(*, lang, rows, csrf, counts, late, message=""):
    """The gradebook page: ``rows``, one per student of the roster (``Server.gradebook_rows`` with ``history``:
    the API's view of each of their submissions, newest first); ``message`` above them (a confirmation); the forms
    (log out, regrade) with ``csrf``, shown only with it (a session's)."""
    t = {key.rsplit(".", 1)[1]: text(key, lang) for key in WORDS}
    t["intro"] = text("server.instructor.intro", lang, counts=counts, late=late)
    return (
        environment()
        .get_template("gradebook.html.j2")
        .render(
            lang=lang,
            frame=summary.frame("gradebook", lang, pages(lang)),
            t=t,
            rows=rows,
            csrf=csrf,
            message=message,
            other="zh" if lang == "en" else "en",
        )
    )


REVIEW_FIELDS = (
    ("points", "number", "server.review.points", "server.review.points_hint"),
    ("copy", "choice", "server.review.copy", "server.review.copy_hint"),
    ("late_penalty", "number", "server.review.late_penalty", "server.review.late_penalty_hint"),
    ("late_percent", "number", "server.review.late_percent", "server.review.late_percent_hint"),
    ("note", "long", "server.review.note", "server.review.note_hint"),
    ("by", "short", "server.review.by", "server.review.by_hint"),
    ("why", "long", "server.review.why", "server.review.why_hint"),
)
"""The review form's fields: the overrides file's (``overrides.FIELDS``), each with its kind of input, its label
and its hint."""
COPY_CHOICES = (
    ("", "server.review.copy_none"),
    ("cleared", "server.review.copy_cleared"),
    ("confirmed", "server.review.copy_confirmed"),
)
"""The copy flag's choices: no decision, or one of ``overrides.COPY_DECISIONS``."""


def review(*, lang, student, name, values, csrf, score, file, message=""):
    """One student's review page: the form of the overrides file's fields, filled with ``values`` (``{field:
    text}``); ``score``: what the gradebook counts now (a sentence); ``file``: where the review is saved (a
    sentence); ``message`` above them (the batch's message for a bad entry, a refusal); the form is shown only
    with ``csrf`` (a session's)."""

    def t(key, **params):
        return text(key, lang, **params)

    fields = [
        {
            "name": field,
            "label": t(label_key),
            "hint": t(hint_key),
            "value": values.get(field, ""),
            "options": [(value, t(key)) for value, key in COPY_CHOICES] if kind == "choice" else [],
            "long": kind == "long",
            "number": kind == "number",
        }
        for field, kind, label_key, hint_key in REVIEW_FIELDS
    ]
    words = {
        "title": t("server.review.title", student=label(student, name)),
        "back": t("server.review.back"),
        "other_lang": t("server.instructor.other_lang"),
        "score": score,
        "file": file,
        "save": t("server.review.save"),
        "empty": t("server.review.empty"),
        "session": t("server.review.session"),
    }
    return (
        environment()
        .get_template("review.html.j2")
        .render(
            lang=lang,
            frame=summary.frame("gradebook", lang, pages(lang)),
            t=words,
            student=student,
            fields=fields,
            csrf=csrf,
            message=message,
            other="zh" if lang == "en" else "en",
        )
    )


class ClassPages:
    """The class summary and similarity pages of the submissions that count, built when they change."""

    def __init__(self, store, assignment_of, plan_of):
        self.store = store
        self._assignment_of = assignment_of
        self._plan_of = plan_of
        self._lock = threading.Lock()
        self._key = None
        self._built = {}

    def page(self, name, lang, counted, names):
        """The page ``name`` (``index`` or ``similarity``) in ``lang`` for the submissions ``counted`` (their rows);
        ``names``: student id -> the roster's name."""
        reviewed = frozenset(self._plan_of().reviews.values())  # a review saved from the page changes the pages
        key = (tuple((r.id, r.grading) for r in counted), tuple(sorted(names.items())), reviewed)
        with self._lock:  # one build at a time: a second asker waits for it rather than building it again
            if key != self._key:
                self._built = self._build(counted, names)
                self._key = key
            return self._built[(lang, name)]

    def _build(self, counted, names):
        plan = self._plan_of()
        records, paths = [], {}
        scratch = Path(tempfile.mkdtemp(prefix="gradekit-class-"))
        try:
            for row in counted:
                final = reviews.final_record(self.store, row, plan)
                if final is None:
                    continue
                final["submission"] = row.id
                records.append(final)
                sub = sources.Submission(row.student, self.store.source_of(row), folder=str(row.id))
                sources.prepare(sub, scratch)
                if sub.path is not None:
                    paths[row.student] = sub.path
            report = classsim.compare_class(sorted(paths.items()), self._assignment_of())
            shown = {s: label(s, names.get(s, "")) for s in {r["student"] for r in records}}

            def source(key, file):
                try:
                    return (paths[key] / file).read_text(encoding="utf-8", errors="replace")
                except OSError:
                    return ""

            built = {}
            for lang in LANGS:
                similar = [
                    {
                        "members": r["members"],
                        "score": r["top"] / 100,
                        "link": f"similarity.html?lang={lang}#cluster-{r['cluster']}",
                    }
                    for r in classsim.summary_rows(report, shown, lang)
                ]
                built[(lang, "index")] = summary.render(
                    sorted(({**r, "student": shown[r["student"]]} for r in records), key=lambda r: r["student"]),
                    lang=lang,
                    similar=similar,
                    pages=pages(lang),
                    report=lambda r: f"/submissions/{r['submission']}/report",
                )
                built[(lang, "similarity")] = classsim.render(
                    report, names=shown, sources_of=source, lang=lang, pages=pages(lang)
                )
            return built
        finally:
            shutil.rmtree(scratch, ignore_errors=True)
