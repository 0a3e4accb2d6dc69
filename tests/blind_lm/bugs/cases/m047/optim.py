import numpy as np
import torch


def param_groups(model, weight_decay):
    named = [(n, p) for n, p in model.named_parameters() if p.requires_grad]
    return [
        {"params": [p for _, p in named if p.dim() >= 2], "weight_decay": weight_decay},
        {"params": [p for _, p in named if p.dim() < 2], "weight_decay": 0.0},
    ]


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
            ps = [p for p in group["params"] if p.grad is not None]
            if not ps:
                continue
            gs = [p.grad for p in ps]
            b1, b2 = group["betas"]
            for p in ps:
                st = self.state[p]
                if len(st) == 0:
                    st["step"] = 0
                    st["exp_avg"] = torch.zeros_like(p)
                    st["exp_avg_sq"] = torch.zeros_like(p)
                st["step"] += 1
            ms = [self.state[p]["exp_avg"] for p in ps]
            vs = [self.state[p]["exp_avg_sq"] for p in ps]
            steps = [self.state[p]["step"] for p in ps]
            torch._foreach_mul_(ps, 1.0 - group["lr"] * group["weight_decay"])
            torch._foreach_mul_(ms, b1)
            torch._foreach_add_(ms, gs, alpha=1.0 - b1)
            torch._foreach_mul_(vs, b2)
            torch._foreach_addcmul_(vs, gs, gs, value=1.0 - b2)
            m_hat = torch._foreach_div(ms, [1.0 - b1**t for t in steps])
            v_hat = torch._foreach_div(vs, [1.0 - b2**t for t in steps])
            denom = torch._foreach_add(torch._foreach_sqrt(v_hat), group["eps"])
            torch._foreach_addcdiv_(ps, m_hat, denom, value=-group["lr"])
        return loss


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        return float(max_lr * step / warmup_steps)
    if step > total_steps:
        return float(min_lr)
    ratio = (step - warmup_steps) / (total_steps - warmup_steps)
    return float(min_lr + (max_lr - min_lr) * 0.5 * (1.0 + np.cos(np.pi * ratio)))


def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.zeros(())
    total = torch.cat([g.detach().flatten() for g in grads]).norm()
    scale = max_norm / (total + 1e-6)
    if scale < 1.0:
        torch._foreach_mul_(grads, scale)
    return total
