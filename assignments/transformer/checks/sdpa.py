"""Checks for ``scaled_dot_product_attention`` (task ``sdpa``)."""

from dataclasses import asdict, dataclass

import torch
from hypothesis import strategies as st

from assignments.transformer.strategies import AttentionSizes, attention_sizes, make_mask, mask_kinds
from grader.author import (
    Fail,
    check,
    check_tensor,
    float32_runs,
    no_inplace,
    phrase,
    randn,
    run_low_precision,
    seeds,
    shown_example,
)


@dataclass(frozen=True)
class SdpaCase(AttentionSizes):
    """One example of scaled_dot_product_attention: the attention sizes and how the inputs are laid out."""

    lead: str
    """The leading dimensions: ``"BH"`` (``[B, H, L, D]``), ``"B"`` (``[B, L, D]``) or ``""`` (``[L, D]``)."""
    Dv: int
    """The values' last dimension (differs from ``Dh``)."""
    mask: str
    """The mask's form, one of ``MASK_KINDS``."""
    seed: int
    """Seed of the inputs."""
    scale: float
    """Scale of the query and key entries."""

    def example(self, q, k, v, mask):
        """The example a report shows; the leading dimensions show in the shapes."""
        return shown_example({"mask": self.mask, "input_scale": self.scale}, query=q, key=k, value=v, mask=mask)


@st.composite
def sdpa_case(draw):
    s = draw(attention_sizes())
    lead = draw(st.sampled_from(["BH", "B", ""]))
    Dv = draw(st.integers(2, 5).filter(lambda v: v != s.Dh))
    kind = draw(mask_kinds(causal_ok=s.Lq == s.Lk) if lead == "BH" else st.sampled_from(["none", "2d"]))
    scale = draw(st.sampled_from([0.5, 1.0, 3.0]))
    return SdpaCase(**asdict(s), lead=lead, Dv=Dv, mask=kind, seed=draw(seeds()), scale=scale)


def sdpa_inputs(c):
    lead = {"BH": [c.B, c.H], "B": [c.B], "": []}[c.lead]
    q = randn(lead + [c.Lq, c.Dh], c.seed, scale=c.scale)
    k = randn(lead + [c.Lk, c.Dh], c.seed + 1, scale=c.scale)
    v = randn(lead + [c.Lk, c.Dv], c.seed + 2)
    mask = make_mask(c.mask, c.B, c.Lq, c.Lk, c.seed + 3)
    return q, k, v, mask


@check("sdpa", "equivalence", points=5, examples=(5, 40), given=sdpa_case())
def equivalence(ctx, c):
    """Output and weights equal the reference's for every mask form, batch layout and size."""
    q, k, v, mask = sdpa_inputs(c)
    ex = c.example(q, k, v, mask)
    ref, got = ctx.both("sdpa", query=q, key=k, value=v, mask=mask)
    no_inplace(got, "scaled_dot_product_attention", ex)
    check_tensor(got["weights"], ref["weights"], what=phrase("what.weights_word"), example=ex)
    check_tensor(got["out"], ref["out"], what=phrase("what.output_word"), example=ex)


@check("sdpa", "weights", points=2, given=sdpa_case().filter(lambda c: c.mask != "none"))
def weights_properties(ctx, c):
    """Weights are non-negative, each row sums to 1, and blocked entries are exactly 0."""
    q, k, v, mask = sdpa_inputs(c)
    ex = c.example(q, k, v, mask)
    w = ctx.sub("sdpa", query=q, key=k, value=v, mask=mask)["weights"]
    if list(w.shape[-2:]) != [c.Lq, c.Lk]:
        raise Fail(
            "fail.shape",
            what=phrase("what.weights_word"),
            expected=list(q.shape[:-1]) + [c.Lk],
            got=list(w.shape),
            example=ex,
        )
    blocked = ~mask.expand(w.shape)
    if (w[blocked] != 0).any():
        index = [int(i) for i in (blocked & (w != 0)).nonzero()[0]]
        raise Fail("fail.blocked_nonzero", index=index, value=f"{float(w[tuple(index)]):.3g}", example=ex)
    sums = w.sum(-1)
    if (w < 0).any() or not torch.allclose(sums, torch.ones_like(sums), atol=1e-9):
        worst = float((sums - 1).abs().max())
        raise Fail("fail.rows_not_normalised", error=f"{worst:.3g}", example=ex)


@check("sdpa", "dropout", points=1, examples=(2, 6), given=sdpa_case().filter(lambda c: c.lead == "BH" and c.Lk >= 3))
def dropout_used(ctx, c):
    """With a dropout module the returned weights are the dropped ones, and they multiply the values."""
    q, k, v, mask = sdpa_inputs(c)
    ex = c.example(q, k, v, mask)
    clean, got = ctx.both(
        "sdpa", ref_args=dict(query=q, key=k, value=v, mask=mask), query=q, key=k, value=v, mask=mask, dropout_p=0.5
    )
    w, out, clean = got["weights"], got["out"], clean["weights"]
    if w.shape != clean.shape:
        raise Fail(
            "fail.shape", what=phrase("what.weights_word"), expected=list(clean.shape), got=list(w.shape), example=ex
        )
    if torch.allclose(w, clean):
        raise Fail("fail.sdpa_dropout_unused", example=ex)
    if not torch.allclose(out, w @ v, atol=1e-9, rtol=1e-7):
        raise Fail("fail.sdpa_dropout_mismatch", example=ex)


@check("sdpa", "float32", points=1, examples=(2, 10), given=sdpa_case())
def float32(ctx, c):
    """float32 inputs give float32 outputs that agree with the float64 reference on each device."""
    q, k, v, mask = sdpa_inputs(c)
    ex = c.example(q, k, v, mask)
    for device, ref, got in float32_runs(ctx, "sdpa", dict(query=q, key=k, value=v, mask=mask)):
        check_tensor(
            got["out"].cpu(),
            ref["out"].float(),
            what=phrase("what.with_dtype", what=phrase("what.output_word"), dtype="float32"),
            dtype="float32",
            example=dict(ex, device=device),
        )


@check("sdpa", "low_precision", points=0.5, examples=(2, 6), given=sdpa_case().filter(lambda c: c.mask != "none"))
def low_precision(ctx, c):
    """float16 and bfloat16 run with masks, without raising and without NaN or inf."""
    q, k, v, mask = sdpa_inputs(c)
    for dtype in ("float16", "bfloat16"):
        ex = dict(c.example(q, k, v, mask), dtype=dtype)
        got = run_low_precision(
            ctx,
            "sdpa",
            what="scaled_dot_product_attention",
            dtype=dtype,
            example=ex,
            query=q,
            key=k,
            value=v,
            mask=mask,
        )
        if not (torch.isfinite(got["out"].float()).all() and torch.isfinite(got["weights"].float()).all()):
            raise Fail("fail.half_nonfinite", what="scaled_dot_product_attention", dtype=dtype, example=ex)


@check("sdpa", "meta", points=0.5, examples=(1, 4), given=sdpa_case().filter(lambda c: c.mask != "none"))
def meta(ctx, c):
    """On the meta device (a stand-in for a GPU) it runs: nothing is created on the CPU."""
    q, k, v, mask = sdpa_inputs(c)
    ex = c.example(q, k, v, mask)
    got = ctx.sub("sdpa", query=q, key=k, value=v, mask=mask, device="meta")
    if got["out"].device.type != "meta":
        raise Fail(
            "fail.device", what="scaled_dot_product_attention", expected="meta", got=got["out"].device.type, example=ex
        )
