"""The evidence audit (``tests/evidence.py``, run on every failure graded in the suite) tells a failure that shows
what it saw from one that does not, and the value comparison always shows the values it compared."""

import pytest
import torch

from grader.checks.base import Fail
from grader.checks.compare import check_tensor
from grader.messages import render
from grader.results import Message
from tests.evidence import evidence_gaps


def _fail(expected, got):
    with pytest.raises(Fail) as info:
        check_tensor(got, expected, what="out", dtype="float64", example={})
    return Message(info.value.key, dict(info.value.params))


def test_a_failure_with_its_evidence_has_no_gap():
    message = _fail(
        torch.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=torch.float64),
        torch.tensor([[1.0, 2.0], [3.5, 4.0]], dtype=torch.float64),
    )
    assert message.key == "fail.mismatch" and evidence_gaps(message) == []
    said = render(message)
    assert "index [1, 0] (where yours is 3.5)" in said and "expected 3" not in said  # never the reference's value


@pytest.mark.parametrize(
    ("message", "gap"),
    [
        (
            Message("fail.param_names", {"what": "Transformer", "missing": [], "unexpected": [], "wrong_shape": []}),
            "every one is empty",
        ),
        (
            Message(
                "fail.mismatch",
                {"what": "out", "index": [0], "count": 1, "total": 4, "max_abs": "", "max_rel": "1", "got_at": "2"},
            ),
            "{max_abs} empty",
        ),
        (
            Message("fail.mismatch", {"what": "out", "index": [0], "count": 1, "total": 4, "max_abs": "1"}),
            "did not give",
        ),
        (Message("fail.no_such_sentence", {}), "no en sentence"),
    ],
)
def test_a_failure_that_cannot_show_what_it_saw_is_flagged(message, gap):
    assert any(gap in g for g in evidence_gaps(message)), evidence_gaps(message)


def test_one_empty_list_beside_a_full_one_reads_none_in_both_languages():
    message = Message(
        "fail.param_names",
        {"what": "Transformer", "missing": [], "unexpected": [], "wrong_shape": ["w: [4, 8] (expected [8, 4])"]},
    )
    assert evidence_gaps(message) == []
    assert "Missing: none." in render(message, "en") and "缺少：无。" in render(message, "zh")


def test_where_every_differing_entry_expects_zero_no_relative_error_is_claimed():
    message = _fail(torch.zeros(3, dtype=torch.float64), torch.tensor([0.0, 2e-3, 0.0], dtype=torch.float64))
    assert message.key == "fail.mismatch_abs" and "max_rel" not in message.params and evidence_gaps(message) == []
    assert "got 0.002" in render(message) and "rel" not in render(message)


def test_a_scalar_says_the_value_it_got_and_how_far_off_it_is():
    message = _fail(torch.tensor(2.5, dtype=torch.float64), torch.tensor(2.75, dtype=torch.float64))
    assert message.key == "fail.mismatch_value" and evidence_gaps(message) == []
    assert render(message) == "out is 2.75, 0.25 away from the expected value."
    assert render(message, "zh") == "out 是 2.75，与期望值相差 0.25。"
