"""What a student reads, rendered once from the grading and the instructor's review.

A student's grading is saved in their output folder by whoever graded it (``judge.save_grading``: ``grading.json``,
the ``GradeResult`` as plain data, then ``record.json``, the judge's record): a judge on this machine or on a Dask
worker, or the batch itself for a submission it could not grade. Once the review is known, ``publish`` renders
from that grading and the final record (``overrides.apply``: the record with the review applied) the three files
the student reads, ``results.json``, ``report.html`` and ``gradescope.json``, each whole (``render``). Every path
of the batch calls it, for every student: graded in this run, here or on Dask, cached from an earlier run, not
gradable, or graded before and only reviewed again. Nothing of a file already rendered goes into the next (it is
only compared, to leave an unchanged file alone), so a review changed or taken out gives the files that a first
run with those reviews gives.
"""

import json
from pathlib import Path

from grader.batch import overrides
from grader.batch.judge import atomic_write, load_grading
from grader.safetext import clean_data
from grader.views import gradescope, html, json_view

RENDERED = ("results.json", "report.html", "gradescope.json")
"""The files rendered for a student, each from the grading and the final record."""


def render(result, final, *, lang="en", output_format="md"):
    """``{file name: text}`` of ``RENDERED`` for ``result`` (a ``GradeResult``) as ``final`` grades it (the record
    with the review applied: status, reason, the gradebook's score, ``review``); ``output_format``: Gradescope's
    (``text``, ``md`` or ``html``)."""
    data = json_view.to_data(result, lang=lang)
    data.update(
        student=final["student"],
        status=final["status"],
        reason=final.get("reason", ""),
        flags=final.get("flags", {}),
        gradebook_score=final["score"],
    )
    if final.get("review"):
        data["review"] = final["review"]
    # The gradebook's score (after the copy policy and the review), said first and given to Gradescope.
    board = gradescope.to_data(result, lang=lang, output_format=output_format, score=final["score"])
    board["output"] = overrides.gradescope_output(board["output"], final, output_format, lang)
    return {
        "results.json": json.dumps(clean_data(data), ensure_ascii=False, indent=2) + "\n",
        "report.html": html.render(result, lang=lang, review=overrides.shown(final, lang)),
        "gradescope.json": json.dumps(board, ensure_ascii=False, indent=2, allow_nan=False) + "\n",
    }


def write(folder, result, final, *, lang="en", output_format="md"):
    """Write ``render``'s files into ``folder``, each atomically; a file whose text would not change is left as it
    is (a re-run touches only what changed)."""
    folder = Path(folder)
    for name, content in render(result, final, lang=lang, output_format=output_format).items():
        path = folder / name
        try:
            if path.read_bytes() == content.encode("utf-8"):
                continue
        except OSError:
            pass
        atomic_write(path, content)


def publish(folder, final, *, lang="en", output_format="md"):
    """Render a student's files in ``folder`` from the grading saved there and ``final``; ``False`` (and nothing
    written) when the folder holds no grading."""
    result = load_grading(folder)
    if result is None:
        return False
    write(folder, result, final, lang=lang, output_format=output_format)
    return True
