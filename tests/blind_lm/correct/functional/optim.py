import torch


def param_groups(model, weight_decay):
    trainable = [p for _, p in model.named_parameters() if p.requires_grad]
    decay = list(filter(lambda p: p.dim() >= 2, trainable))
    no_decay = list(filter(lambda p: p.dim() < 2, trainable))
    return [{"params": decay, "weight_decay": weight_decay}, {"params": no_decay, "weight_decay": 0.0}]


def _adamw_update(p, g, state, lr, beta1, beta2, eps, wd):
    state["t"] = state.get("t", 0) + 1
    t = state["t"]
    m = state.get("m", torch.zeros_like(p))
    v = state.get("v", torch.zeros_like(p))
    m = beta1 * m + (1 - beta1) * g
    v = beta2 * v + (1 - beta2) * g * g
    state["m"], state["v"] = m, v
    decayed = p * (1 - lr * wd)
    update = (m / (1 - beta1**t)) / ((v / (1 - beta2**t)).sqrt() + eps)
    p.copy_(decayed - lr * update)


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, {"lr": lr, "betas": tuple(betas), "eps": eps, "weight_decay": weight_decay})

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            b1, b2 = group["betas"]
            for p in group["params"]:
                if p.grad is not None:
                    _adamw_update(p, p.grad, self.state[p], group["lr"], b1, b2, group["eps"], group["weight_decay"])
        return loss


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if step >= total_steps:
        return float(min_lr)
    progress = torch.tensor((step - warmup_steps) / (total_steps - warmup_steps), dtype=torch.float64)
    return float(min_lr + (max_lr - min_lr) * 0.5 * (1 + torch.cos(torch.pi * progress)))


def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    norms = torch._foreach_norm(grads, 2)
    total = torch.linalg.vector_norm(torch.stack(norms), 2)
    coef = (max_norm / (total + 1e-6)).clamp(max=1.0)
    torch._foreach_mul_(grads, coef)
    return total
