"""The decoder-only LM's probes for sampling, the optimiser and training (the only code here that calls student code).

Each returns plain data (numbers, strings, tensors, lists and dicts of them); the checks in ``checks/`` compare.
Their names start with ``lm_``: the probe table is shared by every assignment loaded in a process.
"""

import math

import torch
from torch.overrides import TorchFunctionMode

from grader.author import (
    DTYPES,
    SubmissionError,
    as_tensor,
    default_dtype,
    passed,
    plain,
    probe,
    said,
    seed_rng,
    type_name,
)


class _Multinomials(TorchFunctionMode):
    """Records every ``torch.multinomial`` call (function or method, however it was imported): the shape of the
    probabilities, ``num_samples`` and their dtype."""

    def __init__(self, keep_probs=False):
        super().__init__()
        self.calls = []
        self.keep_probs = keep_probs

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", "") == "multinomial" and args and isinstance(args[0], torch.Tensor):
            n = args[1] if len(args) > 1 else kwargs.get("num_samples")
            self.calls.append(
                {
                    "shape": list(args[0].shape),
                    "num_samples": n if isinstance(n, int) else -1,
                    "dtype": str(args[0].dtype).replace("torch.", ""),
                }
            )
            if self.keep_probs:  # as a distribution: multinomial normalises each row itself
                probs = plain(args[0]).to(torch.float64)
                self.calls[-1]["probs"] = probs / probs.sum(dim=-1, keepdim=True)
        return func(*args, **kwargs)


def _state_equal(a, b):
    return a.shape == b.shape and bool(torch.equal(a, b))


@probe
def lm_filter(ns, *, name, logits, arg, dtype="float64"):
    """Call ``top_k_filter`` or ``top_p_filter`` (``name``) on a copy of ``logits`` in ``dtype``; report its output
    and whether it changed its input (``modified``: ``[0]``). The copy keeps the caller's tensor intact, so a filter
    that writes into its input cannot change the next call's input or a replay's."""
    x = logits.to(DTYPES[dtype]).clone()
    before = x.clone()
    out = ns.get(name)(x, arg)
    result = {"modified": [] if torch.equal(x, before) else [0]}
    if isinstance(out, torch.Tensor):
        result["out"] = plain(out).clone()
    else:
        result["other"] = type_name(out)
    return result


@probe
def lm_sample_draw(
    ns, *, logits, temperature=1.0, top_k=None, top_p=None, seed=0, use_generator=True, dtype="float32", omit=()
):
    """Call ``sample_next`` once with a ``torch.Generator`` seeded with ``seed`` (or ``generator=None``).

    Returns ``out``, the ``torch.multinomial`` calls it made (``multinomial``), whether the generator it was
    given (``generator_used``) and the global generator (``global_used``) advanced. ``omit``: keyword arguments
    not passed."""
    fn = ns.get("sample_next")
    x = logits.to(DTYPES[dtype])
    before = x.clone()
    g = torch.Generator().manual_seed(seed)
    g_state = g.get_state()
    seed_rng(seed + 1)
    global_state = torch.default_generator.get_state()
    kwargs = {"temperature": temperature, "top_k": top_k, "top_p": top_p}
    if use_generator:
        kwargs["generator"] = g
    with _Multinomials(keep_probs=True) as mode:
        out = fn(x, **passed(kwargs, omit))
    return {
        "out": as_tensor(out, "sample_next"),
        "multinomial": mode.calls,
        "generator_used": not _state_equal(g.get_state(), g_state),
        "global_used": not _state_equal(torch.default_generator.get_state(), global_state),
        "modified": [] if torch.equal(x, before) else [0],
    }


@probe
def lm_sample_counts(ns, *, logits, repeats, temperature=1.0, top_k=None, top_p=None, seed=0):
    """Draw ``repeats`` tokens for each row of ``logits [R, V]`` with one ``sample_next`` call on the rows repeated
    (``[R * repeats, V]``, float32); return how often each token came per row (``counts [R, V]``) and how many
    draws were not a token id of the row (``outside``)."""
    fn = ns.get("sample_next")
    R, V = logits.shape
    x = logits.to(torch.float32).repeat_interleave(repeats, dim=0)  # (R * repeats, V)
    g = torch.Generator().manual_seed(seed)
    seed_rng(seed + 1)
    out = as_tensor(fn(x, temperature=temperature, top_k=top_k, top_p=top_p, generator=g), "sample_next")
    if list(out.shape) != [R * repeats] or out.dtype != torch.long:
        return {"bad_output": {"shape": list(out.shape), "dtype": str(out.dtype).replace("torch.", "")}}
    rows = out.view(R, repeats)
    inside = (rows >= 0) & (rows < V)
    counts = torch.stack([torch.bincount(r[k], minlength=V)[:V] for r, k in zip(rows, inside)])  # (R, V)
    return {"counts": counts, "outside": int((~inside).sum())}


def _cached_length(cache):
    """How many positions ``cache`` holds, read from its ``keys`` as the contract lays them out (``None`` while empty,
    then ``[B, Hkv, T, Dh]``): data, where its ``length`` would run the cache's own code (over the reference's parts,
    one more call to the grader for every forward). A cache whose ``keys`` are laid out otherwise says it by
    ``length``."""
    keys = getattr(cache, "keys", -1)
    if keys is None:
        return 0
    if type(keys) is torch.Tensor and keys.dim() == 4:
        return int(keys.shape[2])
    return int(cache.length)


class _Recorder:
    """Wraps a model's ``forward`` on the instance (so ``model(...)`` and ``model.forward(...)`` both pass) and
    notes, for each call: the tokens' shape, whether caches came, the first cache's length before the call,
    whether gradients were being recorded."""

    def __init__(self, model):
        self.calls = []
        self.inner = model.forward
        model.forward = self

    def __call__(self, tokens, caches=None, *args, **kwargs):
        length = -1
        if caches is not None:
            try:
                length = _cached_length(caches[0])
            except Exception:  # noqa: BLE001 - a cache of the student's own that cannot say its length
                length = -1
        self.calls.append(
            {
                "shape": list(tokens.shape) if isinstance(tokens, torch.Tensor) else [],
                "cached": caches is not None,
                "length": length,
                "grad": torch.is_grad_enabled(),
            }
        )
        return self.inner(tokens, caches, *args, **kwargs)


def build_lm(ns, kwargs, state, *, dtype="float64", device="cpu", train=False):
    """``ns.DecoderLM(**kwargs)`` with ``state`` loaded by ``named_parameters()`` name (the tied weight once, as
    ``embed.weight``), moved and put in ``train`` mode."""
    cls = ns.get("DecoderLM")
    dt = DTYPES[dtype]
    with default_dtype(dt):
        model = cls(**kwargs)
    if not isinstance(model, torch.nn.Module):
        raise SubmissionError(
            kind="bad_output", **said("say.not_module", call="DecoderLM(...)", type=type(model).__name__)
        )
    params = dict(model.named_parameters())
    found = {k: list(v.shape) for k, v in params.items()}
    expected = {k: list(v.shape) for k, v in state.items()}
    if found != expected:
        error = said("say.params_mismatch", what="DecoderLM")
        raise SubmissionError(
            kind="contract",
            detail=error["detail"],
            data={
                **error["data"],
                "missing": sorted(set(expected) - set(found)),
                "unexpected": sorted(set(found) - set(expected)),
                "wrong_shape": sorted(k for k in set(found) & set(expected) if found[k] != expected[k]),
            },
        )
    with torch.no_grad():
        for k, v in state.items():
            params[k].copy_(v.to(dtype=params[k].dtype))
    model.to(device=device, dtype=dt)
    model.train(train)
    return model


@probe
def lm_generate(
    ns,
    *,
    model,
    prompt,
    max_new_tokens,
    temperature=1.0,
    top_k=None,
    top_p=None,
    seed=0,
    train=False,
    device="cpu",
    omit=(),
):
    """Run ``generate`` on the namespace's ``DecoderLM`` (``model``: ``{"kwargs", "state"}``) with a generator
    seeded with ``seed``; record every forward (``calls``), the ``training`` flag after, whether the output
    carries gradients. ``omit``: keyword arguments not passed."""
    net = build_lm(ns, model["kwargs"], model["state"], device=device, train=train)
    recorder = _Recorder(net)
    fn = ns.get("generate")
    p = prompt.to(device)
    before = p.clone()
    g = torch.Generator(device=device).manual_seed(seed)
    seed_rng(seed + 1)
    try:
        out = fn(
            net,
            p,
            max_new_tokens,
            **passed({"temperature": temperature, "top_k": top_k, "top_p": top_p, "generator": g}, omit),
        )
    finally:
        recorder.inner = None  # the model holds the recorder: holding the model too, it would be a reference cycle
    requires_grad = isinstance(out, torch.Tensor) and out.requires_grad
    tokens = as_tensor(out, "generate")
    return {
        "out": tokens.cpu(),
        "device": tokens.device.type,
        "calls": recorder.calls,
        "training_after": bool(net.training),
        "requires_grad": requires_grad,
        "modified": [] if torch.equal(p, before) else [1],
    }


# -- the optimiser ----------------------------------------------------------------------------------------------
class _Toy(torch.nn.Module):
    """A module of every kind of parameter ``param_groups`` must sort, in a drawn registration order: ``parts`` is a
    list of names among ``linear`` (weight and bias), ``norm`` (a 1-dim weight), ``embed`` and ``head`` (tied to
    ``embed`` when both are there and ``tied``), ``frozen`` (a 2-dim and a 1-dim parameter with
    ``requires_grad=False``), ``scalar`` (a 0-dim parameter), ``conv`` (a 4-dim weight)."""

    def __init__(self, parts, tied):
        super().__init__()
        for part in parts:
            if part == "linear":
                self.linear = torch.nn.Linear(3, 4)
            elif part == "norm":
                self.norm_weight = torch.nn.Parameter(torch.ones(4))
            elif part == "embed":
                self.embed = torch.nn.Embedding(5, 3)
            elif part == "head":
                self.head = torch.nn.Linear(3, 5, bias=False)
            elif part == "frozen":
                self.frozen = torch.nn.Linear(2, 2)
                self.frozen.requires_grad_(False)
            elif part == "scalar":
                self.scale = torch.nn.Parameter(torch.tensor(1.5))
            elif part == "conv":
                self.conv = torch.nn.Conv2d(2, 3, 2, bias=False)
        if tied and "embed" in parts and "head" in parts:
            self.head.weight = self.embed.weight


@probe
def lm_param_groups(ns, *, parts, tied, weight_decay):
    """Call ``param_groups`` on a toy module; describe each group by its keys, its ``weight_decay`` and the names of
    its parameters (the first name ``named_parameters(remove_duplicate=False)`` gives each tensor; a tensor that is
    not one of the module's parameters reads ``?``)."""
    module = _Toy(parts, tied)
    names = {}
    for n, p in module.named_parameters(remove_duplicate=False):
        names.setdefault(id(p), n)
    out = ns.get("param_groups")(module, weight_decay)
    if not isinstance(out, (list, tuple)):
        error = said("say.not_group_list", what="param_groups", type=type_name(out))
        raise SubmissionError(kind="bad_output", detail=error["detail"], data={**error["data"], "type": type_name(out)})
    groups = []
    for group in out:
        if not isinstance(group, dict):
            raise SubmissionError(
                kind="bad_output", **said("say.group_not_dict", what="param_groups", type=type_name(group))
            )
        params = group.get("params")
        params = list(params) if params is not None and not isinstance(params, torch.Tensor) else []
        wd = group.get("weight_decay")
        groups.append(
            {
                "keys": sorted(str(k) for k in group),
                "names": [names.get(id(p), "?") for p in params],
                "weight_decay": float(wd) if isinstance(wd, (int, float)) else None,
            }
        )
    return {"groups": groups, "type": type(out).__name__}


def _seeded(shape, g, scale=1.0):
    return torch.randn(shape, generator=g, dtype=torch.float64) * scale


@probe
def lm_adamw(
    ns, *, shapes, groups, defaults, grad_scales, has_grad, lr_changes=None, closure_steps=(), seed=0, plain_list=False
):
    """Run the namespace's ``AdamW`` for ``len(has_grad)`` steps on float64 parameters of ``shapes``.

    ``groups``: one dict per group, ``{"params": [indices], **options}``, or with ``plain_list`` the parameters
    as one list (then the first group's options are ignored). ``defaults``: keyword arguments of the constructor.
    ``has_grad[s][i]``: whether parameter ``i`` has a gradient at step ``s`` (else ``None``), scaled by
    ``grad_scales[i]``. ``lr_changes``: ``{step: [lr of each group]}`` set before that step. ``closure_steps``:
    steps whose ``step`` gets a closure that sets the gradients and returns a loss. Returns every parameter after
    every step, and what ``step`` returned on the closure steps."""
    g = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(_seeded(s, g)) for s in shapes]
    cls = ns.get("AdamW")
    if plain_list:
        opt = cls(params, **defaults)
    else:
        opt = cls([dict(grp, params=[params[i] for i in grp["params"]]) for grp in groups], **defaults)
    is_optimizer = isinstance(opt, torch.optim.Optimizer)
    history, returned = [], []
    if not is_optimizer:  # no param_groups to read: the check says what is wrong
        return {"history": history, "returned": returned, "is_optimizer": False}
    for s, mask in enumerate(has_grad):
        grads = [_seeded(p.shape, g, grad_scales[i]) for i, p in enumerate(params)]
        if lr_changes and str(s) in lr_changes:
            for group, lr in zip(opt.param_groups, lr_changes[str(s)]):
                group["lr"] = lr

        def set_grads(grads=grads, mask=mask):
            for p, grad, on in zip(params, grads, mask):
                p.grad = grad.clone() if on else None

        if s in closure_steps:
            token = torch.tensor(float(s) + 0.25, dtype=torch.float64)

            def closure(token=token):
                set_grads()
                return token

            got = opt.step(closure)
            returned.append({"is_closure_value": got is token, "type": type_name(got)})
        else:
            set_grads()
            got = opt.step()
            returned.append({"is_closure_value": got is None, "type": type_name(got)})
        history.append([plain(p).clone() for p in params])
    return {"history": history, "returned": returned, "is_optimizer": is_optimizer}


@probe
def lm_clip(ns, *, shapes, scales, has_grad, max_norm, as_generator=False, seed=0):
    """Call ``clip_grad_norm_`` on float64 parameters with seeded gradients (``None`` where not ``has_grad``),
    passed as a list or as a generator. Returns what it returned (divided by ``scales[0]``), the gradients after
    (each divided by its scale), and which gradients were replaced by another tensor instead of changed in place."""
    g = torch.Generator().manual_seed(seed)
    params = [torch.nn.Parameter(_seeded(s, g)) for s in shapes]
    for p, scale, on in zip(params, scales, has_grad):
        p.grad = _seeded(p.shape, g, scale) if on else None
    before = [p.grad for p in params]
    fn = ns.get("clip_grad_norm_")
    out = fn((p for p in params) if as_generator else list(params), max_norm)
    # relative to each gradient's scale: tiny gradients (where the 1e-6 shows) compare at their own size
    result = {
        "grads": [None if p.grad is None else plain(p.grad) / scale for p, scale in zip(params, scales)],
        "replaced": [i for i, (p, b) in enumerate(zip(params, before)) if p.grad is not b],
    }
    if isinstance(out, torch.Tensor):
        result["out"] = plain(out) / scales[0]
    else:
        result["other"] = type_name(out)
    return result


# -- training --------------------------------------------------------------------------------------------------
@probe
def lm_train_steps(
    ns,
    *,
    model,
    tokens,
    steps,
    pad_id=None,
    max_grad_norm=None,
    lrs=None,
    group_lrs=(0.2, 0.05),
    momentum=0.0,
    stale_grads=True,
    seed=0,
    omit=(),
):
    """Run the namespace's ``train_step`` ``steps`` times on its ``DecoderLM`` with ``torch.optim.SGD`` over two
    parameter groups (matrices, then the rest, with learning rates ``group_lrs``), ``lr=lrs[s]`` at step ``s``
    (``None``: not passed). With ``stale_grads`` every parameter starts with a random gradient left over. Returns
    the losses, each group's ``lr`` after each step, and the weights. ``omit``: keyword arguments not passed."""
    net = build_lm(ns, model["kwargs"], model["state"], train=True)
    step_fn = ns.get("train_step")
    named = list(net.named_parameters())
    matrices = [p for _, p in named if p.dim() >= 2]
    rest = [p for _, p in named if p.dim() < 2]
    opt = torch.optim.SGD(
        [{"params": matrices, "lr": group_lrs[0]}, {"params": rest, "lr": group_lrs[1]}],
        lr=group_lrs[0],
        momentum=momentum,
    )
    if stale_grads:
        g = torch.Generator().manual_seed(seed + 1)
        for _, p in named:
            p.grad = torch.randn(p.shape, generator=g, dtype=torch.float64).to(p.dtype)
    seed_rng(seed)
    losses, lr_seen = [], []
    for s in range(steps):
        kwargs = {"pad_id": pad_id, "max_grad_norm": max_grad_norm}
        if lrs is not None:
            kwargs["lr"] = lrs[s]
        loss = step_fn(net, tokens, opt, **passed(kwargs, omit))
        if isinstance(loss, torch.Tensor):
            raise SubmissionError(kind="bad_output", **said("say.loss_tensor", name="train_step"))
        if not isinstance(loss, float):
            raise SubmissionError(
                kind="bad_output", **said("say.loss_not_float", name="train_step", type=type_name(loss))
            )
        losses.append(float(loss))
        lr_seen.append([float(grp["lr"]) for grp in opt.param_groups])
    return {"losses": losses, "lrs": lr_seen, "state": {n: plain(p).clone() for n, p in named}}


@probe
def lm_overfit(ns, *, model, tokens, pad_id, steps, max_lr, min_lr, warmup, weight_decay, betas, max_grad_norm, prompt):
    """Train the namespace's ``DecoderLM`` (float32) with its own ``param_groups``, ``AdamW``, ``cosine_lr`` and
    ``train_step`` on ``tokens`` for ``steps`` steps (stopping at a loss that is not finite), then greedy
    ``generate`` from each row's first ``prompt`` tokens to the rows' length. Returns the losses and ``out``."""
    net = build_lm(ns, model["kwargs"], model["state"], dtype="float32", train=True)
    opt = ns.get("AdamW")(ns.get("param_groups")(net, weight_decay), lr=max_lr, betas=tuple(betas))
    schedule, step_fn = ns.get("cosine_lr"), ns.get("train_step")
    seed_rng(0)
    losses = []
    for s in range(steps):
        loss = step_fn(
            net,
            tokens,
            opt,
            pad_id=pad_id,
            max_grad_norm=max_grad_norm,
            lr=float(schedule(s, max_lr, min_lr, warmup, steps)),
        )
        # a tensor is charged in train_step's own checks; here only its value counts
        losses.append(float(loss.detach() if isinstance(loss, torch.Tensor) else loss))
        if not math.isfinite(losses[-1]):
            break
    net.eval()
    out = ns.get("generate")(net, tokens[:, :prompt], tokens.shape[1] - prompt, temperature=0.0)
    return {"losses": losses, "out": as_tensor(out, "generate").cpu()}
