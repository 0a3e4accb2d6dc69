import math

import torch


def param_groups(model, weight_decay):
    trainable = [p for _, p in model.named_parameters() if p.requires_grad]
    return [
        {"params": [p for p in trainable if p.ndim >= 2], "weight_decay": weight_decay},
        {"params": [p for p in trainable if p.ndim < 2], "weight_decay": 0.0},
    ]


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay}
        super().__init__(params, defaults)

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        with torch.no_grad():
            for group in self.param_groups:
                b1, b2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    st = self.state[p]
                    if not st:
                        st["t"] = 0
                        st["m"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                        st["v"] = torch.zeros_like(p, memory_format=torch.preserve_format)
                    st["t"] += 1
                    p.mul_(1.0 - group["lr"] * group["weight_decay"])
                    st["m"].lerp_(p.grad, 1.0 - b1)
                    st["v"].mul_(b2).addcmul_(p.grad, p.grad, value=1.0 - b2)
                    m_hat_scale = 1.0 / (1.0 - b1 ** st["t"])
                    denom = st["v"].sqrt().div_(math.sqrt(1.0 - b2 ** st["t"])).add_(group["eps"])
                    p.addcdiv_(st["m"], denom, value=-group["lr"] * m_hat_scale)
        return loss


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    progress = min(1.0, (step - warmup_steps) / (total_steps - warmup_steps))
    return min_lr + (max_lr - min_lr) * 0.5 * (1.0 + math.cos(math.pi * progress))


def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.zeros(())
    total = torch.sqrt(sum((g.detach().double() ** 2).sum() for g in grads)).to(grads[0].dtype)
    coef = min(1.0, float(max_norm / (total + 1e-6)))
    if coef < 1.0:
        for g in grads:
            g.mul_(coef)
    return total
