"""The decoder-only LM's checks for sampling, the optimiser and training, graded end to end.

The reference gets full marks on these tasks and the skeleton 0 with every task "not implemented yet"; each
plausible mistake (an edit of a copy of the reference) loses points in its own task; correct implementations
written in other styles (ascending sorts, a preallocated output, ``torch._foreach`` and per-parameter AdamW, a
NumPy schedule, a concatenated norm, a masked log-softmax loss) get full marks; a sampler that draws with a
multinomial call per row loses the single-call check only; and the statistical test passes the reference for
several seeds at its stated false-alarm rate.
"""

import re
import shutil
from pathlib import Path

import pytest
import torch

from assignments.decoder_lm.checks.sample import ALPHA, chi_square
from grader import api

ROOT = Path(__file__).resolve().parents[2]
LM = ROOT / "assignments" / "decoder_lm"
REFERENCE = LM / "reference"
TASKS = ("top_k", "top_p", "sample", "generate", "decay_groups", "adamw", "schedule", "clip", "loss", "train_step")


def grade(path, tasks=TASKS, **overrides):
    return api.check(path=str(path), assignment="decoder_lm", profile="quick", tasks=tuple(tasks), **overrides)


def lost(result):
    """``[(check id, status, message key)]`` of every check that did not get its points."""
    return [
        (c.id, c.status, c.message.key if c.message else None, c.error)
        for t in result.tasks
        for c in t.checks
        if c.score < c.max_score
    ]


def edited(tmp_path, file, *edits, name="sub"):
    """A copy of the reference with ``edits`` (``(old, new)``, each ``old`` found exactly once) made in ``file``."""
    folder = tmp_path / name
    shutil.copytree(REFERENCE, folder)
    path = folder / file
    text = path.read_text(encoding="utf-8")
    for old, new in edits:
        assert text.count(old) == 1, f"{old!r} occurs {text.count(old)} times in {file}"
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return folder


def test_reference_gets_full_marks():
    r = grade(REFERENCE)
    assert [t.id for t in r.tasks] == list(TASKS)
    assert r.score == r.max_score > 0, lost(r)


def test_skeleton_gets_zero_every_task_not_implemented():
    r = grade(LM / "skeleton")
    assert r.score == 0
    assert all(t.not_implemented for t in r.tasks), [(t.id, t.not_implemented) for t in r.tasks]


MUTANTS = {
    # task: [(id, file, [(old, new), ...])]
    "top_k": [
        ("strict_boundary", "sampling.py", [("logits < threshold", "logits <= threshold")]),
        (
            "in_place",
            "sampling.py",
            [("return logits.masked_fill(logits < threshold", "return logits.masked_fill_(logits < threshold")],
        ),
        (
            "exactly_k_by_index",
            "sampling.py",
            [
                (
                    '    return logits.masked_fill(logits < threshold, float("-inf"))',
                    "    idx = torch.topk(logits, k, dim=-1).indices\n"
                    "    keep = torch.zeros_like(logits, dtype=torch.bool).scatter(-1, idx, True)\n"
                    '    return logits.masked_fill(~keep, float("-inf"))',
                )
            ],
        ),
    ],
    "top_p": [
        (
            "one_too_early",
            "sampling.py",
            [("mass_before = sorted_probs.cumsum(dim=-1) - sorted_probs", "mass_before = sorted_probs.cumsum(dim=-1)")],
        ),
        ("le_instead_of_lt", "sampling.py", [("kept = mass_before < p", "kept = mass_before <= p + 0.05")]),
        (
            "ties_split",
            "sampling.py",
            [
                (
                    '    threshold = sorted_probs.masked_fill(~kept, float("inf")).amin(dim=-1, keepdim=True)'
                    "  # (..., 1)\n"
                    '    return logits.masked_fill(probs < threshold, float("-inf"))  # ties with the threshold stay',
                    "    order = probs.sort(dim=-1, descending=True).indices\n"
                    "    keep = torch.zeros_like(kept).scatter(-1, order, kept)\n"
                    '    return logits.masked_fill(~keep, float("-inf"))',
                )
            ],
        ),
    ],
    "sample": [
        ("temperature_ignored", "sampling.py", [("    logits = logits / temperature\n    if top_k", "    if top_k")]),
        (
            "temperature_after_filters",
            "sampling.py",
            [
                ("    logits = logits / temperature\n    if top_k", "    if top_k"),
                (
                    "    probs = logits.softmax(dim=-1)  # (B, V)",
                    "    probs = (logits / temperature).softmax(dim=-1)  # (B, V)",
                ),
            ],
        ),
        (
            "filters_swapped",
            "sampling.py",
            [
                (
                    "    if top_k is not None:\n        logits = top_k_filter(logits, top_k)\n"
                    "    if top_p is not None:\n        logits = top_p_filter(logits, top_p)\n    probs",
                    "    if top_p is not None:\n        logits = top_p_filter(logits, top_p)\n"
                    "    if top_k is not None:\n        logits = top_k_filter(logits, top_k)\n    probs",
                )
            ],
        ),
        (
            "greedy_by_tiny_temperature",
            "sampling.py",
            [("        return logits.argmax(dim=-1)  # (B,)", "        temperature = 1e-4")],
        ),
        (
            "global_generator",
            "sampling.py",
            [("num_samples=1, generator=generator).squeeze(-1)", "num_samples=1).squeeze(-1)")],
        ),
    ],
    "generate": [
        ("gradients_recorded", "sampling.py", [("@torch.no_grad()\ndef generate", "def generate")]),
        (
            "eval_not_restored",
            "sampling.py",
            [("    caches = model.new_cache()\n", "    caches = model.new_cache()\n    model.eval()\n")],
        ),
        (
            "no_cache",
            "sampling.py",
            [("logits = model(step_input, caches)[:, -1]", "logits = model(torch.cat(tokens, dim=1))[:, -1]")],
        ),
        (
            "fresh_cache_each_step",
            "sampling.py",
            [
                (
                    "logits = model(step_input, caches)[:, -1]",
                    "logits = model(step_input, model.new_cache() if step_input.size(1) == 1 else caches)[:, -1]",
                )
            ],
        ),
        (
            "last_token_fed_back",
            "sampling.py",
            [
                (
                    "    return torch.cat(tokens, dim=1)  # (B, L0 + max_new_tokens)",
                    "    if max_new_tokens:\n        model(step_input, caches)\n    return torch.cat(tokens, dim=1)",
                )
            ],
        ),
    ],
    "decay_groups": [
        ("matrices_not_decayed", "optim.py", [("p.dim() >= 2]", "p.dim() > 2]")]),
        (
            "frozen_and_tied_twice",
            "optim.py",
            [("model.named_parameters() if p.requires_grad]", "model.named_parameters(remove_duplicate=False)]")],
        ),
        (
            "groups_swapped",
            "optim.py",
            [
                (
                    '"weight_decay": weight_decay},\n        {"params": [p for p in trainable '
                    'if p.dim() < 2], "weight_decay": 0.0}',
                    '"weight_decay": 0.0},\n        {"params": [p for p in trainable '
                    'if p.dim() < 2], "weight_decay": weight_decay}',
                )
            ],
        ),
    ],
    "adamw": [
        (
            "l2_not_decoupled",
            "optim.py",
            [
                (
                    "        p.mul_(1 - lr * decay)  # decoupled: the gradient never sees the decay\n"
                    "        m.mul_(beta1).add_(p.grad, alpha=1 - beta1)\n"
                    "        v.mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)",
                    "        g = p.grad + decay * p\n        m.mul_(beta1).add_(g, alpha=1 - beta1)\n"
                    "        v.mul_(beta2).addcmul_(g, g, value=1 - beta2)",
                )
            ],
        ),
        (
            "eps_inside_sqrt",
            "optim.py",
            [("denom = (v / (1 - beta2**t)).sqrt_().add_(eps)", "denom = (v / (1 - beta2**t) + eps).sqrt_()")],
        ),
        (
            "no_grad_not_skipped",
            "optim.py",
            [
                (
                    "                if p.grad is not None:\n                    self._update(p, group)",
                    "                if p.grad is None:\n                    p.grad = torch.zeros_like(p)\n"
                    "                self._update(p, group)",
                )
            ],
        ),
        (
            "lr_read_at_init",
            "optim.py",
            [
                ("        super().__init__(params, {", "        self.lr0 = lr\n        super().__init__(params, {"),
                ('lr, (beta1, beta2), eps, decay = group["lr"]', "lr, (beta1, beta2), eps, decay = self.lr0"),
            ],
        ),
        (
            "closure_not_returned",
            "optim.py",
            [
                (
                    "                    self._update(p, group)\n        return loss",
                    "                    self._update(p, group)\n        return None",
                )
            ],
        ),
    ],
    "schedule": [
        ("warmup_from_zero", "optim.py", [("max_lr * (step + 1) / warmup_steps", "max_lr * step / warmup_steps")]),
        ("cosine_continues", "optim.py", [("    if step > total_steps:\n        return min_lr\n", "")]),
        (
            "progress_over_total",
            "optim.py",
            [("progress = (step - warmup_steps) / (total_steps - warmup_steps)", "progress = step / total_steps")],
        ),
    ],
    "clip": [
        (
            "scales_up",
            "optim.py",
            [("scale = (max_norm / (total + 1e-6)).clamp(max=1.0)", "scale = max_norm / (total + 1e-6)")],
        ),
        (
            "no_epsilon",
            "optim.py",
            [("scale = (max_norm / (total + 1e-6)).clamp(max=1.0)", "scale = (max_norm / total).clamp(max=1.0)")],
        ),
        (
            "per_tensor",
            "optim.py",
            [
                (
                    "    for g in grads:\n        g.mul_(scale.to(g.device, g.dtype))",
                    "    for g in grads:\n        g.mul_((max_norm / (g.norm() + 1e-6)).clamp(max=1.0))",
                )
            ],
        ),
        (
            "no_scaling",
            "optim.py",
            [
                (
                    "    for g in grads:\n        g.mul_(scale.to(g.device, g.dtype))\n    return total",
                    "    for p in parameters:\n        pass\n    return total",
                )
            ],
        ),
    ],
    "loss": [
        (
            "not_shifted",
            "training.py",
            [("predictions = logits[:, :-1].reshape(-1, V)", "predictions = logits[:, 1:].reshape(-1, V)")],
        ),
        (
            "none_means_zero",
            "training.py",
            [("ignore_index=-100 if pad_id is None else pad_id)", "ignore_index=0 if pad_id is None else pad_id)")],
        ),
        (
            "mean_over_rows",
            "training.py",
            [
                (
                    "    return F.cross_entropy(predictions, targets, ignore_index=-100 if pad_id is None else pad_id)",
                    "    losses = F.cross_entropy(predictions, targets, "
                    "ignore_index=-100 if pad_id is None else pad_id,\n"
                    "                             reduction='none').view(tokens.size(0), -1)\n"
                    "    counted = (tokens[:, 1:] != (-100 if pad_id is None else pad_id)).sum(1).clamp(min=1)\n"
                    "    return (losses.sum(1) / counted).mean()",
                )
            ],
        ),
    ],
    "train_step": [
        ("no_zero_grad", "training.py", [("    optimizer.zero_grad()\n", "")]),
        (
            "lr_on_first_group",
            "training.py",
            [
                (
                    '        for group in optimizer.param_groups:\n            group["lr"] = lr',
                    '        optimizer.param_groups[0]["lr"] = lr',
                )
            ],
        ),
        (
            "clip_after_step",
            "training.py",
            [
                (
                    "        clip_grad_norm_(model.parameters(), max_grad_norm)\n    optimizer.step()",
                    "        pass\n    optimizer.step()\n    if max_grad_norm is not None:\n"
                    "        clip_grad_norm_(model.parameters(), max_grad_norm)",
                )
            ],
        ),
        (
            "loss_after_update",
            "training.py",
            [("    return loss.item()", "    return lm_loss(model(tokens), tokens, pad_id).item()")],
        ),
    ],
}

EXPECTED = {
    "strict_boundary": ("top_k.filter", "fail.lm_top_k_kept"),
    "in_place": ("top_k.filter", "fail.inplace"),
    "exactly_k_by_index": ("top_k.filter", "fail.lm_top_k_kept"),
    "one_too_early": ("top_p.worked_example", "fail.lm_top_p_kept"),
    "le_instead_of_lt": ("top_p.filter", "fail.lm_top_p_kept"),
    "ties_split": ("top_p.filter", "fail.lm_top_p_kept"),
    "temperature_ignored": ("sample.distribution", "fail.lm_sample_distribution"),
    "temperature_after_filters": ("sample.distribution", "fail.lm_sample_distribution"),
    "filters_swapped": ("sample.distribution", "fail.lm_sample_outside"),
    "greedy_by_tiny_temperature": ("sample.greedy", "fail.lm_greedy"),
    "global_generator": ("sample.same_seed", "fail.lm_no_generator"),
    "gradients_recorded": ("generate.decoding", "fail.lm_gen_grad"),
    "eval_not_restored": ("generate.decoding", "fail.lm_gen_training"),
    "no_cache": ("generate.decoding", "fail.lm_gen_no_cache"),
    "fresh_cache_each_step": ("generate.decoding", "fail.lm_gen_cache_length"),
    "last_token_fed_back": ("generate.decoding", "fail.lm_gen_forwards"),
    "matrices_not_decayed": ("decay_groups.groups", "fail.lm_groups_params"),
    "frozen_and_tied_twice": ("decay_groups.groups", "fail.lm_groups_params"),
    "groups_swapped": ("decay_groups.groups", "fail.lm_groups_decay"),
    "l2_not_decoupled": ("adamw.groups", "fail.mismatch"),
    "eps_inside_sqrt": ("adamw.groups", "fail.mismatch"),
    "no_grad_not_skipped": ("adamw.groups", "fail.mismatch"),
    "lr_read_at_init": ("adamw.groups", "fail.mismatch"),
    "closure_not_returned": ("adamw.defaults", "fail.lm_adamw_closure"),
    "warmup_from_zero": ("schedule.formula", "fail.lm_cosine"),
    "cosine_continues": ("schedule.formula", "fail.lm_cosine"),
    "progress_over_total": ("schedule.formula", "fail.lm_cosine"),
    "scales_up": ("clip.norm", "fail.mismatch"),
    "no_epsilon": ("clip.norm", "fail.mismatch"),
    "per_tensor": ("clip.norm", "fail.mismatch"),
    "no_scaling": ("clip.norm", "fail.mismatch"),
    "not_shifted": ("loss.shifted", "fail.mismatch_value"),
    "none_means_zero": ("loss.shifted", "fail.mismatch_value"),
    "mean_over_rows": ("loss.shifted", "fail.mismatch_value"),
    "no_zero_grad": ("train_step.step", "fail.lm_train_loss"),
    "lr_on_first_group": ("train_step.step", "fail.lm_train_lr"),
    "clip_after_step": ("train_step.options", "fail.lm_train_loss"),
    "loss_after_update": ("train_step.step", "fail.lm_train_loss"),
}
"""The check each mistake fails and the sentence it shows (among others it may fail too)."""

CASES = [(task, name, file, edits) for task, rows in MUTANTS.items() for name, file, edits in rows]


@pytest.mark.parametrize(("task", "name", "file", "edits"), CASES, ids=[f"{c[0]}.{c[1]}" for c in CASES])
def test_a_plausible_mistake_loses_points_in_its_task(task, name, file, edits, tmp_path):
    r = grade(edited(tmp_path, file, *edits), tasks=(task,), diagnose=False)
    own = r.tasks[0]
    assert own.score < own.max_score, f"{task}.{name} loses no points"
    assert EXPECTED[name] in [(i, key) for i, _status, key, _error in lost(r)], lost(r)


def test_not_in_place_mutant_really_replaces_gradients(tmp_path):
    """The clip mutant above that scales nothing is caught by the values; one that scales by building new tensors
    is caught by the in-place rule, with its own message."""
    folder = edited(
        tmp_path,
        "optim.py",
        (
            "    for g in grads:\n        g.mul_(scale.to(g.device, g.dtype))",
            "    for p in params:\n        if p.grad is not None:\n            p.grad = p.grad * scale",
        ),
        (
            "    grads = [p.grad for p in parameters if p.grad is not None]",
            "    params = list(parameters)\n    grads = [p.grad for p in params if p.grad is not None]",
        ),
    )
    r = grade(folder, tasks=("clip",), diagnose=False)
    assert [key for _id, _status, key, _error in lost(r)] == ["fail.lm_clip_inplace"]


def test_correct_implementations_in_other_styles_get_full_marks(tmp_path):
    folder = tmp_path / "alt"
    shutil.copytree(REFERENCE, folder)
    for source in ("sampling.py", "optim.py", "training.py"):
        (folder / source).write_text(ALT_SOURCES[source], encoding="utf-8")
    r = grade(folder)
    assert r.score == r.max_score, lost(r)


def test_adamw_written_per_parameter_gets_full_marks(tmp_path):
    folder = tmp_path / "loop"
    shutil.copytree(REFERENCE, folder)
    text = (folder / "optim.py").read_text(encoding="utf-8")
    start, end = text.index("class AdamW"), text.index("def cosine_lr")
    (folder / "optim.py").write_text(text[:start] + ADAMW_LOOP + "\n\n" + text[end:], encoding="utf-8")
    r = grade(folder, tasks=("adamw",))
    assert r.score == r.max_score, lost(r)


OTHER_DRAWS = {
    "per_row": "return torch.cat([torch.multinomial(row, 1, generator=generator) for row in probs])",
    "gumbel_max": "return (probs.log() - torch.empty_like(probs).exponential_(generator=generator).log()).argmax(-1)",
}


@pytest.mark.parametrize("scheme", sorted(OTHER_DRAWS))
def test_another_draw_scheme_loses_the_single_call_check_only(scheme, tmp_path):
    """A sampler that is right but draws otherwise (a multinomial call per row, Gumbel-max) passes the statistical
    test and fails the same-seed check only, whose message names the contract's single call."""
    folder = edited(
        tmp_path,
        "sampling.py",
        (
            "return torch.multinomial(probs, num_samples=1, generator=generator).squeeze(-1)  # (B,)",
            OTHER_DRAWS[scheme],
        ),
    )
    r = grade(folder, tasks=("sample", "generate"), diagnose=False)
    assert [(i, key) for i, _status, key, _error in lost(r)] == [("sample.same_seed", "fail.lm_multinomial")]


def test_a_sealed_worker_gives_the_reference_full_marks():
    r = grade(REFERENCE, tasks=("sample", "generate", "adamw", "train_step"), sealed=True)
    assert r.sealed
    assert r.score == r.max_score, lost(r)


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_the_statistical_test_passes_the_reference_for_other_seeds(seed):
    r = api.check(
        path=str(REFERENCE),
        assignment="decoder_lm",
        profile="quick",
        tasks=("sample",),
        only=("sample.distribution",),
        seed=seed,
    )
    assert r.score == r.max_score, lost(r)


def test_chi_square_p_value_and_stated_rate():
    # chi-square survival function: P(X > 10 | 4 degrees of freedom) = 0.040428...; P(X > 3.841 | 1) = 0.05
    counts = torch.tensor([50, 30, 20, 0])
    stat, df, pvalue, _ = chi_square(counts, torch.tensor([0.5, 0.3, 0.2, 0.0], dtype=torch.float64))
    assert (stat, df, pvalue) == (0.0, 2, 1.0)
    x = torch.special.gammaincc(torch.tensor(2.0, dtype=torch.float64), torch.tensor(5.0, dtype=torch.float64))
    assert abs(float(x) - 0.0404276819945128) < 1e-12
    assert ALPHA == 1e-6


def test_every_failure_key_has_a_sentence_in_both_languages():
    from assignments.decoder_lm.messages.sampling_en import MESSAGES as EN
    from assignments.decoder_lm.messages.sampling_zh import MESSAGES as ZH

    used = set()
    for task in (*TASKS, "overfit"):  # the overfit check's sentences live here too
        text = (LM / "checks" / f"{task}.py").read_text(encoding="utf-8")
        used |= set(re.findall(r'"((?:fail\.lm_|lm\.example\.)\w+)"', text))  # failures, and examples' words
    assert used and used <= set(EN) and used <= set(ZH), sorted(used - set(EN) - set(ZH))
    assert not set(EN) - used, f"sentences no check uses: {sorted(set(EN) - used)}"


ALT_SOURCES = {
    "sampling.py": """
import torch
import torch.nn.functional as F


def top_k_filter(logits, k):
    if k >= logits.shape[-1]:
        return logits.clone()
    kth = logits.sort(dim=-1, descending=True).values.narrow(-1, k - 1, 1)
    return torch.where(logits >= kth, logits, torch.full_like(logits, float("-inf")))


def top_p_filter(logits, p):
    if p >= 1:
        return logits.clone()
    work = torch.float64 if logits.dtype == torch.float64 else torch.float32
    probs = F.softmax(logits.to(work), dim=-1)
    asc = torch.sort(probs, dim=-1).values  # ascending
    above = asc.flip(-1).cumsum(-1).flip(-1) - asc  # the mass after each entry in ascending order
    smallest = torch.where(above < p, asc, torch.full_like(asc, 2.0)).min(dim=-1, keepdim=True).values
    out = logits.clone()
    out[probs < smallest] = float("-inf")
    return out


def sample_next(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return torch.argmax(logits, dim=-1)
    x = logits / temperature
    if top_k is not None:
        x = top_k_filter(x, top_k)
    if top_p is not None:
        x = top_p_filter(x, top_p)
    e = torch.exp(x - x.max(dim=-1, keepdim=True).values)
    return torch.multinomial(e / e.sum(dim=-1, keepdim=True), 1, generator=generator)[:, 0]


def generate(model, prompt, max_new_tokens, temperature=1.0, top_k=None, top_p=None, generator=None):
    was_training = model.training
    B, L0 = prompt.shape
    out = torch.empty(B, L0 + max_new_tokens, dtype=torch.long, device=prompt.device)
    out[:, :L0] = prompt
    caches = model.new_cache()
    with torch.inference_mode():
        pos = L0
        while pos < L0 + max_new_tokens:
            step = out[:, :L0] if pos == L0 else out[:, pos - 1:pos]
            out[:, pos] = sample_next(model(step, caches)[:, -1, :], temperature, top_k, top_p, generator)
            pos += 1
    model.train(was_training)
    return out.clone()
""",
    "optim.py": """
import math

import numpy as np
import torch


def param_groups(model, weight_decay):
    seen, decay, no_decay = set(), [], []
    for _name, param in model.named_parameters(remove_duplicate=False):
        if id(param) in seen or not param.requires_grad:
            continue
        seen.add(id(param))
        (decay if param.ndim >= 2 else no_decay).append(param)
    return [dict(params=decay, weight_decay=weight_decay), dict(params=no_decay, weight_decay=0.0)]


class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay))

    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        with torch.no_grad():
            for group in self.param_groups:
                b1, b2 = group["betas"]
                ps = [p for p in group["params"] if p.grad is not None]
                if not ps:
                    continue
                for p in ps:
                    st = self.state[p]
                    if len(st) == 0:
                        st["t"], st["m"], st["v"] = 0, torch.zeros_like(p), torch.zeros_like(p)
                    st["t"] += 1
                grads = [p.grad for p in ps]
                ms = [self.state[p]["m"] for p in ps]
                vs = [self.state[p]["v"] for p in ps]
                torch._foreach_mul_(ps, 1 - group["lr"] * group["weight_decay"])
                torch._foreach_lerp_(ms, grads, 1 - b1)
                torch._foreach_mul_(vs, b2)
                torch._foreach_addcmul_(vs, grads, grads, 1 - b2)
                for p, m, v in zip(ps, ms, vs):
                    t = self.state[p]["t"]
                    denom = v.sqrt() / math.sqrt(1 - b2 ** t) + group["eps"]
                    p.add_(-(group["lr"] / (1 - b1 ** t)) * m / denom)
        return loss


def cosine_lr(step, max_lr, min_lr, warmup_steps, total_steps):
    if step < warmup_steps:
        return float(np.float64(max_lr) * (step + 1) / warmup_steps)
    frac = np.clip((step - warmup_steps) / (total_steps - warmup_steps), 0.0, 1.0)
    return float(min_lr + (max_lr - min_lr) * 0.5 * (1.0 + np.cos(np.pi * frac)))


def clip_grad_norm_(parameters, max_norm):
    grads = [p.grad for p in list(parameters) if p.grad is not None]
    total = torch.cat([g.reshape(-1) for g in grads]).pow(2).sum().sqrt()
    coef = max_norm / (total + 1e-6)
    if coef < 1:
        for g in grads:
            g.mul_(coef)
    return total
""",
    "training.py": """
import torch

from .optim import clip_grad_norm_


def lm_loss(logits, tokens, pad_id=None):
    logp = torch.log_softmax(logits[:, :-1], dim=-1)
    target = tokens[:, 1:]
    nll = -logp.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    mask = torch.ones_like(target, dtype=torch.bool) if pad_id is None else target != pad_id
    return (nll * mask).sum() / mask.sum()


def train_step(model, tokens, optimizer, pad_id=None, max_grad_norm=None, lr=None):
    for group in optimizer.param_groups:
        group["lr"] = group["lr"] if lr is None else lr
    model.zero_grad(set_to_none=False)
    loss = lm_loss(model(tokens), tokens, pad_id)
    loss.backward()
    if max_grad_norm:
        clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return float(loss.detach())


def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    kv = num_heads if num_kv_heads is None else num_kv_heads
    hd = dim // num_heads
    return vocab_size * dim + dim + num_layers * (2 * dim + 2 * dim * dim + 2 * dim * kv * hd + 3 * dim * hidden_dim)
""",
}

ADAMW_LOOP = """class AdamW(torch.optim.Optimizer):
    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=1e-2):
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay})

    def step(self, closure=None):
        loss = closure() if closure is not None else None
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                state = self.state[p]
                state["n"] = state.get("n", 0) + 1
                g = p.grad.detach()
                m = beta1 * state.get("m", torch.zeros_like(g)) + (1 - beta1) * g
                v = beta2 * state.get("v", torch.zeros_like(g)) + (1 - beta2) * g * g
                state["m"], state["v"] = m, v
                m_hat = m / (1 - beta1 ** state["n"])
                v_hat = v / (1 - beta2 ** state["n"])
                new = p.detach() * (1 - group["lr"] * group["weight_decay"])
                new = new - group["lr"] * m_hat / (torch.sqrt(v_hat) + group["eps"])
                p.data.copy_(new)
        return loss"""


class _Names:
    """A stand-in namespace: ``get(name)`` from a dict (the probes' only use of a namespace here)."""

    def __init__(self, **names):
        self.names = names

    def get(self, name):
        return self.names[name]


def test_the_optimiser_probes_on_the_reference_match_pytorch():
    """What adamw and clip compare with is PyTorch's behaviour in these very scenarios: the reference's AdamW equals
    torch.optim.AdamW with two groups, skipped parameters, a closure and the lr changed between steps, and its
    clip_grad_norm_ equals torch.nn.utils.clip_grad_norm_ with a parameter without a gradient."""
    from assignments.decoder_lm import sampling_probes as probes
    from assignments.decoder_lm.reference.optim import AdamW, clip_grad_norm_

    has_grad = [[s % 2 == 1 or i != 1 for i in range(3)] for s in range(5)]
    args = dict(
        shapes=[[3, 4], [5], [2, 2, 2]],
        defaults={"lr": 0.05},
        grad_scales=[1.0, 1e-3, 10.0],
        has_grad=has_grad,
        groups=[
            {"params": [0, 2], "lr": 0.03, "weight_decay": 0.5},
            {"params": [1], "weight_decay": 0.0, "betas": (0.8, 0.95), "eps": 1e-3},
        ],
        lr_changes={"3": [0.01, 0.2]},
        closure_steps=[2],
        seed=5,
    )
    ours = probes.lm_adamw(_Names(AdamW=AdamW), **args)
    theirs = probes.lm_adamw(_Names(AdamW=torch.optim.AdamW), **args)
    assert [r["is_closure_value"] for r in ours["returned"]] == [True] * 5
    for a, b in zip(ours["history"], theirs["history"]):
        for x, y in zip(a, b):
            torch.testing.assert_close(x, y, rtol=1e-12, atol=1e-14)
    clip = dict(
        shapes=[[4, 3], [6], [5]],
        scales=[1e-4, 2e-4, 3e-4],
        has_grad=[True, False, True],
        max_norm=1e-4,
        as_generator=True,
        seed=3,
    )
    ours = probes.lm_clip(_Names(clip_grad_norm_=clip_grad_norm_), **clip)
    theirs = probes.lm_clip(_Names(clip_grad_norm_=torch.nn.utils.clip_grad_norm_), **clip)
    torch.testing.assert_close(ours["out"], theirs["out"], rtol=1e-12, atol=0.0)
    for x, y in zip(ours["grads"], theirs["grads"]):
        assert (x is None) == (y is None)
        if x is not None:
            torch.testing.assert_close(x, y, rtol=1e-12, atol=0.0)


def test_generate_reads_a_caches_length_from_its_keys_and_asks_it_only_when_they_are_laid_out_otherwise():
    from types import SimpleNamespace

    from assignments.decoder_lm.sampling_probes import _cached_length
    from grader.assignment import load
    from grader.submission.inprocess import loopback_parts

    class Asked:
        def __init__(self, keys, length):
            self.keys, self._length, self.asked = keys, length, 0

        @property
        def length(self):
            self.asked += 1
            return self._length

    empty, full = Asked(None, 7), Asked(torch.zeros(2, 1, 5, 4), 7)
    assert (_cached_length(empty), _cached_length(full)) == (0, 5) and empty.asked == full.asked == 0
    for other in (Asked([torch.zeros(2, 1, 5, 4)], 3), Asked(torch.zeros(5, 4), 3), SimpleNamespace(length=3)):
        assert _cached_length(other) == 3  # a layout of the student's own: its length says
    lm_parts = loopback_parts(load("decoder_lm"), "generate")
    cache = lm_parts.get("KVCache")()
    cache.update(torch.randn(1, 1, 3, 2), torch.randn(1, 1, 3, 2))
    calls = lm_parts.standins.calls
    assert _cached_length(cache) == cache.length == 3
    assert lm_parts.standins.calls == calls + 1  # the length property asked once, the keys read as data
