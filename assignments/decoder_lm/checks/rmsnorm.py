"""Checks for ``RMSNorm`` (task ``rmsnorm``)."""

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from assignments.decoder_lm.checks.modules_common import half_close
from grader.author import (
    Case,
    Fail,
    check,
    check_tensor,
    contract_params,
    defaults_agree,
    equivalent,
    float32_close,
    meta_runs,
    phrase,
    randn,
    ref_state,
    seeds,
    shown_example,
)

NAME = "RMSNorm"


@dataclass(frozen=True)
class RmsCase(Case):
    """One example of RMSNorm."""

    shape: list
    """The input's shape: leading dimensions, then ``D``."""
    D: int
    """The normalised dimension."""
    eps: float
    """RMSNorm's eps."""
    scale: float
    """Scale of the input's entries."""
    offset: float
    """Offset added to the input's entries."""
    seed: int
    """Seed of the input and of the weight."""


@st.composite
def rms_case(draw):
    lead = draw(st.lists(st.integers(1, 4), min_size=1, max_size=3))
    D = draw(st.integers(2, 9).filter(lambda d: d not in lead))
    eps = draw(st.sampled_from([1e-6, 1e-3, 0.1]))
    scale = draw(st.sampled_from([0.01, 1.0, 50.0]))
    return RmsCase(
        shape=lead + [D], D=D, eps=eps, scale=scale, offset=draw(st.sampled_from([0.0, 3.0])), seed=draw(seeds())
    )


@dataclass(frozen=True)
class ScaleCase(Case):
    """An input of RMSNorm, and a factor to scale it by."""

    D: int
    """The normalised dimension."""
    alpha: float
    """The factor."""
    seed: int
    """Seed of the input and of the weight."""


def setup(ctx, c):
    kw = {"dim": c.D, "eps": c.eps}
    x = randn(c.shape, c.seed, scale=c.scale) + c.offset
    ex = shown_example(dict(kw, input_scale=c.scale, input_offset=c.offset), x=c.shape)
    return kw, ref_state(ctx, NAME, kw, c.seed), [x], ex


@check("rmsnorm", "contract", points=1, examples=(1, 1))
def contract(ctx):
    """One parameter, weight of shape [D], starting at ones; no bias; eps defaults to 1e-6."""
    kw = {"dim": 7}
    got = contract_params(ctx, NAME, kw)
    if not torch.all(got["values"]["weight"] == 1):
        raise Fail("fail.lm_rms_init", example={"config": kw})
    # inputs of mean square 1e-6: a default eps of 1e-5 or 1e-8 gives another output
    defaults_agree(ctx, name=NAME, required=kw, inputs=[randn([2, 3, 7], 11, scale=1e-3)], given=("dim", "eps"))


@check("rmsnorm", "equivalence", points=4, examples=(5, 40), given=rms_case())
def equivalence(ctx, c):
    """Equals the reference: x / sqrt(mean(x^2) + eps) * weight over the last dimension."""
    kw, state, inputs, ex = setup(ctx, c)
    equivalent(
        ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, what=phrase("what.output", name="RMSNorm"), example=ex
    )


def _formula(x, w, eps, *, centre=False, eps_outside=False):
    """RMSNorm's output, or the output of a known departure from it (``centre``: the mean subtracted first;
    ``eps_outside``: x / (sqrt(mean(x^2)) + eps))."""
    if centre:
        x = x - x.mean(-1, keepdim=True)
    ms = x.pow(2).mean(-1, keepdim=True)
    return x / (ms.sqrt() + eps if eps_outside else (ms + eps).sqrt()) * w


@check("rmsnorm", "formula", points=2, examples=(1, 1))
def formula(ctx):
    """No mean is subtracted (inputs far from zero mean) and eps sits inside the square root (tiny inputs, large
    eps)."""
    for case, departure in (
        ({"D": 6, "eps": 1e-6, "scale": 0.3, "offset": 4.0}, "centre"),
        ({"D": 5, "eps": 0.05, "scale": 0.02, "offset": 0.0}, "eps_outside"),
    ):
        kw = {"dim": case["D"], "eps": case["eps"]}
        shape = [3, 4, case["D"]]
        x = randn(shape, 5, scale=case["scale"]) + case["offset"]
        state = ref_state(ctx, NAME, kw, 5)
        ex = shown_example(dict(kw, input_scale=case["scale"], input_offset=case["offset"]), x=shape)
        ref, got = ctx.both("forward", name=NAME, kwargs=kw, state=state, inputs=[x])
        try:
            check_tensor(got["out"], ref["out"], what=phrase("what.output", name="RMSNorm"), example=ex)
        except Fail:
            wrong = _formula(x, state["weight"], case["eps"], **{departure: True})
            if got["out"].shape == wrong.shape and torch.allclose(got["out"].double(), wrong, atol=1e-6, rtol=1e-5):
                raise Fail(
                    "fail.lm_rms_centred" if departure == "centre" else "fail.lm_rms_eps_outside", example=ex
                ) from None
            raise


@check(
    "rmsnorm",
    "scale_invariance",
    points=1,
    examples=(3, 20),
    given=st.fixed_dictionaries(
        {"D": st.integers(2, 9), "alpha": st.sampled_from([0.25, 3.0, 80.0]), "seed": seeds()}
    ).map(lambda d: ScaleCase(**d)),
)
def scale_invariance(ctx, c):
    """RMSNorm(a x) = RMSNorm(x) for a > 0 (eps = 1e-12, so that eps changes nothing at the tolerance)."""
    kw = {"dim": c.D, "eps": 1e-12}
    x = randn([2, 3, c.D], c.seed)
    state = ref_state(ctx, NAME, kw, c.seed)
    ex = shown_example(dict(kw, factor=c.alpha), x=[2, 3, c.D])
    a = ctx.sub("forward", name=NAME, kwargs=kw, state=state, inputs=[x])["out"]
    b = ctx.sub("forward", name=NAME, kwargs=kw, state=state, inputs=[x * c.alpha])["out"]
    # the float64 tolerance of an equivalence: a float32 computation inside (allowed) rounds differently per scale
    if a.shape != b.shape or not torch.allclose(a, b, atol=1e-5, rtol=1e-5):
        raise Fail("fail.lm_rms_scale", what=NAME, factor=c.alpha, example=ex)


@check("rmsnorm", "devices", points=1, examples=(1, 5), given=rms_case().filter(lambda c: c.scale == 1.0))
def devices(ctx, c):
    """float32 on each device, float16 and bfloat16 (every row reaches +-300, whose square overflows float16: mean
    squares taken in float16 give inf), meta."""
    kw, state, inputs, ex = setup(ctx, c)
    float32_close(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, example=ex)
    x = randn(c.shape, c.seed, scale=150.0)
    big = [x * (300.0 / x.abs().amax(-1, keepdim=True))]
    half_close(
        ctx,
        name=NAME,
        kwargs=kw,
        state=state,
        inputs=big,
        example=dict(ex, config=dict(ex["config"], input_scale=150.0, input_max=300.0)),
    )
    meta_runs(ctx, name=NAME, kwargs=kw, inputs=inputs, expected_shape=c.shape, example=ex)
