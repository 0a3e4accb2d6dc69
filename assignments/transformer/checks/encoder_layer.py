"""Checks for ``EncoderLayer`` (task ``encoder_layer``)."""

from assignments.transformer.checks.layers_common import (
    LayerCase,
    layer_case,
    layer_contract,
    layer_devices,
    layer_dropout,
    layer_equivalence,
    padding_invariance,
)
from grader.author import check

NAME = "EncoderLayer"


@check("encoder_layer", "contract", points=1, variant="isolated", examples=(1, 1))
def contract(ctx):
    """Submodules self_attn, ffn, norm1, norm2 with the contract's parameters (both norm_first)."""
    layer_contract(ctx, NAME)


@check("encoder_layer", "equivalence", points=4, variant="isolated", examples=(4, 30))
def equivalence(ctx):
    """Post-LN and Pre-LN, ReLU and GELU, every mask form: equal to the reference, over the reference's parts."""
    layer_equivalence(ctx, NAME, decoder=False)


@check("encoder_layer", "integrated", points=2, examples=(2, 12))
def integrated(ctx):
    """Equal to the reference with your own attention, feed-forward and LayerNorm inside."""
    layer_equivalence(ctx, NAME, decoder=False)


@check(
    "encoder_layer",
    "padding_invariance",
    points=1,
    variant="isolated",
    examples=(2, 12),
    given=layer_case(decoder=False, masks=False).filter(lambda c: c.Lq >= 2),
)
def padding(ctx, c):
    """With a padding mask, what sits at padded positions changes no real position's output."""
    padding_invariance(ctx, NAME, c, decoder=False)


@check("encoder_layer", "dropout", points=1, variant="isolated", examples=(1, 1))
def dropout(ctx):
    """eval() is deterministic with dropout > 0; train() really drops."""
    layer_dropout(
        ctx,
        NAME,
        LayerCase(
            B=2,
            Lq=4,
            Lk=4,
            H=2,
            Dh=3,
            D=6,
            F=10,
            norm_first=False,
            activation="relu",
            mask="none",
            memory_mask=None,
            seed=11,
        ),
        decoder=False,
    )


@check("encoder_layer", "devices", points=1, variant="isolated", examples=(1, 5))
def devices(ctx):
    """Runs in float32 on each device and on the meta device, with masks."""
    layer_devices(ctx, NAME, decoder=False)
