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
import math

import torch

from grader.submission.errors import SubmissionError

PROBES = {}

DTYPES = {"float64": torch.float64, "float32": torch.float32, "float16": torch.float16,
          "bfloat16": torch.bfloat16}


_ACCELERATORS = []


def seed_rng(value):
    """``torch.manual_seed(value)``, without its cost where there is no accelerator.

    ``torch.manual_seed`` also queues a seed for CUDA, XPU and MTIA, each time formatting a stack
    trace: half a millisecond a call, on every probe call. Only the CPU generator exists here
    unless an accelerator is present, so only that is seeded then (the same numbers).
    """
    if not _ACCELERATORS:
        _ACCELERATORS.append(torch.cuda.is_available() or (hasattr(torch, "xpu") and torch.xpu.is_available())
                             or (hasattr(torch.backends, "mps") and torch.backends.mps.is_available()))
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
    state = {k: v for k, v in state.items()
             if k in found or not (k == "bias" or k.endswith(".bias")) or bool(torch.any(v != 0))}
    expected = {k: list(v.shape) for k, v in state.items()}
    shared = shared_parameters(module)
    if found != expected or shared:
        missing = sorted(set(expected) - set(found))
        extra = sorted(set(found) - set(expected))
        wrong = sorted(k for k in set(found) & set(expected) if found[k] != expected[k])
        raise SubmissionError(
            kind="contract",
            detail=f"the parameters of {what} do not match the contract",
            data={"expected": sorted(expected.items()), "found": sorted(found.items()),
                  "missing": missing, "unexpected": extra, "wrong_shape": wrong, "shared": shared},
        )
    params = dict(module.named_parameters())
    with torch.no_grad():
        for k, v in state.items():
            params[k].copy_(v.to(device=params[k].device, dtype=params[k].dtype))


def build(ns, name, kwargs, *, state=None, dtype="float64", device="cpu", train=False):
    """Construct ``ns.<name>(**kwargs)``, load ``state``, move it, set its mode."""
    cls = ns.get(name)
    dt = DTYPES[dtype]
    with default_dtype(dt):
        if device == "meta":
            with torch.device("meta"):
                module = cls(**kwargs)
        else:
            module = cls(**kwargs)
    if not isinstance(module, torch.nn.Module):
        raise SubmissionError(kind="bad_output", detail=f"{name}(...) is a {type(module).__name__}, "
                                                        "not a torch.nn.Module")
    if state is not None and device != "meta":
        load_params(module, state, name)
    module.to(device=device, dtype=dt)
    module.train(train)
    return module


def as_tensor(value, what):
    """Check that student code returned a tensor; return it as a plain, detached tensor."""
    if not isinstance(value, torch.Tensor):
        raise SubmissionError(kind="bad_output",
                              detail=f"{what} returned {_type_name(value)}, expected a torch.Tensor",
                              data={"type": _type_name(value)})
    return plain(value)


def plain(t):
    """A detached tensor of the base class. A ``torch.Tensor`` subclass of the student's own is refused, never
    converted: its methods (``detach``, ``as_subclass``, ``__torch_function__``...) are the student's code and could
    return anything, including an object that agrees with every comparison."""
    if type(t) not in (torch.Tensor, torch.nn.Parameter):
        name = f"{type(t).__module__}.{type(t).__qualname__}"
        raise SubmissionError(kind="bad_output", detail=f"the code returned a {name}, a subclass of torch.Tensor; "
                                                        f"return a plain torch.Tensor", data={"type": name})
    with torch._C.DisableTorchFunctionSubclass():
        t = torch.Tensor.detach(t)
    if t.device.type == "meta":
        return torch.empty(t.shape, dtype=t.dtype, device="meta")
    return t


def plain_data(x, depth=0):
    """``x`` rebuilt from exact plain types (what a probe returns, in-process as from a worker); anything else
    is ``SubmissionError(bad_output)``: nothing of the student's own types reaches a comparison."""
    if depth > 100:
        raise SubmissionError(kind="bad_output", detail="the result is nested too deeply")
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
    raise SubmissionError(kind="bad_output", detail=f"the result holds a {name}, which is not plain data",
                          data={"type": name})


def _type_name(value):
    if isinstance(value, tuple):
        return f"a tuple of {len(value)}"
    if value is None:
        return "None"
    return f"a {type(value).__module__}.{type(value).__name__}".replace("a builtins.", "a ")


def tensor_info(t):
    """Shape, dtype and device of a tensor, for checks that need no values."""
    return {"shape": list(t.shape), "dtype": str(t.dtype).replace("torch.", ""), "device": t.device.type}


def _to(x, device, dtype=None):
    if isinstance(x, torch.Tensor):
        if dtype is not None and x.is_floating_point():
            x = x.to(dtype)
        return x.to(device) if device != "meta" else torch.empty(x.shape, dtype=x.dtype, device="meta")
    return x


def _snapshot(inputs):
    return [x.clone() if isinstance(x, torch.Tensor) and x.device.type != "meta" else None for x in inputs]


def _modified(inputs, before):
    return [i for i, (x, b) in enumerate(zip(inputs, before))
            if b is not None and not torch.equal(x, b)]


def warm_up():
    """Pay torch's one-off lazy imports (the meta-device kernels pull in torch._dynamo: seconds) up front.

    A worker calls this before it reports ready, so the first meta-device
    check of a submission is not charged for torch's own start-up.
    """
    x = torch.zeros(1, 2, 2, device="meta")
    keep = torch.ones(2, 2, dtype=torch.bool, device="meta")
    (x @ x.transpose(-2, -1)).masked_fill(~keep, float("-inf")).softmax(-1)
    torch.nn.functional.dropout(x, 0.1, training=True)
    for dt in (torch.float16, torch.bfloat16):  # the first half-precision kernel reads /proc/cpuinfo (not in a jail)
        h = torch.ones(2, 4, dtype=dt)
        torch.nn.functional.linear(h, h) @ h
    torch.backends.cpu.get_cpu_capability()


def warm_up_ops():
    """Run the operators the probes and a typical submission use once, in every dtype and device the checks use.

    The first call of each operator, dtype and autograd path costs torch far more than later ones (dispatch
    tables, kernels, Python caches): over a second for a full check on a small machine. A fork server calls
    this so that its workers start warm. It is a straight run of torch operators on random numbers: no
    module of the contract, correct or not, exists in the process afterwards (a submission could otherwise
    re-export it).
    """
    g = torch.Generator().manual_seed(0)
    for device, dtypes in (("cpu", (torch.float64, torch.float32, torch.float16, torch.bfloat16)),
                           ("meta", (torch.float64, torch.float32))):
        for dt in dtypes:
            x = torch.randn(2, 2, 3, 4, generator=g, dtype=torch.float64).to(device=device, dtype=dt)
            x.requires_grad_(dt != torch.float16 or device == "cpu")
            w = torch.randn(4, 4, generator=g, dtype=torch.float64).to(device=device, dtype=dt)
            keep = torch.ones(3, 3, dtype=torch.bool, device=device).tril()
            s = torch.matmul(x, x.transpose(-2, -1)) / math.sqrt(4)
            s = s.masked_fill(~keep, float("-inf")).masked_fill(~keep, torch.finfo(dt).min)
            s = torch.where(keep, s, torch.full_like(s, -1e4))
            a = torch.softmax(s, dim=-1)
            a = torch.nn.functional.dropout(a, 0.1, training=True)
            y = (a @ x).transpose(1, 2).reshape(2, 3, 8).view(2, 3, 2, 4).permute(0, 2, 1, 3).contiguous()
            y = torch.einsum("bhqd,de->bhqe", y, w) + torch.bmm(x.flatten(0, 1), w.expand(4, 4, 4)).view_as(x)
            y = torch.nn.functional.linear(y, w, w[0])
            mu, var = y.mean(-1, keepdim=True), y.var(-1, unbiased=False, keepdim=True)
            y = (y - mu) / torch.sqrt(var + 1e-5) * torch.rsqrt(var + 1e-5) + y.std(-1, keepdim=True)
            y = torch.relu(y) + torch.nn.functional.gelu(y) + torch.cat([y, y], -1).chunk(2, -1)[0]
            y = y + torch.sin(y) + torch.cos(y) + torch.exp(-y.abs()) + torch.pow(y.abs() + 1, 0.5)
            if y.requires_grad and device == "cpu":
                y.sum().backward()
    tokens = torch.randint(0, 7, (2, 5), generator=g)
    emb = torch.nn.Embedding(7, 4)
    lin = torch.nn.Linear(4, 7)
    opt = torch.optim.SGD([*emb.parameters(), *lin.parameters()], lr=0.1)
    for optimizer in (opt, torch.optim.Adam([*emb.parameters(), *lin.parameters()], lr=0.1)):
        optimizer.zero_grad()
        logits = lin(emb(tokens) * math.sqrt(4))
        loss = torch.nn.functional.cross_entropy(logits.reshape(-1, 7), tokens.reshape(-1), ignore_index=0,
                                                 label_smoothing=0.1)
        loss = loss + torch.nn.functional.log_softmax(logits, -1).gather(-1, tokens.unsqueeze(-1)).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)
        optimizer.step()
    pos = torch.arange(0, 6, dtype=torch.float32).unsqueeze(1) * torch.exp(torch.arange(0, 4, 2).float())
    (tokens != 0).unsqueeze(1).unsqueeze(2) & torch.tril(torch.ones(5, 5, dtype=torch.bool)) \
        & torch.triu(torch.ones(5, 5, dtype=torch.bool), 1).logical_not()
    logits.argmax(-1).masked_fill(tokens == 0, 0).eq(2).all()
    return float(pos.sum())


# -- probes ------------------------------------------------------------------------------------------
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
def forward(ns, *, name, kwargs, state, inputs, method="forward", dtype="float64", device="cpu",
            train=False, seed=0, repeat=1, grad=None, quiet_sublayers=False):
    """Build, load weights, call ``method(*inputs)``; report outputs and whether inputs changed.

    ``grad``: ``{"input": i, "upto": t}`` backpropagates ``out[:, :t].sum()``
    and returns the gradient of input ``i`` (a float tensor) or, with
    ``"input": "decoder_embed"``, of the decoder's embedding output.
    """
    dt = DTYPES[dtype]
    module = build(ns, name, kwargs, state=state, dtype=dtype, device=device, train=train)
    if quiet_sublayers:  # the nn.Dropout inside the sublayers off: only a layer's own (residual) dropout acts
        for attr in ("self_attn", "cross_attn", "ffn"):
            sub = getattr(module, attr, None)
            for m in sub.modules() if isinstance(sub, torch.nn.Module) else ():
                if isinstance(m, torch.nn.Dropout):
                    m.p = 0.0
    inputs = [_to(x, device, dt) for x in inputs]
    before = _snapshot(inputs)
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
    result.update({"out": outs[0], "modified": _modified(inputs, before)})
    if repeat > 1:
        result["outs"] = outs
    return result


def _forward_with_grad(module, method, inputs, grad, result):
    captured = {}
    if grad["input"] == "decoder_embed":
        def hook(_mod, _args, output):
            leaf = output.detach().requires_grad_(True)
            captured["x"] = leaf
            return leaf
        handle = module.decoder.embed.register_forward_hook(hook)
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
        raise SubmissionError(kind="contract", detail="the decoder never called its `embed` submodule")
    out[:, :grad["upto"]].sum().backward()
    g = captured["x"].grad
    result["grad"] = torch.zeros_like(captured["x"]).detach() if g is None else plain(g)
    return out


@probe
def call(ns, *, name, args=(), kwargs=None, device="cpu", dtype=None, inplace_check=True):
    """Call a contract function; tensors in ``args`` move to ``device`` first."""
    fn = ns.get(name)
    dt = DTYPES[dtype] if dtype else None
    args = [_to(a, device, dt) for a in args]
    before = _snapshot(args) if inplace_check else []
    seed_rng(0)
    out = fn(*args, **(kwargs or {}))
    result = {"modified": _modified(args, before) if inplace_check else []}
    if isinstance(out, torch.Tensor):
        result["out"] = plain(out)
    elif isinstance(out, tuple) and all(isinstance(o, torch.Tensor) for o in out):
        result["tuple"] = [plain(o) for o in out]
    elif isinstance(out, bool) or out is None or not isinstance(out, (int, float)):
        result["other"] = _type_name(out)
    else:
        result["number"] = out
        result["number_type"] = type(out).__name__
    return result


@probe
def sdpa(ns, *, query, key, value, mask=None, dropout_p=None, seed=0, dtype="float64", device="cpu"):
    """Call ``scaled_dot_product_attention``; with ``dropout_p`` pass an ``nn.Dropout`` in train mode."""
    fn = ns.get("scaled_dot_product_attention")
    dt = DTYPES[dtype]
    q, k, v = (_to(x, device, dt) for x in (query, key, value))
    m = _to(mask, device)
    before = _snapshot([q, k, v, m])
    dropout = None
    if dropout_p is not None:
        dropout = torch.nn.Dropout(dropout_p).train()
    seed_rng(seed)
    with torch.no_grad():
        out = fn(q, k, v, m, dropout) if dropout is not None or m is not None else fn(q, k, v)
    if not (isinstance(out, tuple) and len(out) == 2):
        raise SubmissionError(kind="bad_output",
                              detail=f"scaled_dot_product_attention returned {_type_name(out)}, "
                                     "expected a tuple (output, weights)",
                              data={"type": _type_name(out)})
    return {"out": as_tensor(out[0], "scaled_dot_product_attention (output)"),
            "weights": as_tensor(out[1], "scaled_dot_product_attention (weights)"),
            "modified": _modified([q, k, v, m], before)}


@probe
def move_buffers(ns, *, name, kwargs):
    """Build on the CPU, call ``.to(torch.float64)`` and ``.to("meta")``; report where buffers went."""
    module = build(ns, name, kwargs, dtype="float32")
    module = module.to(torch.float64)
    dtypes = {n: str(b.dtype).replace("torch.", "") for n, b in module.named_buffers()}
    module = module.to("meta")
    devices = {n: b.device.type for n, b in module.named_buffers()}
    return {"dtypes": dtypes, "devices": devices}


class ScriptedModel(torch.nn.Module):
    """A stand-in 'Transformer' whose row b emits ``eos`` at step ``stops[b]``.

    Before that it emits tokens that change with the row and the position, so
    a decoder that reads the wrong position or ignores finished rows shows.
    The logits at position t depend only on the row and t. It also checks
    the masks it is given: a source mask that is not ``padding_mask(src)`` or
    a target mask that is not ``target_mask(ys)`` turns every later token
    into a marker token (one per mask), so decoding without the contract's
    masks shows too.
    """

    def __init__(self, stops, vocab, eos, pad, bos):
        super().__init__()
        self.stops, self.vocab, self.eos, self.pad = list(stops), vocab, eos, pad
        self.specials = {eos, pad, bos}
        self.candidates = [v for v in range(vocab) if v not in self.specials]
        self.bad = []  # which masks were wrong: "target" and/or "source"
        self.anchor = torch.nn.Parameter(torch.zeros(1))
        # A decoder may also call the submodules the contract names instead of encode/decode, and read
        # output_proj's weight and bias itself: it is the contract's nn.Linear (the identity here).
        self.encoder = _Bound(self.encode)
        self.decoder = _Bound(self.decode)
        self.output_proj = torch.nn.Linear(vocab, vocab)
        with torch.no_grad():
            self.output_proj.weight.copy_(torch.eye(vocab))
            self.output_proj.bias.zero_()

    def _token(self, b, t):
        if self.bad:
            return self.candidates[-1] if "target" in self.bad else self.candidates[-2]
        if t + 1 >= self.stops[b]:
            return self.eos
        return self.candidates[(3 * b + t) % (len(self.candidates) - 2)]

    def _check(self, ok, which):
        if not ok and which not in self.bad:
            self.bad.append(which)

    @staticmethod
    def _dense(mask, shape):
        if mask is None:
            return torch.ones(shape, dtype=torch.bool)
        if not isinstance(mask, torch.Tensor) or mask.dtype != torch.bool:
            return None
        try:
            return torch.broadcast_to(mask, shape).cpu()
        except RuntimeError:
            return None

    def encode(self, src, src_mask=None):
        # The source mask must hide exactly the padded source tokens (None is fine without padding).
        self.src_keep = (src != self.pad).view(src.size(0), 1, 1, src.size(1)).cpu()
        dense = self._dense(src_mask, self.src_keep.shape)
        self._check(dense is not None and torch.equal(dense, self.src_keep), "source")
        return torch.zeros(src.size(0), src.size(1), 1, device=src.device) + self.anchor

    def decode(self, tgt, memory, tgt_mask=None, memory_mask=None):
        B, L = tgt.shape
        causal = torch.ones(L, L, dtype=torch.bool).tril().view(1, 1, L, L)
        # The target mask must block every later position and keep every earlier real token;
        # padded keys (after a row's EOS) may go either way: they change nothing that is kept.
        dense = self._dense(tgt_mask, (B, 1, L, L)) if tgt_mask is not None else None
        real = (tgt != self.pad).view(B, 1, 1, L).cpu()
        self._check(dense is not None and not (dense & ~causal).any() and torch.equal(dense | ~(causal & real),
                                                                                       torch.ones_like(dense)),
                    "target")
        mem = self._dense(memory_mask, self.src_keep.shape)
        self._check(mem is not None and torch.equal(mem, self.src_keep), "source")
        # Position t holds the logits for the token that follows prefix tgt[:, :t+1].
        hidden = torch.full((B, L, self.vocab), -10.0, device=tgt.device)
        for b in range(B):
            for t in range(L):
                hidden[b, t, self._token(b, t)] = 10.0
        return hidden + 0 * memory.sum()

    def forward(self, src, tgt, src_mask=None, tgt_mask=None):
        return self.output_proj(self.decode(tgt, self.encode(src, src_mask), tgt_mask, src_mask))


class _Bound(torch.nn.Module):
    """A submodule that forwards to a method of its owner (``model.encoder(...)`` = ``model.encode(...)``)."""

    def __init__(self, fn):
        super().__init__()
        self.__dict__["fn"] = fn  # not a submodule: no cycle in the module tree

    def forward(self, *args, **kwargs):
        return self.fn(*args, **kwargs)


@probe
def greedy(ns, *, src, max_len, bos_idx, eos_idx, pad_idx, model=None, scripted=None, device="cpu"):
    """Run ``greedy_decode`` on the namespace's ``Transformer`` (``model``) or a scripted stand-in."""
    if scripted is not None:
        net = ScriptedModel(scripted["stops"], scripted["vocab"], eos_idx, pad_idx, bos_idx).to(device)
    else:
        net = build(ns, "Transformer", model["kwargs"], state=model["state"], device=device)
    fn = ns.get("greedy_decode")
    src = _to(src, device)
    before = src.clone() if device != "meta" else None
    out = fn(net, src, max_len=max_len, bos_idx=bos_idx, eos_idx=eos_idx, pad_idx=pad_idx)
    result = {"out": as_tensor(out, "greedy_decode")}
    result["modified"] = [0] if before is not None and not torch.equal(src, before) else []
    return result


@probe
def train_steps(ns, *, model, src, tgt, pad_idx, steps, lr, label_smoothing=0.0, max_grad_norm=None,
                optimizer="sgd", seed=0, stale_grads=False):
    """Run the namespace's ``train_step`` ``steps`` times on its ``Transformer``; return losses and weights.
    ``stale_grads``: every parameter starts with a random gradient left over (from an evaluation, say), which a
    ``train_step`` that zeroes gradients before ``backward`` ignores."""
    net = build(ns, "Transformer", model["kwargs"], state=model["state"], train=True)
    step_fn = ns.get("train_step")
    params = list(net.parameters())
    opt = torch.optim.SGD(params, lr=lr) if optimizer == "sgd" else torch.optim.Adam(params, lr=lr)
    if stale_grads:
        g = torch.Generator().manual_seed(seed + 1)
        for p in params:
            p.grad = torch.randn(p.shape, generator=g, dtype=torch.float64).to(p.dtype)
    seed_rng(seed)
    losses = []
    for _ in range(steps):
        loss = step_fn(net, src, tgt, opt, pad_idx=pad_idx, label_smoothing=label_smoothing,
                       max_grad_norm=max_grad_norm)
        if isinstance(loss, torch.Tensor) and loss.numel() == 1:
            raise SubmissionError(kind="bad_output", detail="train_step returned a tensor; expected a "
                                                            "Python float (use loss.item())")
        if not isinstance(loss, float):
            raise SubmissionError(kind="bad_output", detail=f"train_step returned {_type_name(loss)}, "
                                                            "expected a float")
        losses.append(loss)
    return {"losses": losses, "state": {n: plain(p) for n, p in net.named_parameters()}}


@probe
def overfit(ns, *, model, src, tgt, pad_idx, bos_idx, eos_idx, steps, lr, max_len):
    """Train the namespace's ``Transformer`` with its own ``train_step`` (Adam, float32), then greedy-decode."""
    net = build(ns, "Transformer", model["kwargs"], state=model["state"], dtype="float32", train=True)
    step_fn = ns.get("train_step")
    opt = torch.optim.Adam(net.parameters(), lr=lr)
    seed_rng(0)
    losses = []
    for _ in range(steps):
        loss = step_fn(net, src, tgt, opt, pad_idx=pad_idx)
        losses.append(float(loss))
        if not math.isfinite(losses[-1]):
            break
    net.eval()
    out = ns.get("greedy_decode")(net, src, max_len=max_len, bos_idx=bos_idx, eos_idx=eos_idx,
                                  pad_idx=pad_idx)
    return {"losses": losses, "decoded": as_tensor(out, "greedy_decode")}
