"""Checks for ``Encoder``, ``Decoder`` and ``Transformer`` (task ``model``)."""

import math
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from assignments.transformer.checks.layers_common import causal_no_leak
from assignments.transformer.strategies import make_mask
from grader.author import (
    Case,
    Fail,
    check,
    contract_params,
    distinct_ints,
    equivalent,
    float32_close,
    meta_runs,
    method_defaults,
    phrase,
    randn,
    random_tokens,
    ref_state,
    seeds,
    shown_example,
)

PAD = 0


@dataclass(frozen=True)
class ModelCase(Case):
    """One example of the whole Transformer."""

    B: int
    """Batch size."""
    Ls: int
    """Source length."""
    Lt: int
    """Target length."""
    H: int
    """Number of heads."""
    D: int
    """Model dimension (even: the positional table needs it)."""
    Vs: int
    """Source vocabulary size."""
    Vt: int
    """Target vocabulary size."""
    F: int
    """The feed-forward network's hidden size (d_ff)."""
    N: int
    """Number of layers of the encoder and of the decoder."""
    norm_first: bool
    """Pre-LN (True) or Post-LN (False)."""
    activation: str
    """The feed-forward activation: ``"relu"`` or ``"gelu"``."""
    masks: bool
    """Whether a source padding mask and a combined target mask are given."""
    seed: int
    """Seed of the inputs and of the parameters."""


@st.composite
def model_case(draw, *, masks=True):
    B, Ls, Lt = draw(distinct_ints(3, min_value=1, max_value=6))
    H = draw(st.integers(1, 3))
    Dh = 2 * draw(st.integers(1, 2))  # d_model is even (the positional table needs it)
    Vs, Vt = draw(distinct_ints(2, min_value=5, max_value=13))
    F = draw(st.integers(2, 10))
    N = draw(st.integers(1, 2))
    norm_first = draw(st.booleans())
    activation = draw(st.sampled_from(["relu", "gelu"]))
    with_masks = masks and draw(st.booleans())
    return ModelCase(
        B=B,
        Ls=Ls,
        Lt=Lt,
        H=H,
        D=H * Dh,
        Vs=Vs,
        Vt=Vt,
        F=F,
        N=N,
        norm_first=norm_first,
        activation=activation,
        masks=with_masks,
        seed=draw(seeds()),
    )


def model_kwargs(c, dropout=0.0):
    return {
        "src_vocab_size": c.Vs,
        "tgt_vocab_size": c.Vt,
        "d_model": c.D,
        "num_heads": c.H,
        "d_ff": c.F,
        "num_layers": c.N,
        "max_len": 32,
        "dropout": dropout,
        "norm_first": c.norm_first,
        "activation": c.activation,
    }


def model_inputs(c):
    src = random_tokens([c.B, c.Ls], c.Vs, c.seed, low=1)
    tgt = random_tokens([c.B, c.Lt], c.Vt, c.seed + 1, low=1)
    if not c.masks:
        return [src, tgt, None, None]
    src_mask = make_mask("padding", c.B, 1, c.Ls, c.seed + 2)
    tgt_mask = make_mask("combined", c.B, c.Lt, c.Lt, c.seed + 3)
    return [src, tgt, src_mask, tgt_mask]


def shown(c, inputs):
    return shown_example(dict(model_kwargs(c), masks=c.masks), src=inputs[0], tgt=inputs[1])


def setup(ctx, c, dropout=0.0):
    kw = model_kwargs(c, dropout)
    inputs = model_inputs(c)
    return kw, ref_state(ctx, "Transformer", kw, c.seed), inputs, shown(c, inputs)


EQUAL_LENGTHS = ModelCase(
    B=2, Ls=4, Lt=4, H=2, D=4, Vs=7, Vt=9, F=6, N=1, norm_first=False, activation="relu", masks=True, seed=9
)
"""Source and target of one length: drawn lengths differ on purpose, so code that takes another path when the
shapes agree would go unseen."""
NO_MASKS = ModelCase(
    B=2, Ls=5, Lt=4, H=2, D=4, Vs=7, Vt=9, F=6, N=1, norm_first=True, activation="gelu", masks=False, seed=11
)
"""No masks given: the contract's ``None`` means no mask at all, which a drawn example covers only by chance (code that
puts a causal mask in for ``None`` computes another model)."""


def _equivalence(ctx):
    @ctx.given(model_case())
    def prop(c):
        kw, state, inputs, ex = setup(ctx, c)
        equivalent(
            ctx,
            name="Transformer",
            kwargs=kw,
            state=state,
            inputs=inputs,
            what=phrase("what.logits", name="Transformer"),
            example=ex,
        )
        equivalent(
            ctx,
            name="Transformer",
            kwargs=kw,
            state=state,
            inputs=[inputs[0], inputs[2]],
            method="encode",
            what="Transformer.encode",
            example=ex,
        )

    prop()
    ctx.explicit(prop, (EQUAL_LENGTHS,), (NO_MASKS,))


@check("model", "contract", points=1, variant="isolated", examples=(1, 1))
def contract(ctx):
    """encoder, decoder, output_proj with the contract's submodules; a final norm only with norm_first; no sharing."""
    for norm_first in (False, True):
        contract_params(
            ctx,
            "Transformer",
            {
                "src_vocab_size": 7,
                "tgt_vocab_size": 9,
                "d_model": 6,
                "num_heads": 2,
                "d_ff": 10,
                "num_layers": 2,
                "max_len": 16,
                "dropout": 0.0,
                "norm_first": norm_first,
            },
        )
    for name in ("Encoder", "Decoder"):
        contract_params(
            ctx,
            name,
            {
                "vocab_size": 7,
                "d_model": 6,
                "num_heads": 2,
                "d_ff": 10,
                "num_layers": 2,
                "max_len": 16,
                "dropout": 0.0,
                "norm_first": True,
            },
        )
    # the defaults (d_model=512, 8 heads, d_ff=2048, 6 layers, max_len=5000, Post-LN): built on the meta device
    for name, required in (
        ("Transformer", {"src_vocab_size": 7, "tgt_vocab_size": 9}),
        ("Encoder", {"vocab_size": 7}),
        ("Decoder", {"vocab_size": 9}),
    ):
        ref, got = ctx.both("shapes", name=name, kwargs=required)
        # by name: the order modules are registered in is the submission's own choice
        expected, found = dict(ref["params"] + ref["buffers"]), dict(got["params"] + got["buffers"])
        differ = sorted(k for k in set(expected) | set(found) if expected.get(k) != found.get(k))
        if differ:
            raise Fail(
                "fail.defaults",
                what=name,
                argument="d_model, num_heads, d_ff, num_layers, max_len, norm_first",
                default="512, 8, 2048, 6, 5000, False",
                detail=phrase(
                    "transformer.detail.params_differ",
                    count=len(differ),
                    first=[
                        phrase("transformer.detail.param_differs", name=k, got=found.get(k), expected=expected.get(k))
                        for k in differ[:3]
                    ],
                ),
                example={"config": required},
            )
    # the masks of forward, encode and decode default to None (no mask)
    c = ModelCase(
        B=2, Ls=4, Lt=3, H=2, D=4, Vs=7, Vt=9, F=6, N=1, norm_first=False, activation="relu", masks=False, seed=3
    )
    kw, state, (src, tgt, _, _), ex = setup(ctx, c)
    memory = randn([2, 4, 4], 5)
    for method, inputs in (
        ("forward", [src, tgt, None, None]),
        ("encode", [src, None]),
        ("decode", [tgt, memory, None, None]),
    ):
        method_defaults(ctx, name="Transformer", kwargs=kw, state=state, inputs=inputs, method=method, example=ex)
    for name, inputs in (("Encoder", [src, None]), ("Decoder", [tgt, memory, None, None])):
        sub_kw = {k: v for k, v in kw.items() if k not in ("src_vocab_size", "tgt_vocab_size")}
        sub_kw["vocab_size"] = c.Vs if name == "Encoder" else c.Vt
        method_defaults(
            ctx,
            name=name,
            kwargs=sub_kw,
            state=ref_state(ctx, name, sub_kw, 4),
            inputs=inputs,
            example={"config": sub_kw},
        )


@check("model", "init", points=1, examples=(1, 1))
def init(ctx):
    """Every parameter with more than one dimension starts Xavier-uniform."""
    kw = {
        "src_vocab_size": 40,
        "tgt_vocab_size": 50,
        "d_model": 32,
        "num_heads": 4,
        "d_ff": 64,
        "num_layers": 1,
        "max_len": 16,
        "dropout": 0.0,
    }
    values = ctx.sub("params", name="Transformer", kwargs=kw, dtype="float32")["values"]
    for name, w in values.items():
        if w.dim() < 2:
            continue
        fan_out, fan_in = w.shape[0], w[0].numel()
        bound = math.sqrt(6.0 / (fan_in + fan_out))
        std = float(w.double().std())
        if float(w.abs().max()) > bound * (1 + 1e-5) or std < 0.8 * bound / math.sqrt(3):
            raise Fail(
                "fail.not_xavier",
                name=name,
                bound=f"{bound:.3g}",
                std=f"{std:.3g}",
                expected_std=f"{bound / math.sqrt(3):.3g}",
                example={"config": kw},
            )


@check("model", "equivalence", points=4, variant="isolated", examples=(3, 20))
def equivalence(ctx):
    """Transformer logits and encode() equal the reference's, over the reference's layers and embeddings."""
    _equivalence(ctx)


@check("model", "integrated", points=1.5, examples=(2, 10))
def integrated(ctx):
    """Equal to the reference with every part your own."""
    _equivalence(ctx)


@check(
    "model",
    "causal",
    points=1,
    variant="isolated",
    examples=(2, 8),
    given=model_case(masks=False).filter(lambda c: c.Lt >= 2),
)
def causal(ctx, c):
    """With target_mask, logits at a position ignore later target tokens (perturbation and exact-zero gradients)."""
    kw, state, inputs, ex = setup(ctx, c)
    tgt = inputs[1]
    inputs[3] = torch.ones(c.Lt, c.Lt, dtype=torch.bool).tril().view(1, 1, c.Lt, c.Lt)
    t = max(1, c.Lt // 2)

    def perturb(xs):
        xs = list(xs)
        changed = tgt.clone()
        changed[:, t:] = (tgt[:, t:] % (c.Vt - 1)) + 1
        xs[1] = changed
        return xs

    causal_no_leak(
        ctx, "Transformer", kw, state, inputs, ex, grad_input="decoder.embed", future_from=t, perturb=perturb
    )


@check(
    "model",
    "padding_invariance",
    points=0.5,
    variant="isolated",
    examples=(2, 8),
    given=model_case(masks=False).filter(lambda c: c.Ls >= 2),
)
def padding(ctx, c):
    """With src_mask, the tokens at padded source positions do not change the logits."""
    kw, state, inputs, ex = setup(ctx, c)
    src = inputs[0]
    keep = torch.ones_like(src, dtype=torch.bool)
    keep[0, -1] = False  # row 0 has one padded source position
    inputs[2] = keep.view(c.B, 1, 1, c.Ls)
    changed = list(inputs)
    other = src.clone()
    other[0, -1] = (src[0, -1] % (c.Vs - 1)) + 1
    changed[0] = other
    a = ctx.sub("forward", name="Transformer", kwargs=kw, state=state, inputs=inputs)["out"]
    b = ctx.sub("forward", name="Transformer", kwargs=kw, state=state, inputs=changed)["out"]
    if not torch.allclose(a, b, atol=1e-8, rtol=1e-6):
        raise Fail("fail.padding_leak", what="Transformer", example=ex)


@check(
    "model",
    "positions",
    points=0.5,
    variant="isolated",
    examples=(2, 8),
    given=model_case(masks=False).filter(lambda c: c.Ls >= 2),
)
def positions(ctx, c):
    """The encoder is not permutation-equivariant: with positional encoding, order matters."""
    kw, state, inputs, ex = setup(ctx, c)
    src = inputs[0]
    perm = torch.arange(c.Ls).roll(1)
    src_p = src[:, perm]
    if torch.equal(src_p, src):  # every token the same: no permutation can change the input
        return
    a = ctx.sub("forward", name="Transformer", kwargs=kw, state=state, inputs=[src, None], method="encode")["out"]
    b = ctx.sub("forward", name="Transformer", kwargs=kw, state=state, inputs=[src_p, None], method="encode")["out"]
    if a.shape == b.shape and torch.allclose(a[:, perm], b, atol=1e-9, rtol=1e-7):
        raise Fail("fail.no_positions", example=ex)


@check(
    "model", "devices", points=0.5, variant="isolated", examples=(1, 4), given=model_case().filter(lambda c: c.masks)
)
def devices(ctx, c):
    """Runs in float32 on each device and on the meta device, with masks."""
    kw, state, inputs, ex = setup(ctx, c)
    float32_close(ctx, name="Transformer", kwargs=kw, state=state, inputs=inputs, example=ex)
    meta_runs(ctx, name="Transformer", kwargs=kw, inputs=inputs, expected_shape=[c.B, c.Lt, c.Vt], example=ex)
