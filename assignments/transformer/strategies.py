"""Hypothesis strategies and inputs of the Transformer assignment (sizes, masks)."""

from dataclasses import asdict, dataclass

import torch
from hypothesis import strategies as st

from grader.author import Case, distinct_ints

MASK_KINDS = ("none", "padding", "causal", "combined", "2d")


@dataclass(frozen=True)
class AttentionSizes(Case):
    """The sizes of one attention example."""

    B: int
    """Batch size."""
    Lq: int
    """Query length."""
    Lk: int
    """Key (and value) length: ``Lq`` in self-attention."""
    H: int
    """Number of heads."""
    Dh: int
    """Head dimension."""
    D: int
    """Model dimension, ``H * Dh``."""


@dataclass(frozen=True)
class LayerConfig(AttentionSizes):
    """The sizes and options of one encoder or decoder layer."""

    F: int
    """The feed-forward network's hidden size (d_ff)."""
    norm_first: bool
    """Pre-LN (True) or Post-LN (False)."""
    activation: str
    """The feed-forward activation: ``"relu"`` or ``"gelu"``."""


@st.composite
def attention_sizes(draw, *, self_attention=False, max_len=7):
    """``AttentionSizes`` with B, Lq, Lk, H, Dh pairwise distinct where possible."""
    B, Lq, Lk = draw(distinct_ints(3, min_value=1, max_value=max_len))
    if self_attention:
        Lk = Lq
    H, Dh = draw(distinct_ints(2, min_value=1, max_value=4, avoid=(B, Lq)))
    D = H * Dh
    return AttentionSizes(B=B, Lq=Lq, Lk=Lk, H=H, Dh=Dh, D=D)


@st.composite
def layer_config(draw, *, decoder=False, max_len=6):
    """A ``LayerConfig``: sizes and options for an encoder or decoder layer."""
    s = draw(attention_sizes(self_attention=not decoder, max_len=max_len))
    F = draw(st.integers(2, 12).filter(lambda f: f not in (s.D, s.Lq, s.Lk)))
    norm_first = draw(st.booleans())
    return LayerConfig(**asdict(s), F=F, norm_first=norm_first, activation=draw(st.sampled_from(["relu", "gelu"])))


def mask_kinds(*, causal_ok=True):
    """A mask form; ``causal`` and ``combined`` only where queries and keys are the same sequence."""
    kinds = MASK_KINDS if causal_ok else ("none", "padding", "2d")
    return st.sampled_from(kinds)


def make_mask(kind, B, Lq, Lk, seed):
    """A bool keep-mask of the given contract form, never blocking every key of a query row.

    ``padding`` ``[B, 1, 1, Lk]``, ``causal`` ``[1, 1, L, L]``, ``combined``
    ``[B, 1, Lq, Lk]``, ``2d`` ``[Lq, Lk]``; ``none`` gives ``None``.
    """
    g = torch.Generator().manual_seed(seed)
    if kind == "none":
        return None
    if kind in ("padding", "combined"):
        lengths = torch.randint(1, Lk + 1, (B,), generator=g)
        lengths[0] = max(1, Lk - 1) if Lk > 1 else 1  # at least one row with real padding
        pad = torch.arange(Lk).unsqueeze(0) < lengths.unsqueeze(1)  # [B, Lk]
        pad = pad.view(B, 1, 1, Lk)
        if kind == "padding":
            return pad
        causal = torch.ones(Lq, Lk, dtype=torch.bool).tril().view(1, 1, Lq, Lk)
        return pad & causal
    if kind == "causal":
        return torch.ones(Lq, Lk, dtype=torch.bool).tril().view(1, 1, Lq, Lk)
    if kind == "2d":
        keep = torch.rand(Lq, Lk, generator=g) > 0.4
        keep[:, 0] = True  # every query keeps at least one key
        return keep
    raise ValueError(f"unknown mask kind {kind!r}; expected one of {MASK_KINDS}")
