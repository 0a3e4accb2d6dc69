"""Checks for ``TokenEmbedding`` (task ``embedding``)."""

from dataclasses import dataclass

from hypothesis import strategies as st

from grader.author import (
    Case,
    Fail,
    check,
    contract_params,
    distinct_ints,
    equivalent,
    float32_close,
    meta_runs,
    phrase,
    random_tokens,
    ref_state,
    seeds,
    shown_example,
)


@dataclass(frozen=True)
class EmbCase(Case):
    """One example of TokenEmbedding."""

    B: int
    """Batch size."""
    L: int
    """Sequence length."""
    D: int
    """Model dimension."""
    V: int
    """Vocabulary size."""
    seed: int
    """Seed of the tokens and of the parameters."""


@st.composite
def emb_case(draw):
    B, L, D = draw(distinct_ints(3, min_value=1, max_value=9))
    V = draw(st.integers(2, 20).filter(lambda v: v not in (B, L, D)))
    return EmbCase(B=B, L=L, D=D, V=V, seed=draw(seeds()))


def setup(ctx, c):
    kw = {"vocab_size": c.V, "d_model": c.D}
    tokens = random_tokens([c.B, c.L], c.V, c.seed)
    ex = shown_example(kw, tokens=[c.B, c.L])
    return kw, ref_state(ctx, "TokenEmbedding", kw, c.seed), [tokens], ex


@check("embedding", "contract", points=2, examples=(1, 1))
def contract(ctx):
    """One parameter, embed.weight of shape [V, D]."""
    got = contract_params(ctx, "TokenEmbedding", {"vocab_size": 11, "d_model": 6})
    weight = got["values"]["embed.weight"]
    zero_rows = [i for i in range(weight.shape[0]) if bool((weight[i] == 0).all())]
    if zero_rows:  # nn.Embedding(..., padding_idx=k) starts row k at zero and never trains it
        raise Fail(
            "fail.padding_row",
            what="TokenEmbedding",
            token=zero_rows[0],
            example={"config": {"vocab_size": 11, "d_model": 6}},
        )


@check("embedding", "equivalence", points=6, examples=(3, 20), given=emb_case())
def equivalence(ctx, c):
    """Looked-up vectors times √D, equal to the reference's."""
    kw, state, inputs, ex = setup(ctx, c)
    equivalent(
        ctx,
        name="TokenEmbedding",
        kwargs=kw,
        state=state,
        inputs=inputs,
        what=phrase("what.output", name="TokenEmbedding"),
        example=ex,
    )


@check("embedding", "devices", points=2, examples=(1, 5), given=emb_case())
def devices(ctx, c):
    """Runs in float32 on each device and on the meta device."""
    kw, state, inputs, ex = setup(ctx, c)
    float32_close(ctx, name="TokenEmbedding", kwargs=kw, state=state, inputs=inputs, example=ex)
    meta_runs(ctx, name="TokenEmbedding", kwargs=kw, inputs=inputs, expected_shape=[c.B, c.L, c.D], example=ex)
