"""The decoder-only LM's overfit check (task ``overfit``): the whole submission learns ten poems and recites them.

Both directions: the reference and the blind corpus's correct submissions (written elsewhere, in other styles)
pass; a mistake that keeps the whole from learning fails with the reason (the loss, a NaN, the recital), and the
task says which tasks beneath fail.
"""

import shutil
from pathlib import Path

import pytest

from assignments.decoder_lm.checks.overfit import LOSS_TARGET, overfit_poems
from grader import api
from grader.assignment import load
from grader.bugs.catalogue import Catalogue, apply

ROOT = Path(__file__).resolve().parents[2]
LM = ROOT / "assignments" / "decoder_lm"
BLIND = ROOT / "tests" / "blind_lm"


def overfit(path):
    r = api.check(path=str(path), assignment="decoder_lm", profile="quick", tasks=["overfit"])
    (task,) = r.tasks
    (c,) = task.checks
    return task, c


def overfit_run(path):
    """The overfit check's own run over the submission's code, before the grading charges anything beneath (what
    its failure says, where it fails)."""
    from grader.engine import Grading, run_one, select_checks
    from grader.submission.inprocess import InProcessRunner, reference_namespace

    a = load("decoder_lm")
    ns = reference_namespace(a)
    ref = InProcessRunner(ns.root, assignment=a, banned=(), namespace=ns)
    sub = InProcessRunner(path, assignment=a, banned=())
    try:
        (spec,) = select_checks(a, tasks=["overfit"], profile="quick")
        return run_one(Grading(a, sub, ref, profile="quick", devices=["cpu"]), spec)[0]
    finally:
        sub.close()
        ref.close()


BUGS = {b.id: b for b in Catalogue(load("decoder_lm")).bugs}
STEEP = ("        return max_lr * (step + 1) / warmup_steps", "        return 1e6 * max_lr * (step + 1) / warmup_steps")


def edited(tmp_path, bug):
    """A copy of the reference with a catalogued ``bug`` (an id) or a ``(file, (old, new))`` edit."""
    folder = tmp_path / "sub"
    shutil.copytree(LM / "reference", folder, ignore=shutil.ignore_patterns("__pycache__"))
    if isinstance(bug, str):
        b = BUGS[bug]
        path = folder / b.file
        path.write_text(apply(b, path.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        file, (old, new) = bug
        source = (folder / file).read_text(encoding="utf-8")
        assert source.count(old) == 1, old
        (folder / file).write_text(source.replace(old, new), encoding="utf-8")
    return folder


def test_ten_short_poems_each_told_by_its_first_character():
    poems = overfit_poems()
    assert len(poems) == 10 and len({p[0] for p in poems}) == 10 and all(len(p) <= 24 for p in poems)


def test_the_reference_learns_and_recites_with_a_margin():
    _, c = overfit(LM / "reference")
    assert c.status == "passed", c.message
    curve = c.artifacts["loss_curve"]
    assert curve[0] > 4.5 and curve[-1] < LOSS_TARGET * 0.6, (curve[0], curve[-1])


@pytest.mark.parametrize("folder", ["correct/complex_rope", "correct/fused_qkv", "bugs/bases/W2"])
def test_correct_submissions_written_elsewhere_pass(folder):
    _, c = overfit(BLIND / folder)
    assert c.status == "passed", c.message


@pytest.mark.parametrize(
    "bug, key, beneath, mended",
    [
        # AdamW with the decay through the gradient (Adam + L2): no longer learns in time
        ("adamw.l2_not_decoupled", "fail.lm_overfit_loss", "adamw", False),
        # targets not shifted: the model learns to copy its input, a near-zero loss that recites nothing; graded with
        # the task beneath, overfit runs again over the reference's parts beneath train_step (which passes over the
        # reference's loss) and keeps its points: the defect is charged in loss alone
        ("loss.not_shifted", "fail.lm_overfit_recite", "loss", True),
        # a schedule a million times too steep: the loss overflows, and the step where it did is named
        (("optim.py", STEEP), "fail.lm_overfit_nonfinite", "schedule", False),
    ],
)
def test_a_mistake_that_keeps_the_whole_from_learning_fails_with_its_reason(bug, key, beneath, mended, tmp_path):
    folder = edited(tmp_path, bug)
    c = overfit_run(folder)
    assert c.status == "failed" and c.message.key == key, (c.status, c.message)
    assert c.artifacts["loss_curve"], "the loss curve is drawn for a failure too"
    # graded with the task beneath, and graded alone (the task beneath then graded unreported), alike
    for tasks in (["overfit", beneath], ["overfit"]):
        r = api.check(path=str(folder), assignment="decoder_lm", profile="quick", tasks=tasks)
        task = {t.id: t for t in r.tasks}["overfit"]
        (check,) = task.checks
        if mended:
            assert check.status == "passed", (tasks, check.message)
            notes = {n.key: n.params for n in check.notes}
            assert beneath in notes["note.charged_beneath_whole"]["tasks"].split(", "), notes
        else:
            assert check.status == "failed" and check.message.key == key, (tasks, check.status, check.message)
            if beneath in tasks:
                assert beneath in task.blocked_by, (task.blocked_by, [(t.id, t.score) for t in r.tasks])
