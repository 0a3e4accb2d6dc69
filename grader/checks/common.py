"""Building blocks the task checks share: reference weights, equivalence, devices, dropout."""

import math

import torch

from grader.checks.base import Fail, reference_memo
from grader.checks.compare import MISMATCH, TOL, check_tensor
from grader.errors import SubmissionError
from grader.messages import phrase
from grader.strategies import random_state

_STATE_CACHE = reference_memo()
"""(assignment's package and reference folder, part name, constructor arguments) -> the reference's parameter
names and shapes: the same for every grading of that assignment in this process."""


_STRUCTURAL = ("num_layers", "norm_first", "activation")
"""Constructor arguments that change which parameters a module has (sizes change only their shapes)."""


def ref_state(ctx, name, kwargs, seed):
    """Random weights for ``name(**kwargs)`` named as the reference names them.

    Where the submission's module lacks some of the reference's biases (``nn.Linear(..., bias=False)``), those
    are set to zero, so that every other check still compares like with like; the contract check charges the
    missing parameters, once, and this check says what it did."""
    assignment = ctx.ref_runner.assignment
    key = (assignment.package, str(assignment.reference), name, tuple(sorted(kwargs.items())))
    if key not in _STATE_CACHE:
        _STATE_CACHE[key] = ctx.ref("params", name=name, kwargs=kwargs)["params"]
    state = random_state(_STATE_CACHE[key], seed)
    absent = _absent_biases(ctx, name, kwargs, [n for n, _shape in _STATE_CACHE[key]])
    if absent:
        for n in absent:
            state[n] = torch.zeros_like(state[n])
        ctx.note("note.zero_bias", what=name, names=absent[:8])
    return state


def _absent_biases(ctx, name, kwargs, expected):
    """The reference's bias names that the submission's ``name`` does not have (when nothing else differs)."""
    cache = ctx.memo.setdefault("absent_biases", {})  # per grading: one submission
    key = (ctx.variant, name, tuple((k, kwargs.get(k)) for k in _STRUCTURAL))
    if key not in cache:
        absent = []
        try:
            found = {n for n, _shape in ctx.sub_runner.run("params", ctx.variant, name=name, kwargs=kwargs)["params"]}
        except SubmissionError:
            found = None
        if found is not None and found < set(expected):
            missing = sorted(set(expected) - found)
            if all(n == "bias" or n.endswith(".bias") for n in missing):
                absent = missing
        cache[key] = absent
    return cache[key]


def no_inplace(result, what, example):
    """Fail when the probe saw an input change."""
    if result.get("modified"):
        raise Fail("fail.inplace", what=what, inputs=result["modified"], example=example)


def equivalent(
    ctx, *, name, kwargs, state, inputs, method="forward", what=None, example=None, dtype="float64", train=False
):
    """Run ``name.method`` on reference and submission with the same weights; compare outputs."""
    what = what or f"{name}.{method}"
    ref, got = ctx.both(
        "forward", name=name, kwargs=kwargs, state=state, inputs=inputs, method=method, dtype=dtype, train=train
    )
    if dtype == "float64":  # asked by _float32_inside on a mismatch: an answer bank holds it for every example
        ctx.ref_ahead(
            "forward", name=name, kwargs=kwargs, state=state, inputs=inputs, method=method, dtype="float32", train=train
        )
    no_inplace(got, what, example)
    try:
        check_tensor(got["out"], ref["out"], what=what, dtype=dtype, example=example)
    except Fail as fail:
        if not (
            fail.key in MISMATCH
            and dtype == "float64"
            and _float32_inside(
                ctx,
                got["out"],
                ref["out"],
                name=name,
                kwargs=kwargs,
                state=state,
                inputs=inputs,
                method=method,
                train=train,
            )
        ):
            raise
        ctx.note("note.float32_inside", what=what)
    return got["out"]


FLOAT32_MARGIN = 4.0
"""How much further from the float64 result than the reference's own float32 run a float32 computation may be
(another order of operations rounds differently; a mistake is off by far more)."""


def _float32_inside(ctx, got, expected, *, name, kwargs, state, inputs, method, train):
    """Whether a float64 mismatch is only the rounding of a float32 computation inside (statistics in float32, the
    result cast back: a common and correct pattern): the submission is no further from the reference's float64
    output than ``FLOAT32_MARGIN`` times the reference's own float32 run of the same inputs is."""
    ref32 = ctx.ref(
        "forward", name=name, kwargs=kwargs, state=state, inputs=inputs, method=method, dtype="float32", train=train
    )["out"].to(torch.float64)
    if ref32.shape != expected.shape or not torch.isfinite(ref32).all():
        return False
    atol, rtol = TOL["float64"]
    rounding = (ref32 - expected).abs()
    allowed = atol + rtol * expected.abs() + FLOAT32_MARGIN * float(rounding.max())
    return bool(((got.to(torch.float64) - expected).abs() <= allowed).all())


def contract_params(ctx, name, kwargs):
    """Fail unless the submission's parameter names and shapes are the reference's."""
    ref, got = ctx.both("params", name=name, kwargs=kwargs)
    if got["shared"]:
        raise Fail(
            "fail.shared_params", what=name, groups=[g[:4] for g in got["shared"][:3]], example={"config": kwargs}
        )
    same_params(name, ref, got, example={"config": kwargs})
    return got


def same_params(name, ref, got, *, example):
    """Fail unless the ``params`` probe's answers ``ref`` and ``got`` list the same parameter names and shapes,
    naming what is missing, unexpected or of another shape (12 of each at most)."""
    expected, found = dict(ref["params"]), dict(got["params"])
    if expected != found:
        raise Fail(
            "fail.param_names",
            what=name,
            missing=[f"{k} {expected[k]}" for k in sorted(set(expected) - set(found))][:12],
            unexpected=[f"{k} {found[k]}" for k in sorted(set(found) - set(expected))][:12],
            wrong_shape=[
                f"{k}: {found[k]} (expected {expected[k]})"
                for k in sorted(set(found) & set(expected))
                if found[k] != expected[k]
            ][:12],
            example=example,
        )


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
            raise Fail(
                "fail.dtype",
                what=phrase("what.on_input", call=f"{name}.{method}", dtype="float32"),
                expected="float32",
                got=str(got["out"].dtype).replace("torch.", ""),
                example=ex,
            )
        if got["out"].device.type != device.split(":")[0]:
            raise Fail("fail.device", what=f"{name}.{method}", expected=device, got=got["out"].device.type, example=ex)
        check_tensor(
            got["out"].cpu(),
            ref["out"].to(torch.float32),
            what=f"{name}.{method} (float32)",
            dtype="float32",
            example=ex,
        )


def run_low_precision(ctx, probe, *, what, dtype, example, **args):
    """Run ``probe`` in ``dtype``; an overflowing fill value becomes a failure that explains itself."""
    try:
        return ctx.sub(probe, dtype=dtype, **args)
    except SubmissionError as err:
        if err.kind == "exception" and "overflow" in err.detail:
            raise Fail(
                "fail.half_overflow",
                what=what,
                dtype=dtype,
                detail=err.detail,
                file=err.file,
                line=err.line,
                example=example,
            ) from None
        raise


def low_precision(ctx, *, name, kwargs, state, inputs, method="forward", example=None):
    """float16 and bfloat16 run without raising and give finite outputs."""
    for dtype in ("float16", "bfloat16"):
        ex = dict(example or {}, dtype=dtype)
        got = run_low_precision(
            ctx,
            "forward",
            what=name,
            dtype=dtype,
            example=ex,
            name=name,
            kwargs=kwargs,
            state=state,
            inputs=inputs,
            method=method,
        )
        out = got["out"]
        if out.dtype != getattr(torch, dtype):
            raise Fail(
                "fail.dtype",
                what=phrase("what.on_input", call=f"{name}.{method}", dtype=dtype),
                expected=dtype,
                got=str(out.dtype).replace("torch.", ""),
                example=ex,
            )
        if not torch.isfinite(out.float()).all():
            raise Fail("fail.half_nonfinite", what=name, dtype=dtype, example=ex)


def meta_runs(ctx, *, name, kwargs, inputs, expected_shape, method="forward", example=None):
    """On the ``meta`` device the module runs (no tensor created on the wrong device) with the right shape."""
    got = ctx.sub("forward", name=name, kwargs=kwargs, state=None, inputs=inputs, method=method, device="meta")
    out = got["out"]
    if out.device.type != "meta":
        raise Fail("fail.device", what=f"{name}.{method}", expected="meta", got=out.device.type, example=example)
    if list(out.shape) != list(expected_shape):
        raise Fail(
            "fail.shape",
            what=f"{name}.{method} (meta)",
            expected=list(expected_shape),
            got=list(out.shape),
            example=example,
        )


def dropout_behaviour(ctx, *, name, kwargs, state, inputs, method="forward", example=None):
    """``eval()`` is deterministic even with dropout > 0; ``train()`` really drops; and with ``dropout=0.0`` in
    ``train()`` nothing drops (every dropout honours its argument: none is fixed at 0.1)."""
    ev = ctx.sub("forward", name=name, kwargs=kwargs, state=state, inputs=inputs, method=method, repeat=2)
    if not torch.equal(ev["outs"][0], ev["outs"][1]):
        raise Fail("fail.eval_random", what=name, example=example)
    tr = ctx.sub("forward", name=name, kwargs=kwargs, state=state, inputs=inputs, method=method, train=True, repeat=2)
    if torch.equal(tr["outs"][0], ev["out"]) and torch.equal(tr["outs"][1], ev["out"]):
        raise Fail("fail.train_no_dropout", what=name, p=kwargs.get("dropout"), example=example)
    off = dict(kwargs, dropout=0.0)
    ev0 = ctx.sub("forward", name=name, kwargs=off, state=state, inputs=inputs, method=method)
    tr0 = ctx.sub("forward", name=name, kwargs=off, state=state, inputs=inputs, method=method, train=True, repeat=2)
    if not all(torch.equal(o, ev0["out"]) for o in tr0["outs"]):
        raise Fail(
            "fail.dropout_zero",
            what=name,
            example=dict(example or {}, config=dict((example or {}).get("config", {}), dropout=0.0, mode="train")),
        )


def defaults_agree(ctx, *, name, required, inputs, given, example=None, train_differs=False, state=True):
    """``name(**required)`` (the submission's defaults for everything else) behaves as the submission's own module
    built with the contract's defaults passed explicitly: the same ``eval()`` output for the same weights, and,
    with ``train_differs``, a default dropout that is not zero. Only the defaults are judged here: a mistake in the
    forward pass makes both outputs wrong alike and is charged in the checks that compare with the reference.
    ``given``: the arguments a check usually passes; those not in ``required`` are the ones left out.

    Inputs that end in ``None`` (masks, caches) also judge ``forward``'s own defaults: left out, the same output as
    passing ``None``, where the contract's default for them is ``None``."""
    left = sorted(set(given) - set(required))
    contract = ctx.ref("defaults", name=name)
    explicit = dict(required, **{k: contract[k] for k in left if k in contract})
    shown = ", ".join(f"{k}={contract[k]!r}" for k in left if k in contract)
    ex = dict(example or {}, config=dict(required, defaults_for=", ".join(left)))
    weights = ref_state(ctx, name, required, 0) if state else None
    got = ctx.sub("forward", name=name, kwargs=required, state=weights, inputs=inputs)
    spelled = ctx.sub("forward", name=name, kwargs=explicit, state=weights, inputs=inputs)
    try:
        check_tensor(
            got["out"],
            spelled["out"],
            what=phrase("what.output", name=f"{name}({', '.join(sorted(required))})"),
            example=ex,
        )
    except Fail as fail:
        raise Fail(
            "fail.defaults_spelled",
            what=name,
            arguments=", ".join(left),
            defaults=shown,
            detail=phrase(fail.key, **fail.params),  # said in the language of the sentence
            example=ex,
        ) from None
    method_defaults(ctx, name=name, kwargs=required, state=weights, inputs=inputs, spelled=spelled, example=ex)
    if train_differs:
        tr = ctx.sub("forward", name=name, kwargs=required, state=weights, inputs=inputs, train=True, repeat=2)
        if all(torch.equal(o, got["out"]) for o in tr["outs"]):
            raise Fail(
                "fail.defaults",
                what=name,
                argument="dropout",
                default=contract.get("dropout", 0.1),
                detail=phrase("what.nothing_dropped"),
                example=ex,
            )


def method_defaults(ctx, *, name, kwargs, state, inputs, method="forward", spelled=None, example=None):
    """``method(*inputs)`` of ``name(**kwargs)`` with its trailing ``None`` inputs (masks, caches) left out gives
    what it gives with them (``spelled``, the probe's answer with them, when the caller has it), where the
    contract's ``method`` has those last parameters default to ``None``."""
    kept = list(inputs)
    while kept and kept[-1] is None:
        kept.pop()
    if len(kept) == len(inputs):
        return
    contract = list(ctx.ref("defaults", name=name, method=method).items())
    left_out = contract[len(kept) - len(inputs) :]
    if len(left_out) < len(inputs) - len(kept) or any(v is not None for _, v in left_out):
        return
    left = [k for k, _ in left_out]
    if spelled is None:
        spelled = ctx.sub("forward", name=name, kwargs=kwargs, state=state, inputs=inputs, method=method)
    _left_out_agrees(
        ctx,
        "forward",
        dict(name=name, kwargs=kwargs, state=state, inputs=kept, method=method),
        spelled,
        compare=("out",),
        what=f"{name}.{method}",
        argument=", ".join(left),
        default="None",
        example=dict(example or {}, config=dict(kwargs, **{k: phrase("what.default") for k in left})),
    )


def defaults_called(ctx, *, what, probe, args, arguments, compare, method=None, example=None):
    """Each of ``arguments`` left out of a call of the submission's ``what`` (a function, or ``method`` of the class
    ``what``) through ``probe`` gives what passing the contract's default for it gives: the same results under
    ``compare`` (keys of the probe's answer), the same seeds for both calls. The contract's defaults are the
    reference's signature (the ``defaults`` probe). Only the default is judged: the same code runs both calls, so
    a mistake elsewhere in the function makes both wrong alike and is charged where it is compared with the
    reference. ``probe`` takes ``omit``: the names it does not pass."""
    contract = ctx.ref("defaults", name=what, method=method)
    shown_what = f"{what}.{method}" if method else what
    spelled_args = dict(args, **{k: contract[k] for k in arguments})
    spelled = ctx.sub(probe, **spelled_args)
    for name in arguments:
        ex = dict(example or {})
        ex["config"] = dict(ex.get("config", {}), **{name: phrase("what.default")})
        _left_out_agrees(
            ctx,
            probe,
            dict(spelled_args, omit=[name]),
            spelled,
            compare=compare,
            what=shown_what,
            argument=name,
            default=repr(contract[name]),
            example=ex,
        )


def _left_out_agrees(ctx, probe, args, spelled, *, compare, what, argument, default, example):
    """Fail unless the submission's ``probe`` call with ``args`` (``argument`` left to its default) raises nothing
    and gives ``spelled`` (the answer with the contract's ``default`` passed) under the keys ``compare``."""
    try:
        left_out = ctx.sub(probe, **args)
    except SubmissionError as err:
        if err.kind != "exception":
            raise
        raise Fail(
            "fail.default_left_out_raised",
            what=what,
            argument=argument,
            default=default,
            detail=err.detail,
            file=err.file,
            line=err.line,
            example=example,
        ) from None
    differ = first_difference({k: left_out.get(k) for k in compare}, {k: spelled.get(k) for k in compare})
    if differ is not None:
        raise Fail("fail.default_left_out", what=what, argument=argument, default=default, example=example, **differ)


def first_difference(got, expected, path=""):
    """Where two plain results (dicts, lists, tensors, numbers) first differ: ``{"where", "got", "expected",
    "count"}`` (``count``: how many elements differ, of how many); ``None`` where they agree (floats
    within ``1e-9`` relative: two spellings of one default may round differently)."""
    if isinstance(expected, dict) and isinstance(got, dict):
        for key in sorted(set(expected) | set(got), key=str):
            found = first_difference(got.get(key), expected.get(key), f"{path}.{key}" if path else str(key))
            if found is not None:
                return found
        return None
    if isinstance(expected, (list, tuple)) and isinstance(got, (list, tuple)) and len(got) == len(expected):
        for i, (g, e) in enumerate(zip(got, expected)):
            found = first_difference(g, e, f"{path}[{i}]")
            if found is not None:
                return found
        return None
    if isinstance(expected, torch.Tensor) and isinstance(got, torch.Tensor):
        if got.shape != expected.shape or got.dtype != expected.dtype:
            return _differ(path, f"{got.dtype} {list(got.shape)}", f"{expected.dtype} {list(expected.shape)}")
        if expected.is_floating_point():
            bad = ~torch.isclose(got, expected, rtol=1e-9, atol=1e-12, equal_nan=True)
        else:
            bad = got != expected
        if not bad.any():
            return None
        index = [int(i) for i in bad.nonzero()[0]]
        return _differ(
            f"{path}{index}",
            _number(got[tuple(index)].item()),
            _number(expected[tuple(index)].item()),
            f"{int(bad.sum())}/{bad.numel()}",
        )
    if isinstance(expected, float) and isinstance(got, float) and not isinstance(got, bool):
        if math.isclose(got, expected, rel_tol=1e-9, abs_tol=1e-12) or (math.isnan(got) and math.isnan(expected)):
            return None
        return _differ(path, _number(got), _number(expected))
    if got == expected and type(got) is type(expected):
        return None
    return _differ(path, repr(got)[:120], repr(expected)[:120])


def _differ(where, got, expected, count="1/1"):
    return {"where": where, "got": got, "expected": expected, "count": count}


def _number(x):
    return f"{x:.6g}" if isinstance(x, float) else repr(x)


def nonfinite_name(x):
    """How a loss that is not a finite number reads in a message: ``NaN``, ``inf`` or ``-inf``."""
    return "NaN" if math.isnan(x) else ("inf" if x > 0 else "-inf")


def judge_losses(losses, *, steps, target, example, nonfinite_key, loss_key):
    """The artifacts of a training run's ``losses`` (the report draws them as the loss curve, failed or not),
    once the run is judged: ``Fail(nonfinite_key)`` naming the step where a loss stopped being a finite number
    (training stops there: say so, rather than "does not learn"), ``Fail(loss_key)`` when the last loss is not
    below ``target`` after ``steps`` steps."""
    artifacts = {"loss_curve": [round(x, 5) for x in losses], "loss_target": target, "loss_steps": steps}
    bad = next((i for i, x in enumerate(losses) if not math.isfinite(x)), None)
    if bad is not None:
        raise Fail(
            nonfinite_key,
            value=nonfinite_name(losses[bad]),
            step=bad + 1,
            steps=steps,
            example=example,
            artifacts=artifacts,
        )
    if not losses or not losses[-1] < target:
        raise Fail(
            loss_key,
            steps=steps,
            target=target,
            last=f"{losses[-1]:.4g}" if losses else "none",
            example=example,
            artifacts=artifacts,
        )
    return artifacts
