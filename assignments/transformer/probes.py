"""The Transformer assignment's own probes: attention as a function, greedy decoding over a scripted model,
training steps and the overfit run; and the warm-up its workers run before any student code.

Probes are the only code that calls student code (see ``grader.probes``); these register into the same
table when this module is imported (the assignment lists it in ``probes``).
"""

import math

import torch

from grader.author import (
    DTYPES,
    SubmissionError,
    as_tensor,
    build,
    passed,
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
    """Run the operators the probes and a typical submission use once, in every dtype and device the checks use.

    The first call of each operator, dtype and autograd path costs torch far more than later ones (dispatch
    tables, kernels, Python caches): over a second for a full check on a small machine. A fork server calls
    this so that its workers start warm. It is a straight run of torch operators on random numbers: no
    module of the contract, correct or not, exists in the process afterwards (a submission could otherwise
    re-export it).
    """
    g = torch.Generator().manual_seed(0)
    for device, dtypes in (
        ("cpu", (torch.float64, torch.float32, torch.float16, torch.bfloat16)),
        ("meta", (torch.float64, torch.float32)),
    ):
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
    for optimizer in (opt, _adam([*emb.parameters(), *lin.parameters()], 0.1)):  # the overfit check's Adam
        optimizer.zero_grad()
        logits = lin(emb(tokens) * math.sqrt(4))
        loss = torch.nn.functional.cross_entropy(
            logits.reshape(-1, 7), tokens.reshape(-1), ignore_index=0, label_smoothing=0.1
        )
        loss = loss + torch.nn.functional.log_softmax(logits, -1).gather(-1, tokens.unsqueeze(-1)).mean()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(emb.parameters(), 1.0)
        optimizer.step()
    pos = torch.arange(0, 6, dtype=torch.float32).unsqueeze(1) * torch.exp(torch.arange(0, 4, 2).float())
    (tokens != 0).unsqueeze(1).unsqueeze(2) & torch.tril(torch.ones(5, 5, dtype=torch.bool)) & torch.triu(
        torch.ones(5, 5, dtype=torch.bool), 1
    ).logical_not()
    logits.argmax(-1).masked_fill(tokens == 0, 0).eq(2).all()
    return float(pos.sum())


@probe
def sdpa(ns, *, query, key, value, mask=None, dropout_p=None, seed=0, dtype="float64", device="cpu"):
    """Call ``scaled_dot_product_attention``; with ``dropout_p`` pass an ``nn.Dropout`` in train mode."""
    fn = ns.get("scaled_dot_product_attention")
    dt = DTYPES[dtype]
    q, k, v = (to_device(x, device, dt) for x in (query, key, value))
    m = to_device(mask, device)
    before = snapshot_inputs([q, k, v, m])
    dropout = None
    if dropout_p is not None:
        dropout = torch.nn.Dropout(dropout_p).train()
    seed_rng(seed)
    with torch.no_grad():
        out = fn(q, k, v, m, dropout) if dropout is not None or m is not None else fn(q, k, v)
    if not (isinstance(out, tuple) and len(out) == 2):
        error = said("say.not_output_weights", what="scaled_dot_product_attention", type=type_name(out))
        raise SubmissionError(kind="bad_output", detail=error["detail"], data={**error["data"], "type": type_name(out)})
    return {
        "out": as_tensor(out[0], "scaled_dot_product_attention (output)"),
        "weights": as_tensor(out[1], "scaled_dot_product_attention (weights)"),
        "modified": was_modified([q, k, v, m], before),
    }


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
        self._check(
            dense is not None
            and not (dense & ~causal).any()
            and torch.equal(dense | ~(causal & real), torch.ones_like(dense)),
            "target",
        )
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
    src = to_device(src, device)
    before = src.clone() if device != "meta" else None
    out = fn(net, src, max_len=max_len, bos_idx=bos_idx, eos_idx=eos_idx, pad_idx=pad_idx)
    result = {"out": as_tensor(out, "greedy_decode")}
    result["modified"] = [0] if before is not None and not torch.equal(src, before) else []
    return result


@probe
def train_steps(
    ns,
    *,
    model,
    src,
    tgt,
    pad_idx,
    steps,
    lr,
    label_smoothing=0.0,
    max_grad_norm=None,
    optimizer="sgd",
    seed=0,
    stale_grads=False,
    omit=(),
):
    """Run the namespace's ``train_step`` ``steps`` times on its ``Transformer``; return losses and weights.
    ``stale_grads``: every parameter starts with a random gradient left over (from an evaluation, say), which a
    ``train_step`` that zeroes gradients before ``backward`` ignores. ``omit``: keyword arguments not passed."""
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
        loss = step_fn(
            net,
            src,
            tgt,
            opt,
            pad_idx=pad_idx,
            **passed({"label_smoothing": label_smoothing, "max_grad_norm": max_grad_norm}, omit),
        )
        if isinstance(loss, torch.Tensor) and loss.numel() == 1:
            raise SubmissionError(kind="bad_output", **said("say.loss_tensor", name="train_step"))
        if not isinstance(loss, float):
            raise SubmissionError(
                kind="bad_output", **said("say.loss_not_float", name="train_step", type=type_name(loss))
            )
        losses.append(loss)
    return {"losses": losses, "state": {n: plain(p) for n, p in net.named_parameters()}}


def _adam(parameters, lr):
    """``torch.optim.Adam(parameters, lr=lr)`` with ``foreach=True`` where every parameter is a plain tensor on the
    CPU: each step's dozen tensor operations are made once for all the parameters instead of once per parameter
    (per parameter, they took about a quarter of the overfit check's time). On the CPU a foreach operation runs
    the same kernel on each tensor in turn, so the update is the per-parameter one bit for bit: every loss and
    weight, and so every verdict, is what the default Adam gives. (The fused Adam is faster still but rounds
    differently, and that was enough to turn one catalogued bug's failed overfit into a pass.) Anything else gets
    the default Adam."""
    on_cpu = all(type(p) in (torch.Tensor, torch.nn.Parameter) and p.device.type == "cpu" for p in parameters)
    return torch.optim.Adam(parameters, lr=lr, foreach=True if on_cpu else None)


@probe
def overfit(ns, *, model, src, tgt, pad_idx, bos_idx, eos_idx, steps, lr, max_len):
    """Train the namespace's ``Transformer`` with its own ``train_step`` (Adam, float32), then greedy-decode."""
    net = build(ns, "Transformer", model["kwargs"], state=model["state"], dtype="float32", train=True)
    step_fn = ns.get("train_step")
    opt = _adam(list(net.parameters()), lr)
    seed_rng(0)
    losses = []
    for _ in range(steps):
        loss = step_fn(net, src, tgt, opt, pad_idx=pad_idx)
        losses.append(float(loss.detach() if isinstance(loss, torch.Tensor) else loss))
        if not math.isfinite(losses[-1]):
            break
    net.eval()
    out = ns.get("greedy_decode")(net, src, max_len=max_len, bos_idx=bos_idx, eos_idx=eos_idx, pad_idx=pad_idx)
    return {"losses": losses, "decoded": as_tensor(out, "greedy_decode")}
