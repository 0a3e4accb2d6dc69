r"""The optimisation pieces: which parameters decay, AdamW, the learning-rate schedule, gradient clipping.

    AdamW (Loshchilov & Hutter 2019), at step t of a parameter θ with gradient g:
        θ ← θ − lr·λ·θ                                        (decoupled weight decay)
        m ← β1·m + (1 − β1)·g,   v ← β2·v + (1 − β2)·g²
        θ ← θ − lr · m̂ / (√v̂ + ε),   m̂ = m / (1 − β1^t),  v̂ = v / (1 − β2^t)

    lr(step) = max_lr·(step + 1)/warmup                                   step < warmup
             = min_lr + ½(max_lr − min_lr)(1 + cos(π·(step − warmup)/(total − warmup)))   up to total
             = min_lr                                                     after total

    clip: g ← g · min(1, max_norm / (‖all g‖₂ + 1e-6))

Weight decay added to the gradient (Adam's L2) would be rescaled by Adam's per-coordinate step size, so
parameters with large gradients would barely decay; AdamW shrinks the weights directly instead.
"""

import math

import torch


def param_groups(model, weight_decay):
    """Split a model's parameters into the two AdamW groups: decayed and not decayed.

    Args:
        model: any ``nn.Module``.
        weight_decay: λ for the decayed group.

    Returns:
        ``[{"params": [...], "weight_decay": weight_decay}, {"params": [...], "weight_decay": 0.0}]``: first
        every parameter with 2 or more dimensions (linear weights, embeddings, hence a tied head), then every
        parameter with fewer (norm weights, biases). Each list in ``model.named_parameters()`` order; a
        shared parameter appears once; parameters with ``requires_grad=False`` are left out.

    Hints:
        ``named_parameters()`` already lists a tied tensor once. Shrinking a norm's scale or a bias towards
        0 is not regularisation, it is damage: they get no decay.
    """
    trainable = [p for _, p in model.named_parameters() if p.requires_grad]
    return [
        {"params": [p for p in trainable if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for p in trainable if p.dim() < 2], "weight_decay": 0.0},
    ]


class AdamW(torch.optim.Optimizer):
    """Adam with decoupled weight decay, written by hand (the same updates as ``torch.optim.AdamW``).

    Args:
        params: an iterable of tensors or of group dicts (``param_groups(...)``), as for any optimizer.
        lr: learning rate (default ``1e-3``).
        betas: (β1, β2), default ``(0.9, 0.999)``.
        eps: added to √v̂ (default ``1e-8``).
        weight_decay: λ (default ``1e-2``); a group's own value overrides it.

    ``step(closure=None)`` returns the closure's loss (or ``None``). For each parameter θ with a gradient
    g, with ``t`` its own step count (1 on its first step) and ``lr``, λ read from its group at this step:
    ``θ ← θ − lr·λ·θ``; ``m ← β1·m + (1 − β1)·g``; ``v ← β2·v + (1 − β2)·g²`` (both start at 0);
    ``θ ← θ − lr · (m / (1 − β1^t)) / (sqrt(v / (1 − β2^t)) + eps)``. Parameters without a gradient
    are skipped.

    Hints:
        Subclass ``torch.optim.Optimizer``: pass the defaults as a dict to ``super().__init__``, loop over
        ``self.param_groups``, keep m, v and t in ``self.state[p]``. Update under ``torch.no_grad()``,
        in place. The decay multiplies θ before the Adam step; it never touches m or v.
    """

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    self._update(p, group)
        return loss

    def _update(self, p, group):
        """One AdamW update of ``p`` in place, with ``group``'s hyper-parameters."""
        lr, (beta1, beta2), eps, decay = group["lr"], group["betas"], group["eps"], group["weight_decay"]
        state = self.state[p]
        if not state:
            state["step"] = 0
            state["exp_avg"] = torch.zeros_like(p)  # m
            state["exp_avg_sq"] = torch.zeros_like(p)  # v
        state["step"] += 1
        t, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        p.mul_(1 - lr * decay)  # decoupled: the gradient never sees the decay
        m.mul_(beta1).add_(p.grad, alpha=1 - beta1)
        v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
        denom = (v / (1 - beta2**t)).sqrt_().add_(eps)  # √v̂ + ε
        p.addcdiv_(m, denom, value=-lr / (1 - beta1**t))  # θ − lr·m̂ / (√v̂ + ε)


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    """The learning rate at ``step``: linear warm-up, then a cosine decay from ``max_lr`` to ``min_lr``.

    Args:
        step: the optimizer step, from 0.
        max_lr: the peak rate, reached at the end of warm-up.
        min_lr: the floor, reached at ``total_steps``.
        warmup_steps: steps of warm-up, ``0 <= warmup_steps < total_steps``.
        total_steps: where the cosine ends.

    Returns:
        a float: ``max_lr·(step + 1)/warmup_steps`` while ``step < warmup_steps``; then
        ``min_lr + ½(max_lr − min_lr)(1 + cos(π·(step − warmup_steps)/(total_steps − warmup_steps)))``
        up to ``step == total_steps``; ``min_lr`` after.

    Hints:
        ``step + 1`` so that step 0 already learns. The cosine's progress runs from 0 (end of warm-up)
        to 1 (``total_steps``).
    """
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if step > total_steps:
        return min_lr
    progress = (step - warmup_steps) / (total_steps - warmup_steps)  # 0 … 1
    return min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))


def clip_grad_norm_(parameters, max_norm):
    """Scale all gradients together so that their joint L2 norm is at most ``max_norm``, in place.

    Args:
        parameters: an iterable of tensors; those without a gradient are skipped.
        max_norm: the largest norm allowed.

    Returns:
        the norm before clipping, a 0-dim tensor: ``total = sqrt(sum of every gradient's squared
        entries)``; every gradient is multiplied by ``min(1, max_norm / (total + 1e-6))``. The same as
        ``torch.nn.utils.clip_grad_norm_(parameters, max_norm)``.

    Hints:
        One norm over all gradients (as if concatenated), not one per tensor: clipping must keep the
        direction of the whole update. ``parameters`` may be a generator: read it once.
    """
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    total = torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))  # ‖all g‖₂
    scale = (max_norm / (total + 1e-6)).clamp(max=1.0)
    for g in grads:
        g.mul_(scale.to(g.device, g.dtype))
    return total
