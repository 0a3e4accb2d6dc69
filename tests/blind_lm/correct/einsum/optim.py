import math

import torch


def param_groups(model, weight_decay):
    groups = {True: [], False: []}
    for _, param in model.named_parameters():
        if param.requires_grad:
            groups[param.ndim >= 2].append(param)
    return [
        {"params": groups[True], "weight_decay": weight_decay},
        {"params": groups[False], "weight_decay": 0.0},
    ]


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        with torch.no_grad():
            for group in self.param_groups:
                lr, wd, eps = group["lr"], group["weight_decay"], group["eps"]
                b1, b2 = group["betas"]
                for p in group["params"]:
                    g = p.grad
                    if g is None:
                        continue
                    s = self.state[p]
                    if not s:
                        s.update(step=0, exp_avg=torch.zeros_like(p), exp_avg_sq=torch.zeros_like(p))
                    s["step"] += 1
                    p.mul_(1 - lr * wd)
                    s["exp_avg"].mul_(b1).add_((1 - b1) * g)
                    s["exp_avg_sq"].mul_(b2).add_((1 - b2) * g.square())
                    m_hat = s["exp_avg"] / (1 - b1 ** s["step"])
                    v_hat = s["exp_avg_sq"] / (1 - b2 ** s["step"])
                    p.add_(torch.div(m_hat, v_hat.sqrt().add(eps)), alpha=-lr)
        return loss


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    if warmup_steps > 0 and step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if step <= total_steps:
        t = (step - warmup_steps) / (total_steps - warmup_steps)
        return min_lr + (max_lr - min_lr) * (1 + math.cos(math.pi * t)) / 2
    return min_lr


def clip_grad_norm_(parameters, max_norm):
    with torch.no_grad():
        grads = [p.grad for p in parameters if p.grad is not None]
        if len(grads) == 0:
            return torch.tensor(0.0)
        total = torch.sqrt(sum(torch.sum(g * g) for g in grads))
        factor = torch.minimum(max_norm / (total + 1e-6), torch.ones_like(total))
        for g in grads:
            g.mul_(factor)
        return total
