"""Checks for ``MultiHeadAttention`` (task ``mha``)."""

from dataclasses import asdict, dataclass

import torch
from hypothesis import strategies as st

from assignments.transformer.strategies import AttentionSizes, attention_sizes, make_mask, mask_kinds
from grader.author import (
    Fail,
    check,
    contract_params,
    defaults_agree,
    dropout_behaviour,
    equivalent,
    float32_close,
    low_precision,
    meta_runs,
    phrase,
    randn,
    ref_state,
    seeds,
    shown_example,
)


@dataclass(frozen=True)
class MhaCase(AttentionSizes):
    """One example of MultiHeadAttention."""

    self_attention: bool
    """Key and value are the query itself (``Lk == Lq``)."""
    mask: str
    """The mask's form, one of ``MASK_KINDS``."""
    seed: int
    """Seed of the inputs and of the parameters."""

    def example(self, inputs):
        """The example a report shows of this case run on ``inputs`` (query, key, value, mask)."""
        return shown_example(
            {"d_model": self.D, "num_heads": self.H, "self_attention": self.self_attention, "mask": self.mask},
            query=inputs[0],
            key=inputs[1],
            mask=inputs[3],
        )


describe = MhaCase.example  # the name the equivalence property calls: its text seeds its examples


@st.composite
def mha_case(draw, *, self_attention=None, masks=True):
    self_attn = draw(st.booleans()) if self_attention is None else self_attention
    s = draw(attention_sizes(self_attention=self_attn))
    kind = draw(mask_kinds(causal_ok=s.Lq == s.Lk)) if masks else "none"
    return MhaCase(**asdict(s), self_attention=self_attn, mask=kind, seed=draw(seeds()))


def mha_inputs(c):
    q = randn([c.B, c.Lq, c.D], c.seed)
    if c.self_attention:
        k = v = q
    else:
        k = randn([c.B, c.Lk, c.D], c.seed + 1)
        v = randn([c.B, c.Lk, c.D], c.seed + 2)
    return [q, k, v, make_mask(c.mask, c.B, c.Lq, c.Lk, c.seed + 3)]


def kwargs_of(c, dropout=0.0):
    return {"d_model": c.D, "num_heads": c.H, "dropout": dropout}


EQUAL_LENGTHS = MhaCase(B=2, Lq=4, Lk=4, H=2, Dh=3, D=6, self_attention=False, mask="padding", seed=9)
"""Cross-attention with as many keys as queries: drawn lengths differ on purpose (a transpose then shows), so code
that takes another path when the shapes agree would go unseen."""


def _equivalence(ctx):
    @ctx.given(mha_case())
    def prop(c):
        inputs = mha_inputs(c)
        kw = kwargs_of(c)
        equivalent(
            ctx,
            name="MultiHeadAttention",
            kwargs=kw,
            state=ref_state(ctx, "MultiHeadAttention", kw, c.seed),
            inputs=inputs,
            what=phrase("what.output", name="MultiHeadAttention"),
            example=describe(c, inputs),
        )

    prop()
    ctx.explicit(prop, (EQUAL_LENGTHS,))


@check("mha", "contract", points=1, examples=(1, 1))
def contract(ctx):
    """Parameters w_q, w_k, w_v, w_o are Linear(D, D) with bias; a head count that does not divide D is refused."""
    contract_params(ctx, "MultiHeadAttention", {"d_model": 12, "num_heads": 3, "dropout": 0.0})
    x = randn([2, 4, 8], 5)
    defaults_agree(
        ctx,
        name="MultiHeadAttention",
        required={"d_model": 8, "num_heads": 2},
        inputs=[x, x, x, None],
        given=("d_model", "num_heads", "dropout"),
        train_differs=True,
    )
    for d_model, heads in ((6, 4), (10, 3)):
        got = ctx.sub("construct", name="MultiHeadAttention", kwargs={"d_model": d_model, "num_heads": heads})
        if got["raised"] != "ValueError":
            raise Fail(
                "fail.mha_divisible",
                d_model=d_model,
                num_heads=heads,
                raised=got["raised"] or "nothing",
                example={"config": {"d_model": d_model, "num_heads": heads}},
            )


@check("mha", "equivalence", points=5, variant="isolated", examples=(5, 40))
def equivalence(ctx):
    """Equals the reference (self and cross attention, every mask form), over the reference's attention function."""
    _equivalence(ctx)


@check("mha", "integrated", points=1, examples=(3, 15))
def integrated(ctx):
    """Equals the reference with your own scaled_dot_product_attention inside."""
    _equivalence(ctx)


@check(
    "mha",
    "permutation",
    points=1,
    variant="isolated",
    examples=(3, 15),
    given=mha_case(self_attention=True, masks=False).filter(lambda c: c.Lq >= 2),
)
def permutation(ctx, c):
    """Self-attention without a mask is permutation-equivariant: permuting the positions permutes the output."""
    x = mha_inputs(c)[0]
    perm = torch.randperm(c.Lq, generator=torch.Generator().manual_seed(c.seed))
    if torch.equal(perm, torch.arange(c.Lq)):
        perm = perm.roll(1)
    kw = kwargs_of(c)
    state = ref_state(ctx, "MultiHeadAttention", kw, c.seed)
    ex = dict(c.example([x, x, x, None]), permutation=perm.tolist())
    a = ctx.sub("forward", name="MultiHeadAttention", kwargs=kw, state=state, inputs=[x, x, x, None])["out"]
    xp = x[:, perm]
    b = ctx.sub("forward", name="MultiHeadAttention", kwargs=kw, state=state, inputs=[xp, xp, xp, None])["out"]
    if a.shape != b.shape or not torch.allclose(a[:, perm], b, atol=1e-8, rtol=1e-6):
        raise Fail("fail.not_equivariant", what="MultiHeadAttention", example=ex)


@check(
    "mha",
    "batch_independence",
    points=0.5,
    variant="isolated",
    examples=(2, 10),
    given=mha_case().filter(lambda c: c.B >= 2),
)
def batch_independence(ctx, c):
    """Each batch row's output depends only on that row."""
    inputs = mha_inputs(c)
    kw = kwargs_of(c)
    state = ref_state(ctx, "MultiHeadAttention", kw, c.seed)
    full = ctx.sub("forward", name="MultiHeadAttention", kwargs=kw, state=state, inputs=inputs)["out"]
    mask = inputs[3]
    one_mask = mask[:1] if mask is not None and mask.dim() == 4 else mask
    one = ctx.sub(
        "forward",
        name="MultiHeadAttention",
        kwargs=kw,
        state=state,
        inputs=[inputs[0][:1], inputs[1][:1], inputs[2][:1], one_mask],
    )["out"]
    if not torch.allclose(full[:1], one, atol=1e-8, rtol=1e-6):
        raise Fail("fail.batch_mixing", what="MultiHeadAttention", example=c.example(inputs))


@check("mha", "dropout", points=0.5, variant="isolated", examples=(1, 1))
def dropout(ctx):
    """eval() is deterministic with dropout > 0; train() really drops attention weights."""
    c = MhaCase(B=2, Lq=5, Lk=5, H=2, Dh=3, D=6, self_attention=True, mask="none", seed=7)
    kw = kwargs_of(c, dropout=0.5)
    dropout_behaviour(
        ctx,
        name="MultiHeadAttention",
        kwargs=kw,
        state=ref_state(ctx, "MultiHeadAttention", kw, 7),
        inputs=mha_inputs(c),
        example={"config": kw},
    )


@check(
    "mha", "devices", points=1, variant="isolated", examples=(2, 6), given=mha_case().filter(lambda c: c.mask != "none")
)
def devices(ctx, c):
    """Runs in float32 (each device), float16, bfloat16 and on the meta device, with masks."""
    inputs = mha_inputs(c)
    kw = kwargs_of(c)
    state = ref_state(ctx, "MultiHeadAttention", kw, c.seed)
    ex = c.example(inputs)
    float32_close(ctx, name="MultiHeadAttention", kwargs=kw, state=state, inputs=inputs, example=ex)
    low_precision(ctx, name="MultiHeadAttention", kwargs=kw, state=state, inputs=inputs, example=ex)
    meta_runs(ctx, name="MultiHeadAttention", kwargs=kw, inputs=inputs, expected_shape=[c.B, c.Lq, c.D], example=ex)
