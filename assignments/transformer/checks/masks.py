"""Checks for ``padding_mask``, ``causal_mask`` and ``target_mask`` (task ``masks``)."""

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import Case, Fail, check, check_tensor, distinct_ints, random_tokens, returned, seeds, shown_example


@dataclass(frozen=True)
class TokensCase(Case):
    """One batch of token ids."""

    B: int
    """Batch size."""
    L: int
    """Sequence length."""
    V: int
    """Vocabulary size."""
    pad: int
    """The padding index."""
    seed: int
    """Seed of the tokens."""


@st.composite
def tokens_case(draw):
    B, L = draw(distinct_ints(2, min_value=1, max_value=8))
    V = draw(st.integers(3, 12))
    pad = draw(st.integers(0, V - 1))
    return TokensCase(B=B, L=L, V=V, pad=pad, seed=draw(seeds()))


def _compare(ctx, name, args, ex, device="cpu"):
    ref, got = ctx.both("call", ref_args={"name": name, "args": args}, name=name, args=args, device=device)
    if got.get("modified"):
        raise Fail("fail.inplace", what=name, inputs=got["modified"], example=ex)
    if "out" not in got:
        raise Fail("fail.not_tensor", what=name, got=returned(got), example=ex)
    if device == "meta":
        if got["out"].device.type != "meta":
            raise Fail("fail.device", what=name, expected="meta", got=got["out"].device.type, example=ex)
        return
    check_tensor(got["out"], ref["out"], what=name, example=ex)


@check("masks", "padding", points=3, examples=(3, 20), given=tokens_case())
def padding(ctx, c):
    """padding_mask: bool [B, 1, 1, L], True where the token is not padding."""
    tokens = random_tokens([c.B, c.L], c.V, c.seed)
    ex = shown_example({"pad_idx": c.pad}, tokens=[c.B, c.L])
    _compare(ctx, "padding_mask", [tokens, c.pad], ex)


@check("masks", "causal", points=3, examples=(1, 1))
def causal(ctx):
    """causal_mask: bool [1, 1, L, L], True on and below the diagonal."""
    for size in (1, 2, 5, 9):
        _compare(ctx, "causal_mask", [size], {"config": {"size": size}})


@check("masks", "target", points=3, examples=(3, 20), given=tokens_case())
def target(ctx, c):
    """target_mask: padding_mask & causal_mask, bool [B, 1, L, L]."""
    tokens = random_tokens([c.B, c.L], c.V, c.seed)
    ex = shown_example({"pad_idx": c.pad}, tgt=[c.B, c.L])
    _compare(ctx, "target_mask", [tokens, c.pad], ex)


@check("masks", "device", points=1, examples=(1, 1))
def device(ctx):
    """Masks are built on the requested device (causal_mask's device, target_mask's tgt.device)."""
    got = ctx.sub("call", name="causal_mask", args=[4], kwargs={"device": torch.device("meta")}, inplace_check=False)
    if "out" not in got or got["out"].device.type != "meta":
        raise Fail(
            "fail.device",
            what="causal_mask(4, device='meta')",
            expected="meta",
            got=got["out"].device.type if "out" in got else "?",
            example={"config": {"size": 4}},
        )
    _compare(ctx, "target_mask", [random_tokens([2, 4], 5, 1), 0], {"config": {"pad_idx": 0}}, device="meta")
    _compare(ctx, "padding_mask", [random_tokens([2, 4], 5, 1), 0], {"config": {"pad_idx": 0}}, device="meta")
