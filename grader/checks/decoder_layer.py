"""Checks for ``DecoderLayer`` (task ``decoder_layer``)."""


from grader.checks.base import check
from grader.checks.common import contract_params, dropout_behaviour, equivalent, float32_close, meta_runs
from grader.checks.layers_common import causal_no_leak, layer_case, setup
from grader.strategies import randn

NAME = "DecoderLayer"


def _equivalence(ctx):
    @ctx.given(layer_case(decoder=True))
    def prop(c):
        kw, state, inputs, ex = setup(ctx, NAME, c, True)
        equivalent(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, what="DecoderLayer output", example=ex)

    prop()


@check("decoder_layer", "contract", points=1, examples=(1, 1))
def contract(ctx):
    """Submodules self_attn, cross_attn, ffn, norm1, norm2, norm3 with the contract's parameters."""
    for norm_first in (False, True):
        contract_params(ctx, NAME, {"d_model": 6, "num_heads": 2, "d_ff": 10, "dropout": 0.0,
                                    "norm_first": norm_first})


@check("decoder_layer", "equivalence", points=4, weight="isolated", examples=(4, 30))
def equivalence(ctx):
    """Post-LN and Pre-LN, both masks in every form, Lt != Ls: equal to the reference, over the reference's parts."""
    _equivalence(ctx)


@check("decoder_layer", "integrated", points=1.5, examples=(2, 12))
def integrated(ctx):
    """Equal to the reference with your own attention, feed-forward and LayerNorm inside."""
    _equivalence(ctx)


@check("decoder_layer", "causal", points=1.5, weight="isolated", examples=(2, 12))
def causal(ctx):
    """With a causal mask, no output looks at a later position (perturbation and exact-zero gradients)."""

    @ctx.given(layer_case(decoder=True, masks=False).filter(lambda c: c["Lq"] >= 2))
    def prop(c):
        c = dict(c, mask="causal")
        kw, state, inputs, ex = setup(ctx, NAME, c, True)
        t = max(1, c["Lq"] // 2)

        def perturb(xs):
            xs = list(xs)
            noise = randn(xs[0].shape, c["seed"] + 5, scale=3.0)
            noise[:, :t] = 0
            xs[0] = xs[0] + noise
            return xs

        causal_no_leak(ctx, NAME, kw, state, inputs, ex, future_from=t, perturb=perturb)

    prop()


@check("decoder_layer", "dropout", points=1, weight="isolated", examples=(1, 1))
def dropout(ctx):
    """eval() is deterministic with dropout > 0; train() really drops."""
    c = {"B": 2, "Lq": 4, "Lk": 3, "H": 2, "Dh": 3, "D": 6, "F": 10, "norm_first": True, "activation": "relu",
         "mask": "causal", "memory_mask": "none", "seed": 13}
    kw, state, inputs, ex = setup(ctx, NAME, c, True, dropout=0.5)
    dropout_behaviour(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, example=ex)


@check("decoder_layer", "devices", points=1, weight="isolated", examples=(1, 5))
def devices(ctx):
    """Runs in float32 on each device and on the meta device, with masks."""

    @ctx.given(layer_case(decoder=True).filter(lambda c: c["mask"] != "none"))
    def prop(c):
        kw, state, inputs, ex = setup(ctx, NAME, c, True)
        float32_close(ctx, name=NAME, kwargs=kw, state=state, inputs=inputs, example=ex)
        meta_runs(ctx, name=NAME, kwargs=kw, inputs=inputs, expected_shape=list(inputs[0].shape), example=ex)

    prop()


