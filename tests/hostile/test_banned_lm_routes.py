"""The language model's banned APIs by every route, in process and in a worker (``--sealed``).

Each hostile submission is the assignment's reference (``assignments/decoder_lm/reference``) copied to a
temporary folder with some contract names rewritten to use a banned API: ``RMSNorm`` on ``rms_norm``,
``AdamW`` on torch's Adam/AdamW, ``cosine_lr`` on ``lr_scheduler``, ``clip_grad_norm_`` on torch's clipping
functions, ``causal_attention`` on ``flex_attention``. Every rewrite computes the right numbers (its checks
pass) and hides from the static scan (no name it knows is written out: an alias it cannot follow, a name
spelled at run time, a function's ``__wrapped__``, code compiled under another file name, a reference taken
before the guard was installed, a subclass of the banned class); the runtime guard must still withhold the
task's points with a finding that names the task, the submission's file and the rewritten line (marked
``# route: <case>`` in the texts below). Correct submissions with look-alike code of their own (a class
named ``AdamW``, a function named ``clip_grad_norm_``, RMSNorm written with ``rsqrt``, ``torch.optim.SGD``)
keep every point.

A jailed worker (``--sealed`` as root) has only the modules ``grader.submission.child.PRELOAD`` names:
``torch.nn.attention.flex_attention`` cannot be imported there, so its cases only count in process and in an
unjailed worker.
"""

import ast
import importlib
import runpy
import shutil
import sys
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F

from grader import api
from grader.assignment import load
from grader.submission.banned import RuntimeGuard, scan

LM = load("decoder_lm")
REFERENCE = Path(LM.reference)
BOX = "_gradekit_test_early_box"
"""Where ``early.py`` keeps what it captured: a module that outlives one import of the submission."""


def _replace(source, name, text):
    """``source`` with its top-level definition of ``name`` replaced by ``text``."""
    tree = ast.parse(source)
    node = next(n for n in tree.body if getattr(n, "name", None) == name)
    start = min([node.lineno] + [d.lineno for d in node.decorator_list]) - 1
    lines = source.splitlines(keepends=True)
    return "".join(lines[:start]) + text.strip("\n") + "\n" + "".join(lines[node.end_lineno:])


def build(dest, cases, files=()):
    """The reference copied to ``dest`` with each case's definition replaced; ``files``: extra files."""
    dest = Path(dest)
    shutil.copytree(REFERENCE, dest, ignore=shutil.ignore_patterns("__pycache__"))
    for case in cases:
        path = dest / case.file
        path.write_text(_replace(path.read_text(encoding="utf-8"), case.name, case.text), encoding="utf-8")
    for name, text in files:
        (dest / name).write_text(text, encoding="utf-8")
    return dest


class Case:
    def __init__(self, task, file, name, banned, text):
        self.task, self.file, self.name, self.banned, self.text = task, file, name, banned, text


RMS_NAMES = {"torch.nn.functional.rms_norm", "torch.rms_norm", "torch.nn.RMSNorm"}
ADAM_NAMES = {"torch.optim.AdamW", "torch.optim.Adam"}
CLIP_NAMES = {"torch.nn.utils.clip_grad_norm_", "torch.nn.utils.clip_grad_norm", "torch.nn.utils.get_total_norm",
              "torch.nn.utils.clip_grads_with_norm_"}
SCHEDULER = {"torch.optim.lr_scheduler"}
FLEX = {"torch.nn.attention.flex_attention"}

RMS_INIT = '''
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))
'''


def rms_with(prelude, call, marker):
    """``RMSNorm`` whose forward normalises with ``call`` (x, normalized_shape, weight, eps)."""
    return prelude + '''

class RMSNorm(nn.Module):''' + RMS_INIT + f'''
    def forward(self, x):
        compute = torch.promote_types(x.dtype, torch.float32)
        out = {call}(x.to(compute), (x.shape[-1],), self.weight.to(compute), self.eps)  # route: {marker}
        return out.to(x.dtype)
'''


ADAMW_INIT = '''
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                                  "amsgrad": False, "maximize": False, "foreach": None, "capturable": False,
                                  "differentiable": False, "fused": None, "decoupled_weight_decay": True})
'''

FUNCTIONAL_STEP = '''
def step(self, closure=None):
    loss = None
    if closure is not None:
        with torch.enable_grad():
            loss = closure()
    with torch.no_grad():
        for group in self.param_groups:
            params, grads, avgs, squares, steps = [], [], [], [], []
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                if not state:
                    state["step"] = torch.tensor(0.0)
                    state["exp_avg"] = torch.zeros_like(p)
                    state["exp_avg_sq"] = torch.zeros_like(p)
                {decay}
                params.append(p)
                grads.append(p.grad)
                avgs.append(state["exp_avg"])
                squares.append(state["exp_avg_sq"])
                steps.append(state["step"])
            beta1, beta2 = group["betas"]
            hyper = dict(amsgrad=False, beta1=beta1, beta2=beta2, lr=group["lr"], eps=group["eps"], maximize=False,
                         foreach=False)
            {update}(params, grads, avgs, squares, [], steps, weight_decay={weight_decay}, **hyper){comment}
    return loss
'''
"""An Adam step through torch's functional Adam (or AdamW): ``{update}`` runs it, ``{decay}`` before."""


def indent(text):
    return "\n".join(("    " + line) if line.strip() else "" for line in text.strip("\n").splitlines()) + "\n"


def cosine_with(prelude, tail, marker):
    """``cosine_lr`` whose cosine part is ``tail`` (``progress`` from 0 to 1; ``fake``: what a CosineAnnealingLR
    holds at this step)."""
    return prelude + f'''

def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if step > total_steps:
        return min_lr
    after = step - warmup_steps
    progress = after / (total_steps - warmup_steps)
    fake = types.SimpleNamespace(base_lrs=[max_lr], eta_min=min_lr, T_max=total_steps - warmup_steps, last_epoch=after)
    return {tail}  # route: {marker}
'''


def clip_with(prelude, body, marker):
    return prelude + f'''

def clip_grad_norm_(parameters, max_norm):
    parameters = list(parameters)
    return {body}  # route: {marker}
'''


OWN_ATTENTION = '''
def _own_attention(q, k, v):
    B, H, Lq, Dh = q.shape
    Hkv, Lk = k.shape[1], k.shape[2]
    k = k.repeat_interleave(H // Hkv, dim=1)
    v = v.repeat_interleave(H // Hkv, dim=1)
    scores = q @ k.transpose(-2, -1) / math.sqrt(Dh)
    keep = torch.ones(Lq, Lk, dtype=torch.bool, device=q.device).tril(diagonal=Lk - Lq)
    return scores.masked_fill(~keep, float("-inf")).softmax(dim=-1) @ v
'''


def attention_with(prelude, call, marker):
    """``causal_attention`` on ``call`` where it can run (no gradient on the CPU), else written out."""
    return prelude + OWN_ATTENTION + f'''

def causal_attention(q, k, v):
    if q.device.type != "cpu" or torch.is_grad_enabled() and (q.requires_grad or k.requires_grad
                                                             or v.requires_grad):
        return _own_attention(q, k, v)
    offset = k.shape[2] - q.shape[2]

    def causal(score, b, h, i, j):
        return torch.where(j <= i + offset, score, float("-inf"))

    return {call}(q, k, v, score_mod=causal, enable_gqa=True)  # route: {marker}
'''


EARLY = f'''"""Captured before any grading starts (in a notebook cell, by test collection), kept where a later import
of this file finds it again: the references are those torch had before any guard was installed."""

import importlib
import sys
import types

import torch

_box = sys.modules.get({BOX!r})
if _box is None:
    _box = types.ModuleType({BOX!r})
    sys.modules[{BOX!r}] = _box
    _box.norm = getattr(torch, "rms_" + "norm")
    _box.adam_init = vars(getattr(torch.optim, "Ad" + "am"))["__init__"]
    _box.closed_form = vars(getattr(torch.optim, "lr_" + "scheduler").CosineAnnealingLR)["_get_closed_form_lr"]
    _box.clip = getattr(torch.nn.utils, "clip_grad" + "_norm_")
    try:  # a jailed worker has no such module
        _box.flex = getattr(importlib.import_module("torch.nn.attention.flex_" + "attention"), "flex_" + "attention")
    except ImportError:
        _box.flex = None
norm, adam_init, closed_form, clip, flex = _box.norm, _box.adam_init, _box.closed_form, _box.clip, _box.flex
'''

ROUTES = {
    # -- an alias the static scan cannot follow -------------------------------------------------------------
    "alias": [
        Case("rmsnorm", "norm.py", "RMSNorm", RMS_NAMES, rms_with(
            "(_vf,) = (torch._C._VariableFunctions,)", "_vf.rms_norm", "rms_alias")),
        Case("adamw", "optim.py", "AdamW", ADAM_NAMES, '''
(_optim,) = (torch.optim,)


class AdamW(torch.optim.Optimizer):''' + ADAMW_INIT + '''
    _init_group = _optim.Adam._init_group
    step = _optim.Adam.step  # route: adamw_alias
'''),
        Case("schedule", "optim.py", "cosine_lr", SCHEDULER, cosine_with(
            "import types\n\n(_optim,) = (torch.optim,)",
            "_optim.lr_scheduler.CosineAnnealingLR._get_closed_form_lr(fake)[0]", "sched_alias")),
        Case("clip", "optim.py", "clip_grad_norm_", CLIP_NAMES, clip_with(
            "(_clipping,) = (torch.nn.utils.clip_grad,)", "_clipping.clip_grad_norm_(parameters, max_norm)",
            "clip_alias")),
    ],
    # -- the name spelled at run time -----------------------------------------------------------------------
    "getattr": [
        Case("rmsnorm", "norm.py", "RMSNorm", RMS_NAMES, rms_with(
            '_norm = getattr(torch.ops.aten, "rms_" + "norm")', "_norm", "rms_getattr")),
        Case("adamw", "optim.py", "AdamW", ADAM_NAMES, '''
_adam = getattr(torch.optim._functional, "ad" + "am")


class AdamW(torch.optim.Optimizer):''' + ADAMW_INIT + "\n" + indent(FUNCTIONAL_STEP.format(
            decay='p.mul_(1 - group["lr"] * group["weight_decay"])', update="_adam", weight_decay="0.0",
            comment="  # route: adam_getattr"))),
        Case("schedule", "optim.py", "cosine_lr", SCHEDULER, cosine_with(
            'import types\n\n_anneal = getattr(getattr(torch.optim, "lr_" + "scheduler").OneCycleLR, "_annealing_cos")',
            "_anneal(max_lr, min_lr, progress)", "sched_getattr")),
        Case("clip", "optim.py", "clip_grad_norm_", CLIP_NAMES, '''
_total = getattr(torch.nn.utils.clip_grad, "_get_total" + "_norm")
_scale = getattr(torch.nn.utils.clip_grad, "_clip_grads" + "_with_norm_")


def clip_grad_norm_(parameters, max_norm):
    parameters = list(parameters)
    total = _total([p.grad for p in parameters if p.grad is not None])  # route: clip_getattr
    _scale(parameters, max_norm, total)
    return total
'''),
        Case("gqa", "attention.py", "causal_attention", FLEX, attention_with(
            'import importlib\n\n_flex = getattr(importlib.import_module("torch.nn.attention.flex_" + "attention"),'
            ' "flex_" + "attention")', "_flex", "flex_getattr")),
    ],
    # -- what a function's __wrapped__ holds ------------------------------------------------------------------
    "wrapped": [
        Case("adamw", "optim.py", "AdamW", ADAM_NAMES, '''
_unwrapped_step = getattr(getattr(torch.optim, "Ad" + "amW").step, "__wrapped__")


class AdamW(torch.optim.Optimizer):''' + ADAMW_INIT + '''
    _init_group = getattr(torch.optim, "Ad" + "amW")._init_group
    step = torch.no_grad()(_unwrapped_step)  # route: adamw_wrapped
'''),
        Case("schedule", "optim.py", "cosine_lr", SCHEDULER, cosine_with(
            'import types\n\n_anneal = vars(getattr(torch.optim, "lr_" + "scheduler").OneCycleLR)["_annealing_cos"]'
            '.__wrapped__',
            "_anneal(max_lr, min_lr, progress)", "sched_wrapped")),
        Case("clip", "optim.py", "clip_grad_norm_", CLIP_NAMES, clip_with(
            '_deprecated = getattr(torch.nn.utils.clip_grad, "clip_grad" + "_norm").__wrapped__',
            "_deprecated(parameters, max_norm)", "clip_wrapped")),
    ],
    # -- code compiled under a file name outside the submission -------------------------------------------------
    "foreign": [
        Case("rmsnorm", "norm.py", "RMSNorm", RMS_NAMES, '''
_SOURCE = """
def forward(self, x):
    compute = torch.promote_types(x.dtype, torch.float32)
    out = torch.ops.aten.rms_norm.default(x.to(compute), [x.shape[-1]], self.weight.to(compute), self.eps)
    return out.to(x.dtype)
"""
_scope = {"torch": torch}
exec(compile(_SOURCE, "/usr/lib/python3/x.py", "exec"), _scope)


class RMSNorm(nn.Module):''' + RMS_INIT + '''
    forward = _scope["forward"]  # route: rms_foreign
'''),
        Case("adamw", "optim.py", "AdamW", ADAM_NAMES, '''
_ADAMW_SOURCE = """''' + FUNCTIONAL_STEP.format(decay="", update="torch.optim._functional.adamw",
                                                weight_decay='group["weight_decay"]', comment="") + '''"""
_adamw_scope = {"torch": torch}
exec(compile(_ADAMW_SOURCE, "/usr/lib/python3/x.py", "exec"), _adamw_scope)


class AdamW(torch.optim.Optimizer):''' + ADAMW_INIT + '''
    step = _adamw_scope["step"]  # route: adamw_foreign
'''),
        Case("schedule", "optim.py", "cosine_lr", SCHEDULER, '''
_SCHEDULE_SOURCE = """
import types


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if step > total_steps:
        return min_lr
    fake = types.SimpleNamespace(base_lrs=[max_lr], eta_min=min_lr, T_max=total_steps - warmup_steps,
                                 last_epoch=step - warmup_steps)
    return torch.optim.lr_scheduler.CosineAnnealingLR._get_closed_form_lr(fake)[0]
"""
_schedule_scope = {"torch": torch}
exec(compile(_SCHEDULE_SOURCE, "/usr/lib/python3/x.py", "exec"), _schedule_scope)
cosine_lr = _schedule_scope["cosine_lr"]  # route: sched_foreign
'''),
        # compiled under one of torch's own file names: library code, as far as its file name says
        Case("clip", "optim.py", "clip_grad_norm_", CLIP_NAMES, '''
_CLIP_SOURCE = """
def clip_grad_norm_(parameters, max_norm):
    return torch.nn.utils.clip_grad.clip_grad_norm_(parameters, max_norm)
"""
_clip_scope = {"torch": torch}
exec(compile(_CLIP_SOURCE, torch.nn.utils.clip_grad.__file__, "exec"), _clip_scope)
clip_grad_norm_ = _clip_scope["clip_grad_norm_"]  # route: clip_foreign
'''),
        Case("gqa", "attention.py", "causal_attention", FLEX, OWN_ATTENTION + '''
_FLEX_SOURCE = """
import importlib


def causal_attention(q, k, v):
    if torch.is_grad_enabled() and (q.requires_grad or k.requires_grad or v.requires_grad):
        return own(q, k, v)
    offset = k.shape[2] - q.shape[2]
    flex = importlib.import_module("torch.nn.attention.flex_attention").flex_attention
    return flex(q, k, v, score_mod=lambda s, b, h, i, j: torch.where(j <= i + offset, s, float("-inf")),
                enable_gqa=True)
"""
_flex_scope = {"torch": torch, "own": _own_attention}
exec(compile(_FLEX_SOURCE, "/usr/lib/python3/x.py", "exec"), _flex_scope)
causal_attention = _flex_scope["causal_attention"]  # route: flex_foreign
'''),
    ],
    # -- a reference captured before the guard was installed (early.py, run once before grading) --------------
    "early": [
        Case("rmsnorm", "norm.py", "RMSNorm", RMS_NAMES, rms_with("from .early import norm as _norm", "_norm",
                                                                  "rms_early")),
        Case("adamw", "optim.py", "AdamW", ADAM_NAMES, '''
from .early import adam_init as _adam_init


class AdamW(getattr(torch.optim, "Ad" + "am")):  # route: adamw_early
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        _adam_init(self, params, lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                   decoupled_weight_decay=True)
'''),
        Case("schedule", "optim.py", "cosine_lr", SCHEDULER, cosine_with(
            "import types\n\nfrom .early import closed_form as _closed_form", "_closed_form(fake)[0]",
            "sched_early")),
        Case("clip", "optim.py", "clip_grad_norm_", CLIP_NAMES, clip_with(
            "from .early import clip as _early_clip", "_early_clip(parameters, max_norm)", "clip_early")),
        Case("gqa", "attention.py", "causal_attention", FLEX, attention_with(
            "from .early import flex as _early_flex", "_early_flex", "flex_early")),
    ],
    # -- a subclass of the banned class, its own methods calling the inherited ones ----------------------------
    "subclass": [
        Case("rmsnorm", "norm.py", "RMSNorm", RMS_NAMES, '''
class RMSNorm(getattr(nn, "RMS" + "Norm")):
    def __init__(self, dim, eps=1e-6):
        super().__init__(dim, eps=eps)

    def forward(self, x):
        compute = torch.promote_types(x.dtype, torch.float32)
        return super().forward(x.to(compute)).to(x.dtype)  # route: rms_subclass
'''),
        Case("adamw", "optim.py", "AdamW", ADAM_NAMES, '''
class AdamW(getattr(torch.optim, "Ad" + "amW")):  # route: adamw_subclass
    pass
'''),
    ],
}

OTHERS = {"optim.py": "decay_groups", "norm.py": None, "attention.py": None}
"""A task of the same file that no case rewrites: it keeps every point."""


def _tasks(cases):
    tasks = [c.task for c in cases]
    tasks += [OTHERS[c.file] for c in cases if OTHERS[c.file] and OTHERS[c.file] not in tasks]
    return list(dict.fromkeys(tasks))


@pytest.fixture
def early_box():
    """What ``early.py`` captures, taken in this process before any grading, and dropped afterwards."""
    sys.modules.pop(BOX, None)
    yield
    sys.modules.pop(BOX, None)


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("sealed", [False, True], ids=["in-process", "worker"])
@pytest.mark.parametrize("route", sorted(ROUTES))
def test_route_withholds_the_points_of_its_task(tmp_path, route, sealed, early_box):
    cases = ROUTES[route]
    root = build(tmp_path / route, cases, files=[("early.py", EARLY)])
    static = scan(root, LM)
    assert not [f for f in static if f.file != "early.py"], static  # the static scan sees none of it
    if route == "early":
        runpy.run_path(str(root / "early.py"))  # before the guard exists (in a worker: nothing was captured)
    tasks = _tasks(cases)
    result = api.check(path=root, assignment="decoder_lm", tasks=tasks, profile="quick", sealed=sealed)
    by_id = {t.id: t for t in result.tasks}
    for case in cases:
        task = by_id[case.task]
        if case.banned is FLEX and result.jailed:  # no flex_attention in a jailed worker: the route is not there
            assert task.score == 0 and not task.banned, task
            continue
        earned = sum(c.score for c in task.checks)
        marker = f"# route: {case.text.split('# route: ')[1].split()[0]}"
        assert task.banned, f"{marker}: no finding on {case.task}; all findings: {result.banned_api}"
        assert task.score == 0 and earned > 0, (marker, task.score, earned,
                                                [(c.id, c.status, c.message) for c in task.checks])
        hits = [f for f in task.banned if f["file"] == case.file and marker in f["code"] and f["line"] > 0]
        assert hits, (marker, task.banned)
        assert all(f["name"] in case.banned for f in hits), (marker, hits)
        lines = (root / case.file).read_text(encoding="utf-8").splitlines()
        assert all(marker in lines[f["line"] - 1] for f in hits), (marker, hits)
    for other in set(tasks) - {c.task for c in cases}:
        assert not by_id[other].banned and by_id[other].score == by_id[other].max_score, (other, by_id[other])
    assert all(f["task"] for f in result.banned_api), result.banned_api


# -- both directions: look-alike code of the submission's own keeps every point ------------------------------
LOOK_ALIKES = [
    Case("rmsnorm", "norm.py", "RMSNorm", (), '''
class RMSNorm(nn.Module):''' + RMS_INIT + '''
    def forward(self, x):
        compute = torch.promote_types(x.dtype, torch.float32)
        xc = x.to(compute)
        return (xc * xc.pow(2).mean(-1, keepdim=True).add(self.eps).rsqrt() * self.weight.to(compute)).to(x.dtype)
'''),
    Case("adamw", "optim.py", "AdamW", (), '''
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
                state = self.state[p]
                if not state:
                    state.update(step=0, m=torch.zeros_like(p), v=torch.zeros_like(p))
                state["step"] += 1
                t = state["step"]
                p.mul_(1 - group["lr"] * group["weight_decay"])
                state["m"].lerp_(p.grad, 1 - beta1)
                state["v"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                denom = (state["v"] / (1 - beta2**t)).sqrt().add_(group["eps"])
                p.addcdiv_(state["m"], denom, value=-group["lr"] / (1 - beta1**t))
        return loss
'''),
    Case("schedule", "optim.py", "cosine_lr", (), '''
def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    """No lr_scheduler here: the formula, as CosineAnnealingLR's closed form writes it."""
    if step < warmup_steps:
        return max_lr * (step + 1) / warmup_steps
    if step > total_steps:
        return min_lr
    t_max, last_epoch = total_steps - warmup_steps, step - warmup_steps
    return min_lr + (max_lr - min_lr) * (1 + math.cos(math.pi * last_epoch / t_max)) / 2
'''),
    Case("clip", "optim.py", "clip_grad_norm_", (), '''
def get_total_norm(grads):
    return torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(g) for g in grads]))


def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in parameters if p.grad is not None]
    if not grads:
        return torch.tensor(0.0)
    total = get_total_norm(grads)
    torch._foreach_mul_(grads, (max_norm / (total + 1e-6)).clamp(max=1.0))
    return total
'''),
]


@pytest.mark.parametrize("sealed", [False, True], ids=["in-process", "worker"])
def test_look_alikes_of_the_submissions_own_keep_every_point(tmp_path, sealed):
    """Its own AdamW (subclassing torch.optim.Optimizer), clip_grad_norm_ (on torch._foreach_mul_, as torch's
    clip_grad_norm_ is), get_total_norm, RMSNorm and the cosine formula: not one finding, every point; the
    training step runs with the grader's torch.optim.SGD meanwhile."""
    root = build(tmp_path / "own", LOOK_ALIKES)
    tasks = _tasks(LOOK_ALIKES) + ["train_step"]
    result = api.check(path=root, assignment="decoder_lm", tasks=tasks, profile="quick", sealed=sealed)
    assert not result.banned_api, result.banned_api
    assert result.score == result.max_score, [(t.id, t.score, t.max_score) for t in result.tasks]


# -- what identifies each API, route by route, at the guard itself -------------------------------------------
def _params(device="cpu"):
    p = torch.nn.Parameter(torch.randn(3, 4, device=device))
    p.grad = torch.randn(3, 4, device=device)
    return [p]


def _vmap_rms(x):
    return torch.func.vmap(lambda r: F.rms_norm(r, (8,)))(x)


def _flex(q):
    flex = importlib.import_module("torch.nn.attention.flex_attention").flex_attention
    return flex(q, q, q)


def _flex_below(how):
    """flex_attention's computation without its public function: the higher-order operator itself
    (``torch.ops.higher_order.flex_attention``), or the eager implementation behind it."""
    public = importlib.import_module("torch.nn.attention.flex_attention")
    q = torch.randn(1, 2, 4, 8)
    args = (q, q, q, lambda score, b, h, i, j: score, public._create_empty_block_mask(q, q).as_tuple(), 8**-0.5,
            public._apply_kernel_options(q, q, q, True, None))
    if how == "operator":
        return torch.ops.higher_order.flex_attention(*args)
    return importlib.import_module("torch._higher_order_ops.flex_attention").math_attention(*args)


RMS_CALLS = {
    "F.rms_norm": lambda x: F.rms_norm(x, (8,)),
    "torch.rms_norm": lambda x: torch.rms_norm(x, (8,)),
    "aten.rms_norm": lambda x: torch.ops.aten.rms_norm(x, [8]),
    "VariableFunctions.rms_norm": lambda x: torch._C._VariableFunctions.rms_norm(x, [8]),
    "nn.RMSNorm": lambda x: torch.nn.RMSNorm(8, device=x.device)(x),
    "no_grad": lambda x: torch.no_grad()(F.rms_norm)(x, (8,)),
    "inference_mode": lambda x: torch.inference_mode()(F.rms_norm)(x.detach(), (8,)),
    "vmap": _vmap_rms,
    "func.grad": lambda x: torch.func.grad(lambda r: F.rms_norm(r, (8,)).sum())(x.detach()),
    "decomposition": lambda x: importlib.import_module("torch._decomp").decomposition_table[
        torch.ops.aten._fused_rms_norm.default](x, [8], None, 1e-6),
}

CALLS = {
    # route: (the banned name it is, the call)
    "AdamW": ("torch.optim.AdamW", lambda: torch.optim.AdamW(_params()).step()),
    "AdamW foreach": ("torch.optim.AdamW", lambda: torch.optim.AdamW(_params(), foreach=True).step()),
    "AdamW fused": ("torch.optim.AdamW", lambda: torch.optim.AdamW(_params(), fused=True).step()),
    "Adam decoupled": ("torch.optim.AdamW", lambda: torch.optim.Adam(_params(), decoupled_weight_decay=True).step()),
    "Adam": ("torch.optim.Adam", lambda: torch.optim.Adam(_params()).step()),
    "Adam fused": ("torch.optim.Adam", lambda: torch.optim.Adam(_params(), fused=True).step()),
    "clip_grad_norm_": ("torch.nn.utils.clip_grad_norm_", lambda: torch.nn.utils.clip_grad_norm_(_params(), 1.0)),
    "clip_grad_norm_ no foreach": ("torch.nn.utils.clip_grad_norm_",
                                   lambda: torch.nn.utils.clip_grad_norm_(_params(), 1.0, foreach=False)),
    "clip_grad_norm": ("torch.nn.utils.clip_grad_norm", lambda: torch.nn.utils.clip_grad_norm(_params(), 1.0)),
    "get_total_norm": ("torch.nn.utils.get_total_norm", lambda: torch.nn.utils.get_total_norm([torch.ones(3)])),
    "clip_grads_with_norm_": ("torch.nn.utils.clip_grads_with_norm_",
                              lambda: torch.nn.utils.clip_grads_with_norm_(_params(), 1.0, torch.tensor(9.0))),
    "lr_scheduler": ("torch.optim.lr_scheduler",
                     lambda: torch.optim.lr_scheduler.StepLR(torch.optim.SGD(_params(), lr=0.1), 1).step()),
    "flex_attention": ("torch.nn.attention.flex_attention", lambda: _flex(torch.randn(1, 2, 4, 8))),
    "flex_attention operator": ("torch.nn.attention.flex_attention", lambda: _flex_below("operator")),
    "flex_attention math": ("torch.nn.attention.flex_attention", lambda: _flex_below("math")),
}

CORRECT_CALLS = {
    "SGD": lambda: torch.optim.SGD(_params(), lr=0.1, momentum=0.9).step(),
    "SGD foreach": lambda: torch.optim.SGD(_params(), lr=0.1, foreach=True).step(),
    "own rms": lambda: (lambda x: x * x.pow(2).mean(-1, keepdim=True).add(1e-6).rsqrt())(torch.randn(2, 8)),
    "foreach_norm": lambda: torch._foreach_norm([torch.ones(3), torch.ones(2)]),
    "clip_grad_value_": lambda: torch.nn.utils.clip_grad_value_(_params(), 0.1),
    "softmax, linear, layer_norm": lambda: F.layer_norm(torch.nn.Linear(8, 8)(torch.randn(2, 8)).softmax(-1), (8,)),
    "vector_norm": lambda: torch.linalg.vector_norm(torch.stack([torch.linalg.vector_norm(torch.ones(3))])),
    "allowed by docs/CONTRACT_LM.md": lambda: (
        F.silu(torch.randn(4)), F.cross_entropy(torch.randn(3, 5), torch.tensor([0, 1, 4])),
        torch.topk(torch.randn(5), 2), torch.sort(torch.randn(5)), torch.multinomial(torch.ones(5), 2)),
}


def _seen(call, tmp_path):
    guard = RuntimeGuard(LM).install()
    try:
        guard.start(tmp_path, ("rmsnorm",))
        try:
            call()
        finally:
            guard.stop()
        return [f.name for f in guard.findings]
    finally:
        guard.uninstall()


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("device", ["cpu", "meta"])
@pytest.mark.parametrize("route", sorted(RMS_CALLS))
def test_every_route_to_rms_norm_is_seen(tmp_path, route, device):
    """rms_norm only decomposes (no kernel of its own on the CPU): it is seen above its decomposition, with
    gradients, without (no_grad, inference_mode), under vmap and grad, on the CPU and the meta device."""
    x = torch.randn(2, 3, 8, device=device, requires_grad=route != "inference_mode")
    assert _seen(lambda: RMS_CALLS[route](x), tmp_path) == ["torch.nn.functional.rms_norm"]


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
@pytest.mark.parametrize("route", sorted(CALLS))
def test_every_route_to_the_optimisers_clipping_schedules_and_flex_attention_is_seen(tmp_path, route):
    name, call = CALLS[route]
    found = _seen(call, tmp_path)
    assert set(found) == {name}, found


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("route", sorted(CORRECT_CALLS))
def test_what_the_language_model_allows_is_not_seen(tmp_path, route):
    """SGD (the grader's own optimiser in the training probes, its _foreach operators those of Adam's foreach
    path), torch._foreach_norm and vector_norm (what clip_grad_norm_ is made of), clip_grad_value_, RMSNorm
    written out, softmax, Linear, layer_norm, what the contract allows: no finding."""
    assert _seen(CORRECT_CALLS[route], tmp_path) == []


@pytest.mark.filterwarnings("ignore::UserWarning", "ignore::FutureWarning")
def test_the_graders_own_use_between_probes_is_not_charged(tmp_path):
    """The checks compare with torch.optim.AdamW and torch's clip_grad_norm_; the reference may use anything:
    between the probes run on the submission (outside ``start``/``stop``) the hooks pass every call on, and the
    hooked functions compute what they always did."""
    from grader.submission.inprocess import InProcessRunner

    runner = InProcessRunner(build(tmp_path / "sub", []), assignment=LM)
    try:
        assert runner.run("call", name="cosine_lr", args=[3, 1.0, 0.1, 2, 10])["number"] > 0.1
        params = _params()
        torch.optim.AdamW(params, fused=True).step()
        torch.optim.Adam(params, foreach=True).step()
        norm = torch.nn.utils.clip_grad_norm_(params, 0.5)
        torch.optim.lr_scheduler.CosineAnnealingLR(torch.optim.SGD(params, lr=0.1), 5).step()
        out = F.rms_norm(torch.ones(2, 4), (4,), eps=0.0)
        _flex(torch.randn(1, 2, 4, 8))
        assert runner.banned_runtime() == []
        assert torch.allclose(out, torch.ones(2, 4))
        assert norm > 0.5 and torch.isclose(torch.linalg.vector_norm(params[0].grad), torch.tensor(0.5))
    finally:
        runner.close()
