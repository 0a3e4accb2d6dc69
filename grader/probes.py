"""Probes: the only code that calls student code.

A probe takes a ``Namespace`` (the submission, the reference, a mutant or an
'isolated' hybrid) and plain arguments (numbers, strings, tensors, dicts of
tensors) and returns a dict of plain values and plain tensors. Checks never
touch student objects: they ask a runner to run a probe, on the reference and
on the submission, and compare what comes back. That is what lets the same
check run in-process (breakpoints work) or in a worker process (the judge
never imports the submission).

Student failures surface as ``SubmissionError`` (contract violations, wrong
output types) or as whatever the student code raised (the runner converts it).
"""

import contextlib
import io
import pickle

import torch

from grader.errors import SAY, SubmissionError, said
from grader.messages import phrase

PROBES = {}

DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16, "bfloat16": torch.bfloat16}


_ACCELERATORS = []


def seed_rng(value):
    """``torch.manual_seed(value)``, without its cost where there is no accelerator.

    ``torch.manual_seed`` also queues a seed for CUDA, XPU and MTIA, each time formatting a stack
    trace: half a millisecond a call, on every probe call. Only the CPU generator exists here
    unless an accelerator is present, so only that is seeded then (the same numbers).
    """
    if not _ACCELERATORS:
        _ACCELERATORS.append(
            torch.cuda.is_available()
            or (hasattr(torch, "xpu") and torch.xpu.is_available())
            or (hasattr(torch.backends, "mps") and torch.backends.mps.is_available())
        )
    if _ACCELERATORS[0]:
        torch.manual_seed(value)
    else:
        torch.default_generator.manual_seed(value)


def probe(fn):
    """Register ``fn`` as a probe under its own name."""
    PROBES[fn.__name__] = fn
    return fn


# -- helpers ---------------------------------------------------------------------------------------
@contextlib.contextmanager
def default_dtype(dtype):
    """Construct modules with float tensors born in ``dtype`` (float64 tables stay exact)."""
    previous = torch.get_default_dtype()
    if dtype in (torch.float32, torch.float64):
        torch.set_default_dtype(dtype)
    try:
        yield
    finally:
        torch.set_default_dtype(previous)


def param_table(module):
    """``[(name, shape)]`` of every parameter, shared ones listed under every name."""
    return [(n, list(p.shape)) for n, p in module.named_parameters(remove_duplicate=False)]


def shared_parameters(module):
    """Groups of parameter names that are one tensor (``[layer] * N`` shares a layer's weights)."""
    by_id = {}
    for n, p in module.named_parameters(remove_duplicate=False):
        by_id.setdefault(id(p), []).append(n)
    return [names for names in by_id.values() if len(names) > 1]


def load_params(module, state, what):
    """Copy ``state`` (name -> tensor) into ``module``'s parameters, by name.

    Raises ``SubmissionError(kind="contract")`` listing expected and found
    names and shapes when they differ, or when parameters are shared.
    """
    found = dict(param_table(module))
    # Biases the module does not have (bias=False) that the judge set to zero are left out: the same function.
    state = {
        k: v
        for k, v in state.items()
        if k in found or not (k == "bias" or k.endswith(".bias")) or bool(torch.any(v != 0))
    }
    expected = {k: list(v.shape) for k, v in state.items()}
    shared = shared_parameters(module)
    if found != expected or shared:
        missing = sorted(set(expected) - set(found))
        extra = sorted(set(found) - set(expected))
        wrong = sorted(k for k in set(found) & set(expected) if found[k] != expected[k])
        raise SubmissionError(
            kind="contract",
            detail=f"the parameters of {what} do not match the contract",
            data={
                SAY: phrase("say.params_mismatch", what=what),
                "expected": sorted(expected.items()),
                "found": sorted(found.items()),
                "missing": missing,
                "unexpected": extra,
                "wrong_shape": wrong,
                "shared": shared,
            },
        )
    params = dict(module.named_parameters())
    with torch.no_grad():
        for k, v in state.items():
            params[k].copy_(v.to(device=params[k].device, dtype=params[k].dtype))


def construct_on(device, ns, name, kwargs, dtype):
    """``ns.<name>(**kwargs)`` with float tensors born in ``dtype``, as plain code would build it, before ``build``
    moves it to ``device``.

    For ``device="meta"`` the module is first built under ``torch.device("meta")``: no memory and no
    initialisation, so that a full-size model (the contract's defaults: 44 million parameters, half a second
    on the CPU) costs nothing, and what ``__init__`` makes is on the module's device from the start. That
    context is the kit's, not the code's, and the code must not see it:

    - It holds in the calling thread only (a table made in a ``threading.Thread`` or a thread pool is a CPU
      tensor that meets the meta ones), and meta tensors have no values (``.item()``, ``float(t)``,
      ``if t.all():`` raise). Where the code notices the meta device, which it does by raising, the module is
      built again as plain code builds it: from the namespace itself, on the CPU, then moved to meta like any
      other module.
    - What the code keeps between builds (a table cached at module level) would carry meta tensors into later
      builds on the CPU: the meta builds use the namespace's twin (``Namespace.twin``), a copy of the code of
      its own whose every build ends on meta, imported here outside any context, as the namespace's own code
      is. The namespace itself only ever builds on the CPU.

    The result is what a plain build gives, and code that never notices is built as before."""
    if device != "meta":
        with default_dtype(dtype):
            return ns.get(name)(**kwargs)
    cls = ns.twin().get(name)
    with default_dtype(dtype):
        try:
            with torch.device("meta"):
                return cls(**kwargs)
        except Exception:  # noqa: BLE001 - whatever it raised on meta, the plain build below raises again if real
            return ns.get(name)(**kwargs)


def build(ns, name, kwargs, *, state=None, dtype="float64", device="cpu", train=False):
    """Construct ``ns.<name>(**kwargs)`` (``construct_on``), load ``state``, move it, set its mode."""
    ns.get(name)  # the namespace's own errors (a missing name, a file that does not import), as for every probe
    dt = DTYPES[dtype]
    module = construct_on(device, ns, name, kwargs, dt)
    if not isinstance(module, torch.nn.Module):
        raise SubmissionError(
            kind="bad_output", **said("say.not_module", call=f"{name}(...)", type=type(module).__name__)
        )
    if state is not None and device != "meta":
        load_params(module, state, name)
    module.to(device=device, dtype=dt)
    module.train(train)
    return module


def as_tensor(value, what):
    """Check that student code returned a tensor; return it as a plain, detached tensor."""
    if not isinstance(value, torch.Tensor):
        error = said("say.not_tensor", what=what, type=type_name(value))
        raise SubmissionError(
            kind="bad_output", detail=error["detail"], data={**error["data"], "type": type_name(value)}
        )
    return plain(value)


def plain(t):
    """A detached tensor of the base class. A ``torch.Tensor`` subclass of the student's own is refused, never
    converted: its methods (``detach``, ``as_subclass``, ``__torch_function__``...) are the student's code and could
    return anything, including an object that agrees with every comparison."""
    if type(t) not in (torch.Tensor, torch.nn.Parameter):
        name = f"{type(t).__module__}.{type(t).__qualname__}"
        error = said("say.tensor_subclass", type=name)
        raise SubmissionError(kind="bad_output", detail=error["detail"], data={**error["data"], "type": name})
    with torch._C.DisableTorchFunctionSubclass():
        t = torch.Tensor.detach(t)
    if t.device.type == "meta":
        return torch.empty(t.shape, dtype=t.dtype, device="meta")
    return t


def plain_data(x, depth=0):
    """``x`` rebuilt from exact plain types (what a probe returns, in-process as from a worker); anything else
    is ``SubmissionError(bad_output)``: nothing of the student's own types reaches a comparison."""
    if depth > 100:
        raise SubmissionError(kind="bad_output", **said("say.too_deep"))
    if x is None or type(x) is bool:
        return x
    if isinstance(x, torch.Tensor):
        return plain(x)
    if isinstance(x, int):
        return int.__int__(x)
    if isinstance(x, float):
        return float.__float__(x)
    if isinstance(x, str):
        return str.__str__(x)
    if isinstance(x, dict):
        return {plain_data(k, depth + 1): plain_data(v, depth + 1) for k, v in dict.items(x)}
    if isinstance(x, list):
        return [plain_data(v, depth + 1) for v in list.__iter__(x)]
    if isinstance(x, tuple):
        return tuple(plain_data(v, depth + 1) for v in tuple.__iter__(x))
    name = f"{type(x).__module__}.{type(x).__qualname__}"
    error = said("say.not_plain", type=name)
    raise SubmissionError(kind="bad_output", detail=error["detail"], data={**error["data"], "type": name})


def type_name(value):
    """How a value that is not what the contract promises is named in a sentence: a phrase (``a tuple of 2``,
    ``None``, ``a torch.Tensor``), said in the sentence's language; the Python type's name is data inside it."""
    if isinstance(value, tuple):
        return phrase("what.a_tuple", count=len(value))
    if value is None:
        return phrase("what.none", value="None")
    return a_type(f"{type(value).__module__}.{type(value).__name__}".removeprefix("builtins."))


def a_type(name):
    """A value of the type ``name`` (``torch.Tensor``, ``int``), as a phrase: ``a torch.Tensor``, ``an int``."""
    return phrase("what.an_type" if name[:1].lower() in "aeiou" else "what.a_type", type=name)


def returned(result):
    """What a probe's result (``call``'s keys: ``out``, ``tuple``, ``number`` with ``number_type``, ``other``)
    says the function returned, named as ``type_name`` names it: for a sentence that says it was not what the
    contract promises."""
    if result.get("other") is not None:
        return result["other"]
    if "out" in result:
        return a_type("torch.Tensor")
    if "tuple" in result:
        return phrase("what.a_tuple", count=len(result["tuple"]))
    if result.get("number_type"):
        return a_type(result["number_type"])
    return phrase("what.none", value="None")


def tensor_info(t):
    """Shape, dtype and device of a tensor, for checks that need no values."""
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "device": t.device.type}


def to_device(x, device, dtype=None):
    """``x`` on ``device`` (a floating tensor also in ``dtype`` when given); anything else as it is."""
    if isinstance(x, torch.Tensor):
        if dtype is not None and x.is_floating_point():
            x = x.to(dtype)
        return x.to(device) if device != "meta" else torch.empty(x.shape, dtype=x.dtype, device="meta")
    return x


def snapshot_inputs(inputs):
    """Copies of the tensors among ``inputs`` (``None`` for the rest), to tell later whether a call changed them."""
    return [x.clone() if isinstance(x, torch.Tensor) and x.device.type != "meta" else None for x in inputs]


def was_modified(inputs, before):
    """The positions of ``inputs`` that differ from their ``snapshot_inputs`` copies: changed in place."""
    return [i for i, (x, b) in enumerate(zip(inputs, before)) if b is not None and not torch.equal(x, b)]


def warm_up():
    """Pay torch's one-off lazy imports (the meta-device kernels pull in torch._dynamo: seconds) up front.

    A worker calls this before it reports ready (and before it enters its jail), so the first meta-device
    check of a submission is not charged for torch's own start-up, and what a submission's ordinary code
    imports lazily (printing a tensor, pickling or saving one) is there in a jail that can read no file.
    """
    x = torch.zeros(1, 2, 2, device="meta")
    keep = torch.ones(2, 2, dtype=torch.bool, device="meta")
    (x @ x.transpose(-2, -1)).masked_fill(~keep, float("-inf")).softmax(-1)
    torch.nn.functional.dropout(x, 0.1, training=True)
    for dt in (torch.float16, torch.bfloat16):  # the first half-precision kernel reads /proc/cpuinfo (not in a jail)
        h = torch.ones(2, 4, dtype=dt)
        torch.nn.functional.linear(h, h) @ h
    torch.backends.cpu.get_cpu_capability()
    # What ordinary code imports the first time it prints, pickles or saves a tensor or a module: a jailed worker
    # reads no file of the Python installation, so without this a correct submission that prints a tensor would
    # fail there with ModuleNotFoundError (and nowhere else).
    for t in (torch.ones(2), torch.ones(2, dtype=torch.bfloat16), torch.ones(2, dtype=torch.bool), x):
        repr(t)
    module = torch.nn.Sequential(torch.nn.ReLU())  # no random initialisation: the random numbers stay as they were
    module.register_parameter("weight", torch.nn.Parameter(torch.ones(2)))
    module.register_buffer("table", torch.zeros(2))
    repr(module)
    pickle.loads(pickle.dumps(module))
    for obj, weights_only in ((module.state_dict(), True), (module, False)):
        buffer = io.BytesIO()
        torch.save(obj, buffer)
        buffer.seek(0)
        torch.load(buffer, weights_only=weights_only)


@probe
def load_report(ns):
    """Import every contract file; report those that fail, as ``{file: SubmissionError dict}``."""
    return {file: err.to_dict() for file, err in ns.load_errors().items()}


@probe
def params(ns, *, name, kwargs, dtype="float64"):
    """The parameters and buffers a freshly built module has, with their initial values."""
    seed_rng(0)
    module = build(ns, name, kwargs, dtype=dtype)
    persistent = set(module.state_dict().keys())
    return {
        "params": param_table(module),
        "shared": shared_parameters(module),
        "buffers": [(n, list(b.shape), n in persistent) for n, b in module.named_buffers()],
        "values": {n: plain(p) for n, p in module.named_parameters()},
        "buffer_values": {n: plain(b) for n, b in module.named_buffers()},
    }


@probe
def shapes(ns, *, name, kwargs):
    """Names and shapes of a module's parameters and buffers, built on the meta device (no memory, no values):
    enough to compare constructor defaults of a full-size model."""
    module = build(ns, name, kwargs, device="meta", dtype="float32")
    return {"params": param_table(module), "buffers": sorted((n, list(b.shape)) for n, b in module.named_buffers())}


@probe
def defaults(ns, *, name, method=None):
    """The default values that are plain data (numbers, strings, booleans, ``None``, tuples of them), by argument,
    of a class's constructor, a function, or a class's ``method``: asked of the reference, they are the contract's
    defaults."""
    import inspect

    def plain_default(value):
        if isinstance(value, tuple):
            return all(plain_default(v) for v in value)
        return value is None or isinstance(value, (bool, int, float, str))

    target = ns.get(name) if method is None else getattr(ns.get(name), method)
    out = {}
    for p in inspect.signature(target).parameters.values():
        if p.default is not inspect.Parameter.empty and plain_default(p.default):
            out[p.name] = p.default
    return out


def passed(kwargs, omit):
    """``kwargs`` without the names in ``omit`` (a probe's call that leaves those to the function's defaults)."""
    return {k: v for k, v in kwargs.items() if k not in omit}


@probe
def construct(ns, *, name, kwargs):
    """Build a module and report which exception, if any, the constructor raised."""
    try:
        build(ns, name, kwargs)
    except SubmissionError:
        raise
    except NotImplementedError:
        raise
    except Exception as exc:  # noqa: BLE001 - the probe reports what the student raised
        return {"raised": type(exc).__name__, "message": str(exc)[:300]}
    return {"raised": ""}


@probe
def forward(
    ns,
    *,
    name,
    kwargs,
    state,
    inputs,
    method="forward",
    dtype="float64",
    device="cpu",
    train=False,
    seed=0,
    repeat=1,
    grad=None,
    quiet=(),
):
    """Build, load weights, call ``method(*inputs)``; report outputs and whether inputs changed.

    ``grad``: ``{"input": i, "upto": t}`` backpropagates ``out[:, :t].sum()``
    and returns the gradient of input ``i`` (a float tensor) or, with
    ``"input": "decoder.embed"`` (a dotted path of submodules), of that submodule's output (``None`` when the
    module never calls that submodule: using its weight directly is allowed).
    ``quiet``: attribute names of submodules whose ``nn.Dropout``s are set to ``p=0`` (so that only the module's
    own dropout acts); a name the module lacks is skipped.
    """
    dt = DTYPES[dtype]
    module = build(ns, name, kwargs, state=state, dtype=dtype, device=device, train=train)
    if quiet:
        for attr in quiet:
            sub = getattr(module, attr, None)
            for m in sub.modules() if isinstance(sub, torch.nn.Module) else ():
                if isinstance(m, torch.nn.Dropout):
                    m.p = 0.0
    inputs = [to_device(x, device, dt) for x in inputs]
    before = snapshot_inputs(inputs)
    outs = []
    result = {}
    for r in range(repeat):
        seed_rng(seed + r)
        if grad is None:
            with torch.no_grad():
                out = getattr(module, method)(*inputs)
        else:
            out = _forward_with_grad(module, method, inputs, grad, result)
        outs.append(as_tensor(out, f"{name}.{method}"))
    result.update({"out": outs[0], "modified": was_modified(inputs, before)})
    if repeat > 1:
        result["outs"] = outs
    return result


def _forward_with_grad(module, method, inputs, grad, result):
    captured = {}
    if isinstance(grad["input"], str):  # a submodule's output, found by its dotted path
        path = grad["input"]

        def hook(_mod, _args, output):
            leaf = output.detach().requires_grad_(True)
            captured["x"] = leaf
            return leaf

        target = module
        for attr in path.split("."):
            target = getattr(target, attr, None)
            if not isinstance(target, torch.nn.Module):
                raise SubmissionError(kind="contract", detail=f"{type(module).__name__} has no submodule `{path}`")
        handle = target.register_forward_hook(hook)
    else:
        i = grad["input"]
        inputs[i] = inputs[i].detach().requires_grad_(True)
        captured["x"] = inputs[i]
        handle = None
    try:
        out = getattr(module, method)(*inputs)
    finally:
        if handle is not None:
            handle.remove()
    tensor = as_tensor(out, method)  # checks the type before autograd is used
    del tensor
    if "x" not in captured:
        # The submodule was not called through __call__ (its weight used directly, as F.embedding(x, embed.weight)
        # does): a correct choice, so no gradient is taken and the caller judges by what it has.
        result["grad"] = None
        return out
    out[:, : grad["upto"]].sum().backward()
    g = captured["x"].grad
    result["grad"] = torch.zeros_like(captured["x"]).detach() if g is None else plain(g)
    return out


@probe
def call(ns, *, name, args=(), kwargs=None, device="cpu", dtype=None, inplace_check=True):
    """Call a contract function; tensors in ``args`` move to ``device`` first."""
    fn = ns.get(name)
    dt = DTYPES[dtype] if dtype else None
    args = [to_device(a, device, dt) for a in args]
    before = snapshot_inputs(args) if inplace_check else []
    seed_rng(0)
    out = fn(*args, **(kwargs or {}))
    result = {"modified": was_modified(args, before) if inplace_check else []}
    if isinstance(out, torch.Tensor):
        result["out"] = plain(out)
    elif isinstance(out, tuple) and all(isinstance(o, torch.Tensor) for o in out):
        result["tuple"] = [plain(o) for o in out]
    elif isinstance(out, bool) or out is None or not isinstance(out, (int, float)):
        result["other"] = type_name(out)
    else:
        result["number"] = out
        result["number_type"] = type(out).__name__
    return result


@probe
def move_buffers(ns, *, name, kwargs):
    """Build on the CPU, call ``.to(torch.float64)`` and ``.to("meta")``; report where buffers went."""
    module = build(ns, name, kwargs, dtype="float32")
    module = module.to(torch.float64)
    dtypes = {n: str(b.dtype).replace("torch.", "") for n, b in module.named_buffers()}
    module = module.to("meta")
    devices = {n: b.device.type for n, b in module.named_buffers()}
    return {"dtypes": dtypes, "devices": devices}
