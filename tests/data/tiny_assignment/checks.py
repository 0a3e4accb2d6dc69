"""The tiny assignment's checks: they only ask for probes and compare plain results."""

import torch
from hypothesis import strategies as st

from grader.checks.base import check
from grader.checks.common import contract_params, equivalent, no_inplace, ref_state
from grader.checks.compare import check_tensor
from grader.checks.fail import Fail
from grader.probes import returned
from grader.strategies import randn, seeds


@st.composite
def matrix(draw):
    """Rows >= 2, so that a sum over the whole tensor differs from a sum over each row."""
    return {"rows": draw(st.integers(2, 4)), "cols": draw(st.integers(2, 6)), "seed": draw(seeds())}


@st.composite
def attend_case(draw):
    return {
        "batch": draw(st.integers(1, 3)),
        "n": draw(st.integers(2, 5)),
        "dim": draw(st.integers(2, 6)),
        "seed": draw(seeds()),
    }


def _softmax_out(ctx_result, what="stable_softmax"):
    if "out" not in ctx_result:
        raise Fail("fail.not_tensor", what=what, got=returned(ctx_result))
    return ctx_result["out"]


@check("softmax", "equivalence", points=2, given=matrix())
def softmax_equivalence(ctx, c):
    """Equals the reference on random inputs."""
    x = randn([c["rows"], c["cols"]], c["seed"], scale=30.0)
    ref, got = ctx.both("call", name="stable_softmax", args=[x])
    out = _softmax_out(got)
    no_inplace(got, "stable_softmax", {"config": c})
    check_tensor(out, ref["out"], what="stable_softmax", example={"config": c})


@check("softmax", "rows_sum_to_one", points=1, given=matrix())
def softmax_rows_sum(ctx, c):
    """Every row of the output sums to 1."""
    x = randn([c["rows"], c["cols"]], c["seed"], scale=5.0)
    out = _softmax_out(ctx.sub("call", name="stable_softmax", args=[x]))
    if list(out.shape) != list(x.shape):
        raise Fail(
            "fail.shape", what="stable_softmax", expected=list(x.shape), got=list(out.shape), example={"config": c}
        )
    sums = out.to(torch.float64).sum(dim=-1)
    bad = (sums - 1).abs() > 1e-6
    if bad.any():
        row = int(bad.nonzero()[0][0])
        raise Fail(
            "fail.tiny_rows_sum", what="stable_softmax", total=f"{float(sums[row]):.6g}", row=row, example={"config": c}
        )


@check("softmax", "shift_invariant", points=1, given=matrix())
def softmax_shift(ctx, c):
    """Adding 1000 to every entry changes nothing (the max shift keeps exp() finite)."""
    x = randn([c["rows"], c["cols"]], c["seed"])
    shift = 1000.0
    plain = _softmax_out(ctx.sub("call", name="stable_softmax", args=[x]))
    shifted = _softmax_out(ctx.sub("call", name="stable_softmax", args=[x + shift]))
    try:
        check_tensor(shifted, plain, what="stable_softmax(x + 1000)", example={"config": c})
    except Fail as fail:
        raise Fail(
            "fail.tiny_shift", what="stable_softmax", shift=shift, example=dict(fail.example, config=c, shift=shift)
        ) from None


@check("attend", "parameters", points=1)
def attend_parameters(ctx):
    """Attend(dim) has exactly one nn.Linear(dim, dim) named proj."""
    contract_params(ctx, "Attend", {"dim": 3})


@check("attend", "equivalence", points=3, variant="isolated", given=attend_case())
def attend_equivalence(ctx, c):
    """Attend's output equals the reference's (over the reference's softmax)."""
    kwargs = {"dim": c["dim"]}
    state = ref_state(ctx, "Attend", kwargs, c["seed"])
    x = randn([c["batch"], c["n"], c["dim"]], c["seed"] + 1)
    equivalent(ctx, name="Attend", kwargs=kwargs, state=state, inputs=[x], example={"config": c})
