"""Checks for ``LayerNorm`` (task ``layernorm``)."""

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import (
    Case,
    Fail,
    check,
    contract_params,
    defaults_agree,
    equivalent,
    float32_close,
    low_precision,
    meta_runs,
    phrase,
    randn,
    ref_state,
    seeds,
    shown_example,
)


@dataclass(frozen=True)
class LnCase(Case):
    """One example of LayerNorm."""

    shape: list
    """The input's shape: leading dimensions, then ``D``."""
    D: int
    """The normalised dimension (d_model)."""
    eps: float
    """LayerNorm's eps."""
    scale: float
    """Scale of the input's entries."""
    offset: float
    """Offset added to the input's entries."""
    seed: int
    """Seed of the input and of the parameters."""


@st.composite
def ln_case(draw):
    lead = draw(st.lists(st.integers(1, 5), min_size=1, max_size=3))
    D = draw(st.integers(2, 10).filter(lambda d: d not in lead))
    eps = draw(st.sampled_from([1e-5, 1e-3, 0.1]))
    scale = draw(st.sampled_from([0.01, 1.0, 50.0]))
    offset = draw(st.sampled_from([0.0, 3.0]))
    return LnCase(shape=lead + [D], D=D, eps=eps, scale=scale, offset=offset, seed=draw(seeds()))


def setup(ctx, c):
    kw = {"d_model": c.D, "eps": c.eps}
    x = randn(c.shape, c.seed, scale=c.scale) + c.offset
    ex = shown_example(dict(kw, input_scale=c.scale, input_offset=c.offset), x=c.shape)
    return kw, ref_state(ctx, "LayerNorm", kw, c.seed), [x], ex


@check("layernorm", "contract", points=2, examples=(1, 1))
def contract(ctx):
    """Parameters weight (ones) and bias (zeros) of shape [D]."""
    kw = {"d_model": 7}
    got = contract_params(ctx, "LayerNorm", kw)
    w, b = got["values"]["weight"], got["values"]["bias"]
    if not (torch.all(w == 1) and torch.all(b == 0)):
        raise Fail("fail.ln_init", example={"config": kw})
    # the default eps is 1e-5: on inputs of tiny variance a default of 1e-6 or 1e-12 gives another output
    defaults_agree(
        ctx, name="LayerNorm", required=kw, inputs=[randn([2, 3, 7], 11, scale=1e-3)], given=("d_model", "eps")
    )


@check("layernorm", "equivalence", points=6, examples=(5, 40), given=ln_case())
def equivalence(ctx, c):
    """Equals F.layer_norm over the last dimension: biased variance, eps inside the square root."""
    kw, state, inputs, ex = setup(ctx, c)
    equivalent(
        ctx,
        name="LayerNorm",
        kwargs=kw,
        state=state,
        inputs=inputs,
        what=phrase("what.output", name="LayerNorm"),
        example=ex,
    )


@check("layernorm", "devices", points=2, examples=(1, 5), given=ln_case().filter(lambda c: c.scale == 1.0))
def devices(ctx, c):
    """Runs in float32 on each device, float16, bfloat16 and on the meta device."""
    kw, state, inputs, ex = setup(ctx, c)
    float32_close(ctx, name="LayerNorm", kwargs=kw, state=state, inputs=inputs, example=ex)
    low_precision(ctx, name="LayerNorm", kwargs=kw, state=state, inputs=inputs, example=ex)
    meta_runs(ctx, name="LayerNorm", kwargs=kw, inputs=inputs, expected_shape=c.shape, example=ex)
