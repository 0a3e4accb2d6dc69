"""The checks of task ``loss`` (``lm_loss``, docs/CONTRACT_LM.md)."""

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import Case, Fail, check, check_tensor, phrase, randn, random_tokens, returned, seeds, shown_example


@dataclass(frozen=True)
class LossCase(Case):
    """Logits and tokens for lm_loss."""

    B: int
    """Batch size."""
    L: int
    """Sequence length."""
    V: int
    """Vocabulary size."""
    pad: int
    """The pad_id."""
    pads: list
    """How many padded positions end each row."""
    seed: int
    """Seed of the logits and tokens."""


@st.composite
def loss_case(draw):
    B = draw(st.integers(2, 4))
    L = draw(st.integers(2, 7))
    V = draw(st.integers(3, 9))
    pad = draw(st.integers(0, 2))
    pads = draw(st.lists(st.integers(0, 3), min_size=B, max_size=B))
    return LossCase(B=B, L=L, V=V, pad=pad, pads=pads, seed=draw(seeds()))


def _tokens(c, pad_id):
    """Rows padded at the end by different amounts (so a mean over rows differs from one over tokens); without
    ``pad_id`` every id appears, 0 included."""
    tokens = random_tokens([c.B, c.L], c.V, c.seed + 1)
    if pad_id is None:
        tokens[0, -1] = 0  # id 0 is an ordinary token here
        return tokens
    tokens[tokens == pad_id] = (pad_id + 1) % c.V
    for b, n in enumerate(c.pads):
        n = min(n, c.L - 2) if b == 0 else min(n, c.L)  # row 0 keeps a real target
        if n:
            tokens[b, -n:] = pad_id
    return tokens


@check("loss", "shifted", points=5, given=loss_case())
def shifted(ctx, c):
    """The mean cross-entropy of logits[:, t] against tokens[:, t + 1] over the targets that are not pad_id (rows
    padded by different amounts: a mean over tokens, not rows), and over every target with pad_id=None."""
    logits = randn([c.B, c.L, c.V], c.seed, scale=2.0)
    for pad_id in (c.pad, None):
        tokens = _tokens(c, pad_id)
        ex = shown_example(
            {
                "pad_id": phrase("lm.example.default", value="None") if pad_id is None else pad_id,
                "pads_per_row": None if pad_id is None else c.pads,
            },
            logits=logits,
            tokens=tokens,
        )
        kwargs = {} if pad_id is None else {"pad_id": pad_id}  # None: the default
        ref, got = ctx.both("call", name="lm_loss", args=[logits, tokens], kwargs=kwargs)
        if got.get("modified"):
            raise Fail("fail.inplace", what="lm_loss", inputs=got["modified"], example=ex)
        if "out" not in got:
            raise Fail("fail.not_tensor", what="lm_loss", got=returned(got), example=ex)
        out = got["out"].reshape(()) if got["out"].numel() == 1 else got["out"]
        if out.dtype == torch.float32:  # a loss computed in float32 from float64 logits: float32 tolerances
            check_tensor(out, ref["out"].float(), what="lm_loss", dtype="float32", example=ex)
        else:
            check_tensor(out, ref["out"], what="lm_loss", example=ex)
