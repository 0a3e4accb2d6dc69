"""Checks for ``causal_attention`` (task ``gqa``): grouped-query causal attention, aligned to the end."""

import torch

from assignments.decoder_lm.checks.modules_common import HALF_TOL, attention_case, no_inplace, output
from grader.author import Fail, check, check_tensor, float32_runs, phrase, randn, run_low_precision, shown_example

NAME = "causal_attention"


def inputs_of(c, s, i=0):
    """``q [B, H, Lq, Dh]``, ``k`` and ``v [B, Hkv, Lk, Dh]`` of case ``s`` of example ``c``."""
    seed = c.seed + 10 * i
    q = randn([c.B, s.H, s.Lq, c.Dh], seed, scale=1.5)
    k = randn([c.B, s.Hkv, s.Lk, c.Dh], seed + 1, scale=1.5)
    v = randn([c.B, s.Hkv, s.Lk, c.Dh], seed + 2)
    return q, k, v


def shown(s, q, k, v):
    """The example a report shows of head sharing ``s`` on ``q``, ``k``, ``v``."""
    return shown_example({"num_heads": s.H, "num_kv_heads": s.Hkv, "kind": s.kind}, q=q, k=k, v=v)


@check("gqa", "equivalence", points=4, examples=(4, 30), given=attention_case())
def equivalence(ctx, c):
    """Equals the reference for Hkv == H (plain multi-head), Hkv == 1 (multi-query) and 1 < Hkv < H, with
    Lq == Lk and with fewer queries than keys (the causal pattern aligned to the end)."""
    for i, s in enumerate(c.cases):
        q, k, v = inputs_of(c, s, i)
        ex = shown(s, q, k, v)
        ref, got = ctx.both("call", name=NAME, args=[q, k, v])
        no_inplace(got, NAME, ex)
        check_tensor(output(got, NAME, ex), ref["out"], what=phrase("what.output", name="causal_attention"), example=ex)


@check("gqa", "grouping", points=2, examples=(3, 20), given=attention_case(kinds=("gqa", "mqa")))
def grouping(ctx, c):
    """Query head h reads key/value head h // (H // Hkv): the output equals attention over the key/value heads
    repeated with repeat_interleave (consecutive query heads share one; all share it when Hkv == 1)."""
    for i, s in enumerate(c.cases):
        q, k, v = inputs_of(c, s, i)
        ex = shown(s, q, k, v)
        g = s.H // s.Hkv
        got = output(ctx.sub("call", name=NAME, args=[q, k, v]), NAME, ex)
        wide = output(
            ctx.sub("call", name=NAME, args=[q, k.repeat_interleave(g, 1), v.repeat_interleave(g, 1)]), NAME, ex
        )
        if got.shape == wide.shape and torch.allclose(got, wide, atol=1e-9, rtol=1e-7):
            continue
        tiled = output(ctx.ref("call", name=NAME, args=[q, k.repeat(1, g, 1, 1), v.repeat(1, g, 1, 1)]), NAME)
        if s.Hkv > 1 and got.shape == tiled.shape and torch.allclose(got, tiled, atol=1e-9, rtol=1e-7):
            raise Fail("fail.lm_gqa_tiled", heads=s.H, kv_heads=s.Hkv, example=ex)
        raise Fail("fail.lm_gqa_grouping", heads=s.H, kv_heads=s.Hkv, example=ex)


@check("gqa", "causal", points=3, examples=(4, 30), given=attention_case(min_lq=2))
def causal(ctx, c):
    """No query sees a later key: changing keys and values after a query's position leaves its output unchanged,
    and its gradient with respect to them is exactly 0 (blocked weights are exactly 0), with Lq < Lk too."""
    for i, s in enumerate(c.cases):
        q, k, v = inputs_of(c, s, i)
        t = c.cut % (s.Lq - 1)  # the last query that must not see the changed keys
        first = s.Lk - s.Lq + t + 1  # the first key it must not see
        ex = dict(shown(s, q, k, v), query=t, future_keys_from=first)
        k2, v2 = k.clone(), v.clone()
        k2[:, :, first:] = randn(list(k[:, :, first:].shape), c.seed + 7, scale=3.0)
        v2[:, :, first:] = randn(list(v[:, :, first:].shape), c.seed + 8, scale=3.0)
        a = output(ctx.sub("call", name=NAME, args=[q, k, v]), NAME, ex)
        b = output(ctx.sub("call", name=NAME, args=[q, k2, v2]), NAME, ex)
        if a.shape != b.shape or not torch.allclose(a[:, :, : t + 1], b[:, :, : t + 1], atol=1e-9, rtol=1e-7):
            raise Fail("fail.future_leak", what=NAME, position=t, future_from=first, example=ex)
        got = ctx.sub("lm_attention_grad", q=q, k=k, v=v, upto=t + 1)
        for which in ("grad_k", "grad_v"):
            if (got[which][:, :, first:] != 0).any():
                raise Fail(
                    "fail.lm_gqa_future_grad",
                    query=t,
                    future_from=first,
                    input="k" if which == "grad_k" else "v",
                    example=ex,
                )


@check("gqa", "devices", points=1, examples=(1, 5), given=attention_case())
def devices(ctx, c):
    """float32 on each device, float16 close to the reference, bfloat16 finite, and the meta device."""
    for i, s in enumerate(c.cases):
        q, k, v = inputs_of(c, s, i)
        ex = shown(s, q, k, v)
        for device, ref, got in float32_runs(ctx, "call", {"name": NAME, "args": [q, k, v]}):
            out = output(got, NAME, ex)
            if out.dtype != torch.float32:
                raise Fail(
                    "fail.dtype",
                    what=phrase("what.on_input", call=NAME, dtype="float32"),
                    expected="float32",
                    got=str(out.dtype).replace("torch.", ""),
                    example=dict(ex, device=device),
                )
            check_tensor(
                out.cpu(),
                ref["out"].float(),
                what=phrase("what.with_dtype", what=phrase("what.output", name="causal_attention"), dtype="float32"),
                dtype="float32",
                example=dict(ex, device=device),
            )
        for dtype in ("float16", "bfloat16"):
            half = getattr(torch, dtype)
            exd = dict(ex, dtype=dtype)
            out = output(
                run_low_precision(ctx, "call", what=NAME, dtype=dtype, example=exd, name=NAME, args=[q, k, v]),
                NAME,
                exd,
            )
            if out.dtype != half:
                raise Fail(
                    "fail.dtype",
                    what=phrase("what.on_input", call=NAME, dtype=dtype),
                    expected=dtype,
                    got=str(out.dtype).replace("torch.", ""),
                    example=exd,
                )
            if not torch.isfinite(out.float()).all():
                raise Fail("fail.half_nonfinite", what=NAME, dtype=dtype, example=exd)
            if dtype not in HALF_TOL:
                continue
            ref = ctx.ref("call", name=NAME, args=[x.to(half).double() for x in (q, k, v)])["out"]
            atol, rtol = HALF_TOL[dtype]
            check_tensor(
                out.double(),
                ref,
                what=phrase("what.in_dtype", what=phrase("what.output", name="causal_attention"), dtype=dtype),
                example=exd,
                atol=atol,
                rtol=rtol,
            )
        got = ctx.sub("call", name=NAME, args=[q, k, v], device="meta")
        out = output(got, NAME, ex)
        if out.device.type != "meta":
            raise Fail("fail.device", what=NAME, expected="meta", got=out.device.type, example=ex)
        if list(out.shape) != list(q.shape):
            raise Fail("fail.shape", what=f"{NAME} (meta)", expected=list(q.shape), got=list(out.shape), example=ex)
