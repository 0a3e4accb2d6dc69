"""The checks of task ``schedule`` (``cosine_lr``, docs/CONTRACT_LM.md)."""

import math

from grader.author import Fail, check, returned

CONFIGS = (
    # (max_lr, min_lr, warmup_steps, total_steps)
    (1e-3, 1e-4, 10, 100),
    (3e-4, 0.0, 0, 50),  # no warm-up: step 0 is already the cosine's start
    (1.0, 0.1, 1, 2),
    (6e-4, 6e-5, 2000, 60000),
    (0.5, 0.5, 3, 7),  # a flat schedule after warm-up
)


def _steps(warmup, total):
    mid = (warmup + total) // 2
    return sorted({0, 1, warmup - 1, warmup, warmup + 1, mid, mid + 1, total - 1, total, total + 1, 2 * total} - {-1})


@check("schedule", "formula", points=4, examples=(1, 1))
def formula(ctx):
    """cosine_lr: (step + 1) / warmup_steps of max_lr during warm-up, the cosine from max_lr to min_lr up to
    total_steps, min_lr from there on, warmup_steps = 0 included; a Python float every time."""
    first = None  # every call is made before failing: a diagnosis then sees the whole schedule
    for max_lr, min_lr, warmup, total in CONFIGS:
        for step in _steps(warmup, total):
            args = [step, max_lr, min_lr, warmup, total]
            ref, got = ctx.both("call", name="cosine_lr", args=args)
            ex = {
                "config": {
                    "step": step,
                    "max_lr": max_lr,
                    "min_lr": min_lr,
                    "warmup_steps": warmup,
                    "total_steps": total,
                }
            }
            if first is not None:
                continue
            value = got.get("number")
            if value is None or got.get("number_type") not in ("float", "float64"):
                first = Fail("fail.lm_cosine_type", got=returned(got), example=ex)
            elif not math.isclose(value, ref["number"], rel_tol=1e-6, abs_tol=1e-9 * max_lr):
                first = Fail(
                    "fail.lm_cosine",
                    step=step,
                    max_lr=max_lr,
                    min_lr=min_lr,
                    warmup=warmup,
                    total=total,
                    got=f"{value:.6g}",
                    example=ex,
                )
    if first is not None:
        raise first
