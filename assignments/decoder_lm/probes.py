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
