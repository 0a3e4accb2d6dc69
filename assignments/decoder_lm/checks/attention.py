"""Checks for ``CausalSelfAttention`` (task ``attention``)."""

from dataclasses import asdict, dataclass

import torch
from hypothesis import strategies as st

from assignments.decoder_lm.checks.modules_common import (
    EVERY_KIND,
    ChunkedSizes,
    construct_raises,
    layer_sizes,
    steps_match,
)
from grader.author import (
    Fail,
    check,
    contract_params,
    defaults_agree,
    equivalent,
    float32_close,
    low_precision,
    meta_runs,
    phrase,
    randn,
    ref_state,
    shown_example,
)

NAME = "CausalSelfAttention"


def kwargs_of(c, base=10000.0):
    return {"dim": c.D, "num_heads": c.H, "num_kv_heads": c.Hkv, "rope_base": base}


def setup(ctx, c):
    kw = kwargs_of(c)
    x = randn([c.B, c.L, c.D], c.seed + 1)
    return kw, ref_state(ctx, NAME, kw, c.seed), [x], shown_example(kw, x=x)


@check("attention", "contract", points=1, variant="isolated", examples=(1, 1))
def contract(ctx):
    """q_proj, k_proj, v_proj, o_proj without bias (k and v with Hkv heads); num_kv_heads defaults to num_heads,
    rope_base to 10000."""
    contract_params(ctx, NAME, {"dim": 16, "num_heads": 4, "num_kv_heads": 2})
    contract_params(ctx, NAME, {"dim": 12, "num_heads": 3})
    defaults_agree(
        ctx,
        name=NAME,
        required={"dim": 8, "num_heads": 2},
        inputs=[randn([2, 5, 8], 3)],
        given=("dim", "num_heads", "num_kv_heads", "rope_base"),
    )


@check("attention", "value_errors", points=1, examples=(1, 1))
def value_errors(ctx):
    """ValueError when num_heads does not divide dim, when num_kv_heads does not divide num_heads, and when the
    head size is odd (raised by your RotaryEmbedding or by CausalSelfAttention itself)."""
    for kw in ({"dim": 10, "num_heads": 4}, {"dim": 16, "num_heads": 4, "num_kv_heads": 3}, {"dim": 6, "num_heads": 2}):
        construct_raises(
            ctx,
            NAME,
            kw,
            "fail.lm_attn_value_error",
            dim=kw["dim"],
            num_heads=kw["num_heads"],
            num_kv_heads=kw.get("num_kv_heads", kw["num_heads"]),
        )


def _equivalence(ctx, cases):
    for c in cases:
        kw, state, inputs, ex = setup(ctx, c)
        equivalent(
            ctx,
            name=NAME,
            kwargs=kw,
            state=state,
            inputs=inputs,
            what=phrase("what.output", name="CausalSelfAttention"),
            example=ex,
        )


@check("attention", "equivalence", points=4, variant="isolated", examples=(3, 25), given=EVERY_KIND)
def equivalence(ctx, cases):
    """Equals the reference without a cache (Hkv == H, Hkv == 1, 1 < Hkv < H), over the reference's
    causal_attention and RotaryEmbedding."""
    _equivalence(ctx, cases)


@check("attention", "integrated", points=1, examples=(2, 10), given=EVERY_KIND)
def integrated(ctx, cases):
    """Equals the reference with your own causal_attention and RotaryEmbedding inside."""
    _equivalence(ctx, cases)


@dataclass(frozen=True)
class CacheCase(ChunkedSizes):
    """Sizes of an attention layer fed its input in chunks, with one cache, and its rotary base."""

    base: float
    """The rotary embedding's base."""


@st.composite
def cache_case(draw):
    c = draw(layer_sizes(("gqa", "mqa")))
    chunks = [draw(st.integers(2, 4)), draw(st.integers(1, 3)), 1]
    return CacheCase(**asdict(c), chunks=chunks, base=draw(st.sampled_from([10000.0, 100.0])))


def _with_cache(ctx, c):
    kw = kwargs_of(c, c.base)
    state = ref_state(ctx, NAME, kw, c.seed)
    chunks = [randn([c.B, L, c.D], c.seed + 1 + i) for i, L in enumerate(c.chunks)]
    ex = shown_example(dict(kw, chunks=c.chunks), **{f"x{i}": x for i, x in enumerate(chunks)})

    def inspect(got):
        keys = got["keys"]
        if keys.dim() == 4 and keys.shape[1] == c.H != c.Hkv:
            raise Fail("fail.lm_attn_cache_heads", heads=c.H, kv_heads=c.Hkv, example=ex)
        x = torch.cat(chunks, dim=1)
        raw = (x @ state["k_proj.weight"].T).view(c.B, x.shape[1], c.Hkv, c.Dh).transpose(1, 2)
        if keys.shape == raw.shape and torch.allclose(keys.double(), raw, atol=1e-6, rtol=1e-5):
            raise Fail("fail.lm_attn_cache_unrotated", example=ex)

    steps_match(ctx, name=NAME, kwargs=kw, state=state, chunks=chunks, example=ex, inspect=inspect)


@check("attention", "cache", points=3, variant="isolated", examples=(3, 20), given=cache_case())
def cache(ctx, c):
    """With a cache, three calls (a prompt, a few tokens, one token): positions continue from cache.length, the
    outputs equal the reference's, and the cache holds the rotated keys and the values with Hkv heads."""
    _with_cache(ctx, c)


@check("attention", "cache_integrated", points=1, examples=(2, 10), given=cache_case())
def cache_integrated(ctx, c):
    """The same with your own KVCache, causal_attention and RotaryEmbedding inside."""
    _with_cache(ctx, c)


@check(
    "attention",
    "devices",
    points=1,
    variant="isolated",
    examples=(1, 5),
    given=layer_sizes(("gqa",)).filter(lambda c: c.L >= 2),
)
def devices(ctx, c):
    """float32 on each device close to the reference, float16 and bfloat16 finite, and the meta device."""
    kw, state, inputs, ex = setup(ctx, c)
    float32_close(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, example=ex)
    low_precision(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, example=ex)
    meta_runs(ctx, name=NAME, kwargs=kw, inputs=inputs, expected_shape=list(inputs[0].shape), example=ex)
