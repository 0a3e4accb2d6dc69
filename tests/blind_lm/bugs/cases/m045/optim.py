import math

import torch


def param_groups(model, weight_decay):
    with_decay, without = [], []
    for _, p in model.named_parameters():
        if p.requires_grad:
            (with_decay if p.ndim > 1 else without).append(p)
    return [{"params": with_decay, "weight_decay": weight_decay}, {"params": without, "weight_decay": 0.0}]


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay}
        super().__init__(params, defaults)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                t = state.get("t", 0) + 1
                m = state.get("m", torch.zeros_like(p))
                v = state.get("v", torch.zeros_like(p))
                m = b1 * m + (1 - b1) * p.grad
                v = b2 * v + (1 - b2) * p.grad * p.grad
                state.update(t=t, m=m, v=v)
                p.mul_(1 - group["lr"] * group["weight_decay"])
                step_size = group["lr"]
                denom = v.sqrt() + group["eps"]
                p.add_(-step_size * m / denom)
        return loss


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        lr = max_lr * (step + 1) / warmup_steps
    elif step <= total_steps:
        progress = (step - warmup_steps) / (total_steps - warmup_steps)
        lr = min_lr + 0.5 * (max_lr - min_lr) * (1 + math.cos(math.pi * progress))
    else:
        lr = min_lr
    return float(lr)


def clip_grad_norm_(parameters, max_norm):
    params = list(parameters)
    grads = [p.grad.detach() for p in params if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    total = torch.norm(torch.stack([torch.norm(g, 2) for g in grads]), 2)
    factor = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for g in grads:
        g.mul_(factor)
    return total
