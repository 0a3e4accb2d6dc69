"""Building blocks the task checks share: reference weights, equivalence, devices, dropout."""

import torch

from grader.checks.base import Fail
from grader.compare import check_tensor
from grader.strategies import random_state
from grader.submission.errors import SubmissionError

_STATE_CACHE = {}


def ref_state(ctx, name, kwargs, seed):
    """Random weights for ``name(**kwargs)`` named as the reference names them."""
    key = (name, tuple(sorted(kwargs.items())))
    if key not in _STATE_CACHE:
        _STATE_CACHE[key] = ctx.ref("params", name=name, kwargs=kwargs)["params"]
    return random_state(_STATE_CACHE[key], seed)


def no_inplace(result, what, example):
    """Fail when the probe saw an input change."""
    if result.get("modified"):
        raise Fail("fail.inplace", what=what, inputs=result["modified"], example=example)


def equivalent(ctx, *, name, kwargs, state, inputs, method="forward", what=None, example=None,
               dtype="float64", train=False):
    """Run ``name.method`` on reference and submission with the same weights; compare outputs."""
    what = what or f"{name}.{method}"
    ref, got = ctx.both("forward", name=name, kwargs=kwargs, state=state, inputs=inputs, method=method, dtype=dtype,
                        train=train)
    no_inplace(got, what, example)
    check_tensor(got["out"], ref["out"], what=what, dtype=dtype, example=example)
    return got["out"]


def contract_params(ctx, name, kwargs):
    """Fail unless the submission's parameter names and shapes are the reference's."""
    ref, got = ctx.both("params", name=name, kwargs=kwargs)
    if got["shared"]:
        raise Fail("fail.shared_params", what=name, groups=[g[:4] for g in got["shared"][:3]],
                   example={"config": kwargs})
    expected, found = dict(ref["params"]), dict(got["params"])
    if expected != found:
        raise Fail("fail.param_names", what=name,
                   missing=[f"{k} {expected[k]}" for k in sorted(set(expected) - set(found))][:12],
                   unexpected=[f"{k} {found[k]}" for k in sorted(set(found) - set(expected))][:12],
                   wrong_shape=[f"{k}: {found[k]} (expected {expected[k]})"
                                for k in sorted(set(found) & set(expected)) if found[k] != expected[k]][:12],
                   example={"config": kwargs})
    return got


def float32_runs(ctx, probe, args):
    """``(device, reference result, submission result)`` for each of ``ctx.devices``: the submission's run of
    ``probe`` in float32 on that device, the reference's once in float64 (beside the first device's run)."""
    ref = None
    for device in ctx.devices:
        if ref is None:
            ref, got = ctx.both(probe, ref_args=args, **args, dtype="float32", device=device)
        else:
            got = ctx.sub(probe, **args, dtype="float32", device=device)
        yield device, ref, got


def float32_close(ctx, *, name, kwargs, state, inputs, method="forward", example=None):
    """float32 on every available device agrees with the float64 reference, float32 tolerances."""
    ref_args = dict(name=name, kwargs=kwargs, state=state, inputs=inputs, method=method)
    for device, ref, got in float32_runs(ctx, "forward", ref_args):
        ex = dict(example or {}, device=device, dtype="float32")
        if got["out"].dtype != torch.float32:
            raise Fail("fail.dtype", what=f"{name}.{method} on float32 input", expected="float32",
                       got=str(got["out"].dtype).replace("torch.", ""), example=ex)
        if got["out"].device.type != device.split(":")[0]:
            raise Fail("fail.device", what=f"{name}.{method}", expected=device, got=got["out"].device.type,
                       example=ex)
        check_tensor(got["out"].cpu(), ref["out"].to(torch.float32), what=f"{name}.{method} (float32)",
                     dtype="float32", example=ex)


def run_low_precision(ctx, probe, *, what, dtype, example, **args):
    """Run ``probe`` in ``dtype``; an overflowing fill value becomes a failure that explains itself."""
    try:
        return ctx.sub(probe, dtype=dtype, **args)
    except SubmissionError as err:
        if err.kind == "exception" and "overflow" in err.detail:
            raise Fail("fail.half_overflow", what=what, dtype=dtype, detail=err.detail, file=err.file,
                       line=err.line, example=example) from None
        raise


def low_precision(ctx, *, name, kwargs, state, inputs, method="forward", example=None):
    """float16 and bfloat16 run without raising and give finite outputs."""
    for dtype in ("float16", "bfloat16"):
        ex = dict(example or {}, dtype=dtype)
        got = run_low_precision(ctx, "forward", what=name, dtype=dtype, example=ex, name=name, kwargs=kwargs,
                                state=state, inputs=inputs, method=method)
        out = got["out"]
        if out.dtype != getattr(torch, dtype):
            raise Fail("fail.dtype", what=f"{name}.{method} on {dtype} input", expected=dtype,
                       got=str(out.dtype).replace("torch.", ""), example=ex)
        if not torch.isfinite(out.float()).all():
            raise Fail("fail.half_nonfinite", what=name, dtype=dtype, example=ex)


def meta_runs(ctx, *, name, kwargs, inputs, expected_shape, method="forward", example=None):
    """On the ``meta`` device the module runs (no tensor created on the wrong device) with the right shape."""
    got = ctx.sub("forward", name=name, kwargs=kwargs, state=None, inputs=inputs, method=method, device="meta")
    out = got["out"]
    if out.device.type != "meta":
        raise Fail("fail.device", what=f"{name}.{method}", expected="meta", got=out.device.type, example=example)
    if list(out.shape) != list(expected_shape):
        raise Fail("fail.shape", what=f"{name}.{method} (meta)", expected=list(expected_shape),
                   got=list(out.shape), example=example)


def dropout_behaviour(ctx, *, name, kwargs, state, inputs, method="forward", example=None):
    """``eval()`` is deterministic even with dropout > 0; ``train()`` really drops."""
    ev = ctx.sub("forward", name=name, kwargs=kwargs, state=state, inputs=inputs, method=method, repeat=2)
    if not torch.equal(ev["outs"][0], ev["outs"][1]):
        raise Fail("fail.eval_random", what=name, example=example)
    tr = ctx.sub("forward", name=name, kwargs=kwargs, state=state, inputs=inputs, method=method, train=True,
                 repeat=2)
    if torch.equal(tr["outs"][0], ev["out"]) and torch.equal(tr["outs"][1], ev["out"]):
        raise Fail("fail.train_no_dropout", what=name, p=kwargs.get("dropout"), example=example)
