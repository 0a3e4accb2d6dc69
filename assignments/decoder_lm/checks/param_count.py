"""Checks for ``count_parameters`` (task ``param_count``)."""

import functools

from hypothesis import strategies as st

from assignments.decoder_lm.checks.modules_common import heads_for
from grader.author import Fail, check, returned

NAMES = ("vocab_size", "dim", "num_layers", "num_heads", "hidden_dim", "num_kv_heads")

GRID = [
    (32000, 4096, 32, 32, 11008, None),
    (32000, 4096, 32, 32, 11008, 8),
    (128256, 4096, 32, 32, 14336, 8),
    (50257, 768, 12, 12, 3072, 12),
    (50257, 768, 12, 12, 3072, 1),
    (151936, 896, 24, 14, 4864, 2),
    (6000, 256, 4, 8, 688, 2),
    (7, 4, 1, 2, 3, 1),
]
"""Real models' sizes (Llama 2 7B and its GQA variant, Llama 3 8B, GPT-2 small's widths, Qwen2 0.5B) and small
ones; ``None``: ``num_kv_heads`` left out (its default, ``num_heads``)."""


def _number(got):
    value = got.get("number")
    if got.get("number_type") != "int" and value is not None and float(value).is_integer():
        value = int(value)
    return value


def _compare(value, expected, got, kwargs):
    if value != expected:
        raise Fail(
            "fail.lm_param_count",
            got=value if value is not None else returned(got),
            difference=(value - expected) if isinstance(value, int) else None,
            example={"config": kwargs},
        )


def _same_count(ctx, kwargs):
    ref, got = ctx.both("call", name="count_parameters", kwargs=kwargs)
    _compare(_number(got), ref["number"], got, kwargs)


@check("param_count", "grid", points=4, examples=(2, 4))
def grid(ctx):
    """count_parameters equals the reference's formula on real model sizes, GQA included (no model is built), then
    on drawn sizes (a final grade's held-back examples draw others). Two examples: Hypothesis's first is its simplest,
    the same under every seed; the second is the seed's own."""
    for row in GRID:
        _same_count(ctx, {k: v for k, v in zip(NAMES, row) if v is not None})
    ctx.given(small_config())(functools.partial(_same_count, ctx))()


@st.composite
def small_config(draw):
    H, Hkv = heads_for(draw(st.sampled_from(["mha", "mqa", "gqa"])), draw)
    kwargs = {
        "vocab_size": draw(st.integers(3, 40)),
        "dim": H * 2 * draw(st.integers(1, 3)),
        "num_layers": draw(st.integers(1, 3)),
        "num_heads": H,
        "hidden_dim": draw(st.integers(1, 30)),
    }
    if Hkv != H or draw(st.booleans()):
        kwargs["num_kv_heads"] = Hkv
    return kwargs


@check("param_count", "built", points=4, examples=(6, 30), given=small_config())
def built(ctx, kwargs):
    """count_parameters equals the number of parameters of the reference's DecoderLM built with the same
    arguments (the tied embedding counted once), over random sizes and key/value head counts."""
    values = ctx.ref("params", name="DecoderLM", kwargs=kwargs, dtype="float32")["values"]
    expected = sum(v.numel() for v in values.values())
    got = ctx.sub("call", name="count_parameters", kwargs=kwargs)
    _compare(_number(got), expected, got, kwargs)
