"""A grading of some tasks (``--tasks``, ``--only``: what every printed rerun line runs) charges a defect where the
whole grading charges it: a check of a task built on a broken part that the whole grading passes over the
reference's parts (its defect charged beneath) passes when graded alone too, with the same note; one the whole
grading charges stays charged. In the full kit and in a student kit (the answer bank: not judged where the whole kit
run leaves it so).

Found from outside: a student kit printed, under a check it left unjudged, a rerun line whose run failed it, and
``--tasks model`` charged model for a broken attention that the whole grading charges to sdpa alone."""

import pytest

from grader import api, kit
from grader.assignment import load
from grader.bugs.catalogue import Catalogue

A = load("transformer")
BUG = "sdpa.softmax_wrong_axis"
"""A mistake in sdpa, beneath mha, the layers, the model, greedy decoding and the overfitting run."""
SUBSETS = (
    {"tasks": ["model"]},
    {"only": ["mha.integrated"]},
    {"only": ["encoder_layer.integrated", "greedy.scripted"]},
    {"only": ["overfit.ten_samples"]},
)


@pytest.fixture(scope="module")
def mutant(tmp_path_factory):
    catalogue = Catalogue(A)
    return catalogue.write_mutant(catalogue.by_id[BUG], tmp_path_factory.mktemp("mutant"))


def _checks(result):
    return {c.id: c for t in result.tasks for c in t.checks}


def _grade(path, **options):
    return api.check(path=path, assignment=A, profile="quick", diagnose=False, **options)


@pytest.fixture(scope="module")
def whole(mutant):
    return _checks(_grade(mutant))


@pytest.mark.parametrize("subset", SUBSETS, ids=lambda s: ",".join(s.get("tasks") or s.get("only")))
def test_a_subset_charges_as_the_whole_grading(mutant, whole, subset):
    part = _checks(_grade(mutant, **subset))
    assert part, subset
    for cid, c in part.items():
        w = whole[cid]
        assert (c.status, c.score) == (w.status, w.score), (cid, c.status, w.status)
        assert [n.key for n in c.notes] == [n.key for n in w.notes], cid
    # the premise: some check here fails over the submission's own parts and is charged beneath
    assert any(n.key in ("note.charged_beneath", "note.charged_beneath_whole") for c in part.values() for n in c.notes)


def test_the_other_direction_a_defect_of_the_task_itself_stays_charged(tmp_path):
    """A mistake in mha itself: ``--only mha.integrated`` still fails it, as the whole grading does."""
    catalogue = Catalogue(A)
    mha_bug = next(b for b in catalogue.by_id.values() if b.task == "mha")
    folder = catalogue.write_mutant(mha_bug, tmp_path / "mha")
    whole = _checks(_grade(folder, tasks=["sdpa", "mha"]))
    alone = _checks(_grade(folder, only=["mha.integrated"]))
    assert whole["mha.integrated"].status == alone["mha.integrated"].status == "failed", mha_bug.id


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    return kit.record(A, [A.reference], profiles=("quick",), tasks=["sdpa", "mha", "encoder_layer"]).save(
        tmp_path_factory.mktemp("bank") / "answers.bank"
    )


def test_in_a_student_kit_a_subset_judges_as_its_whole_grading(mutant, bank):
    whole = _checks(_grade(mutant, tasks=["sdpa", "mha", "encoder_layer"], bank=str(bank)))
    for only in (["mha.integrated"], ["encoder_layer.integrated"]):
        part = _checks(_grade(mutant, only=only, bank=str(bank)))
        for cid, c in part.items():
            assert (c.status, c.score) == (whole[cid].status, whole[cid].score), (cid, c.status, whole[cid].status)
