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

Without autograd (generation, evaluation), a call's target that is the object the host last answered for or built
(the same submodules, tensors and attributes: nothing replaced since) crosses as its handle and a token the host gave
then (``StandIns._synced``, ``Host._shortcut``), not its tree, with only what changed since: the data of each
parameter or buffer not equal to the copy last sent (or never sent: what the host built), and each module's mode that
changed, each by its number in one walk of the object both sides make alike (``_signature``'s places). The host puts
those in place only on the state the token stands for, computes from its own object, and sends the answer only if
that object's signature after the call is the one it recorded (``_signature``); else it asks for the target in full.

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
import functools
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
CACHE_BYTES = 64 << 20
"""Bytes of the stand-ins' parameters and buffers a worker keeps a copy of, so that a part whose state did not change
since the last call is sent as a number, not its data (``_TensorCache``); past that, states cross in full."""
CACHE_SLOTS = 20_000
"""Tensors the worker's cache holds at most."""
PROTOTYPES = 256
"""Kinds of construction (class, plain arguments, default dtype and device) whose result a host vouches for and a
worker builds from a copy of the last one, without a message (``StandIns.new``)."""
PROTOTYPE_BYTES = 1 << 20
"""A construction bigger than this is never built from a copy."""
HOST_CACHE_BYTES = 2 * CACHE_BYTES
"""What a host keeps for one worker's cache; a worker that asks it to keep more is refused."""
MESSAGE_CHARS = 500
"""Characters of a reference error's message sent back to the worker."""
STATS = {"messages": 0, "seconds": 0.0}
"""Stand-in messages every host in this process answered, and the seconds it took (for the benchmarks)."""
_EXCEPTIONS = {
    name: getattr(builtins, name)
    for name in (
        "ValueError",
        "TypeError",
        "RuntimeError",
        "IndexError",
        "KeyError",
        "AttributeError",
        "NotImplementedError",
        "ZeroDivisionError",
        "AssertionError",
        "ArithmeticError",
        "OverflowError",
        "StopIteration",
        "LookupError",
    )
}


class StandInError(RuntimeError):
    """A stand-in cannot do what was asked (an argument that is not data, a part it does not serve)."""


# ================================================================================================
# What a variant's parts are, as data
# ================================================================================================
def surface(parts_modules, allowed, hidden=()):
    """``{"functions": [...], "classes": {name: {"module": bool, "methods": [...], "properties": [...]}}}``: the
    interface of the reference parts ``allowed`` (names) and of the other classes the parts' modules define (objects
    the reference builds, such as a cache, are stand-ins too), but for those named in ``hidden`` (the contract's
    names of tasks the variant does not give). Names only: no code, no text."""
    functions, classes = [], {}
    for module in parts_modules:
        for name, obj in vars(module).items():
            if name in hidden and name not in allowed:
                continue
            if isinstance(obj, type) and obj.__module__ == module.__name__:
                classes[name] = _class_surface(obj)
            elif name in allowed and callable(obj) and not isinstance(obj, type):
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
    return {
        "module": issubclass(cls, nn.Module),
        "methods": sorted(set(methods)),
        "properties": sorted(set(properties)),
    }


# ================================================================================================
# Values as plain data (both sides)
# ================================================================================================
_INTERNALS = frozenset(vars(nn.Module())) | {"_standin_handle", "_standin_cell", "_standin_sync"}
"""Attributes that are not an object's state: ``nn.Module``'s own bookkeeping and a stand-in's link."""
_OWN = ("_standin_cell", "_standin_sync")
"""A stand-in's link attributes that belong to that one object: a copy gets its own."""


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


_SKIP = ("X",)
"""An attribute that is not data (a function, say): it stays as it was built."""
MAX_SCHEMAS = 10_000
"""Object layouts one side accepts from the other (a layout is sent once, then named by its number)."""


class _Encoder:
    """One side's objects as plain data, for one message.

    Values are tagged tuples: ``("T", i)`` is entry ``i`` of ``table`` (each tensor once: a tensor used twice, such as
    a tied weight, stays one tensor on the other side), ``("K", i)`` the other side's tensor ``i`` of the message this
    one answers (``known``: ``id(tensor) -> (i, version)``; changed in place, its new data is in ``changed``),
    ``("L", items)``/``("U", items)``/``("D", dict)`` containers, ``("G", k, device, state)`` a generator. An object
    (a stand-in, a torch.nn module) is ``(tag, k, handle, class, layout, training, params, buffers, children,
    attributes)`` the first time (``"S"`` for the reference's, ``"M"`` for torch's), then ``("O", k)``; its layout
    (the names of its parameters, buffers, submodules and attributes) goes once per link (``layouts``), then only its
    number; parameters and buffers are table indices (``-1 - i`` for a known tensor). Objects are numbered from
    ``first`` (the objects of the message answered keep their numbers: ``objects``)."""

    def __init__(self, is_reference, handle_of, layouts, known=None, objects=None, first=0, cache=None):
        self.is_reference, self.handle_of, self.layouts = is_reference, handle_of, layouts
        self.cache = cache
        self.pinned = []
        """The cache's copies this message refers to: kept while the message may still be sent (a backward)."""
        self.table, self.tensors, self.index = [], [], {}
        self.known = known or {}
        self.changed = []
        self.local_layouts, self.new_layouts = {}, {}
        self.objects = dict(objects or {})
        """``id(obj) -> k``."""
        self.by_number = {}
        self.next = first
        self.encoded = set()

    def tensor_index(self, t, state=False):
        """The table index of ``t`` (``-1 - i`` for the other side's tensor ``i``). ``state``: a part's parameter or
        buffer, which the worker's cache may send as a number (``_TensorCache``)."""
        if type(t) is not torch.Tensor and type(t) is not nn.Parameter:
            raise StandInError(
                f"a {type(t).__qualname__} (a subclass of torch.Tensor) cannot be passed to the "
                f"reference's parts; pass a plain tensor"
            )
        key = id(t)
        known = self.known.get(key)
        if known is not None:
            i, version = known
            if _version(t) != version:
                self.changed.append([i, t.detach()])
            return -1 - i
        i = self.index.get(key)
        if i is None:
            i = self.index[key] = len(self.table)
            self.table.append(None)
            self.tensors.append(t)
            flags = (1 if t.requires_grad else 0) | (2 if isinstance(t, nn.Parameter) else 0)
            grad = t.grad if t.is_leaf else None
            grad = None if grad is None else self.tensor_index(grad)
            cached = self.cache.slot(t) if state and self.cache is not None else None
            if cached is None:
                self.table[i] = [t.detach(), flags, grad]
            else:
                slot, copy_, fresh = cached
                self.pinned.append(copy_)
                self.table[i] = [copy_ if fresh else None, flags, grad, slot]
        return i

    def tensor(self, t):
        i = self.tensor_index(t)
        return ("K", -1 - i) if i < 0 else ("T", i)

    def number(self, x):
        k = self.objects.get(id(x))
        if k is None:
            k = self.objects[id(x)] = self.next
            self.next += 1
        self.by_number[k] = x
        return k

    def synced(self, x, handle, token):
        """``("R", k, handle, token)``: the stand-in ``x`` as the host's object ``handle`` holds it, unchanged since the
        reply that gave ``token`` (``StandIns.call``); ``x`` itself is ``("O", k)`` in the rest of the message."""
        k = self.number(x)
        self.encoded.add(k)
        return ("R", k, handle, token)

    def value(self, x, depth=0):
        if depth > 60:
            raise StandInError("an argument nested too deeply for the reference's parts")
        if x is None or type(x) in (bool, int, float, str):
            return x
        if isinstance(x, torch.Tensor):
            return self.tensor(x)
        if _plain(x):
            return x
        if isinstance(x, (list, tuple)):
            return ("U" if isinstance(x, tuple) else "L", [self.value(v, depth + 1) for v in x])
        if isinstance(x, dict):
            if not all(isinstance(k, str) for k in x):
                raise StandInError("a dict whose keys are not strings cannot be passed to the reference's parts")
            return ("D", {k: self.value(v, depth + 1) for k, v in x.items()})
        if isinstance(x, torch.Generator):
            return ("G", self.number(x), str(x.device), x.get_state())
        if isinstance(
            x,
            (collections.abc.Iterator, collections.abc.KeysView, collections.abc.ValuesView, collections.abc.ItemsView),
        ) and not isinstance(x, nn.Module):
            # ``model.parameters()``: consumed here, as the part would have consumed it
            return ("L", [self.value(v, depth + 1) for v in itertools.islice(x, 1_000_000)])
        if self.is_reference(x) or (isinstance(x, nn.Module) and _torch_class_name(type(x))):
            return self.obj(x, depth)
        raise StandInError(
            f"a {type(x).__qualname__} cannot be passed to the reference's parts: only tensors, "
            f"numbers, strings, lists, dicts, torch.nn's own modules and the parts themselves cross"
        )

    def obj(self, x, depth=0):
        k = self.number(x)
        if k in self.encoded:
            return ("O", k)
        self.encoded.add(k)
        attrs = _state_attrs(x)
        values = []
        for name in attrs:
            try:
                values.append(self.value(vars(x)[name], depth + 1))
            except StandInError:
                values.append(_SKIP)
        if isinstance(x, nn.Module):
            params, buffers, children = x._parameters, x._buffers, x._modules
            layout = (
                tuple(params),
                tuple(buffers),
                tuple(children),
                tuple(attrs),
                tuple(sorted(x._non_persistent_buffers_set)),
            )
            training = x.training
        else:
            params = buffers = children = {}
            layout, training = ((), (), (), tuple(attrs), ()), None
        number = self.layouts.get(layout)
        if number is None:
            number = self.local_layouts.get(layout)
        if number is None:
            if len(self.layouts) + len(self.local_layouts) >= MAX_SCHEMAS:
                raise StandInError("too many kinds of objects passed to the reference's parts")
            number = self.local_layouts[layout] = len(self.layouts) + len(self.local_layouts)
            self.new_layouts[number] = [list(part) for part in layout]
        prefs = [None if p is None else self.tensor_index(p, True) for p in params.values()]
        brefs = [None if b is None else self.tensor_index(b, True) for b in buffers.values()]
        crefs = []
        for n, child in children.items():
            if child is not None and not (self.is_reference(child) or _torch_class_name(type(child))):
                raise StandInError(
                    f"the reference's {type(x).__name__} holds a {type(child).__qualname__} as "
                    f"{n!r}; the reference's parts can hold only their own parts and torch.nn's "
                    f"modules"
                )
            crefs.append(None if child is None else self.obj(child, depth + 1))
        if self.is_reference(x):
            return ("S", k, self.handle_of(x), type(x).__name__, number, training, prefs, brefs, crefs, values)
        return ("M", k, 0, _torch_class_name(type(x)), number, training, prefs, brefs, crefs, values)

    def message(self, again=False, **fields):
        """The message of ``fields`` and the tensors, changes and layouts they need. The layouts count as sent
        from now on (``layouts`` of the link). ``again``: the same tensors a second time (a backward after its
        forward): the cached ones are with the host already."""
        self.layouts.update(self.local_layouts)
        table = [[None, *e[1:]] if len(e) == 4 else e for e in self.table] if again else self.table
        return dict(fields, table=table, changed=self.changed, layouts=self.new_layouts)


class _Decoder:
    """The other side's plain data back into objects, for one message (see ``_Encoder``).

    ``make(entry, k, reuse)`` gives the object numbered ``k`` before its state is set (``reuse``: the object that held
    its place before, for a torch.nn module the host may reuse); ``sent`` are this side's tensors of the message
    being answered; ``layouts`` the layouts the other side sent so far on this link."""

    def __init__(self, message, make, layouts, sent=(), cache=None):
        table = message.get("table")
        if not isinstance(table, list):
            raise StandInError("a message without its tensors")
        self.raw, self.make, self.layouts, self.sent = table, make, layouts, list(sent)
        self.cache = cache
        new = message.get("layouts") or {}
        if not isinstance(new, dict):
            raise StandInError("malformed layouts")
        for number, layout in new.items():
            if len(self.layouts) >= MAX_SCHEMAS:
                raise StandInError("too many kinds of objects")
            if not (
                isinstance(layout, list)
                and len(layout) == 5
                and all(isinstance(part, list) and all(isinstance(n, str) for n in part) for part in layout)
            ):
                raise StandInError("a malformed layout")
            self.layouts[number] = layout
        for i, data in message.get("changed") or []:  # this side's tensors the other changed in place
            t = self.sent[_index(i, len(self.sent))]
            with torch.no_grad():
                t.copy_(_tensor(data))
        self.tensors, self.versions, self.grads = {}, {}, {}
        self.synced = {}
        """``k -> (handle, record)``: the objects the message named by token (``Host._shortcut``)."""
        self.taken = set()
        self.objects = {}
        self.entries = {}
        """``k -> entry``: each object as it came."""

    def tensor_at(self, i):
        if type(i) is not int:
            raise StandInError("a malformed tensor reference")
        if i < 0:
            return self.sent[_index(-1 - i, len(self.sent))]
        t = self.tensors.get(i)
        if t is None:
            entry = self.raw[_index(i, len(self.raw))]
            if not (isinstance(entry, list) and len(entry) in (3, 4) and type(entry[1]) is int):
                raise StandInError("a malformed tensor entry")
            if len(entry) == 4:
                if self.cache is None:
                    raise StandInError("a cached tensor where none is kept")
                t = self.cache.get(entry[3], entry[0])
            else:
                t = _tensor(entry[0])
            if entry[1] & 2:
                t = nn.Parameter(t, requires_grad=bool(entry[1] & 1) and t.dtype.is_floating_point)
            self.tensors[i] = t
            if entry[2] is not None:
                g = self.tensor_at(entry[2])
                if g.shape == t.shape and g.dtype == t.dtype:
                    t.grad = g
            self.versions[i] = _version(t)
            self.grads[i] = (t.grad, None if t.grad is None else _version(t.grad))
        return t

    def value(self, x, depth=0, reuse=None):
        if x is None or type(x) in (bool, int, float, str) or _plain(x):
            return x
        if depth > 80:
            raise StandInError("a value nested too deeply")
        if not isinstance(x, tuple) or not x or not isinstance(x[0], str):
            raise StandInError(f"a {type(x).__name__} where a value was expected")
        tag = x[0]
        if tag == "T" or tag == "K":
            i = x[1] if len(x) == 2 else None
            return self.tensor_at(i if tag == "T" else (-1 - i if type(i) is int and i >= 0 else "bad"))
        if tag == "L" or tag == "U":
            items = [self.value(v, depth + 1) for v in _seq(x[1] if len(x) == 2 else None)]
            return items if tag == "L" else tuple(items)
        if tag == "D":
            if len(x) != 2 or not isinstance(x[1], dict):
                raise StandInError("a malformed dict")
            return {k: self.value(v, depth + 1) for k, v in x[1].items()}
        if tag == "G":
            if len(x) != 4:
                raise StandInError("a malformed generator")
            gen = self.objects[x[1]] = self.make(x, x[1], None)
            if isinstance(x[3], torch.Tensor) and x[3].dtype == torch.uint8:
                gen.set_state(x[3])
            return gen
        if tag == "O":
            if len(x) != 2 or x[1] not in self.objects:
                raise StandInError("a reference to an object not sent")
            return self.objects[x[1]]
        if tag == "S" or tag == "M":
            return self.obj(x, depth, reuse)
        raise StandInError("a malformed value")

    def obj(self, x, depth=0, reuse=None):
        if len(x) != 10 or type(x[1]) is not int:
            raise StandInError("a malformed object")
        k = x[1]
        if k in self.objects:
            return self.objects[k]
        layout = self.layouts.get(x[4])
        if layout is None:
            raise StandInError("an object of a layout not sent")
        obj = self.objects[k] = self.make(x, k, reuse)
        self.entries[k] = x
        self.apply(obj, layout, x, depth)
        return obj

    def apply(self, obj, layout, x, depth=0):
        """Set ``obj``'s parameters, buffers, submodules, attributes and mode to those of entry ``x``."""
        pnames, bnames, cnames, anames, transient = layout
        _, _, _, _, _, training, prefs, brefs, crefs, values = x
        if not (
            len(_seq(prefs)) == len(pnames)
            and len(_seq(brefs)) == len(bnames)
            and len(_seq(crefs)) == len(cnames)
            and len(_seq(values)) == len(anames)
        ):
            raise StandInError("an object that does not match its layout")
        if isinstance(obj, nn.Module):
            object.__setattr__(obj, "training", bool(training))
            for slot, names, refs, kind in (
                (obj._parameters, pnames, prefs, "params"),
                (obj._buffers, bnames, brefs, "buffers"),
            ):
                for name, ref in zip(names, refs):
                    t = None if ref is None else self.tensor_at(ref)
                    if kind == "params" and t is not None and not isinstance(t, nn.Parameter):
                        raise StandInError(f"{name!r} is not a parameter")
                    if name not in slot or slot[name] is not t:
                        slot[name] = t
                if len(slot) != len(names):
                    for name in [n for n in slot if n not in set(names)]:
                        del slot[name]
            if obj._non_persistent_buffers_set != set(transient):
                obj._non_persistent_buffers_set = set(transient)
            modules = obj._modules
            for name, ref in zip(cnames, crefs):
                child = None if ref is None else self.value(ref, depth + 1, reuse=modules.get(name))
                if child is not None and not isinstance(child, nn.Module):
                    raise StandInError(f"submodule {name!r} is not a module")
                if name not in modules or modules[name] is not child:
                    modules[name] = child
            if len(modules) != len(cnames):
                for name in [n for n in modules if n not in set(cnames)]:
                    del modules[name]
        elif pnames or bnames or cnames:
            raise StandInError("parameters for an object that is not a module")
        own = vars(obj)
        for name, ref in zip(anames, values):
            if name in _INTERNALS or name.startswith("__"):
                raise StandInError(f"an attribute named {name[:40]!r}")
            if ref == _SKIP:
                continue
            value = self.value(ref, depth + 1)
            if name not in own or own[name] is not value:
                own[name] = value


def _as_known(entry, layouts, depth=0):
    """An object's entry as the worker sent it, written as the host would write the same state back (its tensors
    as the worker's, its layout by the host's number): equal to the host's entry when the call changed nothing."""
    if depth > 80:
        return None
    if isinstance(entry, tuple) and entry:
        tag = entry[0]
        if tag == "T" and len(entry) == 2:
            return ("K", entry[1])
        if tag in ("S", "M") and len(entry) == 10:
            known = [None if i is None else -1 - i for i in entry[6]], [None if i is None else -1 - i for i in entry[7]]
            return (
                *entry[:4],
                layouts.get(entry[4]),
                entry[5],
                *known,
                [_as_known(c, layouts, depth + 1) for c in entry[8]],
                [_as_known(v, layouts, depth + 1) for v in entry[9]],
            )
        return tuple(_as_known(v, layouts, depth + 1) if isinstance(v, (tuple, list, dict)) else v for v in entry)
    if isinstance(entry, list):
        return [_as_known(v, layouts, depth + 1) for v in entry]
    if isinstance(entry, dict):
        return {k: _as_known(v, layouts, depth + 1) for k, v in entry.items()}
    return entry


class _LayoutNumbers:
    """``get(n)``: the number the host gave the layout the worker numbered ``n`` (``None`` if it gave it none), found
    for the few layouts a call's objects use, not for every layout the link ever carried."""

    def __init__(self, layouts_in, layouts_out):
        self.layouts_in, self.layouts_out, self.found = layouts_in, layouts_out, {}

    def get(self, n):
        try:
            return self.found[n]
        except KeyError:
            pass
        except TypeError:  # a number that cannot be a key: no layout has it
            return None
        layout = self.layouts_in.get(n)
        number = None if layout is None else self.layouts_out.get(tuple(tuple(part) for part in layout))
        self.found[n] = number
        return number


_SIZES_SEEN: set = set()
"""Constructions (the class itself, plain arguments, default dtype) measured to fit ``MAX_STATE_BYTES``, for every host
of this process: the judge's hosts of one variant share the reference's classes, and a fresh host per worker measured
them all again (287 meta-device builds in a full transformer grading, of 1,208 constructions)."""


def _nbytes(t):
    return t.numel() * t.element_size()


class _HostCache:
    """The host's copies of the worker's cached tensors (``_TensorCache``), by slot. What it keeps never changes: a
    call is given a copy, so that whatever the reference's code does to it, the next call that names the slot gets
    what the worker sent."""

    def __init__(self):
        self.tensors, self.bytes = {}, 0

    def get(self, slot, data):
        """The tensor of ``slot``: ``data`` when it came with the message (kept for later), else the one kept."""
        if type(slot) is not int:
            raise StandInError("a malformed cache slot")
        if data is not None:
            data = _tensor(data)
            size = _nbytes(data)
            old = self.tensors.get(slot)
            held = self.bytes + size - (0 if old is None else _nbytes(old))
            if held > HOST_CACHE_BYTES or (old is None and len(self.tensors) >= CACHE_SLOTS):
                raise StandInError("more cached tensors than a worker may keep with the grader")
            self.tensors[slot], self.bytes = data, held
        else:
            data = self.tensors.get(slot)
            if data is None:
                raise StandInError("a cached tensor the grader does not hold")
        return data.clone()

    def forget(self, slots):
        for slot in slots if isinstance(slots, list) else ():
            old = self.tensors.pop(slot, None) if type(slot) is int else None
            if old is not None:
                self.bytes -= _nbytes(old)


def _still_kept(entry, t, data):
    """Whether the cache's ``entry`` is ``t``'s and its copy still equals ``data`` (``t`` detached)."""
    ref, _slot, kept = entry
    return (
        ref() is t
        and kept.dtype == data.dtype
        and kept.device == data.device
        and kept.shape == data.shape
        and torch.equal(kept, data)
    )


class _TensorCache:
    """The worker's side: for each stand-in parameter or buffer sent, a copy of what was sent and the slot the host
    keeps it under. A tensor equal to its copy (same dtype, device, shape and values: ``torch.equal``, which sees
    changes through ``.data`` that a version counter misses) crosses as its slot; any other is copied again under a
    new slot. A slot lives as long as its copy (a message still to be sent, a backward, holds the copies it names),
    and the host forgets it with the next message after that."""

    def __init__(self):
        self.entries = {}
        """``id(tensor) -> (weakref, slot, copy)``."""
        self.bytes = 0
        self.forgotten = []
        self._next = itertools.count(1)

    def slot(self, t):
        """``(slot, copy, fresh)`` for ``t`` (``fresh``: the copy must be sent), or ``None`` (``t`` crosses in full)."""
        data = t.detach()
        if data.device.type == "meta":
            return None
        entry = self.entries.get(id(t))
        if entry is not None and _still_kept(entry, t, data):
            return entry[1], entry[2], False
        size = _nbytes(data)
        if self.bytes + size > CACHE_BYTES or len(self.entries) >= CACHE_SLOTS:
            return None
        with torch.inference_mode(False):
            kept = data.clone(memory_format=torch.contiguous_format)
        slot = next(self._next)
        self.bytes += size
        weakref.finalize(kept, self._dropped, slot, size)
        self.entries[id(t)] = (weakref.ref(t, functools.partial(self._gone, id(t), slot)), slot, kept)
        return slot, kept, True

    def drop(self, tensors):
        """Forget the copies of ``tensors``: each crosses in full next, under a new slot."""
        for t in tensors:
            self.entries.pop(id(t), None)

    def unchanged(self, t):
        """Whether ``t`` is the tensor of a slot and still equal to its copy (what ``slot`` would send as a number),
        without making a slot."""
        entry = self.entries.get(id(t))
        return entry is not None and _still_kept(entry, t, t.detach())

    def _gone(self, key, slot, _ref):
        entry = self.entries.get(key)
        if entry is not None and entry[1] == slot:
            del self.entries[key]

    def _dropped(self, slot, size):
        self.bytes -= size
        self.forgotten.append(slot)


def _construction_key(name, args, kwargs, env):
    """What a construction depends on besides the random state, when its arguments are all plain numbers and
    strings (else ``None``): the class, the arguments, the default dtype and device, grad and inference mode."""
    values = (*args, *kwargs.values())
    if not all(v is None or type(v) in (bool, int, float, str) for v in values) or not isinstance(env, dict):
        return None
    return (
        name,
        tuple(args),
        tuple(sorted(kwargs.items())),
        str(env.get("dtype")),
        str(env.get("device")),
        bool(env.get("grad")),
        env.get("inference") is True,
    )


def _state_tensors(obj):
    if isinstance(obj, nn.Module):
        yield from obj.parameters()
        yield from obj.buffers()
    for module in obj.modules() if isinstance(obj, nn.Module) else (obj,):
        yield from (v for v in vars(module).values() if isinstance(v, torch.Tensor))


def _same_tensor(a, b):
    if a is None or b is None:
        return a is b
    if not (
        type(a) is type(b)
        and a.dtype == b.dtype
        and a.device == b.device
        and a.shape == b.shape
        and a.requires_grad == b.requires_grad
    ):
        return False
    return a.device.type == "meta" or torch.equal(a, b)  # a meta tensor is its shape and dtype


def _same_state(a, b):
    """Whether two objects built by the reference hold the same state: classes, modes, parameters, buffers and
    attributes (plain values and tensors; anything else counts as different)."""
    if type(a) is not type(b):
        return False
    if isinstance(a, nn.Module):
        ours, theirs = list(a.modules()), list(b.modules())
        if len(ours) != len(theirs):
            return False
        pairs = zip(ours, theirs)
    else:
        pairs = [(a, b)]
    for x, y in pairs:
        if type(x) is not type(y):
            return False
        if isinstance(x, nn.Module):
            if x.training != y.training or x._non_persistent_buffers_set != y._non_persistent_buffers_set:
                return False
            for own_x, own_y in ((x._parameters, y._parameters), (x._buffers, y._buffers)):
                if list(own_x) != list(own_y) or not all(_same_tensor(own_x[k], own_y[k]) for k in own_x):
                    return False
            if list(x._modules) != list(y._modules):
                return False
        ax, ay = _state_attrs(x), _state_attrs(y)
        if ax != ay:
            return False
        for name in ax:
            vx, vy = vars(x)[name], vars(y)[name]
            if isinstance(vx, torch.Tensor):
                if not _same_tensor(vx, vy):
                    return False
            elif not (_plain(vx) and type(vx) is type(vy) and vx == vy):
                return False
    return True


_SENT = (
    torch.Tensor,
    list,
    tuple,
    dict,
    torch.Generator,
    nn.Module,
    collections.abc.Iterator,
    collections.abc.KeysView,
    collections.abc.ValuesView,
    collections.abc.ItemsView,
)
"""Kinds of attribute values an object's entry carries as data (``_Encoder.value``); a module is one only if it is
torch's own, but every module counts here."""


def _signature(root, is_part, mark, places=None, modules=None, modes=True):
    """``(signature, kept)``: the identity of ``root``'s whole state (itself, its submodules, their classes, modes,
    parameters, buffers and plain attributes), or ``None`` where some of it is not of those kinds. ``mark(t)`` is what
    stands for a tensor's data besides the tensor itself (``None``: it cannot stand for it). Two signatures of one root
    are equal only if nothing in that state was replaced or changed since, as long as ``kept`` (every object and tensor
    the signature names by ``id``, ``root`` first) is held: no other object can take an ``id`` it names.

    ``places``: a list given to collect where each parameter and buffer is, in the order ``mark`` is called for them
    (``(its module's parameters or buffers, name, whether a parameter)``): two objects of one signature list the same
    places, so a tensor's number in that order names its place on either side (``StandIns._synced``). ``modules``: a
    list given to collect each module in that order. ``modes``: whether their modes (``training``) are part of the
    signature.

    An attribute that is not data (a function, say) is never sent (``_SKIP``): the other side keeps its own, so it is
    not part of the signature either."""
    sig, kept, stack, seen = [], [], [root], set()
    add, keep = sig.append, kept.append
    while stack:
        x = stack.pop()
        if x is None:
            add(None)
            continue
        if id(x) in seen:  # one submodule under two names
            add(("again", id(x)))
            continue
        seen.add(id(x))
        cls = type(x)
        module = _TORCH_MODULE.get(cls)
        if module is None:
            module = _TORCH_MODULE[cls] = bool(issubclass(cls, nn.Module) and _torch_class_name(cls))
        if not module and not is_part(x):
            return None
        keep(x)
        add(id(x))
        add(cls)
        own = vars(x)
        if isinstance(x, nn.Module):
            if modes:
                add(x.training)
            if modules is not None:
                modules.append(x)
            add(tuple(x._non_persistent_buffers_set) if x._non_persistent_buffers_set else ())
            children = x._modules
            add(tuple(children))
            for tensors in (x._parameters, x._buffers):
                add(tuple(tensors))
                for name, t in tensors.items():
                    if t is None:
                        add(None)
                        continue
                    m = mark(t) if type(t) is torch.Tensor or type(t) is nn.Parameter else None
                    if m is None:
                        return None
                    if places is not None:
                        places.append((tensors, name, tensors is x._parameters))
                    keep(t)
                    add(id(t))
                    add(m)
            stack.extend(children.values())
        for name, v in own.items():
            if name in _INTERNALS or name.startswith("__"):
                continue
            kind = type(v)
            if v is None or kind in _PLAIN_TYPES:
                add(name)
                add(kind)
                add(v)
            elif isinstance(v, _SENT) or is_part(v):  # sent in full every time: no signature stands for it
                return None
    return tuple(sig), kept


_TORCH_MODULE: dict = {}
"""``class -> whether it is one of torch.nn's own module classes`` (``_signature``)."""
_PLAIN_TYPES = frozenset((bool, int, float, str, bytes, torch.dtype, torch.device))


def _host_mark(t):
    """A host tensor's data, for ``_signature``: its version counter (the host runs only the reference's code, which
    changes a tensor in place through autograd's view of it). A tensor with a gradient, or one that keeps no version
    (an inference tensor), stands for nothing."""
    if t.is_inference() or (t.is_leaf and t.grad is not None):
        return None
    return (t._version, t.requires_grad, type(t))


def _version(t):
    """``t``'s version counter (how often it was changed in place); an inference tensor keeps none (``-1``)."""
    return -1 if t.is_inference() else t._version


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
    env = {
        "rng": torch.get_rng_state(),
        "dtype": torch.get_default_dtype(),
        "device": str(torch.get_default_device()),
        "grad": torch.is_grad_enabled(),
        "inference": torch.is_inference_mode_enabled(),
    }
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
        self._inference = torch.inference_mode(self.env.get("inference") is True and not self.grad)
        self._inference.__enter__()
        return self

    def __exit__(self, *exc):
        self._inference.__exit__(*exc)
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
        hidden: the other contract names: not even their names reach the worker.
    """

    def __init__(self, modules, allowed, hidden=()):
        self.namespace = {}
        for module in modules:
            self.namespace.update({k: v for k, v in vars(module).items() if not k.startswith("__")})
        self.allowed = {name for name in allowed if name in self.namespace}
        self.surface = surface(modules, self.allowed, hidden)
        self.classes = {name: self.namespace[name] for name in self.surface["classes"]}
        self.objects = {}
        """``handle -> object``: each reference object built for the worker. Each call sets the state of those it
        uses from the worker's before it runs."""
        self._handles = {}
        self._next = itertools.count(1)
        self.layouts_in, self.layouts_out = {}, {}
        """The object layouts the worker sent (by number), and those sent to it."""
        self.cache = _HostCache()
        self._firsts = {}
        """``construction key -> a copy of the first object built for it`` (``_reusable``)."""
        self.calls = 0
        """Messages answered."""
        self.seconds = 0.0
        """Seconds spent answering them."""
        self.synced = {}
        """``handle -> (token, signature, kept)``: the object's state when the worker was told it holds the same
        (``_sync``), so that the worker may send it as ``("R", k, handle, token)`` while neither side changed it."""
        self.volatile = set()
        """Handles whose object changed in a call that named it by token: never given a token again."""
        self._tokens = itertools.count(1)

    def answer(self, message):
        """The reply to one message (never raises for anything in it)."""
        with torch.inference_mode(False):  # a host in the worker's own process (``Loopback``) too: plain tensors
            return self._answer(message)

    def _answer(self, message):
        start = time.perf_counter()
        self.calls += 1
        try:
            if not isinstance(message, dict):
                raise StandInError("a message that is not a dict")
            self.release(message.get("released"))
            self.cache.forget(message.get("forget"))
            op = message.get("op")
            if op not in ("new", "call", "get", "vjp"):
                raise StandInError(f"no operation {str(op)[:40]!r}")
            return self._run(op, message)
        except (KeyboardInterrupt, SystemExit):
            raise
        except BaseException as exc:  # noqa: BLE001 - whatever the reference raised, or a malformed message
            return {"error": _describe(exc)}
        finally:
            took = time.perf_counter() - start
            self.seconds += took
            STATS["messages"] += 1
            STATS["seconds"] += took

    def release(self, handles):
        """Forget the objects the worker no longer holds."""
        for h in handles if isinstance(handles, list) else ():
            if type(h) is not int:
                continue
            obj = self.objects.pop(h, None)
            self.synced.pop(h, None)
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

        def make(entry, k, reuse):
            tag = entry[0]
            if tag == "G":
                return torch.Generator(device=str(entry[2] or "cpu"))
            if tag == "M":
                cls = _torch_class(entry[3])
                return (
                    reuse if type(reuse) is cls and id(reuse) not in taken and not taken.add(id(reuse)) else _bare(cls)
                )
            h = entry[2]
            template = self.objects.get(h) if type(h) is int else None
            if template is None or type(template).__name__ != entry[3]:
                raise StandInError("an object of the reference's that this grader did not build")
            if id(template) in taken:  # two of the worker's objects (copies) share one: each gets its own here
                template = copy.deepcopy(template)
            taken.add(id(template))
            return template

        decoder = _Decoder(message, make, self.layouts_in, cache=self.cache)
        decoder.taken = taken
        return decoder

    def _host_signature(self, obj):
        return _signature(obj, self._is_reference, _host_mark)

    def _shortcut(self, ref, decoder):
        """The object ``("R", k, handle, token)`` names, registered in ``decoder`` as object ``k``, or ``None`` when
        the token is not the last this worker was given for it. Whether the object is still as it was when the token
        was given (another message may have set another state on it since: a copy of the worker's that shares it) is
        asked after the call, from the same signature (``_still_synced``): an answer computed from anything else is
        never sent."""
        if not (len(ref) == 4 and type(ref[1]) is int and type(ref[2]) is int and type(ref[3]) is int):
            raise StandInError("a malformed reference to an object")
        _, k, h, token = ref
        record, obj = self.synced.get(h), self.objects.get(h)
        if record is None or obj is None or record[0] != token or k in decoder.objects or id(obj) in decoder.taken:
            return None
        decoder.taken.add(id(obj))
        decoder.objects[k] = obj
        decoder.synced[k] = (h, record)
        return obj

    def _run(self, op, message):
        body = message.get("body")
        if not isinstance(body, dict):
            raise StandInError("a message without its body")
        decoder = self._decoder(message)
        first = body.get("objects")
        if type(first) is not int or first < 0:
            raise StandInError("a message without its object count")
        ref = body.get("self")
        if isinstance(ref, tuple) and ref and ref[0] == "R":  # the target as the host holds it (``_shortcut``)
            delta = _delta(body.get("delta"), decoder)  # first: the tensors it brought are kept whatever follows
            flips = _flips(body.get("modes"))
            if (
                op not in ("call", "get")
                or body.get("autograd")
                or self._shortcut(ref, decoder) is None
                or not self._apply_delta(ref[1], delta, flips, decoder)
            ):
                decoder.value(body.get("args")), decoder.value(body.get("kwargs"))  # keep the tensors it brought
                return {"stale": True}
            body = dict(body, self=("O", ref[1]))
        elif body.get("delta") is not None or body.get("modes") is not None:
            raise StandInError("new data for an object not named by its token")
        if op == "new":
            name = body.get("cls")
            if name not in self.allowed or name not in self.classes:
                raise StandInError(f"the reference's {str(name)[:40]} is not given in this check")
            target, method = self.classes[name], None
        else:
            target, method = self._target(body, decoder, op)
        args = decoder.value(body.get("args", ("U", [])))
        kwargs = decoder.value(body.get("kwargs", ("D", {})))
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise StandInError("malformed arguments")
        env = body.get("env")
        if op == "new" and issubclass(target, nn.Module):
            self._check_size(target, args, kwargs, env)
        key = _construction_key(target.__name__, args, kwargs, env) if op == "new" else None
        if op == "vjp":
            return self._vjp(body, decoder, target, method, args, kwargs, env, first)
        with _Environment(env, grad=False if body.get("autograd") else None):
            result = _invoke(target, method, args, kwargs, op)
            after = _rng_after()
        encoder, reply = self._reply(decoder, result, after, first)
        if decoder.synced:
            if not self._still_synced(decoder, encoder):
                return {"stale": True}
            ((k, (_h, record)),) = decoder.synced.items()
            reply["synced"] = [k, record[0]]
        elif body.get("sync") is True and op in ("call", "get") and not body.get("autograd"):
            reply["synced"] = self._sync(ref, decoder)
        elif body.get("sync") is True and op == "new":
            reply["synced"] = self._sync_built(result, encoder)
        if key is not None:
            try:
                reply["reusable"] = self._reusable(key, result, env, after)
            except Exception:  # noqa: BLE001 - a state it cannot compare is never vouched for
                reply["reusable"] = False
        return reply

    def _apply_delta(self, k, delta, flips, decoder):
        """Put the data and modes a message brought for the object it named by token (object ``k``, ``_shortcut``) in
        their places (``_signature``: the worker numbers them in the same order, its object being as this one but for
        those), and sign it again as it is now. ``False`` (it is sent in full next) where the object is not as it was
        when the token was given (another message set another state on it since), or its state is not all of kinds a
        signature compares."""
        if not delta and not flips:
            return True
        h, record = decoder.synced[k]
        obj = decoder.objects[k]
        places, modules = [], []
        before = _signature(obj, self._is_reference, _host_mark, places, modules)
        if before is None or before[0] != record[1]:  # not as when the token was given (``_still_synced``)
            return self._unsync(h)
        for i, t in delta:  # all checked before any is put in place
            if i >= len(places):
                raise StandInError("new data for a parameter or buffer the object does not have")
            if places[i][2] and not isinstance(t, nn.Parameter):
                raise StandInError(f"{places[i][1][:40]!r} is not a parameter")
        if any(i >= len(modules) for i, _ in flips):
            raise StandInError("a mode for a module the object does not have")
        for i, t in delta:
            own, name, _ = places[i]
            own[name] = t
        for i, training in flips:
            object.__setattr__(modules[i], "training", training)
        found = self._host_signature(obj)
        if found is None:
            return self._unsync(h)
        record = (record[0], *found)
        self.synced[h] = record
        decoder.synced[k] = (h, record)
        return True

    def _unsync(self, h):
        """``False``: the host's object ``h`` is named by no token now, nor given one again (its state changed under
        one); the worker sends it in full next."""
        self.volatile.add(h)
        self.synced.pop(h, None)
        return False

    def _sync_built(self, obj, encoder):
        """``[k, token]`` for the reference object ``obj`` the host just built and sent in full as object ``k``
        (``new``), as ``_sync`` for a call's target; ``None`` where it cannot be signed."""
        return self._token(obj, encoder.objects.get(id(obj))) if self._is_reference(obj) else None

    def _still_synced(self, decoder, encoder):
        """Whether the objects the message named by token are, after the call, as they were when the token was given
        (so the call ran on that state and left it so), and the call made nothing of theirs part of what it gives back.
        Else the worker is asked to send them in full, and a call that changed them gives them no token again."""
        for h, record in decoder.synced.values():
            now = self._host_signature(self.objects[h]) if h in self.objects else None
            ids = {id(t) for t in record[2] if isinstance(t, torch.Tensor)}
            if now is None or now[0] != record[1] or any(id(t) in ids for t in encoder.tensors):
                return self._unsync(h)
        return True

    def _sync(self, sent, decoder):
        """``[k, token]`` for the call's target, sent in full as object ``k``: the worker holds what the host holds
        once it applies the reply, and may name it by ``token`` until either side changes it. ``None`` when its state
        is not all of kinds a signature compares (``_signature``)."""
        if not (isinstance(sent, tuple) and len(sent) == 10 and sent[0] == "S" and type(sent[1]) is int):
            return None
        return self._token(decoder.objects.get(sent[1]), sent[1])

    def _token(self, obj, k):
        """``[k, token]``: a new token for the host's object ``obj``, sent as object ``k`` and held by the worker as
        the host holds it, with ``obj``'s signature now; ``None`` where it is not one of the host's objects, is
        volatile, or cannot be signed."""
        h = self._handles.get(id(obj))
        if h is None or k is None or self.objects.get(h) is not obj or h in self.volatile:
            return None
        found = self._host_signature(obj)
        if found is None:
            self.synced.pop(h, None)
            return None
        token = next(self._tokens)
        self.synced[h] = (token, *found)
        return [k, token]

    def _reusable(self, key, built, env, after):
        """Whether every construction of ``key`` gives what this one gave: it drew no random numbers, and the one
        before it of the same key (kept, if small) was the same in every tensor and attribute."""
        rng = env.get("rng") if isinstance(env, dict) else None
        if not (isinstance(rng, torch.Tensor) and torch.equal(rng, after["rng"]) and "cuda_rng" not in after):
            return False
        first = self._firsts.get(key)
        if first is None:
            size = sum(_nbytes(t) for t in _state_tensors(built))
            if size <= PROTOTYPE_BYTES and len(self._firsts) < PROTOTYPES:
                self._firsts[key] = copy.deepcopy(built)
            return False
        return _same_state(first, built)

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

    def _check_size(self, cls, args, kwargs, env):
        """Refuse a part whose tensors would not fit what grading needs (built on the meta device first, once for
        each class and plain arguments)."""
        plain = all(v is None or type(v) in (bool, int, float, str) for v in (*args, *kwargs.values()))
        key = (cls, args, tuple(sorted(kwargs.items())), str(env.get("dtype"))) if plain else None
        if key is not None and key in _SIZES_SEEN:
            return
        with _Environment(env, grad=False), torch.device("meta"):
            probe = cls(*args, **kwargs)
        size = sum(_nbytes(t) for t in itertools.chain(probe.parameters(), probe.buffers()))
        if size > MAX_STATE_BYTES:
            raise StandInError(
                f"the reference's {cls.__name__} with these arguments would hold {size} bytes of "
                f"tensors, more than the {MAX_STATE_BYTES} that grading ever needs"
            )
        if key is not None and len(_SIZES_SEEN) < 10_000:
            _SIZES_SEEN.add(key)

    def _encoder(self, decoder, first):
        known = {id(t): (i, decoder.versions[i]) for i, t in decoder.tensors.items()}
        objects = {id(obj): k for k, obj in decoder.objects.items()}
        return _Encoder(self._is_reference, self._handle, self.layouts_out, known=known, objects=objects, first=first)

    def _outcome(self, decoder, result, first, sent=None):
        """The encoder holding every object the call involved (their states after it; with ``sent``, the entries
        of the objects as the worker sent them, only those the call changed) and the result."""
        encoder = self._encoder(decoder, first)
        encoder.encoded.update(decoder.synced)  # named by token: unchanged (``_still_synced``), never sent back
        objects = [
            [k, encoder.obj(obj)] for k, obj in sorted(decoder.objects.items()) if not isinstance(obj, torch.Generator)
        ]
        if sent is not None:
            numbers = _LayoutNumbers(self.layouts_in, self.layouts_out)
            objects = [
                [k, entry]
                for k, entry in objects
                if entry[0] != "O" and (k not in sent or _as_known(sent[k], numbers) != entry)
            ]
        return encoder, objects, encoder.value(result)

    def _reply(self, decoder, result, after, first):
        encoder, objects, out = self._outcome(decoder, result, first, sent=decoder.entries)
        generators = [[k, g.get_state()] for k, g in decoder.objects.items() if isinstance(g, torch.Generator)]
        grads = []
        for i, t in decoder.tensors.items():
            before, version = decoder.grads[i]
            if t.grad is not before or (before is not None and _version(before) != version):
                grads.append([i, None if t.grad is None else t.grad.detach()])
        return encoder, encoder.message(result=out, objects=objects, generators=generators, grads=grads, env=after)

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


MAX_DELTA = 100_000
"""Parameters and buffers one message may bring new data for."""


def _numbered(entries, kind, what):
    """``[(number, value)]`` of a message's ``[[number, value], ...]`` for the object it names by token: each number a
    place of that object once, each value of type ``kind`` (a non-negative ``int``: a tensor of the message)."""
    if entries is None:
        return []
    if not isinstance(entries, list) or len(entries) > MAX_DELTA:
        raise StandInError(f"malformed {what} for an object")
    out, seen = [], set()
    for entry in entries:
        if not (
            isinstance(entry, list)
            and len(entry) == 2
            and type(entry[0]) is int
            and type(entry[1]) is kind
            and entry[0] >= 0
            and entry[0] not in seen
            and (kind is not int or entry[1] >= 0)
        ):
            raise StandInError(f"malformed {what} for an object")
        seen.add(entry[0])
        out.append((entry[0], entry[1]))
    return out


def _delta(delta, decoder):
    """``[(number, tensor)]``: the new data a message brought for the parameters and buffers of the object it names by
    token (``StandIns._synced``)."""
    return [(i, decoder.tensor_at(k)) for i, k in _numbered(delta, int, "new data")]


def _flips(modes):
    """``[(number, training)]``: the modes a message brought for the modules of the object it names by token."""
    return _numbered(modes, bool, "modes")


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
    name, message = error.get("type"), str(error.get("message", ""))[: MESSAGE_CHARS + 10]
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
        with torch.inference_mode(False):  # what the judge reads is plain tensors, whatever mode the worker is in
            answer = self.host.answer(wire.decode(wire.encode(message)))
        return wire.decode(wire.encode(answer))


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
        self.layouts_out, self.layouts_in = {}, {}
        self.cache = _TensorCache()
        self._prototypes = {}
        """``construction key -> a pristine stand-in`` the host vouched for (``new``)."""
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
            hub._copy_into(twin, self, memo)
            return twin

        def __copy__(self):
            twin = _bare(type(self))
            vars(twin).update(
                {
                    k: (dict(v) if isinstance(v, dict) and k in _INTERNALS else v)
                    for k, v in vars(self).items()
                    if k not in _OWN
                }
            )
            hub._track(twin, vars(self).get("_standin_handle"))
            return twin

        ns = {
            "__module__": "reference",
            "__qualname__": name,
            "__init__": __init__,
            "__deepcopy__": __deepcopy__,
            "__copy__": __copy__,
            "__doc__": f"The reference's {name}, computed by the grader.",
        }
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
        """Count the worker's objects per host object; the host forgets one when the last is gone. An object's
        handle may change (``_retrack``): the count follows it."""
        if type(handle) is not int:
            return
        vars(obj)["_standin_handle"] = handle
        cell = vars(obj)["_standin_cell"] = [handle]
        self._live[handle] = self._live.get(handle, 0) + 1
        weakref.finalize(obj, self._gone, cell)

    def _retrack(self, obj, handle):
        cell = vars(obj).get("_standin_cell")
        if type(handle) is not int or cell is None or cell[0] == handle:
            return
        self._gone(list(cell))
        self._live[handle] = self._live.get(handle, 0) + 1
        cell[0] = vars(obj)["_standin_handle"] = handle

    def _gone(self, cell):
        handle = cell[0]
        left = self._live.get(handle, 1) - 1
        if left <= 0:
            self._live.pop(handle, None)
            self._released.append(handle)
        else:
            self._live[handle] = left

    # -- messages ------------------------------------------------------------------------------------
    def ask(self, op, encoder, body, again=False):
        message = encoder.message(again=again, op=op, body=dict(body, objects=encoder.next))
        if self._released:
            message["released"], self._released = self._released, []
        if self.cache.forgotten:
            message["forget"], self.cache.forgotten = self.cache.forgotten, []
        self.calls += 1
        reply = self.link.ask(message)
        if not isinstance(reply, dict):
            raise StandInError("the grader's answer for a part of the reference was not understood")
        if "error" in reply:
            raise _rebuild(reply["error"])
        return reply

    def _encoder(self):
        return _Encoder(self.is_standin, self.handle_of, self.layouts_out, cache=self.cache)

    def new(self, obj, name, args, kwargs):
        env = _env()
        key = _construction_key(name, args, kwargs, env)
        prototype = self._prototypes.get(key) if key is not None else None
        if prototype is not None:  # the host vouched that this construction always gives the same
            self._copy_into(obj, prototype)
            return
        encoder = self._encoder()
        body = {"cls": name, "args": encoder.value(tuple(args)), "kwargs": encoder.value(dict(kwargs)), "env": env}
        body["sync"] = True
        reply = self.ask("new", encoder, body)
        self.settle(encoder, reply, into=obj)
        self._remember_built(obj, reply)
        if key is not None and reply.get("reusable") is True and len(self._prototypes) < PROTOTYPES:
            prototype = _bare(type(obj))
            self._copy_into(prototype, obj)
            self._prototypes[key] = prototype

    def _copy_into(self, obj, source, memo=None):
        """Make ``obj`` a deep copy of the stand-in ``source`` (its own tensors; the host object they share, counted
        once more). ``memo``: ``copy.deepcopy``'s, when a deep copy of something holding ``source`` asked."""
        memo = {} if memo is None else memo
        memo[id(source)] = obj
        for k, value in vars(source).items():
            if k not in _OWN:
                vars(obj)[k] = value if k == "_standin_handle" else copy.deepcopy(value, memo)
        self._track(obj, vars(source).get("_standin_handle"))

    def call(self, target, args, kwargs, op="call"):
        x = target.get("self")
        # Without autograd, a target the host holds as the worker does crosses as its handle and a token (``_synced``)
        synced = not torch.is_grad_enabled() and self.is_standin(x)
        record, changed, flips = self._synced(x) if synced else (None, [], [])
        while True:
            encoder = self._encoder()
            body = dict(target)
            if x is not None:
                body["self"] = encoder.synced(x, *record[:2]) if record is not None else encoder.value(x)
            if record is not None and changed:  # the data the host's copy lacks, each by its place's number
                body["delta"] = [[i, encoder.tensor_index(t, True)] for i, t in changed]
            if record is not None and flips:  # and the modes that changed, each by its module's number
                body["modes"] = flips
            body["args"] = encoder.value(tuple(args))
            body["kwargs"] = encoder.value(dict(kwargs))
            if record is not None and self._shares(x, record, encoder, changed):
                record = None  # an argument is part of the target (its own parameter, a submodule): in full, as one
                continue
            body["env"] = _env()
            wrt = [
                i
                for i, t in enumerate(encoder.tensors)
                if t.requires_grad and (t.dtype.is_floating_point or t.dtype.is_complex)
            ]
            if op == "call" and wrt and torch.is_grad_enabled():
                return _through_autograd(self, encoder, body, wrt)
            if synced:
                body["sync"] = True
            try:
                reply = self.ask(op, encoder, body)
            except BaseException:
                if record is not None and (changed or flips):  # the host may not have taken them: none counts as sent
                    vars(x).pop("_standin_sync", None)
                    self.cache.drop(t for _, t in changed)
                raise
            if reply.get("stale") is True and record is not None:  # the host's copy changed: send it in full
                vars(x).pop("_standin_sync", None)
                record = None
                continue
            result = self.settle(encoder, reply)
            if synced:
                self._remember(x, reply.get("synced"), encoder, record, flips)
            return result

    @staticmethod
    def _shares(x, record, encoder, changed=()):
        """Whether the message holds, besides the target ``x`` sent by token and the data of its ``changed`` tensors
        (which the host puts in their places), a tensor or an object of ``x``'s state: the host would take it for
        another than its own."""
        if not encoder.tensors and len(encoder.by_number) <= 1:
            return False
        mine = {id(o) for o in record[3]} - {id(t) for _, t in changed}
        return any(id(t) in mine for t in encoder.tensors) or any(
            id(o) in mine for o in encoder.by_number.values() if o is not x
        )

    @staticmethod
    def _mark(t):
        """A stand-in's tensor, for ``_signature``: the same tensor (its kind and ``requires_grad``), with no gradient.
        Its data is not in the signature: ``_synced`` asks the cache whether the host holds it."""
        if t.is_leaf and t.grad is not None:
            return None
        return (t.requires_grad, type(t))

    def _synced(self, x):
        """``(record, changed, flips)``. ``record``: ``(handle, token, signature, kept, modes)``, where the host holds
        ``x`` as the worker does but for the data of some of its parameters and buffers and the modes of some of its
        modules (the same objects, attributes and tensors as when the host gave ``token``: nothing replaced since);
        else ``None``. ``changed``: ``[(number, tensor)]``, the tensors whose data the host may not hold (each not
        equal to the copy last sent: changed since, or never sent, as what the host built), by their number among
        ``x``'s places (``_signature``); ``flips``: ``[[number, training]]``, the modules whose mode changed since."""
        record = vars(x).get("_standin_sync")
        if record is None:
            return None, [], []
        places, modules = [], []
        now = _signature(x, self.is_standin, self._mark, places, modules, modes=False)
        if now is None or now[0] != record[2] or record[0] != vars(x).get("_standin_handle"):
            vars(x).pop("_standin_sync", None)
            return None, [], []
        unchanged = self.cache.unchanged
        changed = [(i, own[name]) for i, (own, name, _) in enumerate(places) if not unchanged(own[name])]
        flips = [[i, m.training] for i, (m, was) in enumerate(zip(modules, record[4])) if m.training is not was]
        return record, changed, flips

    def _sign(self, x):
        """``(signature, kept, modes)`` of the stand-in ``x`` as it is now (``_synced``), or ``None``. ``kept`` leaves
        out ``x`` itself (``_signature`` keeps it first): the record lives in ``x``, which holds it alive, and a record
        holding ``x`` would make ``x`` a reference cycle, freed only by the garbage collector (with the host's copy,
        which is released only when ``x`` is gone), where reference counting frees it at once."""
        modules = []
        now = _signature(x, self.is_standin, self._mark, modules=modules, modes=False)
        if now is None:
            return None
        sig, kept = now
        return sig, kept[1:], tuple(m.training for m in modules)

    def _remember_built(self, obj, reply):
        """Keep the token the host gave for the stand-in ``obj`` it just built (``new``): the reply's result, ``obj``
        as the host holds it."""
        given, result = reply.get("synced"), reply.get("result")
        if not (
            isinstance(given, list)
            and len(given) == 2
            and type(given[1]) is int
            and isinstance(result, tuple)
            and len(result) == 10
            and result[0] == "S"
            and given[0] == result[1]
            and result[2] == vars(obj).get("_standin_handle")
        ):
            return
        self._keep(obj, given[1])

    def _remember(self, x, given, encoder, record, flips):
        """Keep the token the host ``given`` for ``x`` (``[k, token]``), with ``x``'s signature now."""
        if not (
            isinstance(given, list)
            and len(given) == 2
            and given[0] == encoder.objects.get(id(x))
            and type(given[1]) is int
        ):
            vars(x).pop("_standin_sync", None)
            return
        if record is not None and record[1] == given[1]:  # named by its token, its new data and modes now the host's
            if flips:
                modes = list(record[4])
                for i, training in flips:
                    modes[i] = training
                vars(x)["_standin_sync"] = (*record[:4], tuple(modes))
            return
        self._keep(x, given[1])

    def _keep(self, x, token):
        """Keep ``token`` for the stand-in ``x`` with ``x``'s signature now (``_synced``); none where it cannot be
        signed."""
        now = self._sign(x)
        if now is None:
            vars(x).pop("_standin_sync", None)
        else:
            vars(x)["_standin_sync"] = (vars(x).get("_standin_handle"), token, *now)

    def settle(self, encoder, reply, into=None, outputs=None):
        """Apply a reply (the objects' new states, generators, gradients, the random state) and return its result.
        ``into``: the stand-in being built (``new``); ``outputs``: the autograd node's outputs, in place of the
        reply's new tensors."""
        sent_objects = dict(encoder.by_number)

        def make(entry, k, reuse):
            if k in sent_objects:
                if entry[0] == "S":  # the host gave it an object of its own (it shared one with a copy)
                    self._retrack(sent_objects[k], entry[2])
                return sent_objects[k]
            tag = entry[0]
            if tag == "M":
                return _bare(_torch_class(entry[3]))
            if tag == "G":
                return torch.Generator(device=str(entry[2] or "cpu"))
            nonlocal into
            cls = self.classes.get(entry[3])
            if cls is None:
                raise StandInError(f"an object of an unknown class {str(entry[3])[:40]}")
            if into is not None and type(into) is cls:
                obj, into = into, None
            else:
                obj = _bare(cls)
            self._track(obj, entry[2])
            return obj

        decoder = _Decoder(reply, make, self.layouts_in, sent=encoder.tensors)
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
            new.append(_tensor(entry[0] if isinstance(entry, list) and entry else None))
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
        reply = box["hub"].ask("vjp", box["encoder"], body, again=True)
        got = reply.get("grads")
        if not isinstance(got, list) or len(got) != len(box["wrt"]):
            raise StandInError("the grader's gradients for a part of the reference were not understood")
        return (None, *[None if g is None else _tensor(g) for g in got])


def _through_autograd(hub, encoder, body, wrt):
    box = {"hub": hub, "encoder": encoder, "body": body, "wrt": wrt}
    outputs = _Call.apply(box, *[encoder.tensors[i] for i in wrt])[:-1]
    # The backward keeps the box; the reply holds the outputs, whose node keeps the backward: not kept, no cycle
    reply = box.pop("reply")
    table = reply.get("table") or []
    made = {}
    for j, t in enumerate(outputs):
        entry = table[j]
        made[j] = nn.Parameter(t.detach(), requires_grad=bool(entry[1] & 1)) if entry[1] & 2 else t
    return hub.settle(encoder, reply, outputs=made)


__all__ = ["Host", "Loopback", "StandInError", "StandIns", "surface"]
