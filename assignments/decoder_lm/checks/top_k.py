"""The checks of task ``top_k`` (``top_k_filter``, docs/CONTRACT_LM.md)."""

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import Case, Fail, check, check_tensor, phrase, returned, seeds, shown_example

DTYPES = ("float64", "float32", "float16", "bfloat16")


@dataclass(frozen=True)
class FilterCase(Case):
    """Logits for top_k_filter."""

    lead: list
    """The leading dimensions of the logits."""
    V: int
    """Vocabulary size (the last dimension)."""
    k: int
    """k; the first row's k-th largest value is tied with the next one."""
    over: int
    """How far beyond ``V`` a k that keeps all goes."""
    seed: int
    """Seed of the logits."""


@st.composite
def filter_case(draw):
    """Logits on a grid of quarters (exact in every dtype, so ties stay ties), any leading shape, and a row whose
    k-th largest value is tied with the next one."""
    lead = draw(st.lists(st.integers(1, 3), min_size=0, max_size=3))
    V = draw(st.integers(2, 12))
    k = draw(st.integers(1, V))
    return FilterCase(lead=lead, V=V, k=k, over=draw(st.integers(0, 3)), seed=draw(seeds()))


def quarter_logits(shape, seed, k):
    """Seeded logits in quarters within [-4, 4]; in the first row the ``k``-th and ``k + 1``-th largest are tied."""
    g = torch.Generator().manual_seed(seed)
    x = torch.randint(-16, 17, shape, generator=g).to(torch.float64) / 4
    first = x.reshape(-1, shape[-1])[0]
    if shape[-1] > k:
        order = first.argsort(descending=True)
        first[order[k]] = first[order[k - 1]]  # a tie at the boundary: both must survive
    return x


def kept_mismatch(got, expected):
    """``(row, index, got count, expected count)`` of the first row whose kept set differs, else ``None``."""
    g = torch.isfinite(got.to(torch.float64)).reshape(-1, got.shape[-1])
    e = torch.isfinite(expected.to(torch.float64)).reshape(-1, expected.shape[-1])
    bad = (g != e).any(dim=-1)
    if not bad.any():
        return None
    row = int(bad.nonzero()[0])
    index = int((g[row] != e[row]).nonzero()[0])
    return row, index, int(g[row].sum()), int(e[row].sum())


def compare_filter(ref, got, *, what, key, example, **params):
    """The filter's output: a tensor of the input's shape and dtype, input untouched, the same survivors (else
    ``key``), kept logits unchanged and the rest ``-inf``."""
    if got.get("modified"):
        raise Fail("fail.inplace", what=what, inputs=got["modified"], example=example)
    if "out" not in got:
        raise Fail("fail.not_tensor", what=what, got=returned(got), example=example)
    out, expected = got["out"], ref["out"]
    if list(out.shape) == list(expected.shape) and out.dtype == expected.dtype:
        wrong = kept_mismatch(out, expected)
        if wrong is not None:
            row, index, n_got, n_expected = wrong
            raise Fail(key, row=row, index=index, got=n_got, expected=n_expected, example=example, **params)
    check_tensor(out, expected, what=what, example=example, atol=0.0, rtol=0.0)


@check("top_k", "filter", points=6, given=filter_case())
def top_k_filter(ctx, c):
    """Keeps exactly the logits >= the k-th largest of each row (boundary ties kept, k >= V keeps all), -inf
    elsewhere, in any leading shape and in float64, float32, float16 and bfloat16, input untouched."""
    shape = [*c.lead, c.V]
    x = quarter_logits(shape, c.seed, c.k)
    for k in (c.k, c.V, c.V + 1 + c.over):  # k >= V keeps all (torch.topk refuses k > V)
        for dtype in DTYPES:
            ex = shown_example({"k": k, "V": c.V, "dtype": dtype, "boundary_tie_in_row": 0}, logits=shape)
            ref, got = ctx.both("lm_filter", name="top_k_filter", logits=x, arg=k, dtype=dtype)
            compare_filter(
                ref,
                got,
                what=phrase("what.in_dtype", what=f"top_k_filter(logits, k={k})", dtype=dtype),
                key="fail.lm_top_k_kept",
                example=ex,
                k=k,
            )
