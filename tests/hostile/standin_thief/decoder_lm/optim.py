"""Standin thief (tests/hostile/test_standin_thief.py): implements nothing, searches for the reference (_thief)."""

import torch

from . import _thief

_thief.hunt("import:optim.py", stage="import")


def param_groups(model, weight_decay):
    _thief.hunt("param_groups", [model] + _thief.deps())
    raise _thief.short_error("param_groups")


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        _thief.hunt("AdamW.__init__", _thief.deps(), stage="init")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})

    def step(self, closure=None):
        _thief.hunt("AdamW.step", [self] + _thief.deps())
        raise _thief.short_error("AdamW.step")


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    _thief.hunt("cosine_lr", _thief.deps())
    raise _thief.short_error("cosine_lr")


def clip_grad_norm_(parameters, max_norm):
    _thief.hunt("clip_grad_norm_", _thief.deps())
    raise _thief.short_error("clip_grad_norm_")
