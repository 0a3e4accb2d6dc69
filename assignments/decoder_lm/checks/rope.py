"""Checks for ``RotaryEmbedding`` (task ``rope``)."""

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from assignments.decoder_lm.checks.modules_common import construct_raises, half_close
from grader.author import (
    Case,
    Fail,
    check,
    contract_params,
    defaults_agree,
    equivalent,
    float32_close,
    meta_runs,
    phrase,
    randn,
    seeds,
    shown_example,
)

NAME = "RotaryEmbedding"


@dataclass(frozen=True)
class Rotation(Case):
    """A RotaryEmbedding and the shape of the input it rotates."""

    shape: list
    """The input's shape: leading dimensions, then ``[L, Dh]``."""
    Dh: int
    """Head dimension (even)."""
    base: float
    """The rotary base."""

    def example(self, offset=None):
        """The example a report shows, with the offset passed (none when ``None``)."""
        config = {"head_dim": self.Dh, "base": self.base}
        if offset is not None:
            config["offset"] = offset
        return shown_example(config, x=self.shape)


@dataclass(frozen=True)
class RopeCase(Rotation):
    """One example of RotaryEmbedding."""

    L: int
    """Sequence length."""
    offset: int
    """A small position offset."""
    seed: int
    """Seed of the input."""


@st.composite
def rope_case(draw):
    lead = draw(st.sampled_from([[2, 3], [3], []]))
    L = draw(st.integers(1, 6))
    Dh = 2 * draw(st.integers(1, 6))
    base = draw(st.sampled_from([10000.0, 500.0]))
    return RopeCase(
        shape=lead + [L, Dh], L=L, Dh=Dh, base=base, offset=draw(st.sampled_from([3, 17])), seed=draw(seeds())
    )


def kwargs_of(c):
    return {"head_dim": c.Dh, "base": c.base}


def rotate(ctx, c, x, offset=None):
    inputs = [x] if offset is None else [x, offset]
    return ctx.sub("forward", name=NAME, kwargs=kwargs_of(c), state={}, inputs=inputs)["out"]


@check("rope", "contract", points=1, examples=(1, 1))
def contract(ctx):
    """No parameters; an odd head_dim raises ValueError; base defaults to 10000."""
    contract_params(ctx, NAME, {"head_dim": 8})
    for head_dim in (5, 7):
        construct_raises(ctx, NAME, {"head_dim": head_dim}, "fail.lm_rope_odd", head_dim=head_dim)
    defaults_agree(
        ctx, name=NAME, required={"head_dim": 8}, inputs=[randn([2, 6, 8], 4)], given=("head_dim", "base"), state=False
    )


@check("rope", "equivalence", points=4, examples=(4, 30), given=rope_case())
def equivalence(ctx, c):
    """Equals the reference at positions 0 ... L-1 (offset left out), from a small offset, and from offset 5000
    (positions beyond any table a fixed maximum length would give)."""
    x = randn(c.shape, c.seed)
    for offset in (None, c.offset, 5000):
        inputs = [x] if offset is None else [x, offset]
        equivalent(
            ctx,
            name=NAME,
            kwargs=kwargs_of(c),
            state={},
            inputs=inputs,
            what=phrase("what.output", name="RotaryEmbedding"),
            example=c.example(offset),
        )


@check("rope", "pairing", points=2, examples=(1, 1))
def pairing(ctx):
    """Half-split pairing: at position 1 the unit vector e_i turns within the plane of coordinates i and
    i + Dh/2 (not i and i xor 1, the paper's interleaved pairs)."""
    Dh = 8
    c = Rotation(Dh=Dh, base=10000.0, shape=[Dh, 2, Dh])
    x = torch.eye(Dh, dtype=torch.float64).unsqueeze(1).repeat(1, 2, 1)  # row i: e_i at positions 0 and 1
    y = rotate(ctx, c, x)
    ex = c.example()
    if list(y.shape) != c.shape:
        raise Fail(
            "fail.shape",
            what=phrase("what.output", name="RotaryEmbedding"),
            expected=c.shape,
            got=list(y.shape),
            example=ex,
        )
    found = [sorted(int(j) for j in (y[i, 1].abs() > 1e-12).nonzero().flatten()) for i in range(Dh)]
    if all(f == sorted({i, i ^ 1}) for i, f in enumerate(found)):
        raise Fail("fail.lm_rope_interleaved", example=ex)
    for i, f in enumerate(found):
        if f != sorted({i, (i + Dh // 2) % Dh}):
            raise Fail("fail.lm_rope_pairing", coordinate=i, found=f, expected=sorted({i, i + Dh // 2}), example=ex)


@dataclass(frozen=True)
class ShiftCase(Rotation):
    """An input rotated at positions shifted by ``shift``."""

    L: int
    """Sequence length."""
    shift: int
    """How far the positions are shifted."""
    seed: int
    """Seed of the input."""


@st.composite
def shift_case(draw):
    L = draw(st.integers(2, 6))
    Dh = 2 * draw(st.integers(1, 6))
    base = draw(st.sampled_from([10000.0, 500.0]))
    return ShiftCase(
        shape=[2, L, Dh], L=L, Dh=Dh, base=base, shift=draw(st.sampled_from([1, 4, 17])), seed=draw(seeds())
    )


def _shifted(ctx, c, x):
    """The rotation of ``x``'s rows at positions shift ... shift + L - 1, read off a longer input whose first
    ``shift`` rows are zeros (no offset argument involved)."""
    pad = torch.zeros(x.shape[:-2] + (c.shift, x.shape[-1]), dtype=x.dtype)
    return rotate(ctx, c, torch.cat([pad, x], dim=-2))[..., c.shift :, :]


@check("rope", "relative", points=2, examples=(4, 30), given=shift_case())
def relative(ctx, c):
    """Scores depend on relative positions only: shifting every position by c leaves q.k unchanged; norms kept."""
    q, k = randn(c.shape, c.seed), randn(c.shape, c.seed + 1)
    ex = dict(c.example(), shift=c.shift)
    rq, rk = rotate(ctx, c, q), rotate(ctx, c, k)
    if list(rq.shape) != c.shape:
        raise Fail(
            "fail.shape",
            what=phrase("what.output", name="RotaryEmbedding"),
            expected=c.shape,
            got=list(rq.shape),
            example=ex,
        )
    norms, kept = rq.norm(dim=-1), q.norm(dim=-1)
    if not torch.allclose(norms, kept, atol=1e-6, rtol=1e-6):
        worst = int((norms - kept).abs().flatten().argmax()) % c.L
        raise Fail("fail.lm_rope_norm", position=worst, example=ex)
    sq, sk = _shifted(ctx, c, q), _shifted(ctx, c, k)
    before, after = rq @ rk.transpose(-2, -1), sq @ sk.transpose(-2, -1)
    if after.shape != before.shape or not torch.allclose(before, after, atol=1e-5, rtol=1e-5):
        raise Fail("fail.lm_rope_relative", shift=c.shift, example=ex)


@check("rope", "offset", points=2, examples=(3, 20), given=shift_case())
def offset(ctx, c):
    """forward(x, offset=c) rotates row l as position c + l: the same as the rows of a longer input."""
    x = randn(c.shape, c.seed)
    ex = c.example(c.shift)
    got, longer = rotate(ctx, c, x, c.shift), _shifted(ctx, c, x)
    if got.shape != longer.shape or not torch.allclose(got, longer, atol=1e-9, rtol=1e-7):
        raise Fail("fail.lm_rope_offset", offset=c.shift, example=ex)


@check("rope", "half_precision", points=1, examples=(1, 1))
def half_precision(ctx):
    """float16 and bfloat16 at positions 2049 ...: the output keeps the input's dtype, and in float16 it agrees
    with the reference: the angles are computed in float32 (float16 cannot tell position 2049 from 2048)."""
    c = Rotation(shape=[2, 3, 5, 8], Dh=8, base=10000.0)
    x = randn(c.shape, 21)
    half_close(ctx, name=NAME, kwargs=kwargs_of(c), state={}, inputs=[x, 2049], example=c.example(2049))


@check("rope", "devices", points=1, examples=(1, 5), given=rope_case())
def devices(ctx, c):
    """float32 on each device, and the meta device (positions built on the input's device)."""
    x = randn(c.shape, c.seed)
    ex = c.example(3)
    float32_close(ctx, name=NAME, kwargs=kwargs_of(c), state={}, inputs=[x, 3], example=ex)
    meta_runs(ctx, name=NAME, kwargs=kwargs_of(c), inputs=[x, 3], expected_shape=c.shape, example=ex)
