"""The reference's parts, recorded: how a student kit grades a task over parts beneath it that it does not hold.

The full kit grades a task over the reference's parts for the tasks beneath it (``isolated:<task>``): the
student's ``EncoderLayer`` over the reference's ``MultiHeadAttention``, ``FeedForward`` and ``LayerNorm``, so that
a mistake in the norm is charged there, once. A student kit holds no reference. What a part computes is fixed by
its arguments and its state, so the kit can use the reference's answers instead of its code: ``Log`` records each
call the reference's own composite makes to its parts while the bank is built (``kit.record`` grades the reference
with its isolated checks over recording parts):

- a *function*'s call: its arguments (a leaf's gradient counts as one: a clipping function reads and scales it),
  its answer, what it changed in place, the random generators' states where it drew numbers, and, where
  gradients flow back through it, each vector-Jacobian product the check asked for;
- a *class*'s construction: its arguments, the default dtype and device, and the object built, described by its
  state (parameters, buffers, submodules, plain attributes: ``_Describe``), from the generator's state before it
  (and the same construction in the other default dtypes and on the meta device, built then);
- a method's or property's call on such an object: the object's state and the arguments as the key, the answer,
  every change to the state of the objects involved (a KV cache that grew), generator and gradients as for
  functions.

In the kit, ``Replay`` gives the student's composite stand-ins of those parts that answer from the record: a
function, or a *shell* class of the reference's name whose objects hold real state (real parameters, so the
student's ``load_state_dict``, optimiser and ``.to()`` work on them) and whose every construction and method
looks the call up. The student's code computes the arguments itself, and a call whose key and tensors are those the
reference's composite made (every tensor within a few units in the last place of its largest element; everything
else equal) gets the reference's answer. A correct composite over a broken part is then graded as the full kit
grades it.

A call the record does not hold (other arguments, parameters the student's own optimiser moved elsewhere, random
numbers drawn in another order before a part that draws them) raises ``NotInBank`` and is counted
(``Replay.missed``): the check is then not judged by the record, and the kit says what it says without it (blocked
by the task beneath). Nothing is approximated beyond the tolerance: a miss is never answered, with one exception a
check cannot see: a construction from a generator state the record does not hold is given the values the reference
drew from another one (an isolated check loads the values it compares, or seeds the generator before it builds).
A recorded check in which one call could not be recorded (an argument of no plain form, a part that changes its
arguments in place) keeps none of its calls (``Log.window``): the kit would miss there whatever the rest holds.

The record is plain data (``grader.submission.wire``: tensors, numbers, names; each distinct tensor once), kept in
the answer bank under one reserved digest (``TABLE_DIGEST``); it holds no code.
"""

import collections.abc
import contextlib
import functools
import hashlib
import inspect
import itertools

import torch
from torch import nn

from grader.submission import wire
from grader.submission.bank import NotInBank

TABLE_DIGEST = hashlib.sha256(b"gradekit recorded reference functions 1").digest()
"""The bank key the record is kept under (no question's digest: those are blake2b of a probe's encoding)."""
VERSION = 3
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
CONSTRUCTIONS = 8
"""Constructions of one class with the same arguments a record keeps at most (each from another generator state)."""
ENVIRONMENTS = ((torch.float32, "meta"), (torch.float64, "meta"), (torch.float32, "cpu"), (torch.float64, "cpu"))
"""The default dtypes and devices a construction is recorded in besides the one it was made in."""
CONSTRUCTION_BYTES = 1 << 20
"""A construction whose tensors would hold more than this on the CPU (a full-size model, built on the meta device by
the contract's checks) is recorded only where it was made on the meta device, which holds no values."""


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
        entry = ["T", str(x.dtype), list(x.shape), x.device.type, grad]
        if x.is_leaf and x.requires_grad and x.grad is not None:  # what a function may read (and clip) of it
            tensors.append(x.grad)
            entry.append(["grad", str(x.grad.dtype), list(x.grad.shape)])
        return entry
    if x is None or type(x) in (bool, int, float, str):
        return [type(x).__name__, x]
    if type(x) in (list, tuple):
        return [type(x).__name__, [_skeleton(v, tensors, depth + 1) for v in x]]
    if type(x) is dict and all(type(k) is str for k in x):
        return ["dict", [[k, _skeleton(x[k], tensors, depth + 1)] for k in sorted(x)]]
    if isinstance(x, (torch.dtype, torch.device)):
        return [type(x).__name__, str(x)]
    if isinstance(x, torch.Generator):  # its state is an input of the call (and changes: ``_generators``)
        tensors.append(x.get_state())
        return ["Generator", x.device.type]
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
    return hashlib.sha256(repr(parts).encode()).digest()  # plain lists, strings and numbers: one text each


_POOLED = "\x00pool"


def _pool(x, pool, index):
    """``x`` with each tensor replaced by ``{_POOLED: i}``, ``pool[i]`` the tensor (equal tensors share one entry)."""
    if isinstance(x, torch.Tensor):
        data = b"" if x.is_meta else x.detach().contiguous().reshape(-1).view(torch.uint8).numpy().tobytes()
        key = (str(x.dtype), tuple(x.shape), x.device.type, x.requires_grad, hashlib.sha256(data).digest())
        i = index.get(key)
        if i is None:
            i = index[key] = len(pool)
            pool.append(x)
        return {_POOLED: i}
    if type(x) in (list, tuple):
        return type(x)(_pool(v, pool, index) for v in x)
    if type(x) is dict:
        return {k: _pool(v, pool, index) for k, v in x.items()}
    return x


def _unpool(x, pool):
    """``_pool`` undone (an entry out of range: ``None``, which no call matches)."""
    if type(x) is dict:
        if len(x) == 1 and _POOLED in x:
            i = x[_POOLED]
            return pool[i] if type(i) is int and 0 <= i < len(pool) else None
        return {k: _unpool(v, pool) for k, v in x.items()}
    if type(x) in (list, tuple):
        return type(x)(_unpool(v, pool) for v in x)
    return x


def _consumed(args, kwargs):
    """A call's arguments with each iterator read into a list (``model.parameters()``), as the function would have
    read it: the same list is then both what is recorded and what the function is given."""

    def read(x):
        if isinstance(x, collections.abc.Iterator) and not isinstance(x, (torch.Tensor, nn.Module)):
            return list(itertools.islice(x, 1_000_000))
        return x

    return tuple(read(a) for a in args), {k: read(v) for k, v in kwargs.items()}


class _Deferred:
    """A bank's record as ``Replay.of_bank`` gives it: decoded on first use (an undecodable one covers nothing)."""

    def __init__(self, cls, blob, assignment):
        self._make = lambda: cls.decode(blob, assignment)
        self._replay = None
        self._read = False

    def _get(self):
        if not self._read:
            self._replay, self._read = self._make(), True
        return self._replay

    def covers(self, task):
        r = self._get()
        return r is not None and r.covers(task)

    def parts(self, task):
        return self._get().parts(task)

    @property
    def missed(self):
        r = self._replay
        return 0 if r is None else r.missed

    @property
    def answered(self):
        r = self._replay
        return 0 if r is None else r.answered


class _Calls:
    """A record's calls by key, each key's decoded only when first looked up (a kit pays for the calls its checks
    ask, not for the whole record)."""

    def __init__(self, entries, pool):
        self._raw = {bytes(k): v for k, v in entries if isinstance(v, bytes)}
        self._pool = pool
        self._decoded = {}

    def get(self, key, default=()):
        calls = self._decoded.get(key)
        if calls is None:
            raw = self._raw.get(key)
            if raw is None:
                return default
            try:
                calls = _unpool(wire.decode(raw), self._pool)
            except wire.WireError:
                calls = []
            self._decoded[key] = calls = calls if isinstance(calls, list) else []
        return calls

    def __len__(self):
        return len(self._raw)


def _generators(bound):
    """The random generators passed to a call (``_bound``'s form), in order: each one's state after the call is part
    of its answer."""
    values, named = bound
    return [v for v in [*values, *(named[k] for k in sorted(named))] if isinstance(v, torch.Generator)]


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


def _cut(args, kwargs):
    """``(args, kwargs, cut)``: a call's arguments with each tensor that carries a history (not a leaf, needs
    gradients) replaced by a leaf on the same storage (the same tensor twice: the same leaf), and ``cut``, ``{id of
    the tensor: its leaf}``. The part then computes on a graph of its own, from which a vector-Jacobian product is
    the call's own: through the history, a product with respect to one argument would hold the paths through
    another that depends on it (a decoder layer's memory, reached again through its input from the layer before),
    and the kit would add those twice. Lists, tuples and dicts are looked into; anything else is given as it is."""
    cut: dict = {}
    if not torch.is_grad_enabled():
        return args, kwargs, cut

    def leaf(x, depth=0):
        if isinstance(x, torch.Tensor):
            if not x.requires_grad or x.is_leaf:
                return x
            if id(x) not in cut:
                cut[id(x)] = x.detach().requires_grad_(True)
            return cut[id(x)]
        if depth < MAX_DEPTH and type(x) in (list, tuple):
            return type(x)(leaf(v, depth + 1) for v in x)
        if depth < MAX_DEPTH and type(x) is dict:
            return {k: leaf(v, depth + 1) for k, v in x.items()}
        return x

    return tuple(leaf(a) for a in args), {k: leaf(v) for k, v in kwargs.items()}, cut


def _tapped(call, made, inputs, cut):
    """``made``, the tensors of a part's answer to a call with tensors ``inputs`` (computed from the leaves ``cut``
    gave for some of them), joined to the graph of the tensors the leaves stand for through ``_Tap``, which records
    the call's vector-Jacobian products in ``call`` (``None``: none recorded) as gradients pass. ``made`` as it is
    where no gradient flows."""
    real = [t for t in inputs if t.requires_grad and torch.is_grad_enabled()]
    if not real or not any(t.requires_grad for t in made):
        return made
    box = _TapBox(call, [cut.get(id(t), t) for t in real], made)
    box.joined = [i for i, t in enumerate(real) if id(t) in cut]
    return list(_Tap.apply(box, *made, *(real[i] for i in box.joined)))[: len(made)]


def _close(got, recorded):
    """Whether tensor ``got`` is the recorded one within ``TOLERANCE`` (same dtype and shape: the key says so; on the
    meta device, which holds no values, the shape is all there is)."""
    if got.shape != recorded.shape or got.dtype != recorded.dtype or got.is_meta != recorded.is_meta:
        return False
    if recorded.is_meta:
        return True
    got = got.detach().to("cpu")
    if torch.equal(got, recorded):  # the common case (parameters loaded from the same values): one comparison
        return True
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


@contextlib.contextmanager
def _default_dtype(dtype):
    old = torch.get_default_dtype()
    torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(old)


def _bare(cls):
    from grader.submission.standin import _bare as bare

    return bare(cls)


def _env():
    """What a construction depends on besides its arguments: the default dtype and device."""
    return [str(torch.get_default_dtype()), torch.get_default_device().type]


def _bytes(tensors):
    """What ``tensors`` hold (or would hold, for those on the meta device), in bytes."""
    return sum(t.numel() * t.element_size() for t in tensors)


def _same_state(a, b):
    """Whether two random generator states (or ``None``: drew nothing) are the same."""
    return (a is None and b is None) or (a is not None and b is not None and torch.equal(a, b))


def _unchanged(tensors, kept):
    """Whether each tensor still holds the values kept of it (a part changed none of its inputs in place)."""
    return all(t.is_meta or _identical([t.detach().to("cpu")], [k]) for t, k in zip(tensors, kept))


def _flat_or_none(x):
    try:
        return _flat(x, [])
    except Unrecordable:
        return None


class _Describe:
    """Objects, tensors and plain values as a skeleton (plain data, what a call's key is made of) and the tensors it
    names, numbered in the order met, one numbering for a call's arguments, its objects' states after it and its
    answer: a tensor or object met again is ``["t", i]`` / ``["o", k]``. An object is the reference's (one of
    ``classes``, by class) or a module of torch's own, described by its state: ``[tag, class name, training,
    params, buffers, submodules, attributes]``; anything else is ``Unrecordable``."""

    def __init__(self, classes):
        self.classes = classes
        self.kinds = tuple(classes.values())
        self.tensors, self.tensor_ids = [], {}
        self.objects, self.object_ids = [], {}
        self.new = []

    def fork(self):
        """A describer that goes on from this one's numbering without changing it."""
        twin = _Describe(self.classes)
        twin.tensors, twin.tensor_ids = list(self.tensors), dict(self.tensor_ids)
        twin.objects, twin.object_ids = list(self.objects), dict(self.object_ids)
        return twin

    def take(self):
        """The tensors described in full since the last ``take``."""
        new, self.new = self.new, []
        return new

    def _name(self, x):
        for klass in type(x).__mro__:
            if klass in self.kinds:
                return "R", klass.__name__
        if isinstance(x, nn.Module):
            from grader.submission.standin import _torch_class_name

            name = _torch_class_name(type(x))
            if name is not None:
                return "M", name
        return None, None

    def value(self, x, depth=0):
        if depth > MAX_DEPTH * 4:
            raise Unrecordable("nested too deep")
        if isinstance(x, torch.Tensor):
            if type(x) is not torch.Tensor and not isinstance(x, nn.Parameter):
                raise Unrecordable(type(x).__name__)
            i = self.tensor_ids.get(id(x))
            if i is not None:
                return ["t", i]
            self.tensor_ids[id(x)] = len(self.tensors)
            self.tensors.append(x)
            self.new.append(x)
            grad = bool(x.requires_grad and torch.is_grad_enabled())
            if isinstance(x, nn.Parameter):
                return ["P", str(x.dtype), list(x.shape), x.device.type, grad, bool(x.requires_grad)]
            return ["T", str(x.dtype), list(x.shape), x.device.type, grad]
        if x is None or type(x) in (bool, int, float, str):
            return [type(x).__name__, x]
        if type(x) in (list, tuple):
            return [type(x).__name__, [self.value(v, depth + 1) for v in x]]
        if type(x) is dict and all(type(k) is str for k in x):
            return ["dict", [[k, self.value(x[k], depth + 1)] for k in sorted(x)]]
        if isinstance(x, (torch.dtype, torch.device)):
            return [type(x).__name__, str(x)]
        k = self.object_ids.get(id(x))
        if k is not None:
            return ["o", k]
        tag, name = self._name(x)
        if tag is None:
            raise Unrecordable(type(x).__name__)
        self.object_ids[id(x)] = len(self.objects)
        self.objects.append(x)
        return [tag, name, *self.own(x, depth)]

    def own(self, x, depth=0):
        """``[training, params, buffers, submodules, attributes]`` of object ``x``, its parts by number where met."""
        from grader.submission.standin import _state_attrs

        if isinstance(x, nn.Module):
            training = bool(x.training)
            params = [[n, None if p is None else self.value(p, depth + 1)] for n, p in x._parameters.items()]
            transient = x._non_persistent_buffers_set
            buffers = [
                [n, None if b is None else self.value(b, depth + 1), n not in transient] for n, b in x._buffers.items()
            ]
            children = [[n, None if c is None else self.value(c, depth + 1)] for n, c in x._modules.items()]
        else:
            training, params, buffers, children = None, [], [], []
        attrs = [[n, self._attribute(vars(x)[n], depth + 1)] for n in sorted(_state_attrs(x))]
        return [training, params, buffers, children, attrs]

    def _attribute(self, v, depth):
        """An attribute's value, or ``["X", its type]`` where it is code, not data (a function, a bound method, a
        wrapper the grader put on the object: ``model.forward`` replaced by a recorder): as the stand-ins do, such an
        attribute is not state, and stays as it is. Data of no plain form (a dict keyed by tensors: an optimiser's
        state) is ``Unrecordable``: state the key could not see would answer another call."""
        try:
            return self.value(v, depth)
        except Unrecordable:
            if depth > MAX_DEPTH * 4 or not callable(v) or isinstance(v, (dict, list, tuple, set, torch.Tensor)):
                raise
            return ["X", type(v).__qualname__]

    def states(self, objects):
        """Each object's own state (``own``), in order."""
        return [self.own(x) for x in objects]


class _Rebuild:
    """A skeleton (``_Describe``) back into values: the tensors and objects it names by number are those of the call
    (``tensors``, ``objects``: the student's own, as described for the key); those it describes in full come from
    ``feed`` (the record's), and objects are built as ``shells`` (the kit's classes for the reference's) or torch's."""

    def __init__(self, shells, tensors, objects):
        self.shells = shells
        self.tensors, self.objects = list(tensors), list(objects)
        self.fresh = iter(())

    def feed(self, tensors):
        self.fresh = iter(tensors)

    def _next(self):
        t = next(self.fresh, None)
        if t is None:
            raise NotInBank("a record that does not hold what it names")
        return t

    def value(self, s):
        tag = s[0]
        if tag in ("NoneType", "bool", "int", "float", "str"):
            return s[1]
        if tag in ("list", "tuple"):
            items = [self.value(v) for v in s[1]]
            return items if tag == "list" else tuple(items)
        if tag == "dict":
            return {k: self.value(v) for k, v in s[1]}
        if tag == "dtype":
            return getattr(torch, s[1].rpartition(".")[2])
        if tag == "device":
            return torch.device(s[1])
        if tag == "t":
            return self.tensors[s[1]]
        if tag == "o":
            return self.objects[s[1]]
        if tag == "T" or tag == "P":
            t = self._next().clone()
            if tag == "P":
                t = nn.Parameter(t, requires_grad=bool(s[5]))
            self.tensors.append(t)
            return t
        if tag == "R" or tag == "M":
            from grader.submission.standin import _bare, _torch_class

            cls = self.shells.get(s[1]) if tag == "R" else _torch_class(s[1])
            if cls is None:
                raise NotInBank(f"reference {s[1]}")
            obj = _bare(cls)
            self.objects.append(obj)
            self.fill(obj, s[2:])
            return obj
        raise NotInBank("a record of an unknown form")

    def fill(self, obj, own):
        """Give ``obj`` the state ``own`` (``_Describe.own``); a tensor or object it already holds stays itself."""
        training, params, buffers, children, attrs = own
        if isinstance(obj, nn.Module):
            object.__setattr__(obj, "training", bool(training))
            for n, s in params:
                obj._parameters[n] = None if s is None else self.value(s)
            for n, s, persistent in buffers:
                obj._buffers[n] = None if s is None else self.value(s)
                if persistent:
                    obj._non_persistent_buffers_set.discard(n)
                else:
                    obj._non_persistent_buffers_set.add(n)
            for n, s in children:
                obj._modules[n] = None if s is None else self.value(s)
        for n, s in attrs:
            if s[0] != "X":
                vars(obj)[n] = self.value(s)


# ================================================================================================
# Recording (the instructor's process, with the reference)
# ================================================================================================
class Log:
    """The reference's function calls made while its isolated checks run, by key: ``{digest: [call, ...]}``, each
    call ``{"in": [tensors], "out": answer, "rng": state after or None, "vjp": [[grads out, grads in], ...]}``."""

    def __init__(self):
        self.calls = {}
        self.functions = set()
        self.classes = {}
        """``name -> surface`` (``standin._class_surface``) of the reference classes the record may hold objects of."""
        self.signatures = {}
        self.count = 0
        self.busy = 0
        """Recorded calls under way: a part's own calls inside one are the reference's, not the composite's."""
        self.spoiled = False
        """A call of the current ``window`` could not be recorded."""

    def wrap(self, name, fn):
        """``fn`` (a reference function) that records each call in this log."""
        self.functions.add(name)
        signature = self.signatures[name] = signature_of(fn)
        log = self

        @functools.wraps(fn)
        def recorded(*args, **kwargs):
            args, kwargs = _consumed(args, kwargs)
            tensors: list = []
            bound = _bound(signature, args, kwargs)
            try:
                skeleton = _skeleton(list(bound), tensors)
                kept = [_cpu(t) for t in tensors]
            except Unrecordable:
                log.spoiled = True
                return fn(*args, **kwargs)
            before = torch.get_rng_state()
            given, named, cut = _cut(args, kwargs)
            try:
                out = fn(*given, **named)
            except Exception:  # the reference raising here (on a leaf, say, that it changes in place): not recorded
                log.spoiled = True
                raise
            after = torch.get_rng_state()
            drew = not torch.equal(before, after)
            generators = _generators(bound)
            try:  # what cannot be recorded is not: the reference's answer is returned all the same
                outs = _flat(out, [])
                changed = [[i, _cpu(t)] for i, (t, k) in enumerate(zip(tensors, kept)) if not _unchanged([t], [k])]
                call = log._keep(name, skeleton, kept, out, before if drew else None, after if drew else None)
                if call is not None:
                    call["gens"] = [g.get_state() for g in generators]
                    call["inplace"] = changed
                    if not generators and not changed:
                        log._other_forms(name, fn, bound, out, call, before if drew else None)
            except Exception:  # noqa: BLE001 - a value of a kind the record has no form for
                log.spoiled = True
                return out
            finally:
                torch.set_rng_state(after)
            if call is None:
                log.spoiled = True
            return _rebuild(out, iter(_tapped(call, outs, tensors, cut)))

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
            if _identical(call["in"], stored):
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

    @contextlib.contextmanager
    def window(self):
        """One check's run: where a call of the composite's in it could not be recorded (an argument with no plain
        form, a part that changes its arguments in place), a kit replaying that check would miss there whatever the
        rest holds, and the calls recorded in it are dropped again (those it shares with other runs stay)."""
        mark = {key: len(calls) for key, calls in self.calls.items()}
        count, self.spoiled = self.count, False
        try:
            yield
        finally:
            if self.spoiled:
                for key in list(self.calls):
                    del self.calls[key][mark.get(key, 0) :]
                    if not self.calls[key]:
                        del self.calls[key]
                self.count = count
            self.spoiled = False

    def nbytes(self):
        """Bytes of the tensors the record holds (each distinct tensor once, as ``to_data`` keeps them)."""
        pool: list = []
        for calls in self.calls.values():
            _pool(calls, pool, {})
        return _bytes(pool)

    def merge(self, other):
        """Take in ``other``'s record (a log of other runs): its calls, each once, and what it knows of the parts."""
        self.functions |= other.functions
        for mapping in ("classes", "signatures"):
            for name, value in getattr(other, mapping).items():
                getattr(self, mapping).setdefault(name, value)
        for key, calls in other.calls.items():
            for call in calls:  # each once: a construction once for each generator state it was built from
                self._store(
                    key,
                    call["in"],
                    lambda call=call: call,
                    same=lambda held, call=call: _same_state(held.get("from"), call.get("from")),
                )

    def to_data(self):
        """The record as plain data (``wire``), each distinct tensor once (``pool``: a model's parameters are the
        same in every call of a generation)."""
        pool: list = []
        index: dict = {}
        return {
            "version": VERSION,
            "functions": sorted(self.functions),
            "classes": {name: self.classes[name] for name in sorted(self.classes)},
            "signatures": {name: self.signatures[name] for name in sorted(self.signatures)},
            "calls": [[key, wire.encode(_pool(calls, pool, index))] for key, calls in sorted(self.calls.items())],
            "pool": pool,
        }

    # -- classes ------------------------------------------------------------------------------------
    def wrap_class(self, name, cls, classes):
        """``cls`` (the reference's class ``name``) as a subclass whose construction and every public method and
        property the student's composite uses are recorded in this log. ``classes``: ``{name: class}`` of every
        reference class of the same parts, whose objects the record describes by their state (``_Describe``)."""
        from grader.submission.standin import _class_surface

        for other, klass in classes.items():
            self.classes.setdefault(other, _class_surface(klass))
        info = self.classes[name]
        log = self
        init_signature = signature_of(cls.__init__)
        self.signatures[f"{name}.__init__"] = init_signature

        def __init__(obj, *args, **kwargs):
            log._construct(name, cls, classes, init_signature, obj, args, kwargs)

        ns = {
            "__init__": __init__,
            "__module__": cls.__module__,
            "__qualname__": cls.__qualname__,
            "__doc__": cls.__doc__,
        }
        for method in info["methods"]:
            fn = inspect.getattr_static(cls, method, None)
            if inspect.isfunction(fn):
                ns[method] = self._method(f"{name}.{method}", fn, classes)
        for prop in info["properties"]:
            fn = inspect.getattr_static(cls, prop, None)
            if isinstance(fn, property) and fn.fget is not None:
                ns[prop] = property(self._method(f"{name}.{prop}", fn.fget, classes))
        return type(cls.__name__, (cls,), ns)

    def _construct(self, name, cls, classes, signature, obj, args, kwargs):
        """Build ``obj`` as ``cls`` builds it and record the construction (never changing what it builds: where it
        cannot be recorded, the window is spoiled)."""
        if self.busy:
            cls.__init__(obj, *args, **kwargs)
            return
        d = _Describe(classes)
        values, named = _bound(signature, (obj, *args), kwargs)
        try:
            skeleton = d.value([values[1:], named])
            inputs, kept = list(d.tensors), [_cpu(t) for t in d.tensors]
            d.take()
        except Exception:  # noqa: BLE001 - an argument of no plain form (``Unrecordable``), or worse
            self.spoiled = True
            cls.__init__(obj, *args, **kwargs)
            return
        env = _env()
        before = torch.get_rng_state()
        self.busy += 1
        try:
            cls.__init__(obj, *args, **kwargs)
        finally:
            self.busy -= 1
        after = torch.get_rng_state()
        try:
            tree = d.value(obj)
            if not _unchanged(inputs, kept):
                raise Unrecordable("an argument changed in place")
            made = d.take()
            size = _bytes(made)
            if size > CONSTRUCTION_BYTES and env[1] != "meta":
                raise Unrecordable("too big")
            self._keep_construction(name, skeleton, env, kept, tree, [_cpu(t) for t in made], before, after)
            if not inputs:
                self._other_environments(name, cls, classes, obj, values[1:], named, skeleton, env, before, size)
        except Exception:  # noqa: BLE001
            self.spoiled = True
        finally:
            torch.set_rng_state(after)

    def _other_environments(self, name, cls, classes, obj, args, kwargs, skeleton, env, before, size):
        """The same construction where the default dtype or device differ (a check's float32 run, a build on the meta
        device), from the same generator state: each is the reference's own, built now and recorded (on the CPU only
        where it is small: ``size``, the bytes of the one made)."""
        for dtype, device in ENVIRONMENTS:
            if [str(dtype), device] == env or (device != "meta" and size > CONSTRUCTION_BYTES):
                continue
            torch.set_rng_state(before)
            twin = _bare(type(obj))
            self.busy += 1
            try:
                with _default_dtype(dtype), torch.device(device):
                    cls.__init__(twin, *args, **kwargs)
                d = _Describe(classes)
                d.value([args, kwargs])
                tree = d.value(twin)
            except Exception:  # noqa: BLE001 - the reference does not build so: not recorded
                continue
            finally:
                self.busy -= 1
            built = [_cpu(t) for t in d.tensors]
            self._keep_construction(
                name, skeleton, [str(dtype), device], [], tree, built, before, torch.get_rng_state()
            )

    def _keep_construction(self, name, skeleton, env, kept, tree, built, before, after):
        # kept under its arguments alone: a construction's random initial values are answered from another state of
        # the generator where none was recorded for this one (``Replay.construct``)
        drew = not torch.equal(before, after)
        self._store(
            _key(f"{name}.__init__", [skeleton, env]),
            kept,
            lambda: {
                "tree": [tree, built],
                "from": before.clone() if drew else None,
                "rng": after.clone() if drew else None,
            },
            same=lambda call: _same_state(call.get("from"), before if drew else None),
            most=CONSTRUCTIONS,
        )

    def _method(self, qualname, fn, classes):
        """``fn``, a method (or a property's getter) of a reference class, recording each call the composite makes."""
        log = self
        signature = self.signatures[qualname] = signature_of(fn)

        @functools.wraps(fn)
        def recorded(obj, *args, **kwargs):
            if log.busy:
                return fn(obj, *args, **kwargs)
            log.busy += 1
            try:
                return log._record_call(qualname, fn, classes, signature, obj, args, kwargs)
            finally:
                log.busy -= 1

        return recorded

    def _record_call(self, qualname, fn, classes, signature, obj, args, kwargs):
        """Call ``fn`` and record the call. Recording never changes what the reference does: where the call cannot be
        recorded, or the bookkeeping itself fails, the answer is returned all the same and the window is spoiled."""
        d = _Describe(classes)
        try:
            skeleton = d.value(list(_bound(signature, (obj, *args), kwargs)))
            inputs, kept = list(d.tensors), [_cpu(t) for t in d.tensors]
            d.take()
            objects = list(d.objects)
            state_before = d.fork().states(objects)
        except Exception:  # noqa: BLE001 - an argument of no plain form (``Unrecordable``), or worse
            self.spoiled = True
            return fn(obj, *args, **kwargs)
        before = torch.get_rng_state()
        given, named, cut = _cut(args, kwargs)
        try:
            out = fn(obj, *given, **named)
        except Exception:  # the reference raising here (on a leaf, say, that it changes in place): not recorded
            self.spoiled = True
            raise
        after = torch.get_rng_state()
        try:
            return self._recorded_answer(
                qualname, skeleton, d, inputs, kept, objects, state_before, out, before, after, cut
            )
        except Exception:  # noqa: BLE001
            self.spoiled = True
            return out
        finally:
            torch.set_rng_state(after)

    def _recorded_answer(self, qualname, skeleton, d, inputs, kept, objects, state_before, out, before, after, cut):
        """Record a call made (``_record_call``) and give its answer: ``out``, joined to ``_Tap`` where gradients
        flow."""
        drew = not torch.equal(before, after)
        state_after = d.fork().states(objects)
        state = d.states(objects) if state_after != state_before else None
        state_tensors = [_cpu(t) for t in d.take()]
        answer = d.value(out)
        made = d.take()
        flat = _flat_or_none(out)

        def joined(call):  # the answer on the graph of the call's own arguments, the products recorded in ``call``
            return out if flat is None or not cut else _rebuild(out, iter(_tapped(call, flat, inputs, cut)))

        if not _unchanged(inputs, kept):
            self.spoiled = True
            return joined(None)  # a part that changes its arguments or its state in place: not recorded
        grads = torch.is_grad_enabled()
        flows = any(t.requires_grad for t in inputs) and grads and any(t.requires_grad for t in made)
        if flows and (flat is None or [id(t) for t in flat] != [id(t) for t in made]):
            self.spoiled = True
            return joined(None)  # an answer holding objects or its own arguments, through which a gradient flows
        call = self._store(
            _key(qualname, skeleton, before if drew else None),
            kept,
            lambda: {
                "after": None if state is None else [state, state_tensors],
                "out": [answer, [_cpu(t) for t in made]],
                "rng": after.clone() if drew else None,
                "vjp": [],
            },
        )
        if call is None:
            self.spoiled = True
        if not flows:
            return joined(None)
        return _rebuild(out, iter(_tapped(call, made, inputs, cut)))

    def _store(self, key, kept, make, same=None, most=None):
        """The call recorded under ``key`` with inputs ``kept`` (the one there, or ``make()``, kept now).
        ``same(call)``: whether a recorded call of the same inputs is this one too; ``most``: calls kept under one key
        at most."""
        held = self.calls.get(key, ())
        for call in held:
            if _identical(call["in"], kept) and (same is None or same(call)):
                return call
        if self.count >= MAX_CALLS or (most is not None and len(held) >= most):
            return None
        call = dict(make(), **{"in": kept})
        self.calls.setdefault(key, []).append(call)
        self.count += 1
        return call


class _TapBox:
    def __init__(self, call, wrt, outs):
        self.call, self.wrt, self.outs = call, wrt, outs
        self.joined: list = []
        """Positions in ``wrt`` of the leaves ``_cut`` gave, whose tensors' gradients ``_Tap`` passes on."""


class _Tap(torch.autograd.Function):
    """The identity on a recorded call's answer (the first ``len(box.outs)`` inputs; after them, the tensors the
    call's leaves stand for: ``_cut``), whose backward records the call's vector-Jacobian product for the gradients
    that reach it (computed again through the reference's own graph, from the call's own leaves: each product is the
    call's own), then lets them flow on: into the part's graph (its parameters) and to the tensors behind the
    leaves."""

    @staticmethod
    def forward(ctx, box, *tensors):
        ctx.box = box
        return tuple(o.clone() for o in tensors[: len(box.outs)])

    @staticmethod
    def backward(ctx, *grads):
        box = ctx.box
        grads = tuple(torch.zeros_like(o) if g is None else g for o, g in zip(box.outs, grads))
        got = None
        try:
            pairs = [(o, g) for o, g in zip(box.outs, grads) if o.requires_grad]
            got = torch.autograd.grad(
                [o for o, _ in pairs], box.wrt, [g for _, g in pairs], retain_graph=True, allow_unused=True
            )
        except Exception:  # noqa: BLE001 - recording never changes the reference's gradients: none recorded
            pass
        if got is not None and box.call is not None:
            entry = [[_cpu(g) for g in grads], [_cpu(g) for g in got]]
            if len(box.call["vjp"]) < 64 and not any(_all_close(entry[0], v[0]) for v in box.call["vjp"]):
                box.call["vjp"].append(entry)
        passed = [None if got is None else got[i] for i in box.joined]
        return (None, *grads, *passed)


# ================================================================================================
# Replaying (the student kit: no reference)
# ================================================================================================
class Replay:
    """The record of a bank (``of_bank``), answering the student's calls to the recorded parts. ``covers(task)``:
    whether every part beneath ``task`` is a recorded function or class; ``parts(task)``: what ``InProcessRunner``
    gives an 'isolated:<task>' run (``StandInParts``: functions, and ``shells`` for the classes); ``missed``: calls it
    could not answer so far."""

    def __init__(self, assignment, data):
        self.assignment = assignment
        self.functions = frozenset(str(n) for n in data.get("functions", ()))
        self.signatures = dict(data.get("signatures") or {})
        self.calls = _Calls(data.get("calls", ()), data.get("pool") or [])
        self.shells = {str(n): self._shell(str(n), info) for n, info in (data.get("classes") or {}).items()}
        self.missed = 0
        self.answered = 0

    @classmethod
    def of_bank(cls, bank, assignment):
        """The record in ``bank`` (``None`` where it holds none), decoded when a check first needs it: a grading
        that blocks no check never reads it."""
        stored = bank.answers.get(TABLE_DIGEST)
        return None if stored is None else _Deferred(cls, stored[0], assignment)

    @classmethod
    def decode(cls, blob, assignment):
        """The record ``blob`` as a ``Replay``, or ``None`` where it is of another version or not one."""
        try:
            data = wire.decode(blob)
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
        return bool(names) and names <= self.functions | set(self.shells)

    def parts(self, task):
        from grader.submission.inprocess import StandInParts

        names = self.beneath(task)
        given = {n: self._function(n) for n in names & self.functions}
        given.update({n: self.shells[n] for n in names - self.functions if n in self.shells})
        return StandInParts(self.assignment, _Functions(given))

    # -- classes ------------------------------------------------------------------------------------
    def _shell(self, name, info):
        """The kit's class for the reference's class ``name``: an object holding only state (parameters, buffers,
        submodules, attributes: real ones, as the student's code expects), whose construction and every method
        and property answer from the record (``construct``, ``invoke``)."""
        replay = self
        module = bool(info.get("module"))

        def __init__(obj, *args, **kwargs):
            if isinstance(obj, nn.Module):
                nn.Module.__init__(obj)
            replay.construct(name, obj, args, kwargs)

        ns = {
            "__init__": __init__,
            "__module__": "reference",
            "__qualname__": name,
            "__doc__": f"The reference's {name}, answered from the kit's record of it.",
        }
        for method in info.get("methods") or ():
            if method != "__init__":
                ns[str(method)] = _shell_method(self, f"{name}.{method}")
        for prop in info.get("properties") or ():
            ns[str(prop)] = property(_shell_method(self, f"{name}.{prop}"))
        return type(name, (nn.Module,) if module else (object,), ns)

    def _describe(self):
        return _Describe(self.shells)

    def construct(self, name, obj, args, kwargs):
        d = self._describe()
        values, named = _bound(self.signatures.get(f"{name}.__init__"), (obj, *args), kwargs)
        try:
            skeleton = d.value([values[1:], named])
        except Unrecordable:
            return self._miss(name)
        calls = [
            c
            for c in self.calls.get(_key(f"{name}.__init__", [skeleton, _env()]), ())
            if _all_close(d.tensors, c["in"])
        ]
        if not calls:
            return self._miss(f"{name}.__init__")
        # the construction from this state of the generator, which goes on from where it left it; where none was
        # recorded, one from another: the parts' initial values are then other random draws of the reference's (an
        # isolated check loads the values it compares, or seeds the generator before it builds), and the generator
        # stays where it is
        now = torch.get_rng_state()
        call = next((c for c in calls if c.get("from") is None or _same_state(c["from"], now)), calls[0])
        if call.get("rng") is not None and _same_state(call.get("from"), now):
            torch.set_rng_state(call["rng"])
        r = _Rebuild(self.shells, d.tensors, d.objects)
        tree, made = call["tree"]
        r.feed(made)
        r.objects.append(obj)
        r.fill(obj, tree[2:])
        self.answered += 1

    def invoke(self, qualname, obj, args, kwargs):
        d = self._describe()
        try:
            skeleton = d.value(list(_bound(self.signatures.get(qualname), (obj, *args), kwargs)))
        except Unrecordable:
            return self._miss(qualname)
        call = self._lookup(qualname, skeleton, d.tensors)
        r = _Rebuild(self.shells, d.tensors, d.objects)
        if call.get("after") is not None:
            state, made = call["after"]
            r.feed(made)
            for x, own in zip(d.objects, state):
                r.fill(x, own)
        answer, made = call["out"]
        wrt = [t for t in d.tensors if t.requires_grad and torch.is_grad_enabled()]
        if wrt and made:
            made = list(_Replayed.apply(_ReplayBox(self, qualname, made, call["vjp"], wrt), *wrt))
        else:
            made = [t.clone() for t in made]
        r.feed(made)
        self.answered += 1
        return _Unclone(r).value(answer)

    def _lookup(self, name, skeleton, tensors):
        """The recorded call of ``name`` with this skeleton and these tensors, the random generator left as after
        it; ``NotInBank`` where none."""
        found = self._find(_key(name, skeleton), tensors)
        if found is None:
            found = self._find(_key(name, skeleton, torch.get_rng_state()), tensors)
            if found is None:
                return self._miss(name)
            torch.set_rng_state(found["rng"])
        return found

    def _function(self, name):
        replay = self

        def standin(*args, **kwargs):
            return replay.call(name, args, kwargs)

        standin.__name__ = standin.__qualname__ = name
        standin.__module__ = "reference"
        standin.__doc__ = f"The reference's {name}, answered from the kit's record of it."
        return standin

    def call(self, name, args, kwargs):
        args, kwargs = _consumed(args, kwargs)
        tensors: list = []
        try:
            skeleton = _skeleton(list(_bound(self.signatures.get(name), args, kwargs)), tensors)
        except Unrecordable:
            return self._miss(name)
        found = self._lookup(name, skeleton, tensors)
        for g, state in zip(_generators(_bound(self.signatures.get(name), args, kwargs)), found.get("gens") or ()):
            g.set_state(state)
        with torch.no_grad():  # what the reference's function changed in place (a gradient it clipped)
            for i, value in found.get("inplace") or ():
                tensors[i].copy_(value.to(tensors[i].device))
        self.answered += 1
        outs = [t.clone() for t in _flat(found["out"], [])]
        wrt = [t for t in tensors if t.requires_grad and torch.is_grad_enabled()]
        if wrt and outs:
            outs = list(_Replayed.apply(_ReplayBox(self, name, _flat(found["out"], []), found["vjp"], wrt), *wrt))
        return _rebuild(found["out"], iter(outs))

    def _find(self, key, tensors):
        for call in self.calls.get(key, ()):
            if _all_close(tensors, call["in"]):
                return call
        return None

    def _miss(self, name):
        self.missed += 1
        raise NotInBank(f"reference {name}")


def replayable_tasks(assignment):
    """The tasks of code of their own that build on others: those a student kit grades over the record of the
    reference's parts beneath them (functions and classes) where a task beneath fails."""
    from grader.submission.inprocess import beneath_names

    return [
        t
        for t in assignment.task_ids
        if assignment.task_by_id[t].names and assignment.all_deps(t) and beneath_names(assignment, t)
    ]


def mending_tasks(assignment):
    """``{task: [tasks]}``: for each task with no code of its own that builds on others (``overfit``: the whole
    learning), the replayable tasks beneath it whose isolated variant it may be graded in, where the tasks that fail
    beneath it are all beneath one of those (``engine._mending_task``)."""
    replayable = replayable_tasks(assignment)
    whole = [t for t in assignment.task_ids if not assignment.task_by_id[t].names and assignment.all_deps(t)]
    return {w: [t for t in replayable if t in assignment.all_deps(w)] for w in whole}


def recording_parts(assignment, log, task_id):
    """``StandInParts`` for 'isolated:<task_id>' whose functions and classes are the reference's own, recorded in
    ``log``."""
    from grader.submission.inprocess import StandInParts, beneath_names, parts_namespace, reference_parts_for

    parts = reference_parts_for(assignment, task_id)
    ns = parts_namespace(assignment, parts)
    classes = {}
    for file in sorted(parts):
        module = ns.module(file)
        for name, obj in vars(module).items():
            if isinstance(obj, type) and obj.__module__ == module.__name__:
                classes[name] = obj
    given = {}
    for name in sorted(beneath_names(assignment, task_id)):
        obj = ns.get(name)
        given[name] = log.wrap_class(name, obj, classes) if isinstance(obj, type) else log.wrap(name, obj)
    return StandInParts(assignment, _Functions(given))


class _Functions:
    """What ``StandInParts`` asks of its stand-ins, for recorded functions and shell classes."""

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
    def __init__(self, replay, name, outs, vjp, wrt):
        self.replay, self.name, self.outs, self.vjp, self.wrt = replay, name, outs, vjp, wrt


class _Replayed(torch.autograd.Function):
    """A recorded answer joined to the student's graph: its backward is the recorded vector-Jacobian product for
    the gradients that reach it (``NotInBank`` where none was recorded for them)."""

    @staticmethod
    def forward(ctx, box, *wrt):
        ctx.box = box
        return tuple(t.clone() for t in box.outs)

    @staticmethod
    def backward(ctx, *grads):
        box = ctx.box
        given = [torch.zeros_like(o) if g is None else g for o, g in zip(box.outs, grads)]
        for grads_out, grads_in in box.vjp:
            if _all_close(given, grads_out):
                return (None, *(None if g is None else g.clone() for g in grads_in))
        box.replay._miss(box.name)


def _shell_method(replay, qualname):
    def call(self, *args, **kwargs):
        return replay.invoke(qualname, self, args, kwargs)

    call.__name__ = call.__qualname__ = qualname.rpartition(".")[2]
    return call


class _Unclone:
    """``_Rebuild.value`` for an answer whose fresh tensors are given as they are (already the kit's own copies,
    joined to the student's graph)."""

    def __init__(self, rebuild):
        self.r = rebuild

    def value(self, s):
        if s[0] == "T":
            t = self.r._next()
            self.r.tensors.append(t)
            return t
        return self.r.value(s) if s[0] not in ("list", "tuple", "dict") else self._container(s)

    def _container(self, s):
        if s[0] == "dict":
            return {k: self.value(v) for k, v in s[1]}
        items = [self.value(v) for v in s[1]]
        return items if s[0] == "list" else tuple(items)
