"""The checks of task ``top_p`` (``top_p_filter``, docs/CONTRACT_LM.md)."""

import math
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import Case, check, phrase, seeds, shown_example

from .top_k import DTYPES, compare_filter, quarter_logits

MARGIN = 0.02
"""How far every drawn ``p`` stays from each row's partial sums (the contract leaves an exact tie to rounding; a
half-precision softmax is off by about 1e-3)."""


def mass_before(x):
    """For each token of each row of ``x [..., V]`` (float64), the probability of the tokens strictly more
    probable than it (flattened to one list of floats)."""
    probs = x.to(torch.float64).softmax(dim=-1).reshape(-1, x.shape[-1])
    return [float(probs[r][probs[r] > probs[r, j]].sum()) for r in range(probs.shape[0]) for j in range(probs.shape[1])]


def safe_p(x, u, pick):
    """A ``p`` in (0, 1) at least ``MARGIN`` from every value of ``mass_before(x)``: in the ``pick``-th (modulo)
    gap wide enough, at fraction ``u`` of it; ``None`` when no gap is wide enough."""
    edges = sorted({0.0, 1.0, *mass_before(x)})
    gaps = [(a, b) for a, b in zip(edges, edges[1:]) if b - a > 2 * MARGIN + 1e-3]
    if not gaps:
        return None
    a, b = gaps[pick % len(gaps)]
    return round(a + MARGIN + u * (b - a - 2 * MARGIN), 6)


@dataclass(frozen=True)
class NucleusCase(Case):
    """Logits for top_p_filter, and where to put p."""

    lead: list
    """The leading dimensions of the logits."""
    V: int
    """Vocabulary size (the last dimension)."""
    tie: int
    """The first row's tie-th and next largest values are equal."""
    u: float
    """Where between two cumulative probabilities the safe p is put (see ``safe_p``)."""
    pick: int
    """Which gap between cumulative probabilities the safe p is put in (see ``safe_p``)."""
    over: float
    """A p of at least 1 (keeps all)."""
    neg_inf: bool
    """Whether the last row holds an already filtered (-inf) token."""
    seed: int
    """Seed of the logits."""


@st.composite
def nucleus_case(draw):
    lead = draw(st.lists(st.integers(1, 2), min_size=0, max_size=2))
    V = draw(st.integers(2, 10))
    tie = draw(st.integers(1, V))
    u = draw(st.floats(0.0, 1.0))
    pick = draw(st.integers(0, 20))
    over = draw(st.sampled_from([1.0, 1.5]))
    neg_inf = draw(st.booleans()) or len(lead) == 0
    return NucleusCase(lead=lead, V=V, tie=tie, u=u, pick=pick, over=over, neg_inf=neg_inf, seed=draw(seeds()))


def _run(ctx, x, p, dtype, ex):
    what = phrase("what.in_dtype", what=f"top_p_filter(logits, p={p})", dtype=dtype)
    ref, got = ctx.both("lm_filter", name="top_p_filter", logits=x, arg=p, dtype=dtype)
    compare_filter(ref, got, what=what, key="fail.lm_top_p_kept", example=ex, p=p)


@check("top_p", "filter", points=6, given=nucleus_case())
def top_p_filter(ctx, c):
    """Keeps token j iff the probability of the tokens strictly more probable than j is < p (ties share one fate,
    the most probable always kept, p >= 1 keeps all), -inf elsewhere, any leading shape and dtype, rows with -inf
    included, input untouched."""
    shape = [*c.lead, c.V]
    x = quarter_logits(shape, c.seed, c.tie)
    if c.neg_inf and c.V > 2:
        x.reshape(-1, c.V)[-1, -1] = -math.inf  # an already filtered token (top-k ran first)
    p = safe_p(x, c.u, c.pick)
    for q in ([] if p is None else [p]) + [1e-3, c.over]:
        for dtype in DTYPES:
            ex = shown_example({"p": q, "V": c.V, "dtype": dtype}, logits=shape)
            _run(ctx, x, q, dtype, ex)


@check("top_p", "worked_example", points=3, examples=(1, 1))
def worked_example(ctx):
    """The contract's example: probabilities [0.5, 0.3, 0.2] keep the first two with p = 0.75, all three with
    p = 0.85, only the first with p = 0.4; in a shuffled order, next to a row with a tie at the boundary."""
    x = torch.tensor([[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.2, 0.4]], dtype=torch.float64).log()
    for p in (0.75, 0.85, 0.4, 0.55):
        ex = {"config": {"p": p, "probabilities": [[0.5, 0.3, 0.2], [0.2, 0.5, 0.3], [0.4, 0.2, 0.4]]}}
        _run(ctx, x, p, "float64", ex)
