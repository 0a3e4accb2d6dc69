"""Checks for ``FeedForward`` (task ``feedforward``)."""

from dataclasses import dataclass

from hypothesis import strategies as st

from grader.author import (
    Case,
    check,
    contract_params,
    defaults_agree,
    distinct_ints,
    dropout_behaviour,
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
class FfCase(Case):
    """One example of FeedForward."""

    B: int
    """Batch size."""
    L: int
    """Sequence length."""
    D: int
    """Model dimension."""
    F: int
    """Hidden size (d_ff)."""
    activation: str
    """``"relu"`` or ``"gelu"``."""
    seed: int
    """Seed of the input and of the parameters."""


@st.composite
def ff_case(draw):
    B, L, D, F = draw(distinct_ints(4, min_value=1, max_value=12))
    return FfCase(B=B, L=L, D=D, F=F, activation=draw(st.sampled_from(["relu", "gelu"])), seed=draw(seeds()))


def setup(ctx, c, dropout=0.0):
    kw = {"d_model": c.D, "d_ff": c.F, "dropout": dropout, "activation": c.activation}
    x = randn([c.B, c.L, c.D], c.seed)
    ex = shown_example(kw, x=[c.B, c.L, c.D])
    return kw, ref_state(ctx, "FeedForward", kw, c.seed), [x], ex


@check("feedforward", "contract", points=2, examples=(1, 1))
def contract(ctx):
    """Parameters linear1: Linear(D, F) and linear2: Linear(F, D)."""
    contract_params(ctx, "FeedForward", {"d_model": 5, "d_ff": 9, "dropout": 0.0, "activation": "relu"})
    defaults_agree(
        ctx,
        name="FeedForward",
        required={"d_model": 5, "d_ff": 9},
        inputs=[randn([2, 3, 5], 4)],
        given=("d_model", "d_ff", "dropout", "activation"),
        train_differs=True,
    )


@check("feedforward", "equivalence", points=6, examples=(4, 30), given=ff_case())
def equivalence(ctx, c):
    """linear2(act(linear1(x))) with ReLU or exact GELU, equal to the reference's."""
    # Both activations on every case: with a handful of examples a drawn choice can miss one (a GELU mistake
    # would then pass the quick profile).
    for activation in ("relu", "gelu"):
        kw, state, inputs, ex = setup(ctx, c.replace(activation=activation))
        equivalent(
            ctx,
            name="FeedForward",
            kwargs=kw,
            state=state,
            inputs=inputs,
            what=phrase("what.output", name="FeedForward"),
            example=ex,
        )


@check("feedforward", "dropout", points=1, examples=(1, 1))
def dropout(ctx):
    """eval() is deterministic with dropout > 0; train() really drops."""
    c = FfCase(B=2, L=4, D=6, F=10, activation="relu", seed=5)
    kw, state, inputs, ex = setup(ctx, c, dropout=0.5)
    dropout_behaviour(ctx, name="FeedForward", kwargs=kw, state=state, inputs=inputs, example=ex)


@check("feedforward", "devices", points=1, examples=(1, 5), given=ff_case())
def devices(ctx, c):
    """Runs in float32 on each device, float16, bfloat16 and on the meta device."""
    kw, state, inputs, ex = setup(ctx, c)
    float32_close(ctx, name="FeedForward", kwargs=kw, state=state, inputs=inputs, example=ex)
    low_precision(ctx, name="FeedForward", kwargs=kw, state=state, inputs=inputs, example=ex)
    meta_runs(ctx, name="FeedForward", kwargs=kw, inputs=inputs, expected_shape=[c.B, c.L, c.D], example=ex)
