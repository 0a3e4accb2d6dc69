"""Checks for ``sequence_loss``, ``noam_lr`` and ``train_step`` (task ``training``)."""

import functools
import math
from dataclasses import dataclass

import torch
from hypothesis import strategies as st

from grader.author import (
    Case,
    Fail,
    check,
    check_tensor,
    defaults_called,
    nonfinite_name,
    phrase,
    randn,
    random_tokens,
    ref_state,
    returned,
    seeds,
    shown_example,
)

PAD = 0


@dataclass(frozen=True)
class LossCase(Case):
    """One example of sequence_loss."""

    B: int
    """Batch size."""
    L: int
    """Sequence length."""
    V: int
    """Vocabulary size."""
    pad: int
    """The padding index."""
    smoothing: float
    """The label smoothing."""
    seed: int
    """Seed of the logits and targets."""


@st.composite
def loss_case(draw):
    B = draw(st.integers(1, 4))
    L = draw(st.integers(1, 6))
    V = draw(st.integers(3, 9))
    pad = draw(st.integers(0, 2))
    return LossCase(B=B, L=L, V=V, pad=pad, smoothing=draw(st.sampled_from([0.0, 0.0, 0.1, 0.3])), seed=draw(seeds()))


@check("training", "loss", points=3, examples=(5, 30))
def loss(ctx):
    """sequence_loss: mean cross-entropy over non-pad targets, with label smoothing as F.cross_entropy defines it."""

    @ctx.given(loss_case())
    def prop(c):
        logits = randn([c.B, c.L, c.V], c.seed, scale=2.0)
        targets = random_tokens([c.B, c.L], c.V, c.seed + 1)
        targets[0, 0] = (c.pad + 1) % c.V  # at least one real target
        if c.L > 1:
            targets[0, -1] = c.pad  # and at least one padded one
        args = [logits, targets, c.pad]
        kwargs = {"label_smoothing": c.smoothing}
        ex = {
            "config": {"pad_idx": c.pad, "label_smoothing": c.smoothing},
            "shapes": {"logits": list(logits.shape), "targets": list(targets.shape)},
        }
        ref, got = ctx.both("call", name="sequence_loss", args=args, kwargs=kwargs)
        if got.get("modified"):
            raise Fail("fail.inplace", what="sequence_loss", inputs=got["modified"], example=ex)
        if "out" not in got:
            raise Fail("fail.not_tensor", what="sequence_loss", got=returned(got), example=ex)
        out = got["out"].reshape(()) if got["out"].numel() == 1 else got["out"]
        if out.dtype == torch.float32 and ref["out"].dtype == torch.float64:
            # a loss computed in float32 from float64 logits is a common, sound choice: float32 tolerances
            check_tensor(out, ref["out"].float(), what="sequence_loss", dtype="float32", example=ex)
        else:
            check_tensor(out, ref["out"], what="sequence_loss", example=ex)

    prop()
    # label_smoothing defaults to 0.0
    logits, targets = randn([2, 3, 5], 1, scale=2.0), random_tokens([2, 3], 5, 2)
    targets[0, 0] = 1
    ref, got = ctx.both("call", name="sequence_loss", args=[logits, targets, 0])
    if (
        "out" not in got
        or got["out"].numel() != 1
        or not math.isclose(float(got["out"].reshape(())), float(ref["out"]), rel_tol=1e-4)
    ):
        raise Fail(
            "fail.defaults",
            what="sequence_loss",
            argument="label_smoothing",
            default=0.0,
            detail=phrase("transformer.detail.smoothing"),
            example={"config": {"pad_idx": 0}},
        )


def _noam_differs(ctx, step, d_model, warmup, factor):
    """``fail.noam`` where noam_lr differs from the reference's at ``step`` (``factor`` ``None``: not passed, its
    default 1.0), else ``None``."""
    args = [step, d_model, warmup]
    kwargs = {"factor": factor} if factor is not None else {}
    ref, got = ctx.both("call", name="noam_lr", args=args, kwargs=kwargs)
    expected = ref["number"]
    value = got.get("number")
    if value is None and "out" in got and got["out"].numel() == 1:
        value = float(got["out"])
    if value is not None and math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-15):
        return None
    ex = {
        "config": {
            "step": step,
            "d_model": d_model,
            "warmup_steps": warmup,
            "factor": factor if factor is not None else phrase("what.default"),
        }
    }
    got_said = f"{value:.6g}" if value is not None else returned(got)
    return Fail("fail.noam", step=step, d_model=d_model, warmup=warmup, got=got_said, example=ex)


@st.composite
def schedule(draw):
    """A schedule of its own and a step in it: the held-back examples of a final grade draw others.
    Checks draw two examples: Hypothesis's first is its simplest, the same under every seed; the second is the
    seed's own."""
    warmup = draw(st.integers(1, 5000))
    return (
        draw(st.integers(0, 20 * warmup)),
        draw(st.sampled_from([8, 16, 64, 128, 256, 512, 768, 1024])),
        warmup,
        draw(st.sampled_from([None, 0.5, 1.0, 2.0, 3.0])),
    )


def _noam_drawn(ctx, case):
    failed = _noam_differs(ctx, *case)
    if failed is not None:
        raise failed


@check("training", "noam", points=2, examples=(2, 4))
def noam(ctx):
    """noam_lr: warm-up then 1/√step decay, step 0 counted as 1; over fixed schedules, then a drawn one."""
    first = None  # every call is made before failing: the diagnosis then sees the whole schedule, not one value
    for d_model, warmup, factor in ((16, 4, 1.0), (512, 4000, 2.0), (64, 10, None)):
        for step in (0, 1, 2, warmup - 1, warmup, warmup + 1, 10 * warmup):
            failed = _noam_differs(ctx, step, d_model, warmup, factor)
            first = first or failed
    if first is not None:
        raise first
    ctx.given(schedule())(functools.partial(_noam_drawn, ctx))()


@dataclass(frozen=True)
class StepCase(Case):
    """One example of train_step, on a small Transformer."""

    B: int
    """Batch size."""
    Ls: int
    """Source length."""
    Lt: int
    """Target length."""
    norm_first: bool
    """Pre-LN (True) or Post-LN (False)."""
    smoothing: float
    """The label smoothing."""
    seed: int
    """Seed of the tokens and of the parameters."""


@st.composite
def step_case(draw):
    B = draw(st.integers(1, 3))
    Ls = draw(st.integers(2, 5))
    Lt = draw(st.integers(3, 6))
    norm_first = draw(st.booleans())
    return StepCase(
        B=B, Ls=Ls, Lt=Lt, norm_first=norm_first, smoothing=draw(st.sampled_from([0.0, 0.1])), seed=draw(seeds())
    )


def _step_args(ctx, c, *, max_grad_norm=None, steps=3, stale_grads=True):
    """The ``train_steps`` probe's arguments for case ``c``, and the example a failure shows."""
    kw = {
        "src_vocab_size": 8,
        "tgt_vocab_size": 9,
        "d_model": 8,
        "num_heads": 2,
        "d_ff": 12,
        "num_layers": 1,
        "max_len": 16,
        "dropout": 0.0,
        "norm_first": c.norm_first,
    }
    state = ref_state(ctx, "Transformer", kw, c.seed)
    src = random_tokens([c.B, c.Ls], 8, c.seed, low=3)
    tgt = random_tokens([c.B, c.Lt], 9, c.seed + 1, low=3)
    tgt[:, 0] = 1
    tgt[:, -1] = 2
    if c.B > 1:
        tgt[-1, -2:] = PAD  # a padded row: the loss must skip it
        src[-1, -1] = PAD
    args = dict(
        model={"kwargs": kw, "state": state},
        src=src,
        tgt=tgt,
        pad_idx=PAD,
        steps=steps,
        lr=0.5,
        label_smoothing=c.smoothing,
        max_grad_norm=max_grad_norm,
        stale_grads=stale_grads,
    )
    ex = shown_example(
        dict(
            kw,
            steps=steps,
            optimizer="SGD(lr=0.5)",
            label_smoothing=c.smoothing,
            max_grad_norm=max_grad_norm,
            gradients_before_the_first_step="left over (random)" if stale_grads else "none",
        ),
        src=src,
        tgt=tgt,
    )
    return args, ex


def _steps(ctx, c, **options):
    args, ex = _step_args(ctx, c, **options)
    steps = args["steps"]
    ref, got = ctx.both("train_steps", **args)
    for i, (a, b) in enumerate(zip(got["losses"], ref["losses"])):
        if not math.isfinite(a) and math.isfinite(b):
            raise Fail("fail.train_loss_nonfinite", step=i + 1, value=nonfinite_name(a), example=ex)
        if not math.isclose(a, b, rel_tol=1e-5, abs_tol=1e-6):
            raise Fail("fail.train_loss", step=i + 1, got=f"{a:.6g}", example=ex)
    for name in ref["state"]:
        check_tensor(
            got["state"][name], ref["state"][name], what=phrase("what.after_steps", name=name, steps=steps), example=ex
        )


@check("training", "train_step", points=4, variant="isolated", examples=(2, 12))
def train_step(ctx):
    """train_step: shifted targets, masks, gradients zeroed before backward (some are left over before the first
    call), one step: same losses and weights as the reference, over the reference's sequence_loss; called without
    label_smoothing or max_grad_norm, it behaves as with the contract's defaults."""
    ctx.given(step_case())(functools.partial(_train_step_case, ctx))()
    args, ex = _step_args(ctx, StepCase(B=2, Ls=4, Lt=5, norm_first=False, smoothing=0.0, seed=11))
    defaults_called(
        ctx,
        what="train_step",
        probe="train_steps",
        args=args,
        arguments=("label_smoothing", "max_grad_norm"),
        compare=("losses", "state"),
        example=ex,
    )


def _train_step_case(ctx, c):
    _steps(ctx, c)


@check("training", "clipping", points=1, variant="isolated", examples=(1, 6), given=step_case())
def clipping(ctx, c):
    """train_step with max_grad_norm clips the total gradient norm before the step."""
    _steps(ctx, c, max_grad_norm=0.05, steps=2, stale_grads=False)  # stale gradients: train_step's check
