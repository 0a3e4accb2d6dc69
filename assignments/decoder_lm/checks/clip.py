"""The checks of task ``clip`` (``clip_grad_norm_``, docs/CONTRACT_LM.md): the same as
``torch.nn.utils.clip_grad_norm_(parameters, max_norm)`` (the reference is verified against it in
tests/unit/test_lm_reference.py)."""

from dataclasses import dataclass

from hypothesis import strategies as st

from grader.author import Case, Fail, check, check_tensor, phrase, returned, seeds, shown_example

SHAPES = ([4, 3], [6], [2, 3, 2], [5])
SCALES = (1.0, 1e-4, 30.0)
"""Gradient sizes: at 1e-4 the total norm is near 1e-3, where the 1e-6 in max_norm / (total + 1e-6) shows."""


@dataclass(frozen=True)
class ClipCase(Case):
    """Gradients to clip."""

    without: int
    """The parameter without a gradient."""
    ratio: float
    """max_norm as a fraction of the total norm."""
    seed: int
    """Seed of the gradients."""


@st.composite
def clip_case(draw):
    without = draw(st.integers(0, len(SHAPES) - 1))
    return ClipCase(without=without, ratio=draw(st.sampled_from([0.1, 0.5, 0.9])), seed=draw(seeds()))


@check("clip", "norm", points=5, given=clip_case())
def norm(ctx, c):
    """Returns the total L2 norm of all gradients together, before clipping, as a 0-dim tensor; scales every
    gradient in place by min(1, max_norm / (total + 1e-6)) (nothing changes under max_norm); skips parameters
    without a gradient; accepts a generator (model.parameters())."""
    for scale in SCALES:
        _clip(ctx, c, scale)


def _clip(ctx, c, scale):
    scales = [scale * (1 + i) for i in range(len(SHAPES))]
    has_grad = [i != c.without for i in range(len(SHAPES))]
    base = dict(shapes=list(SHAPES), scales=scales, has_grad=has_grad, seed=c.seed)
    total = ctx.ref("lm_clip", **base, max_norm=1e9)["out"] * scales[0]
    for max_norm, as_generator in (
        (float(total) * c.ratio, False),
        (float(total) * c.ratio, True),
        (float(total) * 1.5, False),
    ):
        ex = shown_example(
            {
                "max_norm": max_norm,
                "gradient_scale": scale,
                "parameter_without_gradient": c.without,
                "parameters": phrase("lm.example.a_generator" if as_generator else "lm.example.a_list"),
            },
            **{f"parameters[{i}]": s for i, s in enumerate(SHAPES)},
        )
        ref, got = ctx.both("lm_clip", **base, max_norm=max_norm, as_generator=as_generator)
        if "out" not in got:
            raise Fail("fail.not_tensor", what="clip_grad_norm_", got=returned(got), example=ex)
        # the probe divides by the gradients' scales: the tolerances are relative to their size
        check_tensor(got["out"], ref["out"], what=phrase("what.norm_returned", name="clip_grad_norm_"), example=ex)
        for i, (g, r) in enumerate(zip(got["grads"], ref["grads"])):
            if r is None:
                if g is not None:
                    raise Fail("fail.lm_clip_created", param=i, example=ex)
                continue
            check_tensor(g, r, what=phrase("what.grad_after", index=i, name="clip_grad_norm_"), example=ex)
        if got["replaced"]:
            raise Fail("fail.lm_clip_inplace", params=got["replaced"], example=ex)
