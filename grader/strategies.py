"""Hypothesis strategies: model configurations, masks and seeded tensors.

Sizes that could hide a transposition or broadcast bug when equal (batch,
sequence lengths, head count, head size, d_model, d_ff, vocabularies) are
drawn pairwise distinct where the range allows. Tensors are built from a
drawn seed with a ``torch.Generator``, never element by element.
"""

import torch
from hypothesis import strategies as st


@st.composite
def distinct_ints(draw, n, *, min_value, max_value, avoid=()):
    """``n`` distinct ints in ``[min_value, max_value]``, also distinct from ``avoid`` when room allows."""
    pool = [v for v in range(min_value, max_value + 1) if v not in avoid]
    if len(pool) < n:
        pool = list(range(min_value, max_value + 1))
    return draw(st.permutations(pool))[:n]


def seeds():
    """A seed for the tensors of one example."""
    return st.integers(0, 2**31 - 1)


def randn(shape, seed, *, scale=1.0, dtype=torch.float64):
    """A seeded standard-normal tensor."""
    g = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=g, dtype=dtype) * scale


def random_tokens(shape, vocab, seed, *, low=0):
    """Seeded token ids in ``[low, vocab)``."""
    g = torch.Generator().manual_seed(seed)
    return torch.randint(low, vocab, shape, generator=g)


def random_state(table, seed, *, scale=0.5):
    """Random weights for a parameter table ``[(name, shape)]``: every parameter, norms included.

    LayerNorm weights are drawn around 1 and biases around 0, but never equal
    to them, so a norm that ignores its weight or bias is seen.
    """
    g = torch.Generator().manual_seed(seed)
    state = {}
    for name, shape in table:
        t = torch.randn(shape, generator=g, dtype=torch.float64) * scale
        if name.endswith("weight") and len(shape) == 1:
            t = 1.0 + t
        state[name] = t
    return state
