"""Checks for ``DecoderBlock`` (task ``block``)."""

from dataclasses import asdict

import torch
from hypothesis import strategies as st

from assignments.decoder_lm.checks.modules_common import EVERY_KIND, ChunkedSizes, layer_sizes, steps_match
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

NAME = "DecoderBlock"


def kwargs_of(c):
    return {"dim": c.D, "num_heads": c.H, "hidden_dim": c.F, "num_kv_heads": c.Hkv, "eps": 0.05, "rope_base": 500.0}


def setup(ctx, c):
    kw = kwargs_of(c)
    x = randn([c.B, c.L, c.D], c.seed + 1, scale=2.0)
    return kw, ref_state(ctx, NAME, kw, c.seed), [x], shown_example(kw, x=x)


@check("block", "contract", points=1, variant="isolated", examples=(1, 1))
def contract(ctx):
    """attn_norm, attn, ffn_norm, ffn with the contract's parameters; num_kv_heads, eps and rope_base default to
    num_heads, 1e-6 and 10000."""
    contract_params(ctx, NAME, {"dim": 8, "num_heads": 4, "hidden_dim": 12, "num_kv_heads": 2})
    # inputs of mean square about 1e-6, where the default eps decides the output
    defaults_agree(
        ctx,
        name=NAME,
        required={"dim": 8, "num_heads": 2, "hidden_dim": 12},
        inputs=[randn([2, 5, 8], 3, scale=1e-3)],
        given=("dim", "num_heads", "hidden_dim", "num_kv_heads", "eps", "rope_base"),
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
            what=phrase("what.output", name="DecoderBlock"),
            example=ex,
        )


@check("block", "equivalence", points=4, variant="isolated", examples=(3, 25), given=EVERY_KIND)
def equivalence(ctx, cases):
    """Equals the reference (pre-norm: h = x + attn(attn_norm(x)), then h + ffn(ffn_norm(h))) over the
    reference's RMSNorm, CausalSelfAttention and SwiGLU."""
    _equivalence(ctx, cases)


@check("block", "integrated", points=1, examples=(2, 10), given=EVERY_KIND)
def integrated(ctx, cases):
    """Equals the reference with your own RMSNorm, CausalSelfAttention and SwiGLU inside."""
    _equivalence(ctx, cases)


@check("block", "residual", points=1, variant="isolated", examples=(2, 10), given=layer_sizes())
def residual(ctx, c):
    """Pre-norm keeps the residual stream an identity path: with o_proj and down_proj zero (both branches output
    0) the block returns its input unchanged (a norm on the residual path would change it)."""
    kw, state, inputs, ex = setup(ctx, c)
    state = dict(state)
    for name in ("attn.o_proj.weight", "ffn.down_proj.weight"):
        state[name] = torch.zeros_like(state[name])
    got = ctx.sub("forward", name=NAME, kwargs=kw, state=state, inputs=inputs)["out"]
    x = inputs[0]
    if got.shape != x.shape or not torch.allclose(got, x, atol=1e-9, rtol=1e-9):
        raise Fail("fail.lm_block_residual", example=dict(ex, zeroed=["attn.o_proj.weight", "ffn.down_proj.weight"]))


@st.composite
def cache_case(draw):
    c = draw(layer_sizes(("gqa", "mqa", "mha")))
    return ChunkedSizes(**asdict(c), chunks=[draw(st.integers(2, 4)), draw(st.integers(1, 3)), 1])


def _with_cache(ctx, c):
    kw = kwargs_of(c)
    state = ref_state(ctx, NAME, kw, c.seed)
    chunks = [randn([c.B, L, c.D], c.seed + 1 + i) for i, L in enumerate(c.chunks)]
    ex = shown_example(dict(kw, chunks=c.chunks), **{f"x{i}": x for i, x in enumerate(chunks)})
    steps_match(ctx, name=NAME, kwargs=kw, state=state, chunks=chunks, example=ex)


@check("block", "cache", points=2, variant="isolated", examples=(2, 15), given=cache_case())
def cache(ctx, c):
    """With a cache (a prompt, a few tokens, one token), every call equals the reference and the cache is filled:
    the block passes its cache to its attention."""
    _with_cache(ctx, c)


@check("block", "cache_integrated", points=1, examples=(2, 10), given=cache_case())
def cache_integrated(ctx, c):
    """The same with your own parts inside."""
    _with_cache(ctx, c)


@check("block", "devices", points=1, variant="isolated", examples=(1, 5), given=layer_sizes(("gqa",)))
def devices(ctx, c):
    """float32 on each device close to the reference, float16 and bfloat16 finite, and the meta device."""
    kw, state, inputs, ex = setup(ctx, c)
    float32_close(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, example=ex)
    low_precision(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, example=ex)
    meta_runs(ctx, name=NAME, kwargs=kw, inputs=inputs, expected_shape=list(inputs[0].shape), example=ex)
