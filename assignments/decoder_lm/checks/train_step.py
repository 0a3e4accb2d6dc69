"""The checks of task ``train_step`` (docs/CONTRACT_LM.md), over the reference's ``DecoderLM``, ``lm_loss`` and
``clip_grad_norm_`` (isolated), with ``torch.optim.SGD`` over two parameter groups on the grader's side."""

import functools
import math
from dataclasses import dataclass

from hypothesis import strategies as st

from grader.author import Case, Fail, check, check_tensor, defaults_called, phrase, random_tokens, seeds, shown_example

from .generate import model_spec

MODEL = {"vocab_size": 11, "dim": 8, "num_layers": 1, "num_heads": 2, "hidden_dim": 12, "num_kv_heads": 1}
STEPS = 3


@dataclass(frozen=True)
class StepCase(Case):
    """Training steps of a small DecoderLM."""

    B: int
    """Batch size."""
    L: int
    """Sequence length."""
    pad_id: int | None
    """The pad_id passed (``None``: no padding)."""
    momentum: float
    """SGD's momentum."""
    seed: int
    """Seed of the tokens and of the weights."""


@st.composite
def step_case(draw):
    B = draw(st.integers(2, 3))
    L = draw(st.integers(3, 6))
    pad_id = draw(st.sampled_from([0, 3, None]))
    return StepCase(B=B, L=L, pad_id=pad_id, momentum=draw(st.sampled_from([0.0, 0.9])), seed=draw(seeds()))


def _step_args(ctx, c, *, lrs, max_grad_norm, stale_grads=True):
    """The ``lm_train_steps`` probe's arguments for case ``c``, and the example a failure shows."""
    model = model_spec(ctx, MODEL, c.seed)
    tokens = random_tokens([c.B, c.L], MODEL["vocab_size"], c.seed + 1)
    if c.pad_id is not None:
        tokens[tokens == c.pad_id] = c.pad_id + 1
        tokens[-1, -2:] = c.pad_id  # a row padded at the end: the loss skips those targets
    args = dict(
        model=model,
        tokens=tokens,
        steps=STEPS,
        pad_id=c.pad_id,
        max_grad_norm=max_grad_norm,
        lrs=lrs,
        momentum=c.momentum,
        stale_grads=stale_grads,
        seed=c.seed,
    )
    ex = shown_example(
        dict(
            MODEL,
            steps=STEPS,
            pad_id=c.pad_id,
            max_grad_norm=max_grad_norm,
            lr_per_step=lrs,
            optimizer=f"SGD, two groups (lr 0.2 and 0.05), momentum={c.momentum}",
            gradients_before_the_first_step="left over (random)" if stale_grads else "none",
        ),
        tokens=tokens,
    )
    return args, ex


def _steps(ctx, c, *, lrs, max_grad_norm, stale_grads=True):
    args, ex = _step_args(ctx, c, lrs=lrs, max_grad_norm=max_grad_norm, stale_grads=stale_grads)
    ref, got = ctx.both("lm_train_steps", **args)
    for s, (a, b) in enumerate(zip(got["lrs"], ref["lrs"])):
        if a != b:
            raise Fail("fail.lm_train_lr", step=s + 1, lr=lrs[s] if lrs else None, got=a, expected=b, example=ex)
    for s, (a, b) in enumerate(zip(got["losses"], ref["losses"])):
        if not math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9):
            raise Fail("fail.lm_train_loss", step=s + 1, got=f"{a:.6g}", example=ex)
    for name in ref["state"]:
        check_tensor(
            got["state"][name], ref["state"][name], what=phrase("what.after_steps", name=name, steps=STEPS), example=ex
        )


@check("train_step", "step", points=5, variant="isolated", examples=(3, 15))
def step(ctx):
    """Three steps: the lr given set on every group, the gradients zeroed before backward (some are left over
    before the first call), lm_loss with pad_id, optimizer.step(); the same losses (before each update, as floats)
    and weights as the reference; called without pad_id or max_grad_norm, as with the contract's defaults."""
    ctx.given(step_case())(functools.partial(_step_case, ctx))()
    args, ex = _step_args(
        ctx, StepCase(B=3, L=6, pad_id=None, momentum=0.0, seed=5), lrs=None, max_grad_norm=None, stale_grads=True
    )
    args["tokens"][-1, -2:] = 0  # id 0 at the end of a row: a default pad_id=0 would skip those targets
    defaults_called(
        ctx,
        what="train_step",
        probe="lm_train_steps",
        args=args,
        arguments=("pad_id", "max_grad_norm"),
        compare=("losses", "state"),
        example=ex,
    )


def _step_case(ctx, c):
    _steps(ctx, c, lrs=[0.3, 0.1, 0.5], max_grad_norm=None)


@check("train_step", "options", points=3, variant="isolated", examples=(2, 10), given=step_case())
def options(ctx, c):
    """Clipping with max_grad_norm (after backward, before the step), and lr=None leaving the groups' own rates."""
    _steps(ctx, c, lrs=None, max_grad_norm=0.05, stale_grads=False)
    _steps(ctx, c, lrs=[0.2, 0.2, 0.2], max_grad_norm=1e-3, stale_grads=True)
