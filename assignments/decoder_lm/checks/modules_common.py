"""What the checks of the decoder's modules share: attention sizes, the model's weights, float32-aware comparison."""

from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import (
    MISMATCH,
    TOL,
    Case,
    Fail,
    check_tensor,
    no_inplace,
    phrase,
    random_state,
    reference_memo,
    returned,
    seeds,
)

FLOAT32_MARGIN = 4.0
"""As ``grader.checks.common.FLOAT32_MARGIN``: how much further from the float64 result than the reference's own
float32 run a submission that computes in float32 inside may be."""


def output(result, what, example=None):
    """The tensor a ``call`` probe returned; a plain failure when the function returned something else."""
    if "out" not in result:
        raise Fail("fail.not_tensor", what=what, got=returned(result), example=example)
    return result["out"]


# -- attention sizes ----------------------------------------------------------------------------------
KV_KINDS = ("mha", "mqa", "gqa")
"""How the key/value heads relate to the query heads: ``Hkv == H``, ``Hkv == 1``, ``1 < Hkv < H``."""


def heads_for(kind, draw):
    """``(H, Hkv)`` of a kind (``KV_KINDS``), drawn."""
    if kind == "mha":
        H = draw(st.integers(1, 3))
        return H, H
    if kind == "mqa":
        return draw(st.integers(2, 4)), 1
    Hkv = draw(st.integers(2, 3))
    return Hkv * draw(st.integers(2, 3)), Hkv


@dataclass(frozen=True)
class HeadSharing(Case):
    """One kind of head sharing, with its sizes."""

    kind: str
    """One of ``KV_KINDS``."""
    H: int
    """Number of query heads."""
    Hkv: int
    """Number of key/value heads (divides ``H``)."""
    Lq: int
    """Number of queries."""
    Lk: int
    """Number of keys: ``Lq``, or more (new tokens over a cache)."""


@dataclass(frozen=True)
class AttentionCase(Case):
    """One example of causal_attention: one ``HeadSharing`` per kind drawn."""

    B: int
    """Batch size."""
    Dh: int
    """Head dimension."""
    seed: int
    """Seed of the inputs."""
    cut: int
    """A number a property may use to pick a position."""
    cases: tuple
    """The ``HeadSharing`` of each kind; the first has ``Lq == Lk``, every other ``Lq < Lk``."""


@st.composite
def attention_case(draw, kinds=KV_KINDS, min_lq=1):
    """An ``AttentionCase``: one size per kind of head sharing; the first kind has ``Lq == Lk``, every other
    ``Lq < Lk`` (new tokens over a cache)."""
    B = draw(st.integers(1, 3))
    Dh = 2 * draw(st.integers(1, 3))
    cases = []
    for i, kind in enumerate(kinds):
        H, Hkv = heads_for(kind, draw)
        Lq = draw(st.integers(min_lq, 4))
        Lk = Lq if i == 0 else Lq + draw(st.integers(1, 3))
        cases.append(HeadSharing(kind=kind, H=H, Hkv=Hkv, Lq=Lq, Lk=Lk))
    seed = draw(seeds())
    return AttentionCase(B=B, Dh=Dh, seed=seed, cut=draw(st.integers(0, 5)), cases=tuple(cases))


@dataclass(frozen=True)
class LayerSizes(Case):
    """The sizes of a layer with heads."""

    B: int
    """Batch size."""
    L: int
    """Sequence length."""
    H: int
    """Number of query heads."""
    Hkv: int
    """Number of key/value heads."""
    Dh: int
    """Head dimension (even: rotary embeddings pair its entries)."""
    D: int
    """Model dimension, ``H * Dh``."""
    F: int
    """The feed-forward network's hidden size."""
    kind: str
    """The kind of head sharing, one of ``KV_KINDS``."""
    seed: int
    """Seed of the inputs and of the parameters."""


@st.composite
def layer_sizes(draw, kinds=KV_KINDS):
    """``LayerSizes``, ``kind`` drawn from ``kinds`` (a property loops over kinds itself when it must see each in
    the quick profile)."""
    kind = draw(st.sampled_from(kinds))
    H, Hkv = heads_for(kind, draw)
    Dh = 2 * draw(st.integers(1, 2))
    B = draw(st.integers(1, 3))
    L = draw(st.integers(1, 5))
    return LayerSizes(B=B, L=L, H=H, Hkv=Hkv, Dh=Dh, D=H * Dh, F=draw(st.integers(2, 9)), kind=kind, seed=draw(seeds()))


@dataclass(frozen=True)
class ChunkedSizes(LayerSizes):
    """Sizes of a layer fed its input in chunks, with one cache."""

    chunks: list
    """The length of each chunk, in the order fed."""


EVERY_KIND = st.tuples(layer_sizes(("mha",)), layer_sizes(("mqa",)), layer_sizes(("gqa",)))
"""One layer of each kind of head sharing (Hkv == H, Hkv == 1, 1 < Hkv < H) per example."""


# -- the model's weights ------------------------------------------------------------------------------
_TABLES = reference_memo()
"""DecoderLM's constructor arguments -> the reference's parameter names and shapes."""


def model_state(ctx, kwargs, seed):
    """Random weights for ``DecoderLM(**kwargs)`` under the names ``named_parameters()`` lists (the tied head
    once, as ``embed.weight``). The generic ``ref_state`` cannot serve: it names the head twice, and loading
    refuses a shared tensor."""
    key = tuple(sorted(kwargs.items()))
    if key not in _TABLES:
        values = ctx.ref("params", name="DecoderLM", kwargs=kwargs)["values"]
        _TABLES[key] = [(n, list(v.shape)) for n, v in values.items()]
    return random_state(_TABLES[key], seed)


# -- comparing in float64, accepting a float32 computation inside -----------------------------------------
def close_to_reference(ctx, got, expected, *, what, example, ref32=None):
    """``check_tensor(got, expected)`` in float64; when only the values differ, accept ``got`` if it is no
    further from ``expected`` than ``FLOAT32_MARGIN`` times the reference's own float32 run (``ref32()``, a
    callable giving that tensor) is: the rounding of a float32 computation inside, noted once. Where the grading
    records an answer bank, ``ref32()`` is asked whatever ``got`` is (``CheckContext.ref_ahead``)."""
    if ref32 is not None and ctx.records:
        ref32()
    try:
        check_tensor(got, expected, what=what, example=example)
    except Fail as fail:
        if fail.key not in MISMATCH or ref32 is None:
            raise
        r32 = ref32().to(torch.float64)
        if r32.shape != expected.shape or not torch.isfinite(r32).all():
            raise
        atol, rtol = TOL["float64"]
        allowed = atol + rtol * expected.abs() + FLOAT32_MARGIN * float((r32 - expected).abs().max())
        if not bool(((got.to(torch.float64) - expected).abs() <= allowed).all()):
            raise
        ctx.note("note.float32_inside", what=what)


def construct_raises(ctx, name, kwargs, key, **params):
    """Fail with ``key`` unless ``name(**kwargs)`` raises ``ValueError``."""
    got = ctx.sub("construct", name=name, kwargs=kwargs)
    if got["raised"] != "ValueError":
        raise Fail(key, raised=got["raised"] or "nothing", example={"config": kwargs}, **params)


HALF_TOL = {"float16": (2e-2, 2e-2)}
"""``(atol, rtol)`` for a float16 output of order 1 against float64 on the same rounded inputs: a few units in the
last place of the format, far below what a computation done in float16 itself loses (squares that overflow;
positions above 2048 that float16 cannot hold). bfloat16 keeps 8 bits: a softmax over scores of order 10 already
moves its weights by several percent, so there only the dtype and finite values are checked."""


def half_close(ctx, *, name, kwargs, state, inputs, example, method="forward"):
    """In float16 and bfloat16 the output keeps the input's dtype and is finite; in float16 it also agrees with the
    reference's float64 run on the same (rounded) inputs within ``HALF_TOL``."""
    from grader.author import run_low_precision

    for dtype in ("float16", "bfloat16"):
        ex = dict(example or {}, dtype=dtype)
        got = run_low_precision(
            ctx,
            "forward",
            what=name,
            dtype=dtype,
            example=ex,
            name=name,
            kwargs=kwargs,
            state=state,
            inputs=inputs,
            method=method,
        )["out"]
        if got.dtype != getattr(torch, dtype):
            raise Fail(
                "fail.dtype",
                what=phrase("what.on_input", call=f"{name}.{method}", dtype=dtype),
                expected=dtype,
                got=str(got.dtype).replace("torch.", ""),
                example=ex,
            )
        if not torch.isfinite(got.float()).all():
            raise Fail("fail.half_nonfinite", what=name, dtype=dtype, example=ex)
        if dtype not in HALF_TOL:
            continue
        half = getattr(torch, dtype)
        rounded = [
            x.to(half).to(torch.float64) if isinstance(x, torch.Tensor) and x.is_floating_point() else x for x in inputs
        ]
        ref = ctx.ref("forward", name=name, kwargs=kwargs, state=state, inputs=rounded, method=method)["out"]
        atol, rtol = HALF_TOL[dtype]
        check_tensor(
            got.to(torch.float64),
            ref,
            what=phrase("what.in_dtype", what=phrase("what.output", name=name), dtype=dtype),
            example=ex,
            atol=atol,
            rtol=rtol,
        )


def steps_match(ctx, *, name, kwargs, state, chunks, example, inspect=None):
    """``name(**kwargs)`` fed ``chunks`` one after the other with one cache (probe ``lm_steps``) equals the
    reference: the cache's length after each call, then (after ``inspect(got)``, a hook for more telling
    failures) every call's output and the keys and values the cache holds at the end."""
    args = {"name": name, "kwargs": kwargs, "state": state, "chunks": chunks}
    ref, got = ctx.both("lm_steps", **args)
    no_inplace(got, f"{name}.forward", example)
    seen = 0
    for i, length in enumerate(got["lengths"]):
        seen += chunks[i].shape[1]
        if length != seen:
            raise Fail("fail.lm_cache_length", step=i + 1, got=length, expected=seen, example=dict(example, call=i + 1))
    if got["keys"] is None or got["values"] is None:
        raise Fail("fail.lm_cache_none", what="KVCache.keys", update=len(chunks), example=example)
    if inspect is not None:
        inspect(got)
    ref32 = {}

    def rerun(key, i=None):
        if "r" not in ref32:
            ref32["r"] = ctx.ref("lm_steps", **args, dtype="float32")
        return ref32["r"][key] if i is None else ref32["r"][key][i]

    seen = 0
    for i, (out, expected) in enumerate(zip(got["outs"], ref["outs"])):
        close_to_reference(
            ctx,
            out,
            expected,
            what=phrase("what.output_call", name=name, call=i + 1, offset=seen),
            example=dict(example, call=i + 1, offset=seen),
            ref32=lambda i=i: rerun("outs", i),
        )
        seen += chunks[i].shape[1]
    for key in ("keys", "values"):
        close_to_reference(
            ctx, got[key], ref[key], what=f"KVCache.{key}", example=example, ref32=lambda key=key: rerun(key)
        )
