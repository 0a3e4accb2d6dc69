import math

import numpy as np
import torch


def param_groups(model, weight_decay):
    params = [p for _, p in model.named_parameters() if p.requires_grad]
    return [
        {"params": [p for p in params if p.ndim >= 2], "weight_decay": weight_decay},
        {"params": [p for p in params if p.ndim < 2], "weight_decay": 0.0},
    ]


class AdamW(torch.optim.Optimizer):
    """AdamW with torch._foreach_* ops over each group."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            if not params:
                continue
            grads = [p.grad for p in params]
            lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
            b1, b2 = group["betas"]
            ms, vs, bc1, bc2 = [], [], [], []
            for p in params:
                st = self.state[p]
                if not st:
                    st["t"] = 0
                    st["m"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    st["v"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                st["t"] += 1
                ms.append(st["m"])
                vs.append(st["v"])
                bc1.append(1 - b1 ** st["t"])
                bc2.append(1 - b2 ** st["t"])
            torch._foreach_mul_(params, 1 - lr * wd)
            torch._foreach_lerp_(ms, grads, 1 - b1)
            torch._foreach_mul_(vs, b2)
            torch._foreach_addcmul_(vs, grads, grads, value=1 - b2)
            denom = torch._foreach_sqrt(vs)
            torch._foreach_div_(denom, [math.sqrt(c) for c in bc2])
            torch._foreach_add_(denom, eps)
            torch._foreach_addcdiv_(params, ms, denom, [-lr / c for c in bc1])
        return loss


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        return float(max_lr * (step + 1) / warmup_steps)
    frac = np.clip((step - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    return float(min_lr + 0.5 * (max_lr - min_lr) * (1.0 + np.cos(np.pi * frac)))


def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in list(parameters) if p.grad is not None]
    if not grads:
        return torch.zeros(())
    flat = torch.cat([g.detach().reshape(-1) for g in grads])
    total = flat.norm(2)
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g.detach().mul_(coef)
    return total
