"""What the encoder-layer and decoder-layer checks share."""

from dataclasses import asdict, dataclass

import torch
from hypothesis import strategies as st

from assignments.transformer.strategies import LayerConfig, layer_config, make_mask, mask_kinds
from grader.author import (
    Fail,
    check_tensor,
    contract_params,
    defaults_agree,
    dropout_behaviour,
    equivalent,
    float32_close,
    meta_runs,
    phrase,
    randn,
    ref_state,
    seeds,
    shown_example,
)


@dataclass(frozen=True)
class LayerCase(LayerConfig):
    """One example of an encoder or decoder layer."""

    mask: str
    """The self-attention mask's form, one of ``MASK_KINDS``."""
    memory_mask: str | None
    """The decoder's memory mask's form (``"none"`` for a drawn encoder layer, ``None`` where not given)."""
    seed: int
    """Seed of the inputs and of the parameters."""


@st.composite
def layer_case(draw, *, decoder, masks=True):
    c = draw(layer_config(decoder=decoder))
    mask = draw(mask_kinds(causal_ok=True)) if masks else "none"
    memory_mask = draw(st.sampled_from(["none", "padding", "2d"])) if decoder and masks else "none"
    return LayerCase(**asdict(c), mask=mask, memory_mask=memory_mask, seed=draw(seeds()))


def layer_kwargs(c, dropout=0.0):
    return {
        "d_model": c.D,
        "num_heads": c.H,
        "d_ff": c.F,
        "dropout": dropout,
        "norm_first": c.norm_first,
        "activation": c.activation,
    }


def layer_inputs(c, decoder):
    x = randn([c.B, c.Lq, c.D], c.seed)
    self_mask = make_mask(c.mask, c.B, c.Lq, c.Lq, c.seed + 1)
    if not decoder:
        return [x, self_mask]
    memory = randn([c.B, c.Lk, c.D], c.seed + 2)
    memory_mask = make_mask(c.memory_mask, c.B, c.Lq, c.Lk, c.seed + 3)
    return [x, memory, self_mask, memory_mask]


def setup(ctx, name, c, decoder, dropout=0.0):
    kw = layer_kwargs(c, dropout)
    inputs = layer_inputs(c, decoder)
    return (
        kw,
        ref_state(ctx, name, kw, c.seed),
        inputs,
        shown_example(
            dict(layer_kwargs(c), mask=c.mask, memory_mask=c.memory_mask),
            **{f"input{i}": t for i, t in enumerate(inputs) if t is not None},
        ),
    )


def padding_invariance(ctx, name, c, decoder):
    """Values at padded key positions must not change any output at a real position."""
    kw, state, inputs, ex = setup(ctx, name, c, decoder)
    B, L = c.B, c.Lq
    lengths = torch.randint(1, L + 1, (B,), generator=torch.Generator().manual_seed(c.seed))
    lengths[0] = max(1, L - 1)
    keep = torch.arange(L).unsqueeze(0) < lengths.unsqueeze(1)  # [B, L]
    mask = keep.view(B, 1, 1, L)
    if decoder:
        mask = mask & torch.ones(L, L, dtype=torch.bool).tril().view(1, 1, L, L)
    inputs[1 if not decoder else 2] = mask
    noise = randn(inputs[0].shape, c.seed + 9, scale=5.0) * (~keep).unsqueeze(-1)
    changed = list(inputs)
    changed[0] = inputs[0] + noise
    a = ctx.sub("forward", name=name, kwargs=kw, state=state, inputs=inputs)["out"]
    b = ctx.sub("forward", name=name, kwargs=kw, state=state, inputs=changed)["out"]
    real = keep.unsqueeze(-1).expand_as(a)
    if not torch.allclose(a[real], b[real], atol=1e-8, rtol=1e-6):
        raise Fail("fail.padding_leak", what=name, example=dict(ex, lengths=lengths.tolist()))


def causal_no_leak(ctx, name, kw, state, inputs, ex, *, grad_input=0, future_from, perturb, method="forward"):
    """Outputs before ``future_from`` ignore later inputs: by perturbation and by exact-zero gradients."""
    a = ctx.sub("forward", name=name, kwargs=kw, state=state, inputs=inputs, method=method)["out"]
    b = ctx.sub("forward", name=name, kwargs=kw, state=state, inputs=perturb(inputs), method=method)["out"]
    t = future_from
    if a.shape != b.shape or not torch.allclose(a[:, :t], b[:, :t], atol=1e-9, rtol=1e-7):
        diff = (a[:, :t] - b[:, :t]).abs().amax(dim=(0, 2)) if a.shape == b.shape else None
        first = int((diff > 1e-9).nonzero()[0]) if diff is not None and (diff > 1e-9).any() else 0
        raise Fail("fail.future_leak", what=name, position=first, future_from=t, example=ex)
    g = ctx.sub(
        "forward",
        name=name,
        kwargs=kw,
        state=state,
        inputs=inputs,
        method=method,
        grad={"input": grad_input, "upto": t},
    )["grad"]
    if g is not None and (g[:, t:] != 0).any():  # None: the submodule was not called (perturbation judged it)
        raise Fail("fail.future_grad", what=name, future_from=t, example=ex)


# -- what both layer tasks check the same way --------------------------------------------------------
EQUAL_LENGTHS = LayerCase(
    B=2,
    Lq=4,
    Lk=4,
    H=2,
    Dh=3,
    D=6,
    F=5,
    norm_first=False,
    activation="relu",
    mask="combined",
    memory_mask="padding",
    seed=9,
)
"""A decoder layer's memory as long as its target: drawn lengths differ on purpose (a transpose then shows), so code
that takes another path when the shapes agree would go unseen."""


def layer_equivalence(ctx, name, *, decoder):
    """Equal to the reference over drawn sizes, norm placements, activations and masks."""

    @ctx.given(layer_case(decoder=decoder))
    def prop(c):
        kw, state, inputs, ex = setup(ctx, name, c, decoder)
        equivalent(
            ctx, name=name, kwargs=kw, state=state, inputs=inputs, what=phrase("what.output", name=name), example=ex
        )

    prop()
    if decoder:
        ctx.explicit(prop, (EQUAL_LENGTHS,))


def layer_contract(ctx, name):
    """The contract's submodules and parameters, for both norm placements; the constructor's defaults."""
    for norm_first in (False, True):
        contract_params(ctx, name, {"d_model": 6, "num_heads": 2, "d_ff": 10, "dropout": 0.0, "norm_first": norm_first})
    x = randn([2, 3, 6], 8)
    inputs = [x, randn([2, 4, 6], 9), None, None] if name == "DecoderLayer" else [x, None]
    defaults_agree(
        ctx,
        name=name,
        required={"d_model": 6, "num_heads": 2, "d_ff": 10},
        inputs=inputs,
        given=("d_model", "num_heads", "d_ff", "dropout", "norm_first", "activation"),
        train_differs=True,
    )


def layer_dropout(ctx, name, case, *, decoder):
    """eval() is deterministic with dropout 0.5; train() really drops; and the residual dropout is there: with
    dropout=1.0 and the (reference) sublayers' own dropout off, every sublayer's output is dropped before its
    residual add, exactly as in the reference."""
    kw, state, inputs, ex = setup(ctx, name, case, decoder, dropout=0.5)
    dropout_behaviour(ctx, name=name, kwargs=kw, state=state, inputs=inputs, example=ex)
    if ctx.variant == "integrated" and not ctx.kit:
        # the sublayers' dropout can be switched off only where they are the reference's: a full kit that could not
        # isolate this layer says nothing of its residual dropout. A student kit, which never isolates, does: every
        # sublayer's output is dropped whole, so what the student's sublayers compute does not matter here (their
        # own nn.Dropout layers quiet or not), and a failing norm beneath blocks this check, as any failing task does
        return
    full = dict(kw, dropout=1.0)
    ref, got = ctx.both(
        "forward",
        name=name,
        kwargs=full,
        state=state,
        inputs=inputs,
        train=True,
        quiet=("self_attn", "cross_attn", "ffn"),
    )
    try:
        check_tensor(got["out"], ref["out"], what=phrase("what.output_train_dropout", name=name), example=ex)
    except Fail:
        raise Fail(
            "fail.residual_dropout",
            what=name,
            example=dict(ex, config=dict(ex.get("config", {}), dropout=1.0, mode="train")),
        ) from None


def layer_devices(ctx, name, *, decoder):
    """float32 on each device and the meta device, with masks."""

    @ctx.given(layer_case(decoder=decoder).filter(lambda c: c.mask != "none"))
    def prop(c):
        kw, state, inputs, ex = setup(ctx, name, c, decoder)
        float32_close(ctx, name=name, kwargs=kw, state=state, inputs=inputs, example=ex)
        meta_runs(ctx, name=name, kwargs=kw, inputs=inputs, expected_shape=list(inputs[0].shape), example=ex)

    prop()
