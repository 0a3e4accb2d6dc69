import math

import torch


def param_groups(model, weight_decay):
    decay = []
    rest = []
    for _, param in model.named_parameters():
        if param.requires_grad:
            if len(param.shape) >= 2:
                decay.append(param)
            else:
                rest.append(param)
    return [dict(params=decay, weight_decay=weight_decay), dict(params=rest, weight_decay=0.0)]


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            lr, (b1, b2), eps, wd = group["lr"], group["betas"], group["eps"], group["weight_decay"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                s = self.state[p]
                if not s:
                    s.update(step=0, m=torch.zeros_like(p), v=torch.zeros_like(p))
                s["step"] += 1
                p.mul_(1.0 - lr * wd)
                s["m"].mul_(b1).add_((1.0 - b1) * p.grad)
                s["v"].mul_(b2).add_((1.0 - b2) * p.grad * p.grad)
                c1 = 1.0 - b1 ** s["step"]
                c2 = 1.0 - b2 ** s["step"]
                p.sub_(lr * (s["m"] / c1) / ((s["v"] / c2).sqrt() + eps))
        return loss


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if step > total_steps:
        return min_lr
    t = (step - warmup_steps) / (total_steps - warmup_steps)
    return min_lr + (max_lr - min_lr) * (1.0 + math.cos(math.pi * t)) / 2.0


def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if len(grads) == 0:
        return torch.tensor(0.0)
    total = torch.linalg.vector_norm(torch.stack([g.detach().norm(2) for g in grads]), 2)
    factor = max_norm / (total + 1e-6)
    if factor < 1:
        for g in grads:
            g.mul_(factor)
    return total
