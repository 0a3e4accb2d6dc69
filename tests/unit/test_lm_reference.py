"""The second assignment's reference (``assignments/decoder_lm/reference/``) checked against PyTorch and closed forms.

Everything runs in float64 (an autouse fixture switches the default dtype and restores it). Where PyTorch has
the piece, the reference is compared with it: ``F.rms_norm``, ``F.scaled_dot_product_attention`` (with
``is_causal=True`` and ``enable_gqa=True``), ``torch.optim.AdamW`` over the same parameter groups and
``nn.utils.clip_grad_norm_``. Elsewhere it is compared with a closed form written here independently: RoPE
against explicit rotation matrices, the whole model against a functional re-implementation, the filters
against brute force, the schedule and the parameter count against their formulas. Then the properties the
contract (``docs/CONTRACT_LM.md``) promises, each with a control showing the test can fail.

PyTorch's ``is_causal=True`` aligns the triangle to the top-left corner; the contract's causal attention is
aligned to the end (queries are the last ``Lq`` of ``Lk`` positions). The two agree when ``Lq == Lk``; for
``Lq < Lk`` the end-aligned mask is passed to PyTorch explicitly.
"""

import copy
import math

import pytest
import torch
import torch.nn.functional as F
from hypothesis import assume, given, settings
from hypothesis import strategies as st
from torch import nn

from assignments.decoder_lm.reference.attention import CausalSelfAttention, causal_attention
from assignments.decoder_lm.reference.block import DecoderBlock
from assignments.decoder_lm.reference.cache import KVCache
from assignments.decoder_lm.reference.feedforward import SwiGLU
from assignments.decoder_lm.reference.model import DecoderLM
from assignments.decoder_lm.reference.norm import RMSNorm
from assignments.decoder_lm.reference.optim import AdamW, clip_grad_norm_, cosine_lr, param_groups
from assignments.decoder_lm.reference.rope import RotaryEmbedding
from assignments.decoder_lm.reference.sampling import generate, sample_next, top_k_filter, top_p_filter
from assignments.decoder_lm.reference.training import count_parameters, lm_loss, train_step

ATOL, RTOL = 1e-10, 1e-9
SMALL = settings(max_examples=15, deadline=None)


@pytest.fixture(autouse=True)
def float64():
    dtype = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(dtype)


def assert_close(actual, expected, atol=ATOL, rtol=RTOL, msg=None):
    torch.testing.assert_close(actual, expected, atol=atol, rtol=rtol, msg=msg)


def gen(seed):
    return torch.Generator().manual_seed(seed)


def randn(g, *shape, scale=1.0):
    return torch.randn(*shape, generator=g) * scale


@torch.no_grad()
def randomise_(module, g):
    """Distinct random values in every parameter (norm weights around 1), so no weight hides behind its init."""
    for p in module.parameters():
        p.copy_(randn(g, *p.shape, scale=p.shape[-1] ** -0.5) if p.dim() > 1 else 1 + randn(g, *p.shape, scale=0.3))
    return module


@st.composite
def lm_configs(draw, max_layers=2):
    """A small DecoderLM configuration: D = H·Dh with Dh even, Hkv dividing H."""
    num_kv_heads = draw(st.integers(1, 2))
    num_heads = num_kv_heads * draw(st.integers(1, 3))
    head_dim = 2 * draw(st.integers(1, 3))
    return {
        "vocab_size": draw(st.integers(3, 13)),
        "dim": num_heads * head_dim,
        "num_layers": draw(st.integers(1, max_layers)),
        "num_heads": num_heads,
        "hidden_dim": draw(st.integers(1, 10)),
        "num_kv_heads": num_kv_heads,
    }


def random_model(config, seed):
    return randomise_(DecoderLM(**config, rope_base=100.0), gen(seed))


# --------------------------------------------------------------------------- closed forms written here


def rotation_matrices(positions, head_dim, base):
    """``[len(positions), Dh, Dh]``: the half-split rotation of each position, entry by entry with ``math``."""
    half = head_dim // 2
    mats = torch.zeros(len(positions), head_dim, head_dim)
    for n, pos in enumerate(positions):
        for i in range(half):
            angle = pos * base ** (-2 * i / head_dim)
            c, s = math.cos(angle), math.sin(angle)
            mats[n, i, i], mats[n, i, i + half] = c, -s
            mats[n, i + half, i], mats[n, i + half, i + half] = s, c
    return mats


def interleaved_rotation_matrices(positions, head_dim, base):
    """The paper's pairing, (2i, 2i + 1): the convention the contract does not use."""
    order = [c for i in range(head_dim // 2) for c in (i, i + head_dim // 2)]  # half-split index of each slot
    mats = rotation_matrices(positions, head_dim, base)
    return mats[:, order][:, :, order]


def rotate(x, offset, base, matrices=rotation_matrices):
    """``x [..., L, Dh]`` rotated by explicit matrices at positions ``offset … offset + L - 1``."""
    L, Dh = x.shape[-2:]
    return torch.einsum("lij,...lj->...li", matrices(range(offset, offset + L), Dh, base), x)


def end_aligned_keep(Lq, Lk):
    """Query i at position Lk - Lq + i sees keys 0 … Lk - Lq + i (True = may attend)."""
    return torch.arange(Lk)[None, :] <= torch.arange(Lq)[:, None] + (Lk - Lq)


def torch_attention(attn, x, offset=0, past=None):
    """CausalSelfAttention by hand: its weights, explicit rotations, F.scaled_dot_product_attention with GQA.

    ``past``: (keys, values) already rotated, ``[B, Hkv, offset, Dh]``, prepended to this call's."""
    B, L, D = x.shape
    H, Hkv, Dh, base = attn.num_heads, attn.num_kv_heads, attn.head_dim, attn.rope.base
    q = rotate((x @ attn.q_proj.weight.T).view(B, L, H, Dh).transpose(1, 2), offset, base)
    k = rotate((x @ attn.k_proj.weight.T).view(B, L, Hkv, Dh).transpose(1, 2), offset, base)
    v = (x @ attn.v_proj.weight.T).view(B, L, Hkv, Dh).transpose(1, 2)
    if past is not None:
        k, v = torch.cat([past[0], k], dim=2), torch.cat([past[1], v], dim=2)
    keep = end_aligned_keep(L, k.size(2))
    y = F.scaled_dot_product_attention(q, k, v, attn_mask=keep, enable_gqa=True)
    return y.transpose(1, 2).reshape(B, L, H * Dh) @ attn.o_proj.weight.T


def torch_swiglu(ffn, x):
    gate = x @ ffn.gate_proj.weight.T
    return (gate * torch.sigmoid(gate) * (x @ ffn.up_proj.weight.T)) @ ffn.down_proj.weight.T


def torch_rms_norm(norm, x):
    return F.rms_norm(x, (x.size(-1),), norm.weight, norm.eps)


def torch_logits(model, tokens):
    """The model's logits from its weights through PyTorch's pieces and the closed forms above."""
    h = F.embedding(tokens, model.embed.weight)
    for block in model.layers:
        h = h + torch_attention(block.attn, torch_rms_norm(block.attn_norm, h))
        h = h + torch_swiglu(block.ffn, torch_rms_norm(block.ffn_norm, h))
    return torch_rms_norm(model.norm, h) @ model.embed.weight.T


# --------------------------------------------------------------------------- RMSNorm


@SMALL
@given(
    shape=st.lists(st.integers(1, 5), min_size=1, max_size=3),
    seed=st.integers(0, 2**16),
    eps=st.sampled_from([None, 1e-6, 1e-2]),
)
def test_rmsnorm_matches_torch(shape, seed, eps):
    g = gen(seed)
    D = shape[-1]
    norm = randomise_(RMSNorm(D) if eps is None else RMSNorm(D, eps), g)
    assert norm.eps == (1e-6 if eps is None else eps)
    for scale in (1.0, 1e-4):  # at 1e-4 the mean square (~1e-8) is below eps: eps must sit inside the root
        x = randn(g, *shape, scale=scale)
        assert_close(norm(x), F.rms_norm(x, (D,), norm.weight, norm.eps))


def test_rmsnorm_parameters_and_dtypes():
    norm = RMSNorm(6)
    assert [(n, tuple(p.shape)) for n, p in norm.named_parameters()] == [("weight", (6,))]
    assert torch.equal(norm.weight.detach(), torch.ones(6))
    for dtype in (torch.float32, torch.float16, torch.bfloat16):
        x = randn(gen(0), 2, 3, 6).to(dtype) * 300  # 300² overflows float16: the statistics need float32
        out = norm.to(dtype)(x)
        assert out.dtype == dtype
        expected = F.rms_norm(x.double(), (6,), norm.weight.double(), 1e-6).to(dtype)
        assert_close(out, expected, atol=1e-2, rtol=1e-2)


@SMALL
@given(seed=st.integers(0, 2**16), log_c=st.floats(-3, 3))
def test_rmsnorm_is_invariant_to_positive_scaling(seed, log_c):
    g = gen(seed)
    norm = randomise_(RMSNorm(5, eps=0.0), g)
    x = randn(g, 3, 5)
    c = 10.0**log_c
    assert_close(norm(c * x), norm(x))
    assert_close(norm(-c * x), -norm(x))  # a negative scale flips the sign: invariance is for c > 0 only
    assert not torch.allclose(norm(x + 1.0), norm(x))  # no mean subtracted: unlike LayerNorm, a shift shows


# --------------------------------------------------------------------------- RoPE


@SMALL
@given(
    head_dim=st.sampled_from([2, 4, 6, 8, 16]),
    L=st.integers(1, 6),
    offset=st.integers(0, 10**5),
    base=st.sampled_from([10000.0, 500.0]),
    seed=st.integers(0, 2**16),
)
def test_rope_matches_explicit_rotation_matrices(head_dim, L, offset, base, seed):
    x = randn(gen(seed), 2, 3, L, head_dim)
    rope = RotaryEmbedding(head_dim, base)
    out = rope(x, offset)
    assert_close(out, rotate(x, offset, base))
    if head_dim >= 4 and offset + L > 1:  # the pairing is visible: interleaved pairs give another result
        assert not torch.allclose(out, rotate(x, offset, base, interleaved_rotation_matrices))


def test_rope_defaults_and_shape_rules():
    rope = RotaryEmbedding(8)
    x = randn(gen(1), 5, 8)
    assert_close(rope(x), rotate(x, 0, 10000.0))
    assert not list(rope.parameters()) and not rope.state_dict()
    with pytest.raises(ValueError):
        RotaryEmbedding(7)
    for dtype in (torch.float32, torch.bfloat16):
        assert rope(x.to(dtype), 3).dtype == dtype


@SMALL
@given(
    head_dim=st.sampled_from([2, 4, 8]),
    Lq=st.integers(1, 5),
    Lk=st.integers(1, 5),
    shift=st.integers(1, 500),
    seed=st.integers(0, 2**16),
)
def test_rope_scores_depend_only_on_relative_offset_and_norms_are_kept(head_dim, Lq, Lk, shift, seed):
    g = gen(seed)
    rope = RotaryEmbedding(head_dim, 100.0)
    q, k = randn(g, 2, Lq, head_dim), randn(g, 2, Lk, head_dim)
    scores = rope(q, 3) @ rope(k, 0).transpose(-2, -1)
    assert_close(rope(q, 3 + shift) @ rope(k, shift).transpose(-2, -1), scores)  # every position shifted by c
    assert_close(rope(q, shift).norm(dim=-1), q.norm(dim=-1))
    if Lq > 1 or Lk > 1:  # control: shifting the queries alone changes relative offsets, hence scores
        assert not torch.allclose(rope(q, 3 + shift) @ rope(k, 0).transpose(-2, -1), scores)


# --------------------------------------------------------------------------- SwiGLU


def test_swiglu_matches_closed_form():
    g = gen(2)
    ffn = randomise_(SwiGLU(6, 10), g)
    assert {n: tuple(p.shape) for n, p in ffn.named_parameters()} == {
        "gate_proj.weight": (10, 6),
        "up_proj.weight": (10, 6),
        "down_proj.weight": (6, 10),
    }
    x = randn(g, 2, 3, 6)
    assert_close(ffn(x), torch_swiglu(ffn, x))


# --------------------------------------------------------------------------- attention


@st.composite
def attention_shapes(draw):
    Hkv = draw(st.integers(1, 3))
    Lq = draw(st.integers(1, 5))
    return {
        "B": draw(st.integers(1, 2)),
        "H": Hkv * draw(st.integers(1, 3)),
        "Hkv": Hkv,
        "Lq": Lq,
        "Lk": Lq + draw(st.integers(0, 3)),
        "Dh": draw(st.integers(1, 6)),
        "seed": draw(st.integers(0, 2**16)),
    }


@SMALL
@given(s=attention_shapes())
def test_causal_attention_matches_torch_sdpa_with_gqa(s):
    g = gen(s["seed"])
    q = randn(g, s["B"], s["H"], s["Lq"], s["Dh"])
    k, v = randn(g, s["B"], s["Hkv"], s["Lk"], s["Dh"]), randn(g, s["B"], s["Hkv"], s["Lk"], s["Dh"])
    out = causal_attention(q, k, v)
    if s["Lq"] == s["Lk"]:
        assert_close(out, F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=True))
    keep = end_aligned_keep(s["Lq"], s["Lk"])
    assert_close(out, F.scaled_dot_product_attention(q, k, v, attn_mask=keep, enable_gqa=True))
    group = s["H"] // s["Hkv"]
    if s["Hkv"] > 1 and group > 1 and s["Lk"] > 1:  # control: tiling the kv heads pairs them wrongly
        tiled = F.scaled_dot_product_attention(q, k.repeat(1, group, 1, 1), v.repeat(1, group, 1, 1), attn_mask=keep)
        assert not torch.allclose(out, tiled)


@pytest.mark.parametrize("kv", ["mha", "mqa"])
def test_gqa_extremes_are_plain_multi_head_and_multi_query(kv):
    """Hkv == H: plain multi-head attention (no sharing); Hkv == 1: every query head reads the same k and v."""
    g = gen(3)
    B, H, L, Dh = 2, 4, 5, 4
    D = H * Dh
    attn = randomise_(CausalSelfAttention(D, H, H if kv == "mha" else 1, rope_base=100.0), g)
    x = randn(g, B, L, D)
    q = rotate((x @ attn.q_proj.weight.T).view(B, L, H, Dh).transpose(1, 2), 0, 100.0)
    k = rotate((x @ attn.k_proj.weight.T).view(B, L, -1, Dh).transpose(1, 2), 0, 100.0)
    v = (x @ attn.v_proj.weight.T).view(B, L, -1, Dh).transpose(1, 2)
    if kv == "mqa":
        assert k.size(1) == 1
        k, v = k.expand(B, H, L, Dh), v.expand(B, H, L, Dh)  # one shared head, no enable_gqa
    y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert_close(attn(x), y.transpose(1, 2).reshape(B, L, D) @ attn.o_proj.weight.T)


def test_attention_parameters_and_errors():
    attn = CausalSelfAttention(12, 6, 2)
    shapes = {n: tuple(p.shape) for n, p in attn.named_parameters()}
    assert shapes == {
        "q_proj.weight": (12, 12),
        "k_proj.weight": (4, 12),
        "v_proj.weight": (4, 12),
        "o_proj.weight": (12, 12),
    }
    assert CausalSelfAttention(12, 6).num_kv_heads == 6
    for args in [(10, 3), (12, 6, 4), (12, 4, 2)]:  # 3 ∤ 10; 4 ∤ 6; head size 3 is odd
        with pytest.raises(ValueError):
            CausalSelfAttention(*args)


# --------------------------------------------------------------------------- block and model


@SMALL
@given(config=lm_configs(), L=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_model_matches_functional_reimplementation(config, L, seed):
    model = random_model(config, seed)
    tokens = torch.randint(config["vocab_size"], (2, L), generator=gen(seed + 1))
    logits = model(tokens)
    assert logits.shape == (2, L, config["vocab_size"])
    assert_close(logits, torch_logits(model, tokens))


def test_block_is_pre_norm():
    g = gen(4)
    block = randomise_(DecoderBlock(8, 4, 12, num_kv_heads=2, eps=1e-3, rope_base=100.0), g)
    assert block.attn_norm.eps == block.ffn_norm.eps == 1e-3
    x = randn(g, 2, 5, 8)
    h = x + torch_attention(block.attn, torch_rms_norm(block.attn_norm, x))
    expected = h + torch_swiglu(block.ffn, torch_rms_norm(block.ffn_norm, h))
    assert_close(block(x), expected)
    post_norm = torch_rms_norm(block.ffn_norm, h + torch_swiglu(block.ffn, h))
    assert not torch.allclose(block(x), post_norm)


def test_model_ties_embeddings_and_initialises():
    torch.manual_seed(0)
    V, D = 300, 64
    model = DecoderLM(V, D, num_layers=2, num_heads=4, hidden_dim=96, num_kv_heads=2)
    assert model.lm_head.weight is model.embed.weight
    names = [n for n, _ in model.named_parameters()]
    assert names[0] == "embed.weight" and not any(n.startswith("lm_head") for n in names)
    assert not any(n.endswith("bias") for n in names)
    assert len(model.layers) == 2 and isinstance(model.layers, nn.ModuleList)
    for name, p in model.named_parameters():
        if p.dim() == 1:
            assert torch.equal(p.detach(), torch.ones_like(p)), name
        else:  # N(0, 0.02²): the sample std of >= 2,048 draws is within 10% of 0.02 (many sigmas)
            assert abs(p.std().item() - 0.02) < 0.002, name
            assert abs(p.mean().item()) < 0.002, name
    caches = model.new_cache()
    assert len(caches) == 2 and all(isinstance(c, KVCache) and c.length == 0 for c in caches)
    assert caches[0] is not caches[1]


@SMALL
@given(config=lm_configs(max_layers=3))
def test_count_parameters_matches_model(config):
    model = DecoderLM(**config)
    count = count_parameters(**config)
    assert type(count) is int
    assert count == sum(p.numel() for p in model.parameters())
    untied = sum(t.numel() for t in model.state_dict().values())  # lm_head.weight counted again
    assert untied == count + config["vocab_size"] * config["dim"]
    if config["num_kv_heads"] == config["num_heads"]:
        assert count_parameters(**{**config, "num_kv_heads": None}) == count


# --------------------------------------------------------------------------- causality


@pytest.mark.parametrize("num_kv_heads", [1, 2, 4])
def test_no_future_leak_by_perturbation(num_kv_heads):
    g = gen(5)
    config = {
        "vocab_size": 11,
        "dim": 8,
        "num_layers": 2,
        "num_heads": 4,
        "hidden_dim": 12,
        "num_kv_heads": num_kv_heads,
    }
    model = random_model(config, 5)
    tokens = torch.randint(11, (2, 7), generator=g)
    for t in range(1, 7):
        changed = tokens.clone()
        changed[:, t:] = (changed[:, t:] + 1 + torch.randint(9, changed[:, t:].shape, generator=g)) % 11
        before, after = model(tokens), model(changed)
        assert torch.equal(after[:, :t], before[:, :t]), t  # exactly: blocked keys get weight exactly 0
        assert not torch.allclose(after[:, t:], before[:, t:]), t


def test_no_future_leak_by_zero_gradients():
    g = gen(6)
    blocks = nn.Sequential(*(randomise_(DecoderBlock(8, 4, 12, num_kv_heads=2, rope_base=100.0), g) for _ in range(2)))
    L = 6
    for t in range(L):
        x = randn(g, 2, L, 8).requires_grad_()
        blocks(x)[:, t].sum().backward()
        assert torch.count_nonzero(x.grad[:, t + 1 :]) == 0, t  # exactly zero after position t
        assert torch.count_nonzero(x.grad[:, : t + 1].abs().sum(-1)) == 2 * (t + 1), t  # every earlier row feeds it


# --------------------------------------------------------------------------- KV cache


def test_kv_cache_appends_along_the_sequence_axis():
    g = gen(7)
    cache = KVCache()
    assert cache.keys is None and cache.values is None and cache.length == 0
    k1, v1, k2, v2 = (randn(g, 2, 3, n, 4) for n in (5, 5, 1, 1))
    assert all(torch.equal(a, b) for a, b in zip(cache.update(k1, v1), (k1, v1)))
    keys, values = cache.update(k2, v2)
    assert cache.length == 6 and type(cache.length) is int
    assert torch.equal(keys, torch.cat([k1, k2], 2)) and torch.equal(values, torch.cat([v1, v2], 2))
    assert torch.equal(cache.keys, keys) and torch.equal(cache.values, values)


@SMALL
@given(config=lm_configs(), prompt_len=st.integers(1, 4), steps=st.integers(1, 4), seed=st.integers(0, 2**16))
def test_cached_decoding_gives_the_full_forward_logits_at_every_step(config, prompt_len, steps, seed):
    model = random_model(config, seed)
    tokens = torch.randint(config["vocab_size"], (2, prompt_len + steps), generator=gen(seed + 1))
    full = model(tokens)
    caches = model.new_cache()
    assert_close(model(tokens[:, :prompt_len], caches), full[:, :prompt_len])
    for t in range(prompt_len, prompt_len + steps):
        assert_close(model(tokens[:, t : t + 1], caches), full[:, t : t + 1])
    Hkv, Dh = config["num_kv_heads"], config["dim"] // config["num_heads"]
    for cache in caches:
        assert cache.length == prompt_len + steps
        assert cache.keys.shape == cache.values.shape == (2, Hkv, prompt_len + steps, Dh)
    first = model.layers[0]  # the cache holds rotated keys and plain values, Hkv heads
    x = first.attn_norm(model.embed(tokens))
    k = (x @ first.attn.k_proj.weight.T).view(2, -1, Hkv, Dh).transpose(1, 2)
    assert_close(caches[0].keys, rotate(k, 0, 100.0))
    assert_close(caches[0].values, (x @ first.attn.v_proj.weight.T).view(2, -1, Hkv, Dh).transpose(1, 2))


def test_cached_chunks_and_the_offset():
    """A prompt fed in chunks of several tokens gives the same logits; with positions restarting at 0 (a model
    that ignores the cache's length) it does not."""
    config = {"vocab_size": 13, "dim": 12, "num_layers": 2, "num_heads": 6, "hidden_dim": 10, "num_kv_heads": 3}
    model = random_model(config, 8)
    tokens = torch.randint(13, (3, 8), generator=gen(8))
    full = model(tokens)
    caches = model.new_cache()
    chunks = [model(tokens[:, a:b], caches) for a, b in [(0, 3), (3, 5), (5, 8)]]
    assert_close(torch.cat(chunks, dim=1), full)

    model_ignoring_offset = copy.deepcopy(model)
    for block in model_ignoring_offset.layers:
        rope = block.attn.rope
        rope.forward = lambda x, offset=0, rope=rope: RotaryEmbedding.forward(rope, x, 0)
    caches = model_ignoring_offset.new_cache()
    model_ignoring_offset(tokens[:, :5], caches)
    assert not torch.allclose(model_ignoring_offset(tokens[:, 5:6], caches), full[:, 5:6])


# --------------------------------------------------------------------------- filters


def brute_force_top_p_keep(logits, p):
    """Token j kept iff the probability of the tokens strictly more probable than j is < p (row by row)."""
    probs = logits.softmax(-1)
    ahead = ((probs[..., None, :] > probs[..., :, None]) * probs[..., None, :]).sum(-1)  # [..., V]
    return ahead < p, ahead


logit_rows = st.lists(st.integers(-3, 3), min_size=1, max_size=8).map(lambda xs: torch.tensor(xs) / 2.0)


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(logit_rows, min_size=1, max_size=3), k=st.integers(1, 10))
def test_top_k_keeps_exactly_the_k_best_and_their_ties(rows, k):
    V = min(len(r) for r in rows)
    logits = torch.stack([r[:V] for r in rows])  # ties on purpose: integer halves
    original = logits.clone()
    out = top_k_filter(logits, k)
    assert torch.equal(logits, original)
    kth = logits.sort(-1, descending=True).values[:, min(k, V) - 1 : min(k, V)]
    kept = logits >= kth
    assert torch.equal(out[kept], logits[kept])
    assert torch.isneginf(out[~kept]).all()
    assert (kept.sum(-1) >= min(k, V)).all()
    strictly_better = (logits[:, None, :] > logits[:, :, None]).sum(-1)  # how many tokens beat each one
    assert (strictly_better[kept] < k).all()  # never outside the k best


def test_top_k_without_ties_keeps_k():
    logits = randn(gen(9), 4, 10)
    for k in (1, 3, 10, 50):
        assert (torch.isfinite(top_k_filter(logits, k)).sum(-1) == min(k, 10)).all()


@settings(max_examples=60, deadline=None)
@given(rows=st.lists(logit_rows, min_size=1, max_size=3), p=st.floats(0.01, 0.99))
def test_top_p_keeps_the_smallest_set_reaching_p(rows, p):
    V = min(len(r) for r in rows)
    logits = torch.stack([r[:V] for r in rows])
    keep, ahead = brute_force_top_p_keep(logits, p)
    assume(((ahead - p).abs() > 1e-9).all())  # a p equal to a partial sum is decided by rounding
    original = logits.clone()
    out = top_p_filter(logits, p)
    assert torch.equal(logits, original)
    assert torch.equal(out[keep], logits[keep])
    assert torch.isneginf(out[~keep]).all()
    probs = logits.softmax(-1)
    assert ((probs * keep).sum(-1) >= p).all()  # the kept set reaches p
    assert keep[torch.arange(len(rows)), probs.argmax(-1)].all()  # the most probable token always stays


def test_top_p_examples_and_edges():
    logits = torch.tensor([0.5, 0.3, 0.2]).log()
    for p, expected in [(0.4, [True, False, False]), (0.75, [True, True, False]), (0.85, [True, True, True])]:
        assert torch.isfinite(top_p_filter(logits, p)).tolist() == expected, p
    tiny = torch.tensor([0.0, -60.0, -80.0])  # the tail's mass rounds away next to 1
    assert torch.equal(top_p_filter(tiny, 1.0), tiny)
    filtered = torch.tensor([1.0, float("-inf"), 0.0])  # -inf from an earlier top-k stays out
    assert torch.isneginf(top_p_filter(filtered, 0.99)[1])


# --------------------------------------------------------------------------- sampling


def intended_distribution(logits, temperature, top_k, top_p):
    """The distribution sample_next should draw from, by the contract's order, from the brute-force filters."""
    scaled = logits / temperature
    kth = scaled.sort(descending=True).values[top_k - 1]
    scaled = scaled.masked_fill(scaled < kth, -math.inf)
    keep, _ = brute_force_top_p_keep(scaled, top_p)
    return scaled.masked_fill(~keep, -math.inf).softmax(-1)


def chi_square_p_value(counts, probs):
    """Pearson's goodness-of-fit test over the categories with positive probability: the p-value is the
    chi-square survival function, Q(dof / 2, statistic / 2) (the regularised upper incomplete gamma)."""
    support = probs > 0
    expected = probs[support] * counts.sum()
    statistic = ((counts[support] - expected) ** 2 / expected).sum()
    dof = support.sum() - 1
    return torch.special.gammaincc(dof / 2.0, statistic / 2.0).item()


def test_sampled_frequencies_match_the_intended_distribution():
    """Chi-square goodness of fit, 20,000 draws, fixed seed. Under a correct sampler the p-value is uniform, so
    the test rejects a correct sampler with probability ALPHA = 1e-3 over seeds (a false alarm), and with the
    seed fixed it is deterministic. The controls show the same draws reject the distributions of two classic
    mistakes (no temperature; top-p before the temperature)."""
    ALPHA, N = 1e-3, 20_000
    logits = torch.tensor([2.0, 1.5, 1.2, 1.0, 0.4, -0.5, -1.0])
    temperature, top_k, top_p = 0.7, 5, 0.8  # at temperature 1 the nucleus would hold 4 tokens, here 3
    draws = sample_next(logits.expand(N, -1), temperature, top_k, top_p, generator=gen(10))
    assert draws.shape == (N,) and draws.dtype == torch.long
    counts = torch.bincount(draws, minlength=len(logits)).double()
    intended = intended_distribution(logits, temperature, top_k, top_p)
    assert (counts[intended == 0] == 0).all()  # never outside the top-k and the nucleus
    assert 1 < int((intended > 0).sum()) < top_k  # top-p did cut inside the top-k: both filters are exercised
    assert chi_square_p_value(counts, intended) > ALPHA
    no_temperature = intended_distribution(logits, 1.0, top_k, top_p)
    assert chi_square_p_value(counts, no_temperature) < ALPHA
    nucleus_first = intended_distribution(logits, 1.0, top_k, top_p).log().div(temperature).softmax(-1)
    assert chi_square_p_value(counts, nucleus_first) < ALPHA


def test_greedy_is_temperature_zero_and_draws_nothing():
    logits = torch.tensor([[0.1, 2.0, 2.0, -1.0], [3.0, 0.0, 3.0, 3.0]])
    g = gen(11)
    state = g.get_state()
    out = sample_next(logits, temperature=0.0, top_k=1, top_p=0.1, generator=g)
    assert out.tolist() == [1, 0]  # the lowest index among equal maxima
    assert torch.equal(g.get_state(), state)


def test_sample_next_is_one_multinomial_call():
    logits = randn(gen(12), 3, 9)
    for top_k, top_p in [(None, None), (4, None), (None, 0.8), (6, 0.7)]:
        probs = logits.div(1.3)
        probs = probs if top_k is None else top_k_filter(probs, top_k)
        probs = (probs if top_p is None else top_p_filter(probs, top_p)).softmax(-1)
        expected = torch.multinomial(probs, num_samples=1, generator=gen(13)).squeeze(-1)
        assert torch.equal(sample_next(logits, 1.3, top_k, top_p, generator=gen(13)), expected)


# --------------------------------------------------------------------------- generate

GEN_CONFIG = {"vocab_size": 17, "dim": 8, "num_layers": 2, "num_heads": 4, "hidden_dim": 12, "num_kv_heads": 2}


def count_forwards(model):
    calls = []
    model.register_forward_pre_hook(lambda module, args: calls.append(args[0].shape[1]))
    return calls


def test_generate_uses_the_cache_one_token_at_a_time():
    model = random_model(GEN_CONFIG, 14)
    prompt = torch.randint(17, (3, 4), generator=gen(14))
    calls = count_forwards(model)
    out = generate(model, prompt, 5, temperature=0.8, top_k=10, top_p=0.95, generator=gen(15))
    assert out.shape == (3, 9) and out.dtype == torch.long and not out.requires_grad
    assert torch.equal(out[:, :4], prompt)
    assert calls == [4, 1, 1, 1, 1]  # the prompt, then each new token but the last
    calls.clear()
    assert torch.equal(generate(model, prompt, 0), prompt) and calls == []


def test_generate_equals_the_loop_without_cache():
    """The same draws as full forwards over the growing text: greedy, and sampled with the same seed."""
    model = random_model(GEN_CONFIG, 16).train()
    prompt = torch.randint(17, (2, 3), generator=gen(16))
    for temperature, top_k, top_p in [(0.0, None, None), (1.0, None, None), (0.9, 8, 0.9)]:
        g = gen(17)
        text = prompt
        for _ in range(6):
            step = sample_next(model(text)[:, -1].detach(), temperature, top_k, top_p, generator=g)
            text = torch.cat([text, step[:, None]], dim=1)
        assert torch.equal(generate(model, prompt, 6, temperature, top_k, top_p, generator=gen(17)), text)
    assert model.training


def test_same_seed_same_text():
    model = random_model(GEN_CONFIG, 18)
    prompt = torch.randint(17, (2, 2), generator=gen(18))
    runs = [generate(model, prompt, 12, temperature=1.5, generator=gen(seed)) for seed in (19, 19, 20)]
    assert torch.equal(runs[0], runs[1])
    assert not torch.equal(runs[0], runs[2])


@pytest.mark.parametrize(("dtype", "tolerance"), [(torch.float32, 1e-5), (torch.float16, 0.02), (torch.bfloat16, 0.2)])
def test_model_and_generate_keep_a_lower_precision(dtype, tolerance):
    """The whole model runs in the dtype it is cast to (half precision included) and stays near float64."""
    model = random_model(GEN_CONFIG, 26)
    tokens = torch.randint(17, (2, 6), generator=gen(26))
    expected = model(tokens)
    low = copy.deepcopy(model).to(dtype)
    logits = low(tokens)
    assert logits.dtype == dtype
    assert_close(logits.double(), expected, atol=tolerance, rtol=tolerance)
    out = generate(low, tokens, 3, top_k=5, top_p=0.9, generator=gen(27))
    assert out.shape == (2, 9) and out.dtype == torch.long


# --------------------------------------------------------------------------- loss


def test_lm_loss_shifts_targets_and_ignores_padding():
    g = gen(21)
    V, PAD = 7, 0
    logits = randn(g, 3, 6, V)
    tokens = torch.randint(1, V, (3, 6), generator=g)
    tokens[1, 4:] = PAD  # rows of different lengths: a mean over tokens, not over rows
    tokens[2, 2:] = PAD
    log_probs = logits.log_softmax(-1)
    nll = [-log_probs[b, t, tokens[b, t + 1]] for b in range(3) for t in range(5) if tokens[b, t + 1] != PAD]
    expected = torch.stack(nll).mean()
    assert_close(lm_loss(logits, tokens, pad_id=PAD), expected)
    everything = torch.stack([-log_probs[b, t, tokens[b, t + 1]] for b in range(3) for t in range(5)]).mean()
    assert_close(lm_loss(logits, tokens), everything)
    assert not torch.allclose(everything, expected)  # the padding does change the result when counted
    unshifted = F.cross_entropy(logits.reshape(-1, V), tokens.reshape(-1), ignore_index=PAD)
    assert not torch.allclose(unshifted, expected)


# --------------------------------------------------------------------------- optimiser pieces


class WithBiases(nn.Module):
    """A module with biases, a LayerNorm, a tied pair and a frozen parameter: every case of param_groups."""

    def __init__(self):
        super().__init__()
        self.embed = nn.Embedding(5, 4)
        self.proj = nn.Linear(4, 3)
        self.norm = nn.LayerNorm(3)
        self.head = nn.Linear(4, 5, bias=False)
        self.head.weight = self.embed.weight
        self.frozen = nn.Parameter(torch.ones(3, 3), requires_grad=False)


def test_param_groups_decay_matrices_only():
    module = WithBiases()
    groups = param_groups(module, 0.1)
    assert [g["weight_decay"] for g in groups] == [0.1, 0.0]
    by_id = {id(p): n for n, p in module.named_parameters()}
    assert [by_id[id(p)] for p in groups[0]["params"]] == ["embed.weight", "proj.weight"]
    assert [by_id[id(p)] for p in groups[1]["params"]] == ["proj.bias", "norm.weight", "norm.bias"]

    model = DecoderLM(11, 8, 2, 4, 12, 2)
    decay, no_decay = (g["params"] for g in param_groups(model, 0.1))
    names = {id(p): n for n, p in model.named_parameters()}
    assert all(names[id(p)].endswith("norm.weight") for p in no_decay) and len(no_decay) == 2 * 2 + 1
    assert len(decay) + len(no_decay) == len(list(model.parameters()))
    AdamW(param_groups(model, 0.1))  # each parameter once: an optimizer accepts the groups


def adamw_twins(seed):
    """A model and its copy, with AdamW (ours) and torch.optim.AdamW over the same groups, different per-group lr."""
    model = random_model(GEN_CONFIG, seed)
    twin = copy.deepcopy(model)
    groups = [param_groups(m, 0.1) for m in (model, twin)]
    for gs in groups:
        gs[1]["lr"] = 0.02  # a group's own lr overrides the default
    hyper = {"lr": 0.05, "betas": (0.8, 0.95), "eps": 1e-6}
    return model, twin, AdamW(groups[0], **hyper), torch.optim.AdamW(groups[1], **hyper, weight_decay=0.5)


def test_adamw_matches_torch():
    model, twin, ours, theirs = adamw_twins(22)
    extra = nn.Parameter(torch.ones(3))  # never gets a gradient: skipped by both
    ours.add_param_group({"params": [extra]})
    tokens = torch.randint(17, (2, 6), generator=gen(22))
    for step, lr in enumerate([0.05, 0.03, 0.01]):
        for opt in (ours, theirs):
            opt.param_groups[0]["lr"] = lr  # a schedule changes lr between steps
        for m, opt in ((model, ours), (twin, theirs)):
            opt.zero_grad()
            lm_loss(m(tokens), tokens).backward()
        assert ours.step() is None
        theirs.step()
        for (name, p), q in zip(model.named_parameters(), twin.parameters()):
            assert_close(p, q, atol=1e-12, rtol=1e-10, msg=f"step {step}: {name}")
    assert torch.equal(extra.detach(), torch.ones(3)) and not ours.state[extra]
    defaults = ("lr", "betas", "eps", "weight_decay")
    theirs_defaults = torch.optim.AdamW([extra]).defaults
    assert {k: AdamW([extra]).defaults[k] for k in defaults} == {k: theirs_defaults[k] for k in defaults}


def test_adamw_is_not_adam_with_l2():
    """Control: the same step with the decay added to the gradient (torch.optim.Adam's weight_decay) differs."""
    model, twin, ours, _ = adamw_twins(23)
    l2 = torch.optim.Adam([p for g in param_groups(twin, 0.1) for p in g["params"]], lr=0.05, weight_decay=0.1)
    tokens = torch.randint(17, (2, 6), generator=gen(23))
    for m, opt in ((model, ours), (twin, l2)):
        opt.zero_grad()
        lm_loss(m(tokens), tokens).backward()
        opt.step()
    assert not torch.allclose(model.embed.weight, twin.embed.weight)


def test_adamw_step_returns_the_closure_loss():
    p = nn.Parameter(torch.tensor([1.0, -2.0]))
    opt = AdamW([p], lr=0.1, weight_decay=0.0)

    def closure():
        opt.zero_grad()
        loss = (p**2).sum()
        loss.backward()
        return loss

    assert opt.step(closure).item() == 5.0
    assert_close(p.detach(), torch.tensor([0.9, -1.9]))  # first step: m̂ / √v̂ = sign(g), so lr·sign(g)


def test_cosine_schedule_at_chosen_steps():
    max_lr, min_lr, warmup, total = 3e-4, 3e-5, 10, 110
    lr = [cosine_lr(step, max_lr, min_lr, warmup, total) for step in range(total + 5)]
    assert all(isinstance(x, float) for x in lr)
    assert math.isclose(lr[0], max_lr / warmup, rel_tol=1e-12)  # step 0 already learns
    assert math.isclose(lr[4], max_lr * 5 / warmup, rel_tol=1e-12)
    assert math.isclose(lr[warmup - 1], max_lr, rel_tol=1e-12) and math.isclose(lr[warmup], max_lr, rel_tol=1e-12)
    assert math.isclose(lr[60], (max_lr + min_lr) / 2, rel_tol=1e-12)  # half-way through the cosine
    quarter = min_lr + (max_lr - min_lr) * (1 + math.cos(math.pi / 4)) / 2
    assert math.isclose(lr[35], quarter, rel_tol=1e-12)
    assert lr[total] == pytest.approx(min_lr, rel=1e-12) and lr[total + 1] == lr[total + 4] == min_lr
    assert all(a < b for a, b in zip(lr[:warmup], lr[1:warmup]))
    assert all(a >= b for a, b in zip(lr[warmup:], lr[warmup + 1 :]))
    assert cosine_lr(0, max_lr, min_lr, 0, total) == max_lr  # no warm-up: the cosine starts at the peak


@pytest.mark.parametrize("max_norm", [0.01, 1e6])
def test_clip_grad_norm_matches_torch(max_norm):
    g = gen(24)
    params = [nn.Parameter(randn(g, *shape)) for shape in [(3, 4), (5,), (2, 2, 2)]]
    params.append(nn.Parameter(torch.ones(2)))  # no gradient: skipped
    for p in params[:3]:
        p.grad = randn(g, *p.shape)
    twins = [nn.Parameter(p.detach().clone()) for p in params]
    for p, q in zip(params, twins):
        q.grad = None if p.grad is None else p.grad.clone()
    grad_ids = [id(p.grad) for p in params[:3]]
    total = clip_grad_norm_(iter(params), max_norm)  # a generator, as model.parameters() is
    expected = nn.utils.clip_grad_norm_(twins, max_norm)
    assert total.dim() == 0
    assert_close(total, expected)
    for p, q in zip(params, twins):
        assert (p.grad is None) == (q.grad is None)
        if p.grad is not None:
            assert_close(p.grad, q.grad)
    assert [id(p.grad) for p in params[:3]] == grad_ids  # in place
    clipped_norm = torch.linalg.vector_norm(torch.cat([p.grad.flatten() for p in params[:3]]))
    if max_norm < total:
        assert clipped_norm == pytest.approx(max_norm, rel=1e-5)
    else:
        assert clipped_norm == pytest.approx(total.item(), rel=1e-12)


# --------------------------------------------------------------------------- train_step


def manual_step(model, tokens, optimizer, pad_id, max_grad_norm, lr):
    for group in optimizer.param_groups:
        group["lr"] = lr
    optimizer.zero_grad()
    logits = model(tokens)
    V = logits.size(-1)
    loss = F.cross_entropy(logits[:, :-1].reshape(-1, V), tokens[:, 1:].reshape(-1), ignore_index=pad_id)
    loss.backward()
    nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


def test_train_step_matches_a_manual_step():
    PAD = 0
    model, twin, ours, theirs = adamw_twins(25)
    for p in model.parameters():  # stale gradients that train_step must clear
        p.grad = torch.ones_like(p)
    g = gen(25)
    for step in range(4):
        tokens = torch.randint(1, 17, (3, 7), generator=g)
        tokens[step % 3, 4:] = PAD
        lr = cosine_lr(step, 0.05, 0.005, 2, 4)
        loss = train_step(model, tokens, ours, pad_id=PAD, max_grad_norm=0.5, lr=lr)
        expected = manual_step(twin, tokens, theirs, PAD, 0.5, lr)
        assert isinstance(loss, float)
        assert math.isclose(loss, expected, rel_tol=RTOL, abs_tol=ATOL)
        assert all(group["lr"] == lr for group in ours.param_groups)
        for (name, p), q in zip(model.named_parameters(), twin.parameters()):
            assert_close(p, q, atol=1e-11, rtol=1e-9, msg=f"step {step}: {name}")
