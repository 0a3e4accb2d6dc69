"""The instructor's reviews on the server: the batch's ``overrides.toml`` (or ``.csv``), applied as the batch applies
them (``runner.reviews_apply``, ``outputs.publish``).

The file is the one ``gradekit batch`` reads: ``overrides`` in the course configuration, else ``overrides.toml`` or
``overrides.csv`` beside it (``CourseConfig.overrides``); entries are keyed by the student's id. It is read when
the server starts (``load``); a file that cannot be used stops the start with the batch's message, which names the
file and its line or table. Each grading then gets its student's review (``grading.Plan.reviews``), and at the
start every graded submission gets the reviews of the file as it is now (``apply_all``): its report and results
rendered again when they change, and its recorded score, status and reason with them. The judge's grading itself
(``record.json``) is never changed, so that a review edited or taken out gives what a first grading with the file
as it is gives, as in the batch.

A review saved from the gradebook page is written into the same file (``reviewfile.save``), which is then read
again and applied at once (``replace``): the graded submissions of every student whose review the file now gives
differently are rendered and recorded again, with no restart. A later start reads the same file and gives the same.
"""

import json
import logging

from grader.batch import outputs, runner
from grader.batch import overrides as overrides_module
from grader.batch.judge import RECORD

log = logging.getLogger("gradekit.server")


def load(course, students, lang="en"):
    """``(Overrides, warnings)`` of the course's overrides file (an empty ``Overrides`` without one); ``students``:
    the roster's ids, for the warnings of entries that name none of them. ``OverrideError`` for a file that cannot
    be used, in ``lang``."""
    path = course.overrides
    if path is None:
        return overrides_module.Overrides(), []
    # Keyed as written, not by the roster's spelling: a student the roster gains later is reviewed too.
    reviews = overrides_module.load(path, lang=lang)
    named = {id(reviews.for_student(s)) for s in students}
    unknown = [o for o in reviews.values() if id(o) not in named]
    return reviews, overrides_module.Overrides(unknown=unknown).messages(lang)


def final_record(store, row, plan):
    """The final record of the graded submission ``row`` (the judge's record with its review applied), or ``None``
    when its grading folder holds no record."""
    try:
        record = json.loads((store.data / "gradings" / row.grading / RECORD).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return runner.reviews_apply(plan.reviews, record, plan.copy_policy, plan.lang)


def replace(store, plan, found):
    """Make ``found`` (the file's reviews, read again) ``plan``'s reviews, and apply them to the graded submissions
    of the students whose review they change (``apply_all``); how many submissions changed."""
    with plan.lock:  # no grading is recorded meanwhile with the reviews of before
        before, plan.reviews = plan.reviews, found
        return apply_all(store, plan, since=before)


def apply_all(store, plan, *, since=None):
    """Apply ``plan.reviews`` to every graded submission: its files rendered again where the review changed, and
    its recorded result updated (only while that grading still counts for it); how many changed. ``since``: the
    reviews applied before (an ``Overrides``): only the students whose review differs from theirs are looked at."""
    with plan.lock:
        return _apply(store, plan, since)


def _apply(store, plan, since):
    changed = 0
    for row in store.history():
        if row.status != "done" or not row.grading:
            continue
        if since is not None and since.for_student(row.student) == plan.reviews.for_student(row.student):
            continue
        final = final_record(store, row, plan)
        if final is None:
            continue
        folder = store.data / "gradings" / row.grading
        if _shown(folder) != (final.get("review"), final.get("score"), final.get("status")):
            outputs.publish(folder, final, lang=plan.lang, output_format=plan.output_format)
        result = (
            float(final.get("score") or 0.0),
            float(final.get("max_score") or 0.0),
            str(final.get("status") or ""),
            str(final.get("reason") or ""),
        )
        if result != (row.score, row.max_score, row.verdict, row.reason):
            changed += store.reviewed(row, *result)
    if changed:
        log.info("reviews: %d graded submission(s) changed", changed)
    return changed


def _shown(folder):
    """What the student's files in ``folder`` show of the review: ``(review, score, status)`` of its
    ``results.json``, or ``None`` when it cannot be read (then they are rendered again)."""
    try:
        data = json.loads((folder / "results.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return data.get("review"), data.get("gradebook_score"), data.get("status")
