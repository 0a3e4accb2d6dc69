"""The reference's functions, recorded: how a student kit grades a task over parts beneath it that it does not hold.

The full kit grades a task over the reference's parts for the tasks beneath it (``isolated:<task>``): the
student's ``MultiHeadAttention`` over the reference's ``scaled_dot_product_attention``, so that a mistake in the
attention function is charged there, once. A student kit holds no reference. Where every part beneath a task is a
*function* (no state, no construction), what the part computes is fixed by its arguments, and the kit can use the
reference's answers instead of its code: ``Log`` records each call the reference's own composite makes to those
functions while the bank is built (``kit.record`` grades the reference with its isolated checks over recording
parts), with its arguments, its answer and, where gradients flow back through it, each vector-Jacobian product the
check asked for. In the kit, ``Replay`` gives the student's composite stand-ins of those functions that answer from
the record: the student's code computes the arguments itself, and a call whose arguments are those the reference
passed (every tensor within a few units in the last place of its largest element; everything else equal) gets the
reference's answer. A correct composite over a broken part is then graded as the full kit grades it.

A call the record does not hold (the student's composite passes other arguments, or draws random numbers in
another order before a part that draws them) raises ``NotInBank`` and is counted (``Replay.missed``): the check is
then not judged by the record, and the kit says what it says without it (blocked by the task beneath). Nothing is
approximated beyond the tolerance: a miss is never answered.

The record is plain data (``grader.submission.wire``: tensors, numbers, names), kept in the answer bank under one
reserved digest (``TABLE_DIGEST``); it holds no code.
"""

import functools
import hashlib
import inspect

import torch
from torch import nn

from grader.submission import wire
from grader.submission.bank import NotInBank

TABLE_DIGEST = hashlib.sha256(b"gradekit recorded reference functions 1").digest()
"""The bank key the record is kept under (no question's digest: those are blake2b of a probe's encoding)."""
VERSION = 1
TOLERANCE = {
    torch.float64: 1e-12,
    torch.float32: 4e-6,
    torch.float16: 4e-3,
    torch.bfloat16: 3e-2,
    torch.complex64: 4e-6,
    torch.complex128: 1e-12,
}
"""How far a floating tensor of a call may be from the recorded one, relative to the recorded one's largest
magnitude: a few units in the last place, what another order of the same sums gives. Other dtypes: equal."""
MAX_CALLS = 50_000
"""Calls a record keeps at most (a bank must stay small)."""
MAX_DEPTH = 8


class Unrecordable(Exception):
    """An argument with no plain form: such a call is neither recorded nor answered."""


def _skeleton(x, tensors, depth=0):
    """``x`` as plain data, each tensor replaced by its dtype, shape, device and whether a gradient flows back to it
    (and appended to ``tensors``); ``Unrecordable`` for anything else than plain values, containers, dtypes,
    devices and torch's own stateless modules (a dropout layer: its class, mode and settings)."""
    if depth > MAX_DEPTH:
        raise Unrecordable("nested too deep")
    if isinstance(x, torch.Tensor):
        if type(x) is not torch.Tensor and not isinstance(x, nn.Parameter):
            raise Unrecordable(type(x).__name__)
        tensors.append(x)
        grad = bool(x.requires_grad and torch.is_grad_enabled())
        return ["T", str(x.dtype), list(x.shape), x.device.type, grad]
    if x is None or type(x) in (bool, int, float, str):
        return [type(x).__name__, x]
    if type(x) in (list, tuple):
        return [type(x).__name__, [_skeleton(v, tensors, depth + 1) for v in x]]
    if type(x) is dict and all(type(k) is str for k in x):
        return ["dict", [[k, _skeleton(x[k], tensors, depth + 1)] for k in sorted(x)]]
    if isinstance(x, (torch.dtype, torch.device)):
        return [type(x).__name__, str(x)]
    if isinstance(x, nn.Module) and type(x).__module__.startswith("torch.nn.") and not x._modules:
        if next(x.parameters(), None) is not None or next(x.buffers(), None) is not None:
            raise Unrecordable(type(x).__name__)
        settings = {k: v for k, v in vars(x).items() if not k.startswith("_") and type(v) in (bool, int, float, str)}
        return ["module", type(x).__qualname__, [[k, settings[k]] for k in sorted(settings)]]
    raise Unrecordable(type(x).__name__)


def signature_of(fn):
    """``[[name, has a default, default], ...]``: ``fn``'s parameters as plain data, or ``None`` where a call cannot be
    put in one form by them (variadic or keyword-only parameters, defaults with no plain form)."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        return None
    out = []
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            return None
        default = None if p.default is p.empty else p.default
        if default is not None and type(default) not in (bool, int, float, str):
            return None
        out.append([p.name, p.default is not p.empty, default])
    return out


def _bound(signature, args, kwargs):
    """The arguments of a call in one form: ``(args as passed by name, in the parameters' order, defaults filled
    in, {})`` where ``signature`` (``signature_of``) binds them; else as they came."""
    if signature is None or len(args) > len(signature) or any(type(k) is not str for k in kwargs):
        return list(args), dict(kwargs)
    names = [p[0] for p in signature]
    if any(k not in names for k in kwargs) or any(k in kwargs for k in names[: len(args)]):
        return list(args), dict(kwargs)
    values = list(args)
    for name, has_default, default in signature[len(args) :]:
        if name in kwargs:
            values.append(kwargs[name])
        elif has_default:
            values.append(default)
        else:
            return list(args), dict(kwargs)
    return values, {}


def _key(name, skeleton, rng=None):
    """The digest a call is kept under: the function, its arguments' skeleton, and the random generator's state
    where the call drew random numbers."""
    parts = [name, skeleton, str(torch.get_default_dtype())]
    if rng is not None:
        parts.append(hashlib.sha256(rng.numpy().tobytes()).hexdigest())
    return hashlib.sha256(wire.encode(parts)).digest()


def _flat(x, out, depth=0):
    """The tensors of an answer, in order (a tensor, or tuples and lists of them)."""
    if depth > MAX_DEPTH:
        raise Unrecordable("nested too deep")
    if isinstance(x, torch.Tensor):
        out.append(x)
    elif type(x) in (list, tuple):
        for v in x:
            _flat(v, out, depth + 1)
    elif not (x is None or type(x) in (bool, int, float, str)):
        raise Unrecordable(type(x).__name__)
    return out


def _rebuild(x, tensors):
    """``x`` with its tensors taken in order from the iterator ``tensors``."""
    if isinstance(x, torch.Tensor):
        return next(tensors)
    if type(x) in (list, tuple):
        return type(x)(_rebuild(v, tensors) for v in x)
    return x


def _close(got, recorded):
    """Whether tensor ``got`` is the recorded one within ``TOLERANCE`` (same dtype and shape: the key says so; on the
    meta device, which holds no values, the shape is all there is)."""
    if got.shape != recorded.shape or got.dtype != recorded.dtype or got.is_meta != recorded.is_meta:
        return False
    if recorded.is_meta:
        return True
    got = got.detach().to("cpu")
    tol = TOLERANCE.get(recorded.dtype)
    if tol is None:
        return torch.equal(got, recorded)
    if recorded.numel() == 0:
        return True
    finite = recorded[torch.isfinite(recorded)]
    scale = float(finite.abs().max()) if finite.numel() else 0.0
    allowed = tol * max(scale, torch.finfo(recorded.dtype).tiny)
    return bool(torch.isclose(got, recorded, rtol=0.0, atol=allowed, equal_nan=True).all())


def _all_close(got, recorded):
    return len(got) == len(recorded) and all(
        (g is None and r is None) or (g is not None and r is not None and _close(g, r)) for g, r in zip(got, recorded)
    )


def _identical(got, want):
    """Whether two lists of tensors are the same to the bit (NaN where NaN)."""
    return len(got) == len(want) and all(
        g.shape == w.shape
        and g.dtype == w.dtype
        and g.device == w.device
        and (g.is_meta or bool(((g == w) | ((g != g) & (w != w))).all()))
        for g, w in zip(got, want)
    )


def _cpu(t):
    """A copy of ``t`` to keep (on the CPU, or on the meta device where it lives there)."""
    if t is None:
        return None
    return t.detach().clone() if t.is_meta else t.detach().to("cpu").clone()


# ================================================================================================
# Recording (the instructor's process, with the reference)
# ================================================================================================
class Log:
    """The reference's function calls made while its isolated checks run, by key: ``{digest: [call, ...]}``, each
    call ``{"in": [tensors], "out": answer, "rng": state after or None, "vjp": [[grads out, grads in], ...]}``."""

    def __init__(self):
        self.calls = {}
        self.functions = set()
        self.signatures = {}
        self.count = 0

    def wrap(self, name, fn):
        """``fn`` (a reference function) that records each call in this log."""
        self.functions.add(name)
        signature = self.signatures[name] = signature_of(fn)
        log = self

        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            tensors: list = []
            bound = _bound(signature, args, kwargs)
            try:
                skeleton = _skeleton(list(bound), tensors)
            except Unrecordable:
                return fn(*args, **kwargs)
            before = torch.get_rng_state()
            out = fn(*args, **kwargs)
            after = torch.get_rng_state()
            drew = not torch.equal(before, after)
            try:  # what cannot be recorded is not: the reference's answer is returned all the same
                outs = _flat(out, [])
                call = log._keep(name, skeleton, tensors, out, before if drew else None, after if drew else None)
                if call is not None:
                    log._other_forms(name, fn, bound, out, call, before if drew else None)
            except Exception:  # noqa: BLE001 - a value of a kind the record has no form for
                return out
            finally:
                torch.set_rng_state(after)
            if call is None:
                return out
            wrt = [t for t in tensors if t.requires_grad and torch.is_grad_enabled()]
            if wrt and any(o.requires_grad for o in outs):
                tapped = _Tap.apply(_TapBox(call, wrt, outs), *outs)
                return _rebuild(out, iter(tapped))
            return out

        return recorded

    def _other_forms(self, name, fn, bound, out, call, rng_before):
        """Record the same call with a tensor argument in another rank that broadcasts alike (a mask ``[L, L]`` as
        ``[1, 1, L, L]`` and back: leading dimensions of size one added or dropped, up to the rank of the largest
        tensor argument), where the reference's answer to that form, computed now, is the same to the bit. A
        gradient flows to none of those arguments, so the call's gradient products are the same too."""
        values, named = bound
        slots = [(values, i) for i in range(len(values))] + [(named, k) for k in named]
        tops = [x[k].dim() for x, k in slots if isinstance(x[k], torch.Tensor)]
        for x, k in slots:
            t = x[k]
            if not isinstance(t, torch.Tensor) or t.requires_grad or t.is_meta:
                continue
            lead = next((i for i, n in enumerate(t.shape) if n != 1), t.dim())
            core = tuple(t.shape[lead:])
            for ones in range(max(tops) - len(core) + 1):
                if ones == lead:
                    continue
                x[k] = t.reshape((1,) * ones + core)
                try:
                    tensors: list = []
                    skeleton = _skeleton([values, named], tensors)
                    if rng_before is not None:
                        torch.set_rng_state(rng_before)
                    with torch.no_grad():
                        again = fn(*values, **named)
                    if _identical(_flat(again, []), _flat(out, [])):
                        self._keep(name, skeleton, tensors, out, rng_before, call["rng"], vjp=call["vjp"])
                except Exception:  # noqa: BLE001 - the reference refuses that form: it is not recorded
                    pass
                finally:
                    x[k] = t

    def _keep(self, name, skeleton, tensors, out, rng_before, rng_after, vjp=None):
        if self.count >= MAX_CALLS:
            return None
        key = _key(name, skeleton, rng_before)
        stored = [_cpu(t) for t in tensors]
        for call in self.calls.get(key, ()):
            if all(torch.equal(a, b) for a, b in zip(call["in"], stored)):
                return call
        outs = [_cpu(t) for t in _flat(out, [])]
        call = {
            "in": stored,
            "out": _rebuild(out, iter(outs)),
            "rng": None if rng_after is None else rng_after.clone(),
            "vjp": [] if vjp is None else vjp,
        }
        self.calls.setdefault(key, []).append(call)
        self.count += 1
        return call

    def to_data(self):
        """The record as plain data (``wire``)."""
        return {
            "version": VERSION,
            "functions": sorted(self.functions),
            "signatures": {name: self.signatures.get(name) for name in sorted(self.functions)},
            "calls": [[key, calls] for key, calls in sorted(self.calls.items())],
        }


class _TapBox:
    def __init__(self, call, wrt, outs):
        self.call, self.wrt, self.outs = call, wrt, outs


class _Tap(torch.autograd.Function):
    """The identity on a recorded call's answer, whose backward records the call's vector-Jacobian product for the
    gradients that reach it (computed again through the reference's own graph), then lets them flow on."""

    @staticmethod
    def forward(ctx, box, *outs):
        ctx.box = box
        return tuple(o.clone() for o in outs)

    @staticmethod
    def backward(ctx, *grads):
        box = ctx.box
        grads = tuple(torch.zeros_like(o) if g is None else g for o, g in zip(box.outs, grads))
        pairs = [(o, g) for o, g in zip(box.outs, grads) if o.requires_grad]
        got = torch.autograd.grad(
            [o for o, _ in pairs], box.wrt, [g for _, g in pairs], retain_graph=True, allow_unused=True
        )
        entry = [[_cpu(g) for g in grads], [_cpu(g) for g in got]]
        if len(box.call["vjp"]) < 64 and not any(_all_close(entry[0], v[0]) for v in box.call["vjp"]):
            box.call["vjp"].append(entry)
        return (None, *grads)


# ================================================================================================
# Replaying (the student kit: no reference)
# ================================================================================================
class Replay:
    """The record of a bank (``of_bank``), answering the student's calls to the recorded functions. ``covers(task)``:
    whether every part beneath ``task`` is a recorded function; ``parts(task)``: what ``InProcessRunner`` gives an
    'isolated:<task>' run (``StandInParts``); ``missed``: calls it could not answer so far."""

    def __init__(self, assignment, data):
        self.assignment = assignment
        self.functions = frozenset(str(n) for n in data.get("functions", ()))
        self.signatures = dict(data.get("signatures") or {})
        self.calls = {bytes(k): v for k, v in data.get("calls", ())}
        self.missed = 0
        self.answered = 0

    @classmethod
    def of_bank(cls, bank, assignment):
        """The record in ``bank``, or ``None`` where it holds none (or one of another version)."""
        stored = bank.answers.get(TABLE_DIGEST)
        if stored is None:
            return None
        try:
            data = wire.decode(stored[0])
        except wire.WireError:
            return None
        if not isinstance(data, dict) or data.get("version") != VERSION:
            return None
        return cls(assignment, data)

    def beneath(self, task):
        from grader.submission.inprocess import beneath_names

        return beneath_names(self.assignment, task)

    def covers(self, task):
        names = self.beneath(task)
        return bool(names) and names <= self.functions

    def parts(self, task):
        from grader.submission.inprocess import StandInParts

        return StandInParts(
            self.assignment, _Functions({n: self._function(n) for n in self.beneath(task) & self.functions})
        )

    def _function(self, name):
        replay = self

        def standin(*args, **kwargs):
            return replay.call(name, args, kwargs)

        standin.__name__ = standin.__qualname__ = name
        standin.__module__ = "reference"
        standin.__doc__ = f"The reference's {name}, answered from the kit's record of it."
        return standin

    def call(self, name, args, kwargs):
        tensors: list = []
        try:
            skeleton = _skeleton(list(_bound(self.signatures.get(name), args, kwargs)), tensors)
        except Unrecordable:
            return self._miss(name)
        found = self._find(_key(name, skeleton), tensors)
        if found is None:
            found = self._find(_key(name, skeleton, torch.get_rng_state()), tensors)
            if found is None:
                return self._miss(name)
            torch.set_rng_state(found["rng"])
        self.answered += 1
        outs = [t.clone() for t in _flat(found["out"], [])]
        wrt = [t for t in tensors if t.requires_grad and torch.is_grad_enabled()]
        if wrt and outs:
            outs = list(_Replayed.apply(_ReplayBox(self, name, found, wrt), *wrt))
        return _rebuild(found["out"], iter(outs))

    def _find(self, key, tensors):
        for call in self.calls.get(key, ()):
            if _all_close(tensors, call["in"]):
                return call
        return None

    def _miss(self, name):
        self.missed += 1
        raise NotInBank(f"reference {name}")


def function_tasks(assignment):
    """The tasks that build on others where every part beneath is a function in the reference (no class): those
    a student kit can grade over recorded parts."""
    from grader.submission.inprocess import beneath_names, reference_namespace

    ns = reference_namespace(assignment)
    tasks = []
    for task in assignment.task_ids:
        names = beneath_names(assignment, task)
        if assignment.all_deps(task) and names and all(_is_function(ns.get(n)) for n in names):
            tasks.append(task)
    return tasks


def _is_function(obj):
    return callable(obj) and not isinstance(obj, type)


def recording_parts(assignment, log, task_id):
    """``StandInParts`` for 'isolated:<task_id>' whose functions are the reference's own, recorded in ``log``."""
    from grader.submission.inprocess import StandInParts, beneath_names, parts_namespace, reference_parts_for

    ns = parts_namespace(assignment, reference_parts_for(assignment, task_id))
    names = sorted(beneath_names(assignment, task_id))
    return StandInParts(assignment, _Functions({n: log.wrap(n, ns.get(n)) for n in names}))


class _Functions:
    """What ``StandInParts`` asks of its stand-ins, for recorded functions."""

    def __init__(self, functions):
        from grader.submission.inprocess import _watched

        self.used: set = set()
        self._names = sorted(functions)
        self._fns = {n: _watched(fn, n, self.used) for n, fn in functions.items()}

    def get(self, name):
        return self._fns[name]

    def names(self):
        return list(self._names)


class _ReplayBox:
    def __init__(self, replay, name, call, wrt):
        self.replay, self.name, self.call, self.wrt = replay, name, call, wrt


class _Replayed(torch.autograd.Function):
    """A recorded answer joined to the student's graph: its backward is the recorded vector-Jacobian product for
    the gradients that reach it (``NotInBank`` where none was recorded for them)."""

    @staticmethod
    def forward(ctx, box, *wrt):
        ctx.box = box
        return tuple(t.clone() for t in _flat(box.call["out"], []))

    @staticmethod
    def backward(ctx, *grads):
        box = ctx.box
        outs = _flat(box.call["out"], [])
        given = [torch.zeros_like(o) if g is None else g for o, g in zip(outs, grads)]
        for grads_out, grads_in in box.call["vjp"]:
            if _all_close(given, grads_out):
                return (None, *(None if g is None else g.clone() for g in grads_in))
        box.replay._miss(box.name)
