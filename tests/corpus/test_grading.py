"""The grader's verdicts on the reference, the skeleton, correct alternatives and buggy submissions."""

import pytest

from grader import api
from tests.conftest import ROOT, SUBMISSIONS, TOTAL_POINTS, TRANSFORMER


def scores(result):
    return {t.id: (t.score, t.max_score) for t in result.tasks}


@pytest.fixture(scope="module")
def solution_result():
    return api.check(path=ROOT / "solution", profile="quick")


def test_solution_gets_full_marks(solution_result):
    assert solution_result.score == solution_result.max_score == TOTAL_POINTS
    assert [t.id for t in solution_result.tasks] == list(TRANSFORMER.task_ids)
    assert not solution_result.banned_api and not solution_result.load_errors
    assert all(not c.diagnoses for t in solution_result.tasks for c in t.checks)


def test_skeleton_gets_zero_and_every_task_not_implemented():
    result = api.check(path=ROOT / "skeleton", profile="quick")
    assert result.score == 0 and result.max_score == TOTAL_POINTS
    assert all(t.not_implemented for t in result.tasks), [t.id for t in result.tasks if not t.not_implemented]
    for task in result.tasks:
        for c in task.checks:
            assert c.status == "error" and c.error["kind"] == "not_implemented"


def test_same_score_on_every_run(solution_result):
    sub = SUBMISSIONS / "alt_loops"
    first = api.check(path=sub, profile="quick", tasks=["sdpa", "mha", "greedy"])
    second = api.check(path=sub, profile="quick", tasks=["sdpa", "mha", "greedy"])
    assert scores(first) == scores(second)


# A representative set of buggy submissions, each written as an edit of the reference; the
# catalogue-wide mutation test (test_catalogue.py) covers every known bug.
BUGGY = {
    "scale_by_d_model": (
        "mha",
        {
            "attention.py": (
                "out, _ = scaled_dot_product_attention(q, k, v, mask, self.dropout)",
                "out, _ = scaled_dot_product_attention(q / 2, k, v, mask, self.dropout)",
            )
        },
    ),
    "softmax_over_queries": (
        "sdpa",
        {"attention.py": ("weights = scores.softmax(dim=-1)", "weights = scores.softmax(dim=1)")},
    ),
    "mask_fill_zero": (
        "sdpa",
        {"attention.py": ('scores.masked_fill(~mask, float("-inf"))', "scores.masked_fill(~mask, 0)")},
    ),
    "pe_cos_first": (
        "positional",
        {
            "embedding.py": [
                ("pe[:, 0::2] = torch.sin(angle)", "pe[:, 0::2] = torch.cos(angle)"),
                ("pe[:, 1::2] = torch.cos(angle)", "pe[:, 1::2] = torch.sin(angle)"),
            ]
        },
    ),
    "ln_unbiased": (
        "layernorm",
        {"norm.py": ("var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)", "var = x.var(dim=-1, keepdim=True)")},
    ),
    "causal_without_diagonal": ("masks", {"masks.py": (".tril()", ".tril(diagonal=-1)")}),
    "decoder_cross_attends_x": (
        "decoder_layer",
        {"layers.py": ("self.cross_attn(x, memory, memory, memory_mask)", "self.cross_attn(x, x, x, None)")},
    ),
    "greedy_first_position": ("greedy", {"decoding.py": ("hidden[:, -1]", "hidden[:, 0]")}),
    "no_zero_grad": ("training", {"training.py": ("    optimizer.zero_grad()\n", "")}),
    "count_without_norms": ("param_count", {"training.py": ("norm = 2 * D", "norm = D")}),
    "embedding_times_d": ("embedding", {"embedding.py": ("math.sqrt(self.d_model)", "self.d_model")}),
    "ffn_no_activation": (
        "feedforward",
        {"feedforward.py": ('h = F.relu(h) if self.activation == "relu" else F.gelu(h)', "h = h")},
    ),
}


@pytest.mark.parametrize("name", sorted(BUGGY))
def test_buggy_submission_loses_points_in_its_task(name, make_submission):
    task, edits = BUGGY[name]
    result = api.check(path=make_submission(edits), profile="quick", tasks=[task])
    ((score, max_score),) = scores(result).values()
    assert score < max_score, f"{name} kept full marks in {task}"


def test_three_bugs_lose_points_only_where_they_are_and_above(make_submission):
    edits = {}
    for name in ("mask_fill_zero", "ln_unbiased", "greedy_first_position"):
        edits.update(BUGGY[name][1])
    result = api.check(path=make_submission(edits), profile="quick")
    failing = {t for t, (s, m) in scores(result).items() if s < m}
    assert {"sdpa", "layernorm", "greedy"} <= failing
    # Integrated credit may drop above a bug, but nothing unrelated fails.
    bugs = {"sdpa", "layernorm", "greedy"}
    assert all(t in bugs or bugs & set(TRANSFORMER.all_deps(t)) for t in failing), failing
    for task in ("embedding", "positional", "feedforward", "masks", "param_count"):
        assert task not in failing
    # Charged once: the layer's own work is right over the reference's parts, so it keeps its points, and its
    # integrated check names the tasks beneath where the defects are (not mha, which fails only through sdpa).
    enc = next(t for t in result.tasks if t.id == "encoder_layer")
    assert enc.score == enc.max_score
    integrated = next(c for c in enc.checks if c.id == "encoder_layer.integrated")
    assert [n.key for n in integrated.notes] == ["note.charged_beneath"]
    assert set(integrated.notes[0].params["tasks"].split(", ")) == {"sdpa", "layernorm"}
    diagnosed = {d.id for t in result.tasks for c in t.checks for d in c.diagnoses}
    assert {"sdpa.fill_zero", "layernorm.unbiased_variance", "greedy.reads_first_position"} <= diagnosed


@pytest.mark.parametrize("name", ["alt_einsum", "alt_annotated", "alt_loops"])
def test_correct_alternatives_get_full_marks(name):
    result = api.check(path=SUBMISSIONS / name, profile="quick")
    assert scores(result) == {t: (m, m) for t, (_, m) in scores(result).items()}, [
        (c.id, c.message) for t in result.tasks for c in t.checks if c.status != "passed"
    ]
    assert all(not c.diagnoses for t in result.tasks for c in t.checks)


def test_functional_api_submission_passes_only_with_allow_banned():
    sub = SUBMISSIONS / "alt_functional"
    allowed = api.check(path=sub, profile="quick", allow_banned=True, tasks=["sdpa", "layernorm", "mha"])
    assert allowed.score == allowed.max_score
    strict = api.check(path=sub, profile="quick", tasks=["sdpa", "layernorm", "mha"])
    by_task = scores(strict)
    assert by_task["sdpa"][0] == 0 and by_task["layernorm"][0] == 0
    names = {f["name"] for f in strict.banned_api}
    assert {"torch.nn.functional.scaled_dot_product_attention", "torch.nn.functional.layer_norm"} <= names
    assert all(f["file"] and f["line"] > 0 for f in strict.banned_api)


LN_FORWARD = (
    """        mean = x.mean(dim=-1, keepdim=True)  # [..., 1]
        var = ((x - mean) ** 2).mean(dim=-1, keepdim=True)  # [..., 1], biased
        return (x - mean) / torch.sqrt(var + self.eps) * self.weight + self.bias  # [..., D]""",
    """        xf = x.float()  # statistics in float32, the result cast back
        mean = xf.mean(dim=-1, keepdim=True)
        var = ((xf - mean) ** 2).mean(dim=-1, keepdim=True){var}
        return ((xf - mean) / {denominator} * self.weight.float() + self.bias.float()).to(x.dtype)""",
)


@pytest.mark.parametrize(
    "variant, fails",
    [
        ({"var": "", "denominator": "torch.sqrt(var + self.eps)"}, False),  # correct, in float32 inside
        ({"var": " * x.shape[-1] / (x.shape[-1] - 1)", "denominator": "torch.sqrt(var + self.eps)"}, True),  # unbiased
        ({"var": "", "denominator": "(torch.sqrt(var) + self.eps)"}, True),  # eps outside the root
        ({"var": "", "denominator": "torch.sqrt(var + 1e-6)"}, True),  # another eps
    ],
)
def test_statistics_in_float32_are_compared_at_float32_precision(variant, fails, make_submission):
    """A LayerNorm that computes in float32 and casts back is correct (the contract says so): it gets full marks
    on the ill-conditioned inputs too, with a note; the same code with a mistake still fails."""
    find, replace = LN_FORWARD
    sub = make_submission({"norm.py": (find, replace.format(**variant))})
    result = api.check(path=sub, profile="full", tasks=["layernorm"], diagnose=False)
    failing = [c.id for t in result.tasks for c in t.checks if c.status != "passed"]
    if fails:
        assert "layernorm.equivalence" in failing, failing
    else:
        assert not failing and result.score == result.max_score
        notes = {n.key for t in result.tasks for c in t.checks for n in c.notes}
        assert "note.float32_inside" in notes


MERGE_HEADS = ("out = out.transpose(1, 2).contiguous().view(B, Lq, D)", "out = out.reshape(B, Lq, D)")


@pytest.mark.parametrize(
    "edit, contract_passes",
    [
        # a forward mistake: both ways of building the module are wrong alike, charged in the checks against the
        # reference
        (MERGE_HEADS, True),
        # a default mistake: the module built with dropout=0.1 spelled out is right, the one built without is not
        (
            (
                "def __init__(self, d_model, num_heads, dropout=0.1)",
                "def __init__(self, d_model, num_heads, dropout=0.0)",
            ),
            False,
        ),
    ],
)
def test_the_defaults_check_judges_the_defaults_only(edit, contract_passes, make_submission):
    """mha.contract compares the submission built without its optional arguments with the submission built with
    the contract's defaults spelled out: a forward mistake is not charged there a second time (it once was, and
    the diagnosis then appeared under the defaults check), a wrong default still is."""
    result = api.check(path=make_submission({"attention.py": edit}), profile="quick", tasks=["mha"])
    status = {c.id: c for t in result.tasks for c in t.checks}
    assert (status["mha.contract"].status == "passed") is contract_passes
    if contract_passes:
        assert status["mha.equivalence"].status == "failed"
        assert [d.id for d in status["mha.equivalence"].diagnoses] == ["mha.merge_without_transpose"]
    else:
        assert status["mha.contract"].message.key == "fail.defaults"
        assert status["mha.equivalence"].status == "passed"
