"""Checks for ``SwiGLU`` (task ``swiglu``)."""

from dataclasses import dataclass

import torch
import torch.nn.functional as F
from hypothesis import strategies as st

from assignments.decoder_lm.checks.modules_common import half_close
from grader.author import (
    MISMATCH,
    Case,
    Fail,
    check,
    contract_params,
    distinct_ints,
    equivalent,
    float32_close,
    meta_runs,
    phrase,
    randn,
    ref_state,
    seeds,
    shown_example,
)

NAME = "SwiGLU"


@dataclass(frozen=True)
class SwigluCase(Case):
    """One example of SwiGLU."""

    shape: list
    """The input's shape: leading dimensions, then ``D``."""
    D: int
    """Model dimension."""
    F: int
    """Hidden size."""
    seed: int
    """Seed of the parameters (the input's is ``seed + 1``)."""


@st.composite
def swiglu_case(draw):
    D, F_ = draw(distinct_ints(2, min_value=2, max_value=9))
    lead = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    return SwigluCase(shape=lead + [D], D=D, F=F_, seed=draw(seeds()))


def setup(ctx, c):
    kw = {"dim": c.D, "hidden_dim": c.F}
    return kw, ref_state(ctx, NAME, kw, c.seed), [randn(c.shape, c.seed + 1)], shown_example(kw, x=c.shape)


@check("swiglu", "contract", points=1, examples=(1, 1))
def contract(ctx):
    """gate_proj and up_proj are Linear(D, F), down_proj is Linear(F, D), none with a bias."""
    contract_params(ctx, NAME, {"dim": 6, "hidden_dim": 10})


@check("swiglu", "equivalence", points=4, examples=(4, 30), given=swiglu_case())
def equivalence(ctx, c):
    """Equals down_proj(silu(gate_proj(x)) * up_proj(x)); says so when gate and up are swapped."""
    kw, state, inputs, ex = setup(ctx, c)
    try:
        equivalent(
            ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, what=phrase("what.output", name="SwiGLU"), example=ex
        )
    except Fail as fail:
        if fail.key in MISMATCH:
            got = ctx.sub("forward", name=NAME, kwargs=kw, state=state, inputs=inputs)["out"]
            x = inputs[0]
            swapped = (F.silu(x @ state["up_proj.weight"].T) * (x @ state["gate_proj.weight"].T)) @ state[
                "down_proj.weight"
            ].T
            if torch.allclose(got.double(), swapped, atol=1e-6, rtol=1e-5):
                raise Fail("fail.lm_swiglu_swapped", example=ex) from None
        raise


@check("swiglu", "devices", points=1, examples=(1, 5), given=swiglu_case())
def devices(ctx, c):
    """float32 on each device, float16 close to the reference, bfloat16 finite, and the meta device."""
    kw, state, inputs, ex = setup(ctx, c)
    float32_close(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, example=ex)
    half_close(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, example=ex)
    meta_runs(ctx, name=NAME, kwargs=kw, inputs=inputs, expected_shape=c.shape, example=ex)
