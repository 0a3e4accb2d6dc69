"""A defect is charged once, in its own task: ``overfit`` (the whole learning 10 samples) is graded again over the
reference's parts for the failing tasks beneath it, and keeps its points when the submission's whole learns with
them; a defect that is the whole's own, or in a part ``overfit`` builds on directly, still costs it.

The base is an independently written correct submission (tests/blind/correct/internal_attention: its
``MultiHeadAttention`` computes attention itself, not through ``scaled_dot_product_attention``); the mistake is a
masking helper that both share, which blocks scores with 0 instead of ``-inf``."""

import shutil
from pathlib import Path

import pytest

from grader import api

BASE = Path(__file__).resolve().parents[1] / "blind" / "correct" / "internal_attention"

SHARED_HELPER = [
    (
        "attention.py",
        "def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):",
        "def _blocked(scores, mask):\n    return scores.masked_fill(~mask.bool(), 0.0)\n\n\n"
        "def scaled_dot_product_attention(query, key, value, mask=None, dropout=None):",
    ),
    (
        "attention.py",
        '        scores = scores.masked_fill(~mask, float("-inf"))',
        "        scores = _blocked(scores, mask)",
    ),
    (
        "attention.py",
        '            scores = scores.masked_fill(mask == False, float("-inf"))  # noqa: E712',
        "            scores = _blocked(scores, mask)",
    ),
]
NO_STEP = [("training.py", "    optimizer.step()\n", "")]


def _submission(tmp_path, edits):
    dest = tmp_path / "sub"
    shutil.copytree(BASE, dest)
    for file, old, new in edits:
        path = dest / file
        text = path.read_text(encoding="utf-8")
        assert text.count(old) == 1, old
        path.write_text(text.replace(old, new), encoding="utf-8")
    return dest


def _checks(result):
    return {c.id: c for t in result.tasks for c in t.checks}


@pytest.mark.parametrize("sealed", [False, True], ids=["in_process", "sealed"])
def test_a_defect_beneath_is_not_charged_again_in_overfit(tmp_path, sealed):
    result = api.check(path=_submission(tmp_path, SHARED_HELPER), profile="quick", sealed=sealed, diagnose=False)
    checks = _checks(result)
    failed = {k for k, c in checks.items() if c.status != "passed"}
    assert {t.split(".")[0] for t in failed} == {"sdpa", "mha"}, sorted(failed)
    overfit = checks["overfit.ten_samples"]
    notes = {n.key: n.params for n in overfit.notes}
    assert "note.charged_beneath_whole" in notes, notes
    assert set(notes["note.charged_beneath_whole"]["tasks"].split(", ")) == {"sdpa", "mha"}
    assert "note.partly_isolated" not in notes  # its own code was graded: nothing to say about that


def test_a_whole_that_does_not_learn_with_the_reference_parts_still_loses_overfit(tmp_path):
    """No optimizer.step(): train_step's own defect, which overfit builds on directly: overfit cannot be graded
    without it and stays charged (saying that a task beneath fails)."""
    result = api.check(path=_submission(tmp_path, SHARED_HELPER + NO_STEP), profile="quick", diagnose=False)
    checks = _checks(result)
    assert checks["training.train_step"].status != "passed"
    assert checks["overfit.ten_samples"].status != "passed"
    assert not any(n.key == "note.charged_beneath_whole" for n in checks["overfit.ten_samples"].notes)
