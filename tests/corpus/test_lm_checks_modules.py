"""The decoder-only LM's checks of its modules (rmsnorm ... model, param_count) judge rightly.

The reference gets full marks and the skeleton 0 with every task "not implemented yet"; each plausible mistake,
written as an edit of a copy of the reference, loses points in its own task and fails the check that names it;
correct implementations in other styles (complex-number RoPE, fused QKV, einsum attention, a preallocated cache
buffer, float32 statistics) get full marks.
"""

import shutil
from pathlib import Path

import pytest

from grader import api

ROOT = Path(__file__).resolve().parents[2]
LM = ROOT / "assignments" / "decoder_lm"
TASKS = ("rmsnorm", "rope", "swiglu", "gqa", "attention", "kv_cache", "block", "model", "param_count")


def grade(path, tasks=TASKS, only=None, profile="quick"):
    return api.check(
        path=str(path), assignment="decoder_lm", profile=profile, tasks=list(tasks), only=list(only) if only else None
    )


def lost(result):
    return [
        (c.id, c.status, c.message and c.message.key, c.message and c.message.params)
        for t in result.tasks
        for c in t.checks
        if c.score < c.max_score
    ]


def edited(tmp_path, edits, name="sub"):
    """A copy of the reference with ``edits`` (``{file: [(old, new), ...]}``; each ``old`` occurs exactly once)."""
    folder = tmp_path / name
    shutil.copytree(LM / "reference", folder, ignore=shutil.ignore_patterns("__pycache__"))
    for file, pairs in edits.items():
        path = folder / file
        source = path.read_text(encoding="utf-8")
        for old, new in pairs:
            assert source.count(old) == 1, (file, old)
            source = source.replace(old, new)
        path.write_text(source, encoding="utf-8")
    return folder


def test_reference_gets_full_marks():
    r = grade(LM / "reference")
    assert [t.id for t in r.tasks] == list(TASKS)
    assert r.score == r.max_score, lost(r)


def test_skeleton_gets_zero_every_task_to_do():
    r = grade(LM / "skeleton")
    assert r.score == 0
    assert all(t.not_implemented for t in r.tasks), [(t.id, t.not_implemented) for t in r.tasks]
    assert all(c.status == "error" and c.error["kind"] == "not_implemented" for t in r.tasks for c in t.checks), [
        (c.id, c.status) for t in r.tasks for c in t.checks
    ]


# -- plausible mistakes: (task, edits, the check that must fail, the message key it must give or None) ---------------
INTERLEAVED_ROPE = (
    "rope.py",
    [
        (
            """    x1, x2 = x.chunk(2, dim=-1)
    return torch.cat([-x2, x1], dim=-1)""",
            """    x1, x2 = x[..., 0::2], x[..., 1::2]
    return torch.stack([-x2, x1], dim=-1).flatten(-2)""",
        ),
        ("angles = torch.cat([angles, angles], dim=-1)", "angles = angles.repeat_interleave(2, dim=-1)"),
    ],
)


def mutant(task, file, pairs, check_id, key=None):
    """A mistake in ``file`` (``pairs``: ``(old, new)`` edits of the reference), the check it must fail and the
    sentence that check must give (``None``: any)."""
    return task, {file: pairs}, check_id, key


RSQRT = "torch.rsqrt(xc.pow(2).mean(dim=-1, keepdim=True) + self.eps)"
KEEP = "keep = torch.ones(Lq, Lk, dtype=torch.bool, device=q.device)"
HALF = "compute = torch.promote_types(x.dtype, torch.float32)"
ATTN = "h = x + self.attn(self.attn_norm(x), cache)"
IMPORT_TORCH = ("from torch import nn", "import torch\nfrom torch import nn")

MUTANTS = {
    "rms_centred": mutant(
        "rmsnorm",
        "norm.py",
        [("xc = x.to(compute)\n", "xc = x.to(compute)\n        xc = xc - xc.mean(dim=-1, keepdim=True)\n")],
        "rmsnorm.formula",
        "fail.lm_rms_centred",
    ),
    "rms_eps_outside": mutant(
        "rmsnorm",
        "norm.py",
        [(RSQRT, "1 / (xc.pow(2).mean(dim=-1, keepdim=True).sqrt() + self.eps)")],
        "rmsnorm.formula",
        "fail.lm_rms_eps_outside",
    ),
    "rms_no_sqrt": mutant(
        "rmsnorm", "norm.py", [("torch.rsqrt(", "torch.reciprocal(")], "rmsnorm.scale_invariance", "fail.lm_rms_scale"
    ),
    "rms_default_eps": mutant("rmsnorm", "norm.py", [("dim, eps=1e-6)", "dim, eps=1e-5)")], "rmsnorm.contract"),
    "rms_half_inside": mutant("rmsnorm", "norm.py", [(HALF, "compute = x.dtype")], "rmsnorm.devices", "fail.mismatch"),
    "rope_interleaved": ("rope", dict([INTERLEAVED_ROPE]), "rope.pairing", "fail.lm_rope_interleaved"),
    "rope_angle_layout": mutant("rope", "rope.py", [INTERLEAVED_ROPE[1][1]], "rope.relative", "fail.lm_rope_norm"),
    "rope_offset_ignored": mutant(
        "rope",
        "rope.py",
        [("torch.arange(offset, offset + L,", "torch.arange(0, L,")],
        "rope.offset",
        "fail.lm_rope_offset",
    ),
    "rope_half_angles": mutant(
        "rope", "rope.py", [(HALF, "compute = x.dtype")], "rope.half_precision", "fail.mismatch"
    ),
    "rope_no_value_error": mutant(
        "rope", "rope.py", [("if head_dim % 2:", "if False:")], "rope.contract", "fail.lm_rope_odd"
    ),
    "rope_cpu_positions": mutant(
        "rope", "rope.py", [("offset + L, device=x.device, ", "offset + L, ")], "rope.devices"
    ),
    "swiglu_swapped": mutant(
        "swiglu",
        "feedforward.py",
        [("F.silu(self.gate_proj(x)) * self.up_proj(x)", "F.silu(self.up_proj(x)) * self.gate_proj(x)")],
        "swiglu.equivalence",
        "fail.lm_swiglu_swapped",
    ),
    "swiglu_bias": mutant(
        "swiglu",
        "feedforward.py",
        [("self.up_proj = nn.Linear(dim, hidden_dim, bias=False)", "self.up_proj = nn.Linear(dim, hidden_dim)")],
        "swiglu.contract",
        "fail.param_names",
    ),
    "swiglu_cpu_tensor": mutant(
        "swiglu",
        "feedforward.py",
        [IMPORT_TORCH, ("* self.up_proj(x))", "* self.up_proj(x) * torch.ones(1))")],
        "swiglu.devices",
    ),
    "gqa_tiled": mutant(
        "gqa",
        "attention.py",
        [
            ("k = k.repeat_interleave(H // Hkv, dim=1)", "k = k.repeat(1, H // Hkv, 1, 1)"),
            ("v = v.repeat_interleave(H // Hkv, dim=1)", "v = v.repeat(1, H // Hkv, 1, 1)"),
        ],
        "gqa.grouping",
        "fail.lm_gqa_tiled",
    ),
    "gqa_top_left": mutant(
        "gqa",
        "attention.py",
        [(f"{KEEP}.tril(diagonal=Lk - Lq)", f"{KEEP}.tril()")],
        "gqa.equivalence",
        "fail.mismatch",
    ),
    "gqa_leak": mutant(
        "gqa",
        "attention.py",
        [(f"{KEEP}.tril(diagonal=Lk - Lq)", f"{KEEP}.tril(diagonal=Lk - Lq + 1)")],
        "gqa.causal",
        "fail.future_leak",
    ),
    "gqa_soft_block": mutant(
        "gqa",
        "attention.py",
        [('scores.masked_fill(~keep, float("-inf"))', "scores.masked_fill(~keep, -30.0)")],
        "gqa.causal",
        "fail.lm_gqa_future_grad",
    ),
    "gqa_cpu_mask": mutant(
        "gqa", "attention.py", [("dtype=torch.bool, device=q.device)", "dtype=torch.bool)")], "gqa.devices"
    ),
    "attn_positions_restart": mutant(
        "attention",
        "attention.py",
        [("offset = 0 if cache is None else cache.length", "offset = 0")],
        "attention.cache",
        "fail.mismatch",
    ),
    "attn_rotates_v": mutant(
        "attention",
        "attention.py",
        [
            (
                "v = self._split(self.v_proj(x), self.num_kv_heads)",
                "v = self.rope(self._split(self.v_proj(x), self.num_kv_heads), offset)",
            )
        ],
        "attention.equivalence",
        "fail.mismatch",
    ),
    "attn_cache_repeated": mutant(
        "attention",
        "attention.py",
        [
            (
                "k, v = cache.update(k, v)",
                "g = self.num_heads // self.num_kv_heads\n            "
                "k, v = cache.update(k.repeat_interleave(g, 1), v.repeat_interleave(g, 1))",
            )
        ],
        "attention.cache",
        "fail.lm_attn_cache_heads",
    ),
    "attn_cache_unrotated": mutant(
        "attention",
        "attention.py",
        [
            (
                "k = self.rope(self._split(self.k_proj(x), self.num_kv_heads), offset)",
                "k = self._split(self.k_proj(x), self.num_kv_heads)",
            ),
            ("y = causal_attention(q, k, v)", "y = causal_attention(q, self.rope(k), v)"),
        ],
        "attention.cache",
        "fail.lm_attn_cache_unrotated",
    ),
    "attn_bias": mutant(
        "attention",
        "attention.py",
        [("self.head_dim, dim, bias=False)", "self.head_dim, dim)")],
        "attention.contract",
        "fail.param_names",
    ),
    "attn_cpu_tensor": mutant(
        "attention",
        "attention.py",
        [("y = causal_attention(q, k, v)  #", "y = causal_attention(q, k, v) + torch.zeros(1)  #")],
        "attention.devices",
    ),
    "attn_kv_heads_unchecked": mutant(
        "attention",
        "attention.py",
        [("if num_heads % num_kv_heads:", "if num_kv_heads > num_heads:")],
        "attention.value_errors",
        "fail.lm_attn_value_error",
    ),
    "attn_no_divisibility": mutant(
        "attention",
        "attention.py",
        [("if dim % num_heads:", "if False:")],
        "attention.value_errors",
        "fail.lm_attn_value_error",
    ),
    "kv_wrong_axis": mutant(
        "kv_cache",
        "cache.py",
        [
            ("[self.keys, keys], dim=2)", "[self.keys, keys], dim=1)"),
            ("[self.values, values], dim=2)", "[self.values, values], dim=1)"),
        ],
        "kv_cache.update",
    ),
    "kv_returns_new": mutant(
        "kv_cache", "cache.py", [("return self.keys, self.values", "return keys, values")], "kv_cache.update"
    ),
    "kv_values_list": mutant(
        "kv_cache",
        "cache.py",
        [("self.values = None", "self.values = []")],
        "kv_cache.empty",
        "fail.lm_cache_not_empty",
    ),
    "kv_length_heads": mutant(
        "kv_cache", "cache.py", [("self.keys.size(2)", "self.keys.size(1)")], "kv_cache.update", "fail.lm_cache_length"
    ),
    "block_post_norm": mutant(
        "block",
        "block.py",
        [(ATTN, "h = self.attn_norm(x + self.attn(x, cache))")],
        "block.residual",
        "fail.lm_block_residual",
    ),
    "block_normed_residual": mutant(
        "block",
        "block.py",
        [(ATTN, "x = self.attn_norm(x)\n        h = x + self.attn(x, cache)")],
        "block.residual",
        "fail.lm_block_residual",
    ),
    "block_cache_dropped": mutant(
        "block", "block.py", [("self.attn(self.attn_norm(x), cache)", "self.attn(self.attn_norm(x))")], "block.cache"
    ),
    "block_default_eps": mutant(
        "block", "block.py", [("num_kv_heads=None, eps=1e-6,", "num_kv_heads=None, eps=1e-5,")], "block.contract"
    ),
    "block_cpu_tensor": mutant(
        "block",
        "block.py",
        [
            IMPORT_TORCH,
            ("return h + self.ffn(self.ffn_norm(h))", "return h + self.ffn(self.ffn_norm(h)) + torch.zeros(1)"),
        ],
        "block.devices",
    ),
    "block_eps_dropped": mutant(
        "block",
        "block.py",
        [("self.attn_norm = RMSNorm(dim, eps)", "self.attn_norm = RMSNorm(dim)")],
        "block.equivalence",
        "fail.mismatch",
    ),
    "model_untied": mutant(
        "model",
        "model.py",
        [("        self.lm_head.weight = self.embed.weight", "")],
        "model.contract",
        "fail.lm_not_tied",
    ),
    "model_scaled_embedding": mutant(
        "model",
        "model.py",
        [("h = self.embed(tokens)  #", "h = self.embed(tokens) * self.embed.weight.shape[1] ** 0.5  #")],
        "model.embedding",
        "fail.lm_embed_scaled",
    ),
    "model_default_init": mutant(
        "model", "model.py", [("        self.apply(_init_weights)\n", "")], "model.init", "fail.lm_init_std"
    ),
    "model_uniform_init": mutant(
        "model",
        "model.py",
        [
            (
                "nn.init.normal_(module.weight, mean=0.0, std=0.02)",
                "nn.init.uniform_(module.weight, -0.02 * 3**0.5, 0.02 * 3**0.5)",
            )
        ],
        "model.init",
        "fail.lm_init_normal",
    ),
    "model_mean_context": mutant(
        "model",
        "model.py",
        [("h = self.embed(tokens)  #", "h = self.embed(tokens)\n        h = h + h.mean(dim=1, keepdim=True)  #")],
        "model.causal",
        "fail.future_leak",
    ),
    "model_cpu_tensor": mutant(
        "model",
        "model.py",
        [IMPORT_TORCH, ("return self.lm_head(self.norm(h))", "return self.lm_head(self.norm(h)) + torch.zeros(1)")],
        "model.devices",
    ),
    "model_caches_ignored": mutant(
        "model", "model.py", [("h = layer(h, cache)", "h = layer(h)")], "model.cache", "fail.lm_cache_not_used"
    ),
    "model_one_shared_cache": mutant(
        "model",
        "model.py",
        [("return [KVCache() for _ in self.layers]", "return [KVCache()] * len(self.layers)")],
        "model.cache",
    ),
    "model_default_eps": mutant(
        "model",
        "model.py",
        [("num_kv_heads=None, eps=1e-6,", "num_kv_heads=None, eps=1e-5,")],
        "model.contract",
        "fail.defaults_spelled",
    ),
    "model_norm_eps_dropped": mutant(
        "model",
        "model.py",
        [("self.norm = RMSNorm(dim, eps)", "self.norm = RMSNorm(dim)")],
        "model.equivalence",
        "fail.mismatch",
    ),
    "count_tied_twice": mutant(
        "param_count",
        "training.py",
        [("return vocab_size * dim + num_layers", "return 2 * vocab_size * dim + num_layers")],
        "param_count.grid",
        "fail.lm_param_count",
    ),
    "count_ignores_gqa": mutant(
        "param_count",
        "training.py",
        [("2 * dim * num_kv_heads * head_dim", "2 * dim * dim")],
        "param_count.grid",
        "fail.lm_param_count",
    ),
    "count_no_final_norm": mutant(
        "param_count",
        "training.py",
        [("num_layers * per_layer + dim  #", "num_layers * per_layer  #")],
        "param_count.built",
        "fail.lm_param_count",
    ),
}


@pytest.mark.parametrize("mutant", sorted(MUTANTS))
def test_mistake_fails_the_check_that_names_it(mutant, tmp_path):
    task, edits, check_id, key = MUTANTS[mutant]
    r = grade(edited(tmp_path, edits), tasks=[task])
    checks = {c.id: c for t in r.tasks for c in t.checks}
    assert r.score < r.max_score, f"{mutant} loses no points in {task}"
    failed = checks[check_id]
    # None: no particular sentence; an exception (a tensor made on the CPU meeting one on meta) may say it
    assert failed.status == "failed" or (key is None and failed.status == "error"), (
        mutant,
        failed.status,
        failed.message,
        lost(r),
    )
    if key is not None:
        assert failed.message.key == key, (mutant, failed.message.key, failed.message.params)


def test_mistakes_beneath_are_charged_to_their_own_tasks(tmp_path):
    """An end-alignment mistake in causal_attention and a KVCache that returns only the new keys cost points in
    gqa and kv_cache only: attention, block and model pass over the reference's parts (isolated), and their
    integrated checks that decode with a cache, failing because of those parts, are charged beneath. Graded
    without gqa and kv_cache (the tasks beneath then graded unreported), the same: nothing is lost, and the
    integrated cache check of attention names the tasks beneath that it failed through."""
    folder = edited(
        tmp_path,
        {
            "attention.py": MUTANTS["gqa_top_left"][1]["attention.py"],
            "cache.py": MUTANTS["kv_returns_new"][1]["cache.py"],
        },
    )
    r = grade(folder, tasks=["gqa", "kv_cache", "attention", "block", "model"])
    assert {c[0].split(".")[0] for c in lost(r)} == {"gqa", "kv_cache"}, lost(r)
    r = grade(folder, tasks=["attention", "block", "model"])
    assert lost(r) == [], lost(r)
    (check,) = [c for t in r.tasks for c in t.checks if c.id == "attention.cache_integrated"]
    notes = {n.key: n.params for n in check.notes}
    assert set(notes["note.charged_beneath"]["tasks"].split(", ")) <= {"gqa", "kv_cache"}, notes


def test_interleaved_rope_is_still_a_rotation(tmp_path):
    """A correct interleaved RoPE keeps norms and relative positions: only the pairing check (and equivalence)
    refuse it, and the pairing check says why."""
    r = grade(edited(tmp_path, dict([INTERLEAVED_ROPE])), tasks=["rope"])
    checks = {c.id: c.status for t in r.tasks for c in t.checks}
    assert checks["rope.relative"] == checks["rope.offset"] == "passed", checks
    assert checks["rope.pairing"] == checks["rope.equivalence"] == "failed", checks


def test_untied_model_loses_only_the_tie(tmp_path):
    """An untied head (its own lm_head.weight) is charged once, in the contract check; it computes the
    reference's function when given the embedding's values."""
    r = grade(
        edited(tmp_path, {"model.py": [("        self.lm_head.weight = self.embed.weight", "")]}), tasks=["model"]
    )
    assert [c[0] for c in lost(r)] == ["model.contract"], lost(r)


# -- correct implementations in other styles ----------------------------------------------------------------------
OTHER_NORM = """
import torch
from torch import nn


class RMSNorm(nn.Module):
    def __init__(self, dim, eps=1e-6):
        super().__init__()
        self.eps = eps
        self.weight = nn.Parameter(torch.ones(dim))

    def forward(self, x):
        xf = x.float()  # statistics in float32 whatever the input
        rms = xf.square().mean(-1, keepdim=True).add(self.eps).sqrt()
        return (xf / rms).to(x.dtype) * self.weight
"""

COMPLEX_ROPE = '''
import torch
from torch import nn


class RotaryEmbedding(nn.Module):
    """Half-split pairs as complex numbers: x[i] + 1j * x[i + Dh/2], turned by exp(1j * p * theta_i)."""

    def __init__(self, head_dim, base=10000.0):
        super().__init__()
        if head_dim % 2 != 0:
            raise ValueError("head_dim must be even")
        self.head_dim, self.base = head_dim, base

    def forward(self, x, offset=0):
        half = self.head_dim // 2
        real = torch.float64 if x.dtype == torch.float64 else torch.float32
        inv = 1.0 / self.base ** (torch.arange(half, device=x.device, dtype=real) * 2 / self.head_dim)
        pos = torch.arange(x.shape[-2], device=x.device, dtype=real) + offset
        turn = torch.polar(torch.ones(x.shape[-2], half, device=x.device, dtype=real), torch.outer(pos, inv))
        xr = x.to(real)
        z = torch.view_as_complex(torch.stack([xr[..., :half], xr[..., half:]], dim=-1).contiguous())
        out = torch.view_as_real(z * turn)
        return torch.cat([out[..., 0], out[..., 1]], dim=-1).to(x.dtype)
'''

FUSED_FFN = """
import torch
import torch.nn.functional as F
from torch import nn


class SwiGLU(nn.Module):
    def __init__(self, dim, hidden_dim):
        super().__init__()
        self.gate_proj = nn.Linear(dim, hidden_dim, bias=False)
        self.up_proj = nn.Linear(dim, hidden_dim, bias=False)
        self.down_proj = nn.Linear(hidden_dim, dim, bias=False)

    def forward(self, x):
        both = F.linear(x, torch.cat([self.gate_proj.weight, self.up_proj.weight]))
        gate, up = both.chunk(2, dim=-1)
        return self.down_proj(gate * torch.sigmoid(gate) * up)
"""

EINSUM_ATTENTION = """
import math

import torch
import torch.nn.functional as F
from torch import nn

from .rope import RotaryEmbedding


def causal_attention(q, k, v):
    B, H, Lq, Dh = q.shape
    Hkv, Lk = k.shape[1], k.shape[2]
    qg = q.reshape(B, Hkv, H // Hkv, Lq, Dh)  # consecutive query heads share a key/value head
    scores = torch.einsum("bkgqd,bksd->bkgqs", qg, k) * (1.0 / math.sqrt(Dh))
    future = torch.triu(torch.ones(Lq, Lk, dtype=torch.bool, device=q.device), diagonal=Lk - Lq + 1)
    scores = scores.masked_fill(future, torch.finfo(scores.dtype).min)
    weights = torch.softmax(scores, dim=-1)
    return torch.einsum("bkgqs,bksd->bkgqd", weights, v).reshape(B, H, Lq, Dh)


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, num_heads, num_kv_heads=None, rope_base=10000.0):
        super().__init__()
        kv = num_kv_heads or num_heads
        if dim % num_heads or num_heads % kv or (dim // num_heads) % 2:
            raise ValueError("bad head configuration")
        self.h, self.kv, self.dh = num_heads, kv, dim // num_heads
        self.q_proj = nn.Linear(dim, num_heads * self.dh, bias=False)
        self.k_proj = nn.Linear(dim, kv * self.dh, bias=False)
        self.v_proj = nn.Linear(dim, kv * self.dh, bias=False)
        self.o_proj = nn.Linear(num_heads * self.dh, dim, bias=False)
        self.rope = RotaryEmbedding(self.dh, rope_base)

    def forward(self, x, cache=None):
        B, L, _ = x.shape
        fused = torch.cat([self.q_proj.weight, self.k_proj.weight, self.v_proj.weight])  # QKV in one matmul
        q, k, v = F.linear(x, fused).split([self.h * self.dh, self.kv * self.dh, self.kv * self.dh], dim=-1)
        start = cache.length if cache is not None else 0
        q = self.rope(q.unflatten(-1, (self.h, self.dh)).permute(0, 2, 1, 3), start)
        k = self.rope(k.unflatten(-1, (self.kv, self.dh)).permute(0, 2, 1, 3), start)
        v = v.unflatten(-1, (self.kv, self.dh)).permute(0, 2, 1, 3)
        if cache is not None:
            k, v = cache.update(k, v)
        y = causal_attention(q, k, v)
        return self.o_proj(y.permute(0, 2, 1, 3).flatten(2))
"""

BUFFER_CACHE = '''
import torch


class KVCache:
    """A preallocated buffer that doubles when full; keys and values are views of its filled part."""

    def __init__(self):
        self._k = self._v = None
        self._n = 0

    @property
    def keys(self):
        return None if self._k is None else self._k[:, :, :self._n]

    @property
    def values(self):
        return None if self._v is None else self._v[:, :, :self._n]

    @property
    def length(self):
        return self._n

    def _grow(self, buf, need):
        B, H, cap, D = buf.shape
        if need <= cap:
            return buf
        bigger = torch.empty(B, H, max(need, 2 * cap), D, dtype=buf.dtype, device=buf.device)
        bigger[:, :, :self._n] = buf[:, :, :self._n]
        return bigger

    def update(self, keys, values):
        L = keys.shape[2]
        if self._k is None:
            self._k = keys.new_empty(keys.shape[0], keys.shape[1], max(L, 4), keys.shape[3])
            self._v = values.new_empty(values.shape[0], values.shape[1], max(L, 4), values.shape[3])
        self._k, self._v = self._grow(self._k, self._n + L), self._grow(self._v, self._n + L)
        self._k[:, :, self._n:self._n + L] = keys
        self._v[:, :, self._n:self._n + L] = values
        self._n += L
        return self.keys, self.values
'''

OTHER_MODEL = """
import torch
import torch.nn.functional as F
from torch import nn

from .block import DecoderBlock
from .cache import KVCache
from .norm import RMSNorm


class DecoderLM(nn.Module):
    def __init__(self, vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None, eps=1e-6,
                 rope_base=10000.0):
        super().__init__()
        self.embed = nn.Embedding(vocab_size, dim)
        self.layers = nn.ModuleList([DecoderBlock(dim, num_heads, hidden_dim, num_kv_heads, eps, rope_base)
                                     for _ in range(num_layers)])
        self.norm = RMSNorm(dim, eps)
        self.lm_head = nn.Linear(dim, vocab_size, bias=False)
        self.lm_head.weight = self.embed.weight
        for name, p in self.named_parameters():
            if p.dim() >= 2:
                nn.init.normal_(p, std=0.02)

    def forward(self, tokens, caches=None):
        x = self.embed(tokens)
        for i, layer in enumerate(self.layers):
            x = layer(x=x, cache=None if caches is None else caches[i])  # keywords: the probe's hooks see them
        return F.linear(self.norm(x), self.embed.weight)

    def new_cache(self):
        return [KVCache() for _ in range(len(self.layers))]
"""

OTHER_COUNT = """

def count_parameters(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads=None):
    kv = num_kv_heads if num_kv_heads is not None else num_heads
    dh = dim // num_heads
    block = dim * (num_heads * dh) * 2 + dim * (kv * dh) * 2 + 3 * dim * hidden_dim + 2 * dim
    return int(dim * (vocab_size + 1) + block * num_layers)
"""


def test_other_correct_styles_get_full_marks(tmp_path):
    folder = edited(tmp_path, {})
    (folder / "norm.py").write_text(OTHER_NORM, encoding="utf-8")
    (folder / "rope.py").write_text(COMPLEX_ROPE, encoding="utf-8")
    (folder / "feedforward.py").write_text(FUSED_FFN, encoding="utf-8")
    (folder / "attention.py").write_text(EINSUM_ATTENTION, encoding="utf-8")
    (folder / "cache.py").write_text(BUFFER_CACHE, encoding="utf-8")
    (folder / "model.py").write_text(OTHER_MODEL, encoding="utf-8")
    training = folder / "training.py"
    source = training.read_text(encoding="utf-8")
    training.write_text(source[: source.index("def count_parameters")] + OTHER_COUNT.lstrip("\n"), encoding="utf-8")
    r = grade(folder)
    assert r.score == r.max_score, lost(r)


def test_a_buffer_cache_made_on_the_cpu_fails_on_meta(tmp_path):
    """The preallocated buffer above passes; the same buffer allocated with torch.empty on the default device
    fails the device check (and only it)."""
    folder = edited(tmp_path, {})
    wrong = BUFFER_CACHE.replace(
        "keys.new_empty(keys.shape[0], keys.shape[1], max(L, 4), keys.shape[3])",
        "torch.empty(keys.shape[0], keys.shape[1], max(L, 4), keys.shape[3], dtype=keys.dtype)",
    )
    wrong = wrong.replace(
        "values.new_empty(values.shape[0], values.shape[1], max(L, 4), values.shape[3])",
        "torch.empty(values.shape[0], values.shape[1], max(L, 4), values.shape[3], dtype=values.dtype)",
    )
    assert wrong != BUFFER_CACHE
    (folder / "cache.py").write_text(wrong, encoding="utf-8")
    r = grade(folder, tasks=["kv_cache"])
    assert [c[0] for c in lost(r)] == ["kv_cache.devices"], lost(r)


EMBED_BY_TABLE = (
    "        h = self.embed(tokens)  # (B, L) -> (B, L, D)",
    "        h = nn.functional.embedding(tokens, self.embed.weight)",
)


def test_a_model_reading_the_embedding_table_itself_gets_full_marks(tmp_path):
    """The contract fixes the submodule ``embed``, not that it is called: ``F.embedding(tokens, embed.weight)``
    is correct (the blind corpus's complex_rope once lost model.causal to "never called its embed submodule")."""
    r = grade(edited(tmp_path, {"model.py": [EMBED_BY_TABLE]}), tasks=["model"])
    assert r.score == r.max_score, lost(r)


def test_a_model_reading_the_table_itself_that_sees_the_future_still_fails_causal(tmp_path):
    leak = (EMBED_BY_TABLE[0], EMBED_BY_TABLE[1] + "\n        h = h + h.flip(1)")
    r = grade(edited(tmp_path, {"model.py": [leak]}), tasks=["model"])
    causal = {c.id: c for t in r.tasks for c in t.checks}["model.causal"]
    assert causal.status == "failed" and causal.message.key == "fail.future_leak", lost(r)
