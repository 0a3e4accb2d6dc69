import math

import torch


def param_groups(model, weight_decay):
    seen = set()
    decay, other = [], []
    for _name, p in model.named_parameters():
        if id(p) in seen or not p.requires_grad:
            continue
        seen.add(id(p))
        (decay if len(p.shape) >= 2 else other).append(p)
    return [dict(params=decay, weight_decay=weight_decay), dict(params=other, weight_decay=0.0)]


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
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                st = self.state[p]
                if "step" not in st:
                    st["step"] = 0
                    st["m"] = torch.zeros_like(p)
                    st["v"] = torch.zeros_like(p)
                st["step"] += 1
                p.mul_(1.0 - group["lr"] * group["weight_decay"])
                st["m"].lerp_(p.grad, 1.0 - beta1)
                st["v"].mul_(beta2).addcmul_(p.grad, p.grad, value=1.0 - beta2)
                bc1 = 1.0 - beta1 ** st["step"]
                bc2 = 1.0 - beta2 ** st["step"]
                denom = (st["v"].sqrt() / math.sqrt(bc2)).add_(group["eps"])
                p.addcdiv_(st["m"], denom, value=-group["lr"] / bc1)
        return loss


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    step = min(step, total_steps)
    decay_ratio = (step - warmup_steps) / (total_steps - warmup_steps)
    coeff = 0.5 * (1.0 + math.cos(math.pi * decay_ratio))
    return min_lr + coeff * (max_lr - min_lr)


def clip_grad_norm_(parameters, max_norm):
    params = [p for p in parameters if p.grad is not None]
    sq = sum((p.grad.detach().double() ** 2).sum() for p in params)
    total = torch.as_tensor(sq, dtype=torch.float64).sqrt()
    dtype = params[0].grad.dtype if params else torch.float32
    total = total.to(dtype)
    scale = torch.clamp(max_norm / (total + 1e-6), max=1.0)
    for p in params:
        p.grad.detach().mul_(scale.to(p.grad.device))
    return total
