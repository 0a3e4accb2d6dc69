"""The checks of task ``adamw`` (``AdamW``, docs/CONTRACT_LM.md): the same parameters as ``torch.optim.AdamW``
(``amsgrad=False``) step after step. The reference is verified against ``torch.optim.AdamW`` in
tests/unit/test_lm_reference.py; these checks compare with the reference."""

from dataclasses import dataclass

from hypothesis import strategies as st

from grader.author import Case, Fail, check, check_tensor, phrase, seeds, shown_example

SHAPES = ([3, 4], [5], [2, 2, 2])
STEPS = 5


@dataclass(frozen=True)
class RunCase(Case):
    """A run of AdamW over two parameter groups."""

    skipped: int
    """The parameter left without a gradient on some steps."""
    missing: list
    """The steps (from 0) on which it has none, step 0 always among them."""
    lr: float
    """The first group's lr."""
    wd: float
    """The first group's weight decay."""
    scales: list
    """The size of each parameter's gradients."""
    seed: int
    """Seed of the parameters and gradients."""


@st.composite
def run_case(draw):
    """Two groups with their own lr and weight decay (one with its own betas and a large eps, so that where eps
    goes shows), gradients of very different sizes, and one parameter without a gradient on some steps."""
    skipped = draw(st.integers(0, len(SHAPES) - 1))
    missing = draw(st.lists(st.integers(0, STEPS - 1), min_size=1, max_size=3, unique=True))
    lr = draw(st.sampled_from([1e-2, 3e-2, 0.1]))
    wd = draw(st.sampled_from([0.1, 0.5]))
    scales = draw(st.permutations([1.0, 1e-3, 10.0]))
    return RunCase(skipped=skipped, missing=sorted(set(missing) | {0}), lr=lr, wd=wd, scales=scales, seed=draw(seeds()))


def _run(ctx, args, ex):
    ref, got = ctx.both("lm_adamw", **args)
    if not got["is_optimizer"]:
        raise Fail("fail.lm_not_optimizer", example=ex)
    for s, (r, g) in enumerate(zip(ref["returned"], got["returned"])):
        if r["is_closure_value"] and not g["is_closure_value"]:
            key = "fail.lm_adamw_closure" if s in args.get("closure_steps", ()) else "fail.lm_adamw_none"
            raise Fail(key, got=g["type"], example=ex)
    for s, (r, g) in enumerate(zip(ref["history"], got["history"])):
        for i, (rp, gp) in enumerate(zip(r, g)):
            step_ex = dict(ex, step=s + 1, parameter=i)
            check_tensor(
                gp, rp, what=phrase("what.param_after_step", index=i, shape=list(rp.shape), step=s + 1), example=step_ex
            )


@check("adamw", "groups", points=5, given=run_case())
def groups(ctx, c):
    """Equals torch.optim.AdamW over five steps: two parameter groups with their own lr, weight decay, betas and
    eps; a parameter without a gradient on some steps (skipped: its own step count does not advance); the lr
    changed between steps; decoupled weight decay and bias correction."""
    has_grad = [[not (i == c.skipped and s in c.missing) for i in range(len(SHAPES))] for s in range(STEPS)]
    groups = [
        {"params": [0, 2], "lr": c.lr, "weight_decay": c.wd},
        {"params": [1], "weight_decay": 0.0, "betas": (0.8, 0.95), "eps": 1e-3},
    ]
    args = dict(
        shapes=list(SHAPES),
        groups=groups,
        defaults={"lr": 0.05},
        grad_scales=list(c.scales),
        has_grad=has_grad,
        lr_changes={"3": [c.lr / 3, 0.2]},
        seed=c.seed,
    )
    ex = shown_example(
        {
            "group_0": dict(groups[0]),
            "group_1": dict(groups[1]),
            "defaults": {"lr": 0.05},
            "gradient_scales": list(c.scales),
            "parameter_without_gradient": c.skipped,
            "at_steps": [s + 1 for s in c.missing],
            "lr_set_before_step_4": [c.lr / 3, 0.2],
        },
        **{f"params[{i}]": s for i, s in enumerate(SHAPES)},
    )
    _run(ctx, args, ex)


@dataclass(frozen=True)
class DefaultCase(Case):
    """A run of AdamW with its defaults."""

    seed: int
    """Seed of the parameters and gradients."""
    closure: int
    """The step (from 0) given a closure."""


@st.composite
def default_case(draw):
    seed = draw(seeds())
    return DefaultCase(seed=seed, closure=draw(st.integers(0, STEPS - 1)))


@check("adamw", "defaults", points=2, given=default_case())
def defaults(ctx, c):
    """A plain list of tensors with the constructor's defaults (lr 1e-3, betas (0.9, 0.999), eps 1e-8, weight
    decay 1e-2) and with arguments; step(closure) returns the closure's value, step() returns None."""
    has_grad = [[True] * len(SHAPES) for _ in range(STEPS)]
    for defaults in ({}, {"lr": 0.02, "betas": (0.5, 0.9), "eps": 1e-6, "weight_decay": 0.2}):
        args = dict(
            shapes=list(SHAPES),
            groups=[],
            defaults=defaults,
            grad_scales=[1.0, 0.1, 2.0],
            has_grad=has_grad,
            closure_steps=[c.closure],
            seed=c.seed,
            plain_list=True,
        )
        ex = shown_example(
            {
                "constructor_arguments": defaults or phrase("lm.example.the_defaults"),
                "params": phrase("lm.example.tensor_list"),
                "closure_at_step": c.closure + 1,
            }
        )
        _run(ctx, args, ex)
