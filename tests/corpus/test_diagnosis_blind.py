"""Diagnoses that hold on mistakes written by others: the blind bug set in tests/blind_bugs.

108 buggy submissions, each one file of an independent writer's correct implementation with one mistake: 96 written
from a plain description, 12 (base W4, m097-m108) chosen by their writer as mistakes students commonly make; the
writers never saw the catalogue, grader/bugs/ or the reference. Each is labelled
with the catalogue id a teacher would name ("none" where the catalogue has no such bug). A wrong name sends a
student to fix code that is right, so no case may be given a name other than its label; the share named right
is measured by bench/bench_diagnosis.py (not asserted here, beyond the cases listed below).

Each case is graded once per session (``_graded``), and its verdicts (scores and names) are compared exactly with
``tests/golden/blind_bugs.json`` (``tests/golden.py``): a change in any of them shows as a diff in review.
"""

import functools
import json
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench"))

from bench_diagnosis import CORPUS, DATA, named, verdict  # noqa: E402
from bench_diagnosis import grade_case as _grade_case  # noqa: E402

from tests import golden  # noqa: E402

CASES = json.loads((DATA / "labels.json").read_text(encoding="utf-8"))
BY_KEY = {c["key"]: c for c in CASES}


@functools.cache
def _graded(key):
    return _grade_case(BY_KEY[key])


def grade_case(case):
    """The case's grading, made once per session (the tests below read it again)."""
    return _graded(case["key"])


@pytest.mark.parametrize("key", [c["key"] for c in CASES])
def test_verdicts_as_reviewed_and_no_wrong_name(key):
    case = BY_KEY[key]
    result, _ = grade_case(case)
    found = named(result)
    golden.check(CORPUS, key, golden.verdicts(result))
    assert verdict(case, found) != "wrong", (case["description"], found)


def test_the_golden_file_holds_every_case_and_no_other():
    if golden.UPDATE:
        pytest.skip("the records are being rewritten")
    assert golden.keys(CORPUS) == set(BY_KEY)


def _first(label):
    return next(c["key"] for c in CASES if c["label"] == label or c.get("label2") == label)


@pytest.mark.parametrize(
    "key",
    [
        "m095",  # a causal mask that blocks the diagonal (catalogued spelling)
        "m032",  # ... and one that keeps position 0 visible: the same mistake in another spelling
        "m064",  # a parameter count missing only the attention biases
        "m030",  # an assert instead of the contract's ValueError
        "m029",  # one final LayerNorm counted instead of two
        "m002",  # two mistakes in one LayerNorm (unbiased variance, eps outside the root), named together
        "m017",  # a summed loss... with smoothing ignored: two mistakes of sequence_loss
        "m096",  # greedy that neither stops early nor pads after EOS
        "m105",  # padding that adds no loss but still counts in the mean (not the padding counted as targets)
    ],
)
def test_variants_are_named(key):
    case = BY_KEY[key]
    found = named(grade_case(case)[0])
    assert verdict(case, found) == "right", (case["description"], found)


def test_a_noam_schedule_without_the_d_model_factor_is_named_so_not_a_warm_up_power():
    """Both mistakes change the rate by a factor; only the one in the code is named."""
    case = BY_KEY["m008"]
    assert case["label"] == "training.noam_no_d_model_factor"
    found = named(grade_case(case)[0])
    assert {n for ids in found.values() for n in ids} == {"training.noam_no_d_model_factor"}


def test_two_mistakes_that_explain_a_small_example_alike_are_settled_by_the_task_or_not_named():
    for key in ("m014", "m081"):  # two mask mistakes that agree on the shrunk target-mask example
        case = BY_KEY[key]
        found = named(grade_case(case)[0])
        assert verdict(case, found) != "wrong", (key, found)


def test_a_mask_bug_is_charged_to_masks_and_greedy_keeps_its_points():
    case = BY_KEY["m095"]  # a causal mask that blocks the diagonal; decoding.py is correct
    assert case["file"] == "masks.py"
    result, _ = grade_case(case)
    tasks = {t.id: t for t in result.tasks}
    greedy = tasks["greedy"]
    assert greedy.score == greedy.max_score
    assert not any(d.kind == "bug" for c in greedy.checks for d in c.diagnoses)
    assert any(n.key == "note.charged_beneath" and "masks" in n.params["tasks"] for c in greedy.checks for n in c.notes)
    assert tasks["masks"].score < tasks["masks"].max_score


def test_errors_compare_by_kind_and_meaning_not_by_their_first_words():
    from grader.bugs.diagnose import same
    from grader.errors import SubmissionError

    def contract(missing):
        return SubmissionError(
            kind="contract",
            detail="the parameters of X do not match the contract",
            data={"missing": missing, "unexpected": [], "wrong_shape": [], "shared": []},
        )

    # every parameter mismatch starts with the same words; what differs is what is missing
    assert not same(contract(["norm.weight", "norm.bias"]), contract(["w_q.bias"]))
    assert same(contract(["w_q.bias"]), contract(["w_q.bias"]))
    a = SubmissionError(kind="exception", detail="RuntimeError: The size of tensor a (4) must match (b.py:3: x)")
    b = SubmissionError(kind="exception", detail="RuntimeError: The size of tensor a (4) must match (c.py:9: y)")
    c = SubmissionError(kind="exception", detail="RuntimeError: shape '[2, 3]' is invalid for input of size 5")
    assert same(a, b)  # the same error raised elsewhere
    assert not same(a, c)  # the same type, another meaning


def test_a_partner_only_one_check_pairs_a_mistake_with_is_not_named(tmp_path):
    """A softmax over the queries with a finite fill (allowed): the masked check's calls are reproduced only by the
    pair "wrong axis + blocked scores set to 0", the other checks' by the wrong axis alone. The fill mistake is
    not in the code and is not named (it once was, on sdpa.weights); the wrong axis is named everywhere."""
    from grader import api
    from tests.conftest import SUBMISSIONS

    sub = tmp_path / "sub"
    shutil.copytree(SUBMISSIONS / "alt_einsum", sub, ignore=shutil.ignore_patterns("__pycache__"))
    source = (sub / "attention.py").read_text(encoding="utf-8")
    assert source.count("torch.softmax(scores, dim=-1)") == 1
    (sub / "attention.py").write_text(
        source.replace("torch.softmax(scores, dim=-1)", "torch.softmax(scores, dim=-2)"), encoding="utf-8"
    )
    result = api.check(path=sub, profile="quick", tasks=["sdpa"])
    named = {
        c.id: [d.id for d in c.diagnoses if d.kind == "bug"]
        for t in result.tasks
        for c in t.checks
        if c.status == "failed"
    }
    assert "sdpa.weights" in named and len(named) >= 2, named
    assert all(ids == ["sdpa.softmax_wrong_axis"] for ids in named.values()), named
