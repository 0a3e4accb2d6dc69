"""Checks for ``count_parameters`` (task ``param_count``)."""

import functools

from hypothesis import strategies as st

from grader.author import Fail, check, returned

NAMES = ("src_vocab_size", "tgt_vocab_size", "d_model", "num_heads", "d_ff", "num_layers", "norm_first")

GRID = [
    (11, 13, 8, 2, 16, 1, False),
    (11, 13, 8, 2, 16, 1, True),
    (7, 7, 12, 3, 20, 2, False),
    (50, 60, 16, 4, 64, 3, True),
    (1000, 1200, 64, 8, 256, 2, False),
    (37000, 37000, 512, 8, 2048, 6, False),
    (37000, 37000, 512, 8, 2048, 6, True),
    (5, 9, 6, 1, 6, 4, True),
    (9, 9, 8, 2, 16, 2, None),
]
"""``None``: ``norm_first`` not passed (its default, False)."""


@st.composite
def sizes(draw):
    """A configuration of sizes of its own: the held-back examples of a final grade draw others.
    Checks draw two examples: Hypothesis's first is its simplest, the same under every seed; the second is the
    seed's own."""
    heads = draw(st.integers(1, 8))
    row = (
        draw(st.integers(2, 5000)),
        draw(st.integers(2, 5000)),
        heads * draw(st.integers(1, 16)),
        heads,
        draw(st.integers(1, 1024)),
        draw(st.integers(1, 6)),
        draw(st.sampled_from([False, True, None])),
    )
    return {k: v for k, v in zip(NAMES, row) if v is not None}


def _same_count(ctx, kwargs):
    ref, got = ctx.both("call", name="count_parameters", kwargs=kwargs)
    expected = ref["number"]
    value = got.get("number")
    if got.get("number_type") not in ("int",) and value is not None and float(value).is_integer():
        value = int(value)
    if value != expected:
        raise Fail(
            "fail.param_count",
            got=value if value is not None else returned(got),
            difference=(value - expected) if isinstance(value, int) else None,
            example={"config": kwargs},
        )


@check("param_count", "grid", points=10, examples=(2, 4))
def grid(ctx):
    """count_parameters equals the real Transformer's parameter count over a grid of configurations, then over
    drawn sizes."""
    for row in GRID:
        _same_count(ctx, {k: v for k, v in zip(NAMES, row) if v is not None})
    ctx.given(sizes())(functools.partial(_same_count, ctx))()
