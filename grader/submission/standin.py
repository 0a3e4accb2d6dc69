"""Stand-ins: the reference's parts as a sealed worker sees them, computed where no student code runs.

An isolated check grades the student's code for one task over the reference's parts for the tasks beneath it
(the student's ``EncoderLayer`` over the reference's attention, norm and feed-forward). In a sealed worker those
parts are *stand-ins*: objects with the interface the contract promises for each part (the class and its name,
its parameters, buffers and submodules with their names and shapes, ``train()``/``eval()``, ``.to()``,
``state_dict``, its public methods and properties), holding only data. Every computation of a part (building
it, its ``forward``, any other method, a property, a reference function) is asked of a ``Host`` in the judge,
which runs the reference's code there and answers with plain data. The worker never holds reference source,
code objects or anything they could be rebuilt from.

What crosses, each call (``grader.submission.wire``, so plain data only, both ways):

- the call (a function's name, or an object and a method), its arguments, and the state of every stand-in it
  involves: the object's own and its submodules' parameters, buffers, plain attributes and modes, as the worker
  holds them now (the student's optimiser may have changed them since the last call);
- the worker's environment that the reference's code depends on: the CPU random generator's state (dropout,
  initialisation), the default dtype and device (``torch.device("meta")`` contexts), grad mode;
- back: the result, every state the call changed, and the generator's new state, so that the worker goes on
  exactly as if the part had run there (the same random numbers are drawn, the same tensors shared).

Parameters stay real ``nn.Parameter`` objects in the worker, so the student's optimiser, clipping and
``state_dict`` code work on them. Autograd crosses too: a call whose inputs or parameters need gradients is one
``torch.autograd.Function`` in the worker, whose backward asks the host for the vector-Jacobian product (the host
computes the call again from the same inputs, state and random state, and differentiates it).

The host answers only for the parts of the variant it serves (the names an assignment's task builds on, and
objects the reference built), within the time and size limits of the call that asked. Its errors come back as
the exception's type and a bounded message, never a traceback.

The same stand-ins work in one process (``Loopback``: every message still goes through the wire format), which
the tests use to compare them with the parts themselves.
"""

from __future__ import annotations

import builtins
import collections.abc
import copy
import itertools
import time
import weakref

import torch
from torch import nn

from grader.submission import wire

MAX_OBJECTS = 20_000
"""Reference objects a host keeps for one worker; past that a construction is refused (a submission that builds
parts without end must not grow the judge without end)."""
MAX_STATE_BYTES = 256 << 20
"""Bytes of tensors one reference object built in the judge may hold (measured on the meta device first)."""
MESSAGE_CHARS = 500
"""Characters of a reference error's message sent back to the worker."""
_EXCEPTIONS = {name: getattr(builtins, name) for name in (
    "ValueError", "TypeError", "RuntimeError", "IndexError", "KeyError", "AttributeError", "NotImplementedError",
    "ZeroDivisionError", "AssertionError", "ArithmeticError", "OverflowError", "StopIteration", "LookupError")}


class StandInError(RuntimeError):
    """A stand-in cannot do what was asked (an argument that is not data, a part it does not serve)."""


# ================================================================================================
# What a variant's parts are, as data
# ================================================================================================
def surface(parts_modules, allowed):
    """``{"functions": [...], "classes": {name: {"module": bool, "methods": [...], "properties": [...]}}}``: the
    interface of the reference parts ``allowed`` (names) and of every class the parts' modules define (objects
    the reference builds, such as a cache, are stand-ins too). Names only: no code, no text."""
    functions, classes = [], {}
    for module in parts_modules:
        for name, obj in vars(module).items():
            if isinstance(obj, type) and obj.__module__ == module.__name__:
                classes[name] = _class_surface(obj)
            elif name in allowed and callable(obj):
                functions.append(name)
    return {"functions": sorted(set(functions)), "classes": classes, "allowed": sorted(allowed)}


def _class_surface(cls):
    methods, properties = [], []
    stop = (nn.Module, object)
    for klass in cls.__mro__:
        if klass in stop:
            break
        for name, value in vars(klass).items():
            if name.startswith("_") and name not in ("__call__", "__len__", "__iter__", "__getitem__"):
                continue
            if isinstance(value, property):
                properties.append(name)
            elif callable(value) or isinstance(value, (staticmethod, classmethod)):
                methods.append(name)
    return {"module": issubclass(cls, nn.Module), "methods": sorted(set(methods)),
            "properties": sorted(set(properties))}


# ================================================================================================
# Values as plain data (both sides)
# ================================================================================================
_INTERNALS = frozenset(vars(nn.Module())) | {"_standin_handle", "_standin_hub"}
"""Attributes that are not an object's state: ``nn.Module``'s own bookkeeping and a stand-in's link."""


def _plain(x):
    return x is None or isinstance(x, (bool, int, float, str, bytes, torch.dtype, torch.device))


def _state_attrs(obj):
    """The attribute names that make up an object's state besides parameters, buffers and submodules."""
    return [k for k in vars(obj) if k not in _INTERNALS and not k.startswith("__")]


def _torch_class_name(cls):
    """``"Linear"`` for ``torch.nn.Linear``: a module class of torch's own, found by that name in ``torch.nn``."""
    name = cls.__name__
    return name if cls.__module__.startswith("torch.") and getattr(nn, name, None) is cls else None


def _torch_class(name):
    cls = getattr(nn, name, None) if isinstance(name, str) else None
    if not (isinstance(cls, type) and issubclass(cls, nn.Module) and cls.__module__.startswith("torch.")):
        raise StandInError(f"no module class torch.nn.{str(name)[:40]}")
    return cls


def _bare(cls):
    """An object of ``cls`` whose constructor did not run (its state is set next)."""
    obj = cls.__new__(cls)
    if isinstance(obj, nn.Module):
        nn.Module.__init__(obj)
    return obj


class _Encoder:
    """One side's objects as plain data for one message.

    Tensors go into ``table`` once each (a tensor used twice, such as a tied weight, stays one tensor on the other
    side); ``{"#T": i}`` refers to entry ``i`` and ``{"~T": i}`` to the other side's tensor ``i`` of the message
    this one answers (``known``: ``id(tensor) -> (i, version)``; with ``"data"`` when the call changed it in place).
    Objects (stand-ins, torch.nn modules, generators) are numbered from ``first``; the first time one appears it
    carries its state (``{"#S": k, "h": handle, "cls": name, "state": ...}``), later ``{"#O": k}``."""

    def __init__(self, is_reference, handle_of, known=None, objects=None, first=0):
        self.is_reference, self.handle_of = is_reference, handle_of
        self.table, self.tensors, self.index = [], [], {}
        self.known = known or {}
        self.objects = dict(objects or {})
        """``id(obj) -> k``; seeded with the objects of the message answered, which keep their numbers."""
        self.by_number = {}
        self.next = first
        self.encoded = set()

    def tensor(self, t):
        if type(t) not in (torch.Tensor, nn.Parameter):
            raise StandInError(f"a {type(t).__qualname__} (a subclass of torch.Tensor) cannot be passed to the "
                               f"reference's parts; pass a plain tensor")
        key = id(t)
        if key in self.known:
            i, version = self.known[key]
            return {"~T": i} if t._version == version else {"~T": i, "data": t.detach()}
        if key not in self.index:
            i = self.index[key] = len(self.table)
            self.table.append(None)
            self.tensors.append(t)
            entry = {"t": t.detach(), "rg": bool(t.requires_grad), "p": isinstance(t, nn.Parameter)}
            if t.is_leaf and t.grad is not None:
                entry["grad"] = self.tensor(t.grad)
            self.table[i] = entry
        return {"#T": self.index[key]}

    def number(self, x):
        k = self.objects.get(id(x))
        if k is None:
            k = self.objects[id(x)] = self.next
            self.next += 1
        self.by_number[k] = x
        return k

    def value(self, x, depth=0):
        if depth > 60:
            raise StandInError("an argument nested too deeply for the reference's parts")
        if isinstance(x, torch.Tensor):
            return self.tensor(x)
        if _plain(x):
            return x
        if isinstance(x, (list, tuple)):
            items = [self.value(v, depth + 1) for v in x]
            return {"#U": items} if isinstance(x, tuple) else {"#L": items}
        if isinstance(x, dict):
            if not all(isinstance(k, str) for k in x):
                raise StandInError("a dict whose keys are not strings cannot be passed to the reference's parts")
            return {"#D": {k: self.value(v, depth + 1) for k, v in x.items()}}
        if isinstance(x, torch.Generator):
            return {"#G": str(x.device), "k": self.number(x), "state": x.get_state()}
        if isinstance(x, (collections.abc.Iterator, collections.abc.KeysView, collections.abc.ValuesView,
                          collections.abc.ItemsView)) and not isinstance(x, nn.Module):
            # ``model.parameters()``: consumed here, as the part would have consumed it
            return {"#L": [self.value(v, depth + 1) for v in itertools.islice(x, 1_000_000)]}
        if self.is_reference(x) or (isinstance(x, nn.Module) and _torch_class_name(type(x))):
            return self.obj(x, depth)
        raise StandInError(f"a {type(x).__qualname__} cannot be passed to the reference's parts: only tensors, "
                           f"numbers, strings, lists, dicts, torch.nn's own modules and the parts themselves cross")

    def obj(self, x, depth=0):
        k = self.number(x)
        if k in self.encoded:
            return {"#O": k}
        self.encoded.add(k)
        state = self.state(x, depth)
        if self.is_reference(x):
            return {"#S": k, "h": self.handle_of(x), "cls": type(x).__name__, "state": state}
        return {"#M": k, "cls": _torch_class_name(type(x)), "state": state}

    def state(self, x, depth=0):
        attrs = {}
        for name in _state_attrs(x):
            try:
                attrs[name] = self.value(vars(x)[name], depth + 1)
            except StandInError:
                continue  # not data (a function, say): it stays as it was built
        out = {"attrs": attrs}
        if isinstance(x, nn.Module):
            out["training"] = x.training
            out["params"] = {n: (None if p is None else self.tensor(p)) for n, p in x._parameters.items()}
            out["buffers"] = {n: (None if b is None else self.tensor(b)) for n, b in x._buffers.items()}
            out["transient"] = sorted(x._non_persistent_buffers_set)
            children = {}
            for n, child in x._modules.items():
                if child is not None and not (self.is_reference(child) or _torch_class_name(type(child))):
                    raise StandInError(f"the reference's {type(x).__name__} holds a {type(child).__qualname__} as "
                                       f"{n!r}; the reference's parts can hold only their own parts and torch.nn's "
                                       f"modules")
                children[n] = None if child is None else self.obj(child, depth + 1)
            out["children"] = children
        return out


class _Decoder:
    """The other side's plain data back into objects, for one message.

    ``make(entry, k)`` gives the object numbered ``k`` (an entry ``{"#S"...}`` or ``{"#M"...}``) before its state is
    set; ``sent`` are this side's tensors of the message being answered (``{"~T": i}``)."""

    def __init__(self, table, make, sent=()):
        if not isinstance(table, list):
            raise StandInError("a message without its tensors")
        self.raw, self.make, self.sent = table, make, list(sent)
        self.tensors, self.versions, self.grads = {}, {}, {}
        self.objects = {}

    def tensor(self, ref):
        if "~T" in ref:
            t = self.sent[_index(ref["~T"], len(self.sent))]
            if "data" in ref:  # the other side changed it in place
                with torch.no_grad():
                    t.copy_(_tensor(ref["data"]))
            return t
        i = _index(ref.get("#T"), len(self.raw))
        if i not in self.tensors:
            entry = self.raw[i]
            if not isinstance(entry, dict):
                raise StandInError("a malformed tensor entry")
            t = _tensor(entry.get("t"))
            if entry.get("p"):
                t = nn.Parameter(t, requires_grad=bool(entry.get("rg")) and t.dtype.is_floating_point)
            self.tensors[i] = t
            if isinstance(entry.get("grad"), dict):
                g = self.tensor(entry["grad"])
                if g.shape == t.shape and g.dtype == t.dtype:
                    t.grad = g
            self.versions[i] = t._version
            self.grads[i] = (t.grad, None if t.grad is None else t.grad._version)
        return self.tensors[i]

    def value(self, x, depth=0):
        if depth > 80:
            raise StandInError("a value nested too deeply")
        if _plain(x):
            return x
        if not isinstance(x, dict):
            raise StandInError(f"a {type(x).__name__} where a value was expected")
        if "#T" in x or "~T" in x:
            return self.tensor(x)
        if "#L" in x:
            return [self.value(v, depth + 1) for v in _seq(x["#L"])]
        if "#U" in x:
            return tuple(self.value(v, depth + 1) for v in _seq(x["#U"]))
        if "#D" in x:
            if not isinstance(x["#D"], dict):
                raise StandInError("a malformed dict")
            return {k: self.value(v, depth + 1) for k, v in x["#D"].items()}
        if "#G" in x:
            return self.generator(x)
        if "#O" in x:
            if x["#O"] not in self.objects:
                raise StandInError("a reference to an object not sent")
            return self.objects[x["#O"]]
        if "#S" in x or "#M" in x:
            return self.obj(x, depth)
        raise StandInError("a malformed value")

    def generator(self, x):
        k = x.get("k")
        gen = self.make(x, k)
        state = x.get("state")
        if isinstance(state, torch.Tensor) and state.dtype == torch.uint8:
            gen.set_state(state)
        self.objects[k] = gen
        return gen

    def obj(self, x, depth=0):
        k = x.get("#S", x.get("#M"))
        if type(k) is not int:
            raise StandInError("a malformed object")
        if k in self.objects:
            return self.objects[k]
        obj = self.objects[k] = self.make(x, k)
        if isinstance(x.get("state"), dict):
            self.apply(obj, x["state"], depth)
        return obj

    def apply(self, obj, state, depth=0):
        """Set ``obj``'s parameters, buffers, submodules, attributes and mode to ``state``."""
        if isinstance(obj, nn.Module):
            object.__setattr__(obj, "training", bool(state.get("training", obj.training)))
            for slot, kind in ((obj._parameters, "params"), (obj._buffers, "buffers")):
                given = state.get(kind) or {}
                for name, ref in given.items():
                    t = None if ref is None else self.tensor(ref)
                    if kind == "params" and t is not None and not isinstance(t, nn.Parameter):
                        raise StandInError(f"{name!r} is not a parameter")
                    if name not in slot or slot[name] is not t:
                        slot[name] = t
                for name in [n for n in slot if n not in given]:
                    del slot[name]
            obj._non_persistent_buffers_set = {n for n in state.get("transient") or () if isinstance(n, str)}
            children = state.get("children") or {}
            for name, ref in children.items():
                child = None if ref is None else self.value(ref, depth + 1)
                if child is not None and not isinstance(child, nn.Module):
                    raise StandInError(f"submodule {name!r} is not a module")
                if name not in obj._modules or obj._modules[name] is not child:
                    obj._modules[name] = child
            for name in [n for n in obj._modules if n not in children]:
                del obj._modules[name]
        for name, ref in (state.get("attrs") or {}).items():
            if not isinstance(name, str) or name in _INTERNALS or name.startswith("__"):
                raise StandInError(f"an attribute named {str(name)[:40]!r}")
            value = self.value(ref, depth + 1)
            if name not in vars(obj) or vars(obj)[name] is not value:
                vars(obj)[name] = value


def _index(i, n):
    if type(i) is not int or not 0 <= i < n:
        raise StandInError("a reference to a tensor not sent")
    return i


def _seq(x):
    if not isinstance(x, (list, tuple)):
        raise StandInError("a malformed list")
    return x


def _tensor(t):
    if not isinstance(t, torch.Tensor):
        raise StandInError("a tensor entry without a tensor")
    return t


# ================================================================================================
# The environment a part runs in
# ================================================================================================
def _env():
    """What the reference's code depends on besides its arguments: the random state, the default dtype and device,
    grad mode."""
    env = {"rng": torch.get_rng_state(), "dtype": torch.get_default_dtype(),
           "device": str(torch.get_default_device()), "grad": torch.is_grad_enabled()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        env["cuda_rng"] = list(torch.cuda.get_rng_state_all())
    return env


def _rng_after():
    env = {"rng": torch.get_rng_state()}
    if torch.cuda.is_available() and torch.cuda.is_initialized():
        env["cuda_rng"] = list(torch.cuda.get_rng_state_all())
    return env


def _set_rng(env):
    rng = env.get("rng")
    if isinstance(rng, torch.Tensor) and rng.dtype == torch.uint8:
        torch.set_rng_state(rng)
    cuda = env.get("cuda_rng")
    if isinstance(cuda, list) and cuda and torch.cuda.is_available():
        torch.cuda.set_rng_state_all([s for s in cuda if isinstance(s, torch.Tensor)])


class _Environment:
    """The worker's environment (``_env``), set in the host for the length of a call, then restored."""

    def __init__(self, env, grad=None):
        self.env = env if isinstance(env, dict) else {}
        self.grad = grad
        self._device_set = False

    def __enter__(self):
        self._dtype, self._grad = torch.get_default_dtype(), torch.is_grad_enabled()
        _set_rng(self.env)
        dtype = self.env.get("dtype")
        if dtype in (torch.float32, torch.float64):
            torch.set_default_dtype(dtype)
        device = self.env.get("device")
        if isinstance(device, str) and device != "cpu" and (device == "meta" or device.startswith("cuda")):
            torch.set_default_device(device)
            self._device_set = True
        torch.set_grad_enabled(bool(self.env.get("grad")) if self.grad is None else self.grad)
        return self

    def __exit__(self, *exc):
        torch.set_default_dtype(self._dtype)
        if self._device_set:
            torch.set_default_device(None)
        torch.set_grad_enabled(self._grad)
        return False


# ================================================================================================
# The host: the judge's side
# ================================================================================================
class Host:
    """Answers the stand-ins of one variant's worker: ``answer(message) -> reply``, plain data both ways.

    Args:
        modules: the modules of the reference parts the variant may use (``runner.parts_namespace``, loaded in the
            judge from the cut source: the task itself and what is built on it are not there).
        allowed: the contract names the variant gives (the tasks beneath, and the task's ``own_reference``).
    """

    def __init__(self, modules, allowed):
        self.namespace = {}
        for module in modules:
            self.namespace.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
        self.allowed = {name for name in allowed if name in self.namespace}
        self.surface = surface(modules, self.allowed)
        self.classes = {name: self.namespace[name] for name in self.surface["classes"]}
        self.objects = {}
        """``handle -> object``: each reference object built for the worker. Each call sets the state of those it
        uses from the worker's before it runs."""
        self._handles = {}
        self._next = itertools.count(1)
        self.calls = 0
        """Messages answered."""
        self.seconds = 0.0
        """Seconds spent answering them."""

    def answer(self, message):
        """The reply to one message (never raises for anything in it)."""
        start = time.perf_counter()
        self.calls += 1
        try:
            if not isinstance(message, dict):
                raise StandInError("a message that is not a dict")
            self.release(message.get("released"))
            op = message.get("op")
            if op not in ("new", "call", "get", "vjp"):
                raise StandInError(f"no operation {str(op)[:40]!r}")
            return self._run(op, message)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - whatever the reference raised, or a malformed message
            return {"error": _describe(exc)}
        finally:
            self.seconds += time.perf_counter() - start

    def release(self, handles):
        """Forget the objects the worker no longer holds."""
        for h in handles if isinstance(handles, list) else ():
            obj = self.objects.pop(h, None) if type(h) is int else None
            if obj is not None and self._handles.get(id(obj)) == h:
                del self._handles[id(obj)]

    def _handle(self, obj):
        h = self._handles.get(id(obj))
        if h is None or self.objects.get(h) is not obj:
            if len(self.objects) >= MAX_OBJECTS:
                raise StandInError(f"more than {MAX_OBJECTS} of the reference's objects at once")
            h = next(self._next)
            self.objects[h] = obj
            self._handles[id(obj)] = h
        return h

    def _is_reference(self, x):
        cls = self.classes.get(type(x).__name__)
        return cls is not None and type(x) is cls

    def _decoder(self, message):
        taken = set()

        def make(entry, k):
            if "#G" in entry:
                return torch.Generator(device=str(entry.get("#G") or "cpu"))
            if "#M" in entry:
                return _bare(_torch_class(entry.get("cls")))
            h = entry.get("h")
            template = self.objects.get(h) if type(h) is int else None
            if template is None or type(template).__name__ != entry.get("cls"):
                raise StandInError("an object of the reference's that this grader did not build")
            if id(template) in taken:  # two of the worker's objects (copies) share one: each gets its own here
                template = copy.deepcopy(template)
            taken.add(id(template))
            return template

        return _Decoder(message.get("table"), make)

    def _run(self, op, message):
        body = message.get("body")
        if not isinstance(body, dict):
            raise StandInError("a message without its body")
        decoder = self._decoder(message)
        first = body.get("objects")
        if type(first) is not int or first < 0:
            raise StandInError("a message without its object count")
        if op == "new":
            name = body.get("cls")
            if name not in self.allowed or name not in self.classes:
                raise StandInError(f"the reference's {str(name)[:40]} is not given in this check")
            target, method = self.classes[name], None
        else:
            target, method = self._target(body, decoder, op)
        args = decoder.value(body.get("args", {"#U": []}))
        kwargs = decoder.value(body.get("kwargs", {"#D": {}}))
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise StandInError("malformed arguments")
        env = body.get("env")
        if op == "new" and issubclass(target, nn.Module):
            self._check_size(target, args, kwargs, env)
        if op == "vjp":
            return self._vjp(body, decoder, target, method, args, kwargs, env, first)
        with _Environment(env, grad=False if body.get("autograd") else None):
            result = _invoke(target, method, args, kwargs, op)
            after = _rng_after()
        return self._reply(decoder, result, after, first)

    def _target(self, body, decoder, op):
        fn = body.get("fn")
        if fn is not None:
            if fn not in self.allowed or fn not in self.surface["functions"]:
                raise StandInError(f"the reference's {str(fn)[:40]} is not given in this check")
            return self.namespace[fn], None
        target = decoder.value(body.get("self"))
        if not self._is_reference(target):
            raise StandInError("a method of something that is not one of the reference's parts")
        info, method = self.surface["classes"][type(target).__name__], body.get("method")
        if op == "get":
            if method not in info["properties"]:
                raise StandInError(f"the reference's {type(target).__name__} has no property {str(method)[:40]!r}")
        elif method == "forward" and info["module"]:
            method = None  # ``module(...)``: as the worker's nn.Module.__call__ calls forward
        elif method not in info["methods"]:
            raise StandInError(f"the reference's {type(target).__name__} has no method {str(method)[:40]!r}")
        return target, method

    @staticmethod
    def _check_size(cls, args, kwargs, env):
        """Refuse a part whose tensors would not fit what grading needs (built on the meta device first)."""
        with _Environment(env, grad=False), torch.device("meta"):
            probe = cls(*args, **kwargs)
        size = sum(t.numel() * t.element_size() for t in itertools.chain(probe.parameters(), probe.buffers()))
        if size > MAX_STATE_BYTES:
            raise StandInError(f"the reference's {cls.__name__} with these arguments would hold {size} bytes of "
                               f"tensors, more than the {MAX_STATE_BYTES} that grading ever needs")

    def _encoder(self, decoder, first):
        known = {id(t): (i, decoder.versions[i]) for i, t in decoder.tensors.items()}
        objects = {id(obj): k for k, obj in decoder.objects.items()}
        return _Encoder(self._is_reference, self._handle, known=known, objects=objects, first=first)

    def _outcome(self, decoder, result, first):
        """The encoder holding every object the call involved (their states after it) and the result."""
        encoder = self._encoder(decoder, first)
        objects = [[k, encoder.obj(obj)] for k, obj in sorted(decoder.objects.items())
                   if not isinstance(obj, torch.Generator)]
        return encoder, objects, encoder.value(result)

    def _reply(self, decoder, result, after, first):
        encoder, objects, out = self._outcome(decoder, result, first)
        generators = [[k, g.get_state()] for k, g in decoder.objects.items() if isinstance(g, torch.Generator)]
        grads = []
        for i, t in decoder.tensors.items():
            before, version = decoder.grads[i]
            if t.grad is not before or (before is not None and before._version != version):
                grads.append([i, None if t.grad is None else t.grad.detach()])
        return {"result": out, "objects": objects, "generators": generators, "grads": grads, "env": after,
                "table": encoder.table}

    def _vjp(self, body, decoder, target, method, args, kwargs, env, first):
        wrt = body.get("wrt")
        if not isinstance(wrt, list) or any(type(i) is not int or i not in decoder.tensors for i in wrt):
            raise StandInError("a gradient asked for a tensor not sent")
        inputs = []
        for i in wrt:
            t = decoder.tensors[i]
            if not t.is_leaf:
                raise StandInError("a gradient asked for a tensor that is not an input")
            t.requires_grad_(True)
            inputs.append(t)
        with _Environment(env, grad=True):
            result = _invoke(target, method, args, kwargs, "call")
        encoder, _, _ = self._outcome(decoder, result, first)
        outs, grads_out = [], []
        picks, given = body.get("outputs"), body.get("grad_outputs")
        if not isinstance(picks, list) or not isinstance(given, list) or len(picks) != len(given):
            raise StandInError("malformed output gradients")
        for j, g in zip(picks, given):
            if type(j) is not int or not 0 <= j < len(encoder.tensors):
                raise StandInError("a gradient for an output the call did not make")
            t = encoder.tensors[j]
            if g is None or not t.requires_grad:
                continue
            outs.append(t)
            grads_out.append(_tensor(g).to(device=t.device, dtype=t.dtype))
        if not outs:
            return {"grads": [None] * len(inputs)}
        grads = torch.autograd.grad(outs, inputs, grads_out, allow_unused=True)
        return {"grads": [None if g is None else g.detach() for g in grads]}


def _invoke(target, method, args, kwargs, op):
    if op == "get":
        return getattr(target, method)
    if method is None:
        return target(*args, **kwargs)
    return getattr(target, method)(*args, **kwargs)


def _describe(exc):
    """An exception as the worker may see it: a type it can raise and a bounded message, no traceback."""
    name, message = type(exc).__name__, str(exc)
    if len(message) > MESSAGE_CHARS:
        message = message[:MESSAGE_CHARS] + " ..."
    if isinstance(exc, StandInError):
        name = "StandInError"
    elif name not in _EXCEPTIONS:
        name, message = "RuntimeError", f"{name}: {message}"
    return {"type": name, "message": message}


def _rebuild(error):
    """The host's error as an exception of the worker's (a builtin type, or ``StandInError``)."""
    if not isinstance(error, dict):
        return StandInError("the grader could not compute a part of the reference")
    name, message = error.get("type"), str(error.get("message", ""))[:MESSAGE_CHARS + 10]
    if name == "StandInError":
        return StandInError(message)
    return _EXCEPTIONS.get(name, RuntimeError)(message)


# ================================================================================================
# The worker's side
# ================================================================================================
class Loopback:
    """A link to a ``Host`` in this process; every message still goes through the wire format, both ways."""

    def __init__(self, host):
        self.host = host

    def ask(self, message):
        return wire.decode(wire.encode(self.host.answer(wire.decode(wire.encode(message)))))


class StandIns:
    """The stand-ins of one variant in the worker. ``get(name)`` is what the submission's code is given for the
    reference's ``name``: a class or a function built from the host's ``surface`` (names only), whose every
    computation is a message to the host.

    Args:
        link: ``ask(message) -> reply``: the host, over the judge's pipes in a worker (``Loopback`` in one process).
        surface: ``Host.surface`` of the variant.
        used: a set collecting the contract names the submission's code called or built.
    """

    def __init__(self, link, surface, used=None):
        self.link = link
        self.used = used if used is not None else set()
        self.allowed = set(surface.get("allowed", ()))
        self.classes = {name: self._class(name, info) for name, info in surface.get("classes", {}).items()}
        self.functions = {name: self._function(name) for name in surface.get("functions", ())}
        self.calls = 0
        """Messages sent to the host."""
        self._live = {}
        self._released = []

    def get(self, name):
        if name in self.classes:
            return self.classes[name]
        if name in self.functions:
            return self.functions[name]
        raise KeyError(name)

    def names(self):
        """The contract names served."""
        return sorted((set(self.classes) | set(self.functions)) & self.allowed)

    # -- what the submission's code holds ----------------------------------------------------------
    def _function(self, name):
        hub = self

        def standin(*args, **kwargs):
            hub.used.add(name)
            return hub.call({"fn": name}, args, kwargs)

        standin.__name__ = standin.__qualname__ = name
        standin.__module__ = "reference"
        standin.__doc__ = f"The reference's {name}, computed by the grader."
        return standin

    def _class(self, name, info):
        hub = self

        def __init__(self, *args, **kwargs):
            if isinstance(self, nn.Module):
                nn.Module.__init__(self)
            if name in hub.allowed:
                hub.used.add(name)
            hub.new(self, name, args, kwargs)

        def __deepcopy__(self, memo):
            twin = _bare(type(self))
            memo[id(self)] = twin
            for key, value in vars(self).items():
                vars(twin)[key] = value if key == "_standin_handle" else copy.deepcopy(value, memo)
            hub._track(twin, vars(self).get("_standin_handle"))
            return twin

        def __copy__(self):
            twin = _bare(type(self))
            vars(twin).update({k: (dict(v) if isinstance(v, dict) and k in _INTERNALS else v)
                               for k, v in vars(self).items()})
            hub._track(twin, vars(self).get("_standin_handle"))
            return twin

        ns = {"__module__": "reference", "__qualname__": name, "__init__": __init__, "__deepcopy__": __deepcopy__,
              "__copy__": __copy__, "__doc__": f"The reference's {name}, computed by the grader."}
        if info["module"]:
            def forward(self, *args, **kwargs):
                return hub.call({"self": self, "method": "forward"}, args, kwargs)
            ns["forward"] = forward
        for method in info["methods"]:
            if method != "forward":
                ns[method] = _remote_method(hub, method)
        for prop in info["properties"]:
            ns[prop] = property(_remote_property(hub, prop))
        return type(name, (nn.Module if info["module"] else object,), ns)

    def is_standin(self, x):
        cls = self.classes.get(type(x).__name__)
        return cls is not None and type(x) is cls

    @staticmethod
    def handle_of(x):
        return vars(x).get("_standin_handle")

    def _track(self, obj, handle):
        """Count the worker's objects per host object; the host forgets one when the last is gone."""
        if type(handle) is not int:
            return
        self._live[handle] = self._live.get(handle, 0) + 1
        weakref.finalize(obj, self._gone, handle)

    def _gone(self, handle):
        left = self._live.get(handle, 1) - 1
        if left <= 0:
            self._live.pop(handle, None)
            self._released.append(handle)
        else:
            self._live[handle] = left

    # -- messages ------------------------------------------------------------------------------------
    def ask(self, op, encoder, body):
        body = dict(body, objects=encoder.next)
        message = {"op": op, "table": encoder.table, "body": body}
        if self._released:
            message["released"], self._released = self._released, []
        self.calls += 1
        reply = self.link.ask(message)
        if not isinstance(reply, dict):
            raise StandInError("the grader's answer for a part of the reference was not understood")
        if "error" in reply:
            raise _rebuild(reply["error"])
        return reply

    def _encoder(self):
        return _Encoder(self.is_standin, self.handle_of)

    def new(self, obj, name, args, kwargs):
        encoder = self._encoder()
        body = {"cls": name, "args": encoder.value(tuple(args)), "kwargs": encoder.value(dict(kwargs)),
                "env": _env()}
        reply = self.ask("new", encoder, body)
        self.settle(encoder, reply, into=obj)

    def call(self, target, args, kwargs, op="call"):
        encoder = self._encoder()
        body = dict(target)
        if "self" in body:
            body["self"] = encoder.value(body["self"])
        body["args"] = encoder.value(tuple(args))
        body["kwargs"] = encoder.value(dict(kwargs))
        body["env"] = _env()
        wrt = [i for i, t in enumerate(encoder.tensors)
               if t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)]
        if op == "call" and wrt and torch.is_grad_enabled():
            return _through_autograd(self, encoder, body, wrt)
        return self.settle(encoder, self.ask(op, encoder, body))

    def settle(self, encoder, reply, into=None, outputs=None):
        """Apply a reply (the objects' new states, generators, gradients, the random state) and return its result.
        ``into``: the stand-in being built (``new``); ``outputs``: the autograd node's outputs, in place of the
        reply's new tensors."""
        sent_objects = dict(encoder.by_number)

        def make(entry, k):
            if k in sent_objects:
                return sent_objects[k]
            if "#M" in entry:
                return _bare(_torch_class(entry.get("cls")))
            if "#G" in entry:
                return torch.Generator(device=str(entry.get("#G") or "cpu"))
            nonlocal into
            cls = self.classes.get(entry.get("cls"))
            if cls is None:
                raise StandInError(f"an object of an unknown class {str(entry.get('cls'))[:40]}")
            if into is not None and type(into) is cls:
                obj, into = into, None
            else:
                obj = _bare(cls)
            vars(obj)["_standin_handle"] = entry.get("h")
            self._track(obj, entry.get("h"))
            return obj

        decoder = _Decoder(reply.get("table") or [], make, sent=encoder.tensors)
        if outputs is not None:
            decoder.tensors.update(outputs)
        for _k, entry in reply.get("objects") or []:
            decoder.value(entry)
        for k, state in reply.get("generators") or []:
            gen = sent_objects.get(k)
            if isinstance(gen, torch.Generator) and isinstance(state, torch.Tensor):
                gen.set_state(state)
        for i, grad in reply.get("grads") or []:
            t = encoder.tensors[_index(i, len(encoder.tensors))]
            if grad is None:
                t.grad = None
            elif t.grad is not None and t.grad.shape == grad.shape:
                with torch.no_grad():
                    t.grad.copy_(grad)
            else:
                t.grad = _tensor(grad).to(device=t.device)
        _set_rng(reply.get("env") or {})
        return decoder.value(reply.get("result"))


def _remote_method(hub, method):
    def call(self, *args, **kwargs):
        return hub.call({"self": self, "method": method}, args, kwargs)

    call.__name__ = call.__qualname__ = method
    return call


def _remote_property(hub, prop):
    def get(self):
        return hub.call({"self": self, "method": prop}, (), {}, op="get")

    get.__name__ = prop
    return get


class _Call(torch.autograd.Function):
    """One stand-in call as a node of the worker's autograd graph: its outputs are the tensors the call made, and
    its backward asks the host for their vector-Jacobian product."""

    @staticmethod
    def forward(ctx, box, *inputs):
        hub, encoder, body = box["hub"], box["encoder"], box["body"]
        reply = hub.ask("call", encoder, dict(body, autograd=True))
        new = []
        for entry in reply.get("table") or []:
            new.append(_tensor(entry.get("t") if isinstance(entry, dict) else None))
        box["reply"] = reply
        ctx.box = box
        ctx.picks = [j for j, t in enumerate(new) if t.dtype.is_floating_point or t.dtype.is_complex]
        picked = set(ctx.picks)
        ctx.mark_non_differentiable(*[t for j, t in enumerate(new) if j not in picked])
        return (*new, torch.zeros(()))  # never empty: a call may make no tensor at all

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, *grads):
        box = ctx.box
        given = [None if grads[j] is None else grads[j].detach() for j in ctx.picks]
        body = dict(box["body"], wrt=box["wrt"], outputs=ctx.picks, grad_outputs=given)
        reply = box["hub"].ask("vjp", box["encoder"], body)
        got = reply.get("grads")
        if not isinstance(got, list) or len(got) != len(box["wrt"]):
            raise StandInError("the grader's gradients for a part of the reference were not understood")
        return (None, *[None if g is None else _tensor(g) for g in got])


def _through_autograd(hub, encoder, body, wrt):
    box = {"hub": hub, "encoder": encoder, "body": body, "wrt": wrt}
    outputs = _Call.apply(box, *[encoder.tensors[i] for i in wrt])[:-1]
    table = box["reply"].get("table") or []
    made = {}
    for j, t in enumerate(outputs):
        entry = table[j]
        made[j] = nn.Parameter(t.detach(), requires_grad=bool(entry.get("rg"))) if entry.get("p") else t
    return hub.settle(encoder, box["reply"], outputs=made)


__all__ = ["Host", "Loopback", "StandInError", "StandIns", "surface"]
