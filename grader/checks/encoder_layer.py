"""Checks for ``EncoderLayer`` (task ``encoder_layer``)."""

from grader.checks.base import check
from grader.checks.common import contract_params, dropout_behaviour, equivalent, float32_close, meta_runs
from grader.checks.layers_common import layer_case, padding_invariance, setup

NAME = "EncoderLayer"


def _equivalence(ctx):
    @ctx.given(layer_case(decoder=False))
    def prop(c):
        kw, state, inputs, ex = setup(ctx, NAME, c, False)
        equivalent(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, what="EncoderLayer output", example=ex)

    prop()


@check("encoder_layer", "contract", points=1, examples=(1, 1))
def contract(ctx):
    """Submodules self_attn, ffn, norm1, norm2 with the contract's parameters (both norm_first)."""
    for norm_first in (False, True):
        contract_params(ctx, NAME, {"d_model": 6, "num_heads": 2, "d_ff": 10, "dropout": 0.0,
                                    "norm_first": norm_first})


@check("encoder_layer", "equivalence", points=4, weight="isolated", examples=(4, 30))
def equivalence(ctx):
    """Post-LN and Pre-LN, ReLU and GELU, every mask form: equal to the reference, over the reference's parts."""
    _equivalence(ctx)


@check("encoder_layer", "integrated", points=2, examples=(2, 12))
def integrated(ctx):
    """Equal to the reference with your own attention, feed-forward and LayerNorm inside."""
    _equivalence(ctx)


@check("encoder_layer", "padding_invariance", points=1, weight="isolated", examples=(2, 12))
def padding(ctx):
    """With a padding mask, what sits at padded positions changes no real position's output."""

    @ctx.given(layer_case(decoder=False, masks=False).filter(lambda c: c["Lq"] >= 2))
    def prop(c):
        padding_invariance(ctx, NAME, c, decoder=False)

    prop()


@check("encoder_layer", "dropout", points=1, weight="isolated", examples=(1, 1))
def dropout(ctx):
    """eval() is deterministic with dropout > 0; train() really drops."""
    c = {"B": 2, "Lq": 4, "Lk": 4, "H": 2, "Dh": 3, "D": 6, "F": 10, "norm_first": False, "activation": "relu",
         "mask": "none", "seed": 11}
    kw, state, inputs, ex = setup(ctx, NAME, c, False, dropout=0.5)
    dropout_behaviour(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, example=ex)


@check("encoder_layer", "devices", points=1, weight="isolated", examples=(1, 5))
def devices(ctx):
    """Runs in float32 on each device and on the meta device, with masks."""

    @ctx.given(layer_case(decoder=False).filter(lambda c: c["mask"] != "none"))
    def prop(c):
        kw, state, inputs, ex = setup(ctx, NAME, c, False)
        float32_close(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, example=ex)
        meta_runs(ctx, name=NAME, kwargs=kw, inputs=inputs, expected_shape=list(inputs[0].shape), example=ex)

    prop()
