"""The decoder-only LM's probes for its modules (the only code here that calls student code).

The generic probes (``grader.probes``) build a module, load weights by name and call it once. These add what
the decoder's modules need beyond that: gradients of ``causal_attention`` with respect to its keys and values,
a ``KVCache`` driven through several updates, a module fed chunk after chunk with one cache, and the model,
whose tied head makes the generic weight loading refuse it (two names, one tensor).
"""

import torch

from grader.author import (
    DTYPES,
    SubmissionError,
    as_tensor,
    build,
    plain,
    probe,
    said,
    seed_rng,
    snapshot_inputs,
    to_device,
    type_name,
    was_modified,
)


def warm_up():
    """Run once the operators the checks and a typical submission use, in every dtype and device the checks use.

    The first call of each operator, dtype and autograd path costs torch far more than later ones (dispatch tables,
    kernels, Python caches). A fork server calls this so that its workers start warm, as the reference's first
    in-process calls warm the grader's own process. A straight run of torch operators on numbers drawn from a
    generator of its own (the global random numbers stay as they were): no module of the contract, correct or not,
    exists in the process afterwards.
    """
    state = torch.get_rng_state()
    try:
        return _warm(torch.Generator().manual_seed(0))
    finally:
        torch.set_rng_state(state)  # the modules built below drew their initial weights from it


def _warm(g):
    for device, dtypes in (
        ("cpu", (torch.float64, torch.float32, torch.float16, torch.bfloat16)),
        ("meta", (torch.float64, torch.float32)),
    ):
        for dt in dtypes:
            x = torch.randn(2, 4, 3, 8, generator=g, dtype=torch.float64).to(device=device, dtype=dt)
            x.requires_grad_(device == "cpu")
            w = torch.randn(8, 8, generator=g, dtype=torch.float64).to(device=device, dtype=dt).requires_grad_()
            # RMSNorm
            y = x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(dt) * w[0]
            # rotary embedding: angles from an outer product, halves rotated (and the complex form)
            pos = torch.arange(3, device=device, dtype=torch.float32)
            inv = 1.0 / (10000 ** (torch.arange(0, 8, 2, device=device, dtype=torch.float32) / 8))
            ang = torch.outer(pos, inv)
            cos, sin = torch.cat([ang.cos(), ang.cos()], -1).to(dt), torch.cat([ang.sin(), ang.sin()], -1).to(dt)
            a, b = y.chunk(2, -1)
            y = y * cos + torch.cat([-b, a], -1) * sin
            if device == "cpu":
                pairs = y.detach().float().reshape(*y.shape[:-1], 4, 2)
                torch.view_as_real(torch.view_as_complex(pairs.contiguous()) * torch.polar(torch.ones_like(ang), ang))
            # grouped-query causal attention with a cache
            k = torch.cat([y, y], 2).repeat_interleave(2, dim=1)[:, :4]
            s = (y @ k.transpose(-2, -1)) / 8**0.5
            keep = torch.ones(3, 6, dtype=torch.bool, device=device).tril(3)
            p = s.masked_fill(~keep, float("-inf")).softmax(-1)
            y = (p @ k).transpose(1, 2).reshape(2, 3, 32).view(2, 3, 4, 8)
            y = torch.einsum("bqhd,de->bqhe", y, w)
            # SwiGLU, the tied head and the loss
            y = torch.nn.functional.silu(y @ w) * (y @ w.t())
            y = torch.nn.functional.linear(y, w)
            if device == "cpu":
                logits = y.reshape(-1, 8).float()
                target = torch.randint(0, 8, (logits.shape[0],), generator=g)
                loss = torch.nn.functional.cross_entropy(logits, target, ignore_index=0)
                loss.backward()
    # sampling: temperature, top-k, top-p, a draw from a generator
    logits = torch.randn(3, 11, generator=g)
    for dt in (torch.float64, torch.float32):
        z = (logits.to(dt) / 0.7).clone()
        kth = torch.topk(z, 3, dim=-1).values[..., -1:]
        z = z.masked_fill(z < kth, float("-inf"))
        ordered, idx = torch.sort(z, dim=-1, descending=True)
        drop = ordered.softmax(-1).cumsum(-1) > 0.9
        drop[..., 1:] = drop[..., :-1].clone()
        z = z.scatter(-1, idx, ordered.masked_fill(drop, float("-inf")))
        probs = z.softmax(-1)
        torch.multinomial(probs, 1, generator=g).squeeze(-1)
        torch.bincount(torch.multinomial(probs[0], 20, replacement=True, generator=g), minlength=11)
        probs.argmax(-1)
    # the optimiser's arithmetic by hand (as an AdamW written for the contract), clipping, one torch optimiser
    emb = torch.nn.Embedding(11, 8)
    head = torch.nn.Linear(8, 11, bias=False)
    params = [*emb.parameters(), *head.parameters()]
    opt = torch.optim.SGD(params, lr=0.1, foreach=False)
    tokens = torch.randint(0, 11, (2, 5), generator=g)
    for _ in range(2):
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(head(emb(tokens)).reshape(-1, 11), tokens.reshape(-1))
        loss.backward()
        norms = torch.stack([torch.linalg.vector_norm(q.grad.detach(), 2.0) for q in params])
        total = torch.linalg.vector_norm(norms, 2.0)
        scale = (1.0 / (total + 1e-6)).clamp(max=1.0)
        with torch.no_grad():
            for q in params:
                q.grad.mul_(scale)
                m, v = torch.zeros_like(q), torch.zeros_like(q)
                m.mul_(0.9).add_(q.grad, alpha=0.1)
                v.mul_(0.999).addcmul_(q.grad, q.grad, value=0.001)
                q.mul_(1 - 0.01).addcdiv_(m, v.sqrt().add_(1e-8), value=-0.1)
        opt.step()
    return float(total)


def _length(cache, what):
    """``cache.length`` as a plain int; a ``SubmissionError`` naming what came instead."""
    value = cache.length
    if isinstance(value, bool) or not isinstance(value, int):
        error = said("say.length_not_int", what=what, type=type_name(value))
        raise SubmissionError(
            kind="bad_output", detail=error["detail"], data={**error["data"], "type": type_name(value)}
        )
    return int.__int__(value)


def _pair(out, what):
    """``update``'s result as two plain tensors."""
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        error = said("say.not_keys_values", what=what, type=type_name(out))
        raise SubmissionError(kind="bad_output", detail=error["detail"], data={**error["data"], "type": type_name(out)})
    return [as_tensor(out[0], f"{what} (keys)"), as_tensor(out[1], f"{what} (values)")]


def _held(cache, what):
    """``cache.keys`` and ``cache.values``: ``None`` or plain tensors."""
    held = []
    for attr in ("keys", "values"):
        value = getattr(cache, attr, None)
        held.append(None if value is None else as_tensor(value, f"{what}.{attr}"))
    return held


@probe
def lm_attention_grad(ns, *, q, k, v, upto, device="cpu"):
    """``causal_attention(q, k, v)`` with gradients: backpropagates ``out[:, :, :upto].sum()`` and returns the
    output and the gradients of ``k`` and ``v`` (zeros where autograd left none)."""
    fn = ns.get("causal_attention")
    q, k, v = (to_device(x, device).detach() for x in (q, k, v))
    k.requires_grad_(True)
    v.requires_grad_(True)
    seed_rng(0)
    out = fn(q, k, v)
    result = {"out": as_tensor(out, "causal_attention")}
    out[:, :, :upto].sum().backward()
    for name, x in (("grad_k", k), ("grad_v", v)):
        result[name] = torch.zeros_like(x).detach() if x.grad is None else plain(x.grad)
    return result


@probe
def lm_cache_ops(ns, *, updates, device="cpu", dtype=None):
    """A fresh ``KVCache()`` given ``updates`` (a list of ``[keys, values]``) one after the other.

    Returns ``empty`` (keys, values and length before any update) and, per update, what ``update`` returned,
    what ``keys``/``values`` hold afterwards and ``length``; ``modified``: indices of updates whose tensors
    changed in place."""
    dt = DTYPES[dtype] if dtype else None
    cache = ns.get("KVCache")()
    updates = [[to_device(k, device, dt), to_device(v, device, dt)] for k, v in updates]
    before = [snapshot_inputs(u) for u in updates]
    result = {
        "empty": {
            "keys_none": cache.keys is None,
            "values_none": cache.values is None,
            "length": _length(cache, "KVCache"),
        },
        "steps": [],
    }
    for k, v in updates:
        returned = _pair(cache.update(k, v), "KVCache.update")
        held = _held(cache, "KVCache")
        result["steps"].append({"returned": returned, "held": held, "length": _length(cache, "KVCache")})
    result["modified"] = [i for i, (u, b) in enumerate(zip(updates, before)) if was_modified(u, b)]
    return result


@probe
def lm_steps(ns, *, name, kwargs, state, chunks, dtype="float64", device="cpu"):
    """Build ``name(**kwargs)`` (a module whose ``forward(x, cache)`` takes one layer's ``KVCache``), load
    ``state``, and call it on each of ``chunks`` in turn with one fresh cache. Returns the outputs, the cache's
    ``length`` after each call and its final ``keys`` and ``values``."""
    dt = DTYPES[dtype]
    module = build(ns, name, kwargs, state=state, dtype=dtype, device=device)
    cache = ns.get("KVCache")()
    chunks = [to_device(x, device, dt) for x in chunks]
    before = snapshot_inputs(chunks)
    outs, lengths = [], []
    seed_rng(0)
    with torch.no_grad():
        for x in chunks:
            outs.append(as_tensor(module(x, cache), f"{name}.forward"))
            lengths.append(_length(cache, "KVCache"))
    keys, values = _held(cache, "KVCache")
    return {"outs": outs, "lengths": lengths, "keys": keys, "values": values, "modified": was_modified(chunks, before)}


TIED = ("lm_head.weight", "embed.weight")


def load_model_state(module, state):
    """Copy ``state`` into a ``DecoderLM`` by the names ``named_parameters()`` lists (a tied head once).

    A head that is not tied (its own ``lm_head.weight``) gets the embedding's values, so that it computes the
    reference's function: the tie itself is checked once, by the contract check. Other differences raise
    ``SubmissionError(kind="contract")``."""
    params = dict(module.named_parameters())
    state = dict(state)
    if TIED[0] in params and TIED[0] not in state and TIED[1] in state:
        state[TIED[0]] = state[TIED[1]]
    found = {n: list(p.shape) for n, p in params.items()}
    expected = {n: list(v.shape) for n, v in state.items()}
    if found != expected:
        error = said("say.params_mismatch", what="DecoderLM")
        raise SubmissionError(
            kind="contract",
            detail=error["detail"],
            data={
                **error["data"],
                "expected": sorted(expected.items()),
                "found": sorted(found.items()),
                "missing": sorted(set(expected) - set(found)),
                "unexpected": sorted(set(found) - set(expected)),
                "wrong_shape": sorted(k for k in set(found) & set(expected) if found[k] != expected[k]),
                "shared": [],
            },
        )
    with torch.no_grad():
        for n, v in state.items():
            params[n].copy_(v.to(device=params[n].device, dtype=params[n].dtype))


def _build_model(ns, kwargs, state, dtype, device):
    dt = DTYPES[dtype]
    module = build(ns, "DecoderLM", kwargs, dtype=dtype, device=device)
    if state is not None and device != "meta":
        load_model_state(module, state)
        module.to(device=device, dtype=dt)
    module.eval()
    return module


def _logits(out):
    return as_tensor(out, "DecoderLM.forward")


@probe
def lm_model(
    ns,
    *,
    name="DecoderLM",
    kwargs,
    state,
    tokens,
    dtype="float64",
    device="cpu",
    prompt=None,
    grad_upto=None,
    watch=False,
):
    """Run ``DecoderLM`` on ``tokens [B, L]``.

    Always: ``out``, the logits of one forward without caches. ``prompt``: also decode with caches (one forward
    on ``tokens[:, :prompt]``, then one per later token, each ``[B, 1]``): ``steps`` (the logits of each call),
    ``cache_lengths`` (every layer's cache length after each call), ``cache_count`` and ``fresh`` (each cache of
    ``new_cache()`` empty), and with ``watch`` the shapes of the inputs every layer received during each
    call (``layer_inputs``; empty where the layers were called without ``__call__``). ``grad_upto``: the
    gradient of ``out[:, :grad_upto].sum()`` with respect to the embedded tokens (``grad``; ``None`` where it
    cannot be taken: see ``_embed_grad``). ``watch``: also ``embedded``, the first layer's input in the full
    forward, and ``table``, the embedding rows of the tokens."""
    del name  # names the task for the banned-API guard
    model = _build_model(ns, kwargs, state, dtype, device)
    tokens = to_device(tokens, device)
    before = snapshot_inputs([tokens])
    result = {}
    seed_rng(0)
    seen = []
    handles = []
    if watch:
        layers = getattr(model, "layers", None)
        for i, layer in enumerate(layers if isinstance(layers, torch.nn.ModuleList) else []):
            handles.append(
                layer.register_forward_pre_hook(
                    lambda _m, args, kwargs, i=i: seen.append((i, _first_tensor(args, kwargs))), with_kwargs=True
                )
            )
    try:
        if grad_upto is None:
            with torch.no_grad():
                result["out"] = _logits(model(tokens))
        else:
            result["out"], result["grad"] = _embed_grad(model, tokens, grad_upto)
        if watch:
            first = [x for i, x in seen if i == 0]
            result["embedded"] = plain(first[0]) if first and first[0] is not None else None
            embed = getattr(model, "embed", None)
            weight = getattr(embed, "weight", None)
            result["table"] = plain(weight[tokens]) if isinstance(weight, torch.Tensor) else None
        if prompt is not None:
            result.update(_cached(model, tokens, prompt, seen, watch))
    finally:
        for h in handles:
            h.remove()
    result["modified"] = was_modified([tokens], before)
    return result


def _first_tensor(args, kwargs):
    """The hidden states a layer was called with: its first positional tensor, else its first tensor keyword."""
    for value in [*args, *kwargs.values()]:
        if isinstance(value, torch.Tensor):
            return value
    return None


def _embed_grad(model, tokens, upto):
    """The logits and the gradient of ``out[:, :upto].sum()`` with respect to the embedded tokens: the output of
    the ``embed`` submodule, or, where the model reads the table itself (``F.embedding(tokens, embed.weight)``,
    which the contract allows), the first layer's input. ``None`` where neither is called through ``__call__``
    (the perturbation half of the causality check still judges such a model)."""
    captured = {}

    def leaf(x):
        captured["x"] = x.detach().requires_grad_(True)
        return captured["x"]

    def embed_hook(_mod, _args, output):
        return leaf(output) if isinstance(output, torch.Tensor) and "x" not in captured else None

    def layer_hook(_mod, args, kwargs):
        if "x" in captured:
            return None
        if args and isinstance(args[0], torch.Tensor):
            return (leaf(args[0]), *args[1:]), kwargs
        for key, value in kwargs.items():
            if isinstance(value, torch.Tensor):
                return args, dict(kwargs, **{key: leaf(value)})
        return None

    embed = getattr(model, "embed", None)
    if not isinstance(embed, torch.nn.Module):
        raise SubmissionError(kind="contract", **said("say.no_submodule", name="DecoderLM", sub="`embed`"))
    handles = [embed.register_forward_hook(embed_hook)]
    layers = getattr(model, "layers", None)
    if isinstance(layers, torch.nn.ModuleList) and len(layers):
        handles.append(layers[0].register_forward_pre_hook(layer_hook, with_kwargs=True))
    try:
        out = model(tokens)
    finally:
        for h in handles:
            h.remove()
    logits = _logits(out)
    if "x" not in captured:
        return logits, None
    out[:, :upto].sum().backward()
    g = captured["x"].grad
    return logits, torch.zeros_like(captured["x"]).detach() if g is None else plain(g)


def _cached(model, tokens, prompt, seen, watch):
    caches = model.new_cache()
    if not isinstance(caches, list):
        error = said("say.not_cache_list", what="DecoderLM.new_cache()", type=type_name(caches))
        raise SubmissionError(
            kind="bad_output", detail=error["detail"], data={**error["data"], "type": type_name(caches)}
        )
    fresh = [_length(c, "new_cache()[i]") == 0 and all(h is None for h in _held(c, "new_cache()[i]")) for c in caches]
    steps, lengths, inputs = [], [], []
    L = tokens.shape[1]
    cuts = [(0, prompt)] + [(t, t + 1) for t in range(prompt, L)]
    with torch.no_grad():
        for a, b in cuts:
            del seen[:]
            steps.append(_logits(model(tokens[:, a:b], caches)))
            lengths.append([_length(c, "KVCache") for c in caches])
            if watch:
                inputs.append([[i, list(x.shape) if x is not None else None] for i, x in seen])
    out = {"steps": steps, "cache_lengths": lengths, "cache_count": len(caches), "fresh": fresh}
    if watch:
        out["layer_inputs"] = inputs
    return out
