"""Checks for ``PositionalEncoding`` (task ``positional``)."""

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import (
    Case,
    Fail,
    check,
    check_tensor,
    defaults_agree,
    distinct_ints,
    dropout_behaviour,
    equivalent,
    meta_runs,
    phrase,
    randn,
    seeds,
    shown_example,
)


@dataclass(frozen=True)
class PeCase(Case):
    """One example of PositionalEncoding."""

    B: int
    """Batch size."""
    L: int
    """Sequence length."""
    D: int
    """Model dimension (even)."""
    max_len: int
    """The table's length (at least ``L``)."""
    seed: int
    """Seed of the input."""

    def example(self):
        """The example a report shows."""
        return shown_example(kwargs_of(self), x=[self.B, self.L, self.D])


@st.composite
def pe_case(draw):
    B, L = draw(distinct_ints(2, min_value=1, max_value=9))
    D = 2 * draw(st.integers(1, 8))
    max_len = draw(st.integers(L, 64))
    return PeCase(B=B, L=L, D=D, max_len=max_len, seed=draw(seeds()))


def kwargs_of(c, dropout=0.0):
    return {"d_model": c.D, "max_len": c.max_len, "dropout": dropout}


@check("positional", "buffer", points=3, examples=(1, 1))
def buffer(ctx):
    """The table is a buffer named pe of shape [1, max_len, D], not a parameter, and moves with .to()."""
    kw = {"d_model": 6, "max_len": 11, "dropout": 0.0}
    got = ctx.sub("params", name="PositionalEncoding", kwargs=kw)
    ex = {"config": kw}
    if got["params"]:
        raise Fail("fail.pe_parameter", names=[n for n, _ in got["params"]], example=ex)
    buffers = {n: shape for n, shape, _ in got["buffers"]}
    if "pe" not in buffers:
        raise Fail("fail.pe_missing", found=sorted(buffers), example=ex)
    if buffers["pe"] != [1, 11, 6]:
        raise Fail("fail.shape", what="pe", expected=[1, 11, 6], got=buffers["pe"], example=ex)
    plain = {"d_model": 6}
    default = dict(ctx.sub("shapes", name="PositionalEncoding", kwargs=plain)["buffers"]).get("pe")
    if default != [1, 5000, 6]:
        raise Fail(
            "fail.defaults",
            what="PositionalEncoding",
            argument="max_len",
            default=5000,
            detail=phrase("transformer.detail.pe_shape", got=default, expected=[1, 5000, 6]),
            example={"config": plain},
        )
    defaults_agree(
        ctx,
        name="PositionalEncoding",
        required=plain,
        inputs=[randn([2, 5, 6], 3)],
        given=("d_model", "max_len", "dropout"),
        train_differs=True,
        state=False,
    )
    moved = ctx.sub("move_buffers", name="PositionalEncoding", kwargs=kw)
    if moved["dtypes"].get("pe") != "float64" or moved["devices"].get("pe") != "meta":
        raise Fail("fail.pe_not_moved", example=ex)


@check("positional", "table", points=3, examples=(3, 20), given=pe_case())
def table(ctx, c):
    """The table's values are sin/cos at the contract's frequencies, positions from 0."""
    kw = kwargs_of(c)
    ref, got = ctx.both("params", name="PositionalEncoding", kwargs=kw)
    ref, got = ref["buffer_values"]["pe"], got["buffer_values"].get("pe")
    if got is None:
        raise Fail("fail.pe_missing", found=[], example=c.example())
    check_tensor(got.to(torch.float64), ref, what="pe", example=c.example())


@check("positional", "equivalence", points=2, examples=(3, 20), given=pe_case())
def equivalence(ctx, c):
    """forward(x) = x + pe[:, :L] in eval mode, equal to the reference's."""
    x = randn([c.B, c.L, c.D], c.seed)
    equivalent(
        ctx,
        name="PositionalEncoding",
        kwargs=kwargs_of(c),
        state={},
        inputs=[x],
        what=phrase("what.output", name="PositionalEncoding"),
        example=c.example(),
    )


@check("positional", "dropout", points=1, examples=(1, 1))
def dropout(ctx):
    """eval() is deterministic with dropout > 0; train() really drops."""
    c = PeCase(B=2, L=5, D=8, max_len=20, seed=3)
    dropout_behaviour(
        ctx,
        name="PositionalEncoding",
        kwargs=kwargs_of(c, 0.5),
        state={},
        inputs=[randn([2, 5, 8], 3)],
        example=c.example(),
    )


@check("positional", "meta", points=1, examples=(1, 1))
def meta(ctx):
    """Runs on the meta device: the table is built on, and moved with, the module's device."""
    c = PeCase(B=2, L=5, D=8, max_len=20, seed=3)
    meta_runs(
        ctx,
        name="PositionalEncoding",
        kwargs=kwargs_of(c),
        inputs=[randn([2, 5, 8], 3)],
        expected_shape=[2, 5, 8],
        example=c.example(),
    )
