"""The checks of task ``decay_groups`` (``param_groups``, docs/CONTRACT_LM.md)."""

from dataclasses import dataclass

from hypothesis import strategies as st

from grader.author import Case, Fail, check, shown_example

PARTS = ("linear", "norm", "embed", "head", "frozen", "scalar", "conv")


@dataclass(frozen=True)
class ModuleCase(Case):
    """A model made of some kinds of parts, for param_groups."""

    parts: list
    """The kinds of parts, in the order registered."""
    tied: bool
    """Whether the embedding and the head share one tensor."""
    weight_decay: float
    """The weight decay asked for."""


@st.composite
def module_case(draw):
    """A toy module holding every kind of parameter, registered in a drawn order (``named_parameters()`` order is
    then not alphabetical, nor grouped by kind)."""
    parts = draw(st.permutations(PARTS))
    tied = draw(st.booleans())
    return ModuleCase(parts=parts, tied=tied, weight_decay=draw(st.sampled_from([0.1, 0.05, 0.3])))


@check("decay_groups", "groups", points=4, given=module_case())
def groups(ctx, c):
    """Two groups in order: the parameters of 2 or more dimensions with weight_decay, the others with 0.0; each in
    named_parameters() order, a tied tensor once, requires_grad=False left out (a tied and an untied module)."""
    for tied in (c.tied, not c.tied):
        args = dict(parts=list(c.parts), tied=tied, weight_decay=c.weight_decay)
        ex = shown_example(
            {"registration_order": list(c.parts), "embed_and_head_tied": tied, "weight_decay": c.weight_decay}
        )
        ref, got = ctx.both("lm_param_groups", **args)
        found, expected = got["groups"], ref["groups"]
        if len(found) != len(expected):
            raise Fail("fail.lm_groups_count", got=len(found), example=ex)
        for i, (f, e) in enumerate(zip(found, expected)):
            if f["weight_decay"] is None or abs(f["weight_decay"] - e["weight_decay"]) > 1e-12:
                raise Fail(
                    "fail.lm_groups_decay", group=i, got=f["weight_decay"], expected=e["weight_decay"], example=ex
                )
            if f["names"] != e["names"]:
                raise Fail("fail.lm_groups_params", group=i, got=f["names"], expected=e["names"], example=ex)
