"""Checks for ``DecoderLayer`` (task ``decoder_layer``)."""

from assignments.transformer.checks.layers_common import (
    LayerCase,
    causal_no_leak,
    layer_case,
    layer_contract,
    layer_devices,
    layer_dropout,
    layer_equivalence,
    setup,
)
from grader.author import check, randn

NAME = "DecoderLayer"


@check("decoder_layer", "contract", points=1, variant="isolated", examples=(1, 1))
def contract(ctx):
    """Submodules self_attn, cross_attn, ffn, norm1, norm2, norm3 with the contract's parameters."""
    layer_contract(ctx, NAME)


@check("decoder_layer", "equivalence", points=4, variant="isolated", examples=(4, 30))
def equivalence(ctx):
    """Post-LN and Pre-LN, both masks in every form, Lt != Ls: equal to the reference, over the reference's parts."""
    layer_equivalence(ctx, NAME, decoder=True)


@check("decoder_layer", "integrated", points=1.5, examples=(2, 12))
def integrated(ctx):
    """Equal to the reference with your own attention, feed-forward and LayerNorm inside."""
    layer_equivalence(ctx, NAME, decoder=True)


@check(
    "decoder_layer",
    "causal",
    points=1.5,
    variant="isolated",
    examples=(2, 12),
    given=layer_case(decoder=True, masks=False).filter(lambda c: c.Lq >= 2),
)
def causal(ctx, c):
    """With a causal mask, no output looks at a later position (perturbation and exact-zero gradients)."""
    c = c.replace(mask="causal")
    kw, state, inputs, ex = setup(ctx, NAME, c, True)
    t = max(1, c.Lq // 2)

    def perturb(xs):
        xs = list(xs)
        noise = randn(xs[0].shape, c.seed + 5, scale=3.0)
        noise[:, :t] = 0
        xs[0] = xs[0] + noise
        return xs

    causal_no_leak(ctx, NAME, kw, state, inputs, ex, future_from=t, perturb=perturb)


@check("decoder_layer", "dropout", points=1, variant="isolated", examples=(1, 1))
def dropout(ctx):
    """eval() is deterministic with dropout > 0; train() really drops."""
    layer_dropout(
        ctx,
        NAME,
        LayerCase(
            B=2,
            Lq=4,
            Lk=3,
            H=2,
            Dh=3,
            D=6,
            F=10,
            norm_first=True,
            activation="relu",
            mask="causal",
            memory_mask="none",
            seed=13,
        ),
        decoder=True,
    )


@check("decoder_layer", "devices", points=1, variant="isolated", examples=(1, 5))
def devices(ctx):
    """Runs in float32 on each device and on the meta device, with masks."""
    layer_devices(ctx, NAME, decoder=True)
