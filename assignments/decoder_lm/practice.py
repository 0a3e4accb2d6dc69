"""The decoder-only LM's drills (``gradekit practice --assignment decoder_lm``) and quiz (``gradekit quiz
--assignment decoder_lm``): the kit's ``grader.practice`` runs them.

``DRILLS``: one per task a candidate writes alone, then the interview sets. Two tasks have no drill yet:
``model`` and ``param_count``. Their ids are also the first assignment's, and the kit keys a drill's title
and hints by task id alone (``practice.title.<drill>``, ``practice.hint.<task>.<level>``), so this
assignment's texts for them would clash with the Transformer's (``grader.messages.MessageClash``) as soon as
both assignments are loaded in one process. Their texts are written (``PENDING`` in
``messages/practice_<lang>.py``) for when the kit keys practice texts per assignment.

``QUESTIONS``: what interviewers ask about a Llama-style decoder. The texts are in
``messages/practice_<lang>.py``: ``practice.title.<drill>``, ``practice.hint.<task>.<level>``,
``quiz.<id>.*`` (every id starts with ``lm_``, apart from the Transformer's) and ``quiz.topic.<topic>`` (a
topic both assignments have is named alike in both). ``TASK_TEXTS``: the drilled names' task text (the
skeleton's docstrings) in Chinese, from ``messages/practice_tasks.py``. A choice question's options are written so that
nothing but the content tells the right one (as in the first assignment; ``tests/corpus/test_lm_practice.py``
measures it).

Every numeric answer is computed from the reference, never typed in: cache sizes by running the reference
model on PyTorch's ``meta`` device (shapes without memory, so a 7B-sized model costs nothing), parameter
counts from ``count_parameters`` or from counting built modules, angles by rotating unit vectors with
``RotaryEmbedding``, rates from ``cosine_lr``, kept tokens from the filters, counted targets from
``lm_loss``'s gradient. Each answer function gets the reference as ``ref`` (``ref.get(name)``: a contract name
as the reference defines it) and the drawn values.
"""

import math

from assignments.decoder_lm import TASKS
from assignments.decoder_lm.messages import practice_tasks
from grader.author import Drill, Question

# (minutes, level) per task id: what a candidate who knows the material needs, from a blank stub. ``model``
# and ``param_count`` are left out for now (see the module's docstring).
_TASK_TIMES = {
    "rmsnorm": (8, "easy"),
    "rope": (15, "medium"),
    "swiglu": (6, "easy"),
    "gqa": (15, "medium"),
    "attention": (20, "medium"),
    "kv_cache": (8, "easy"),
    "block": (8, "easy"),
    "top_k": (6, "easy"),
    "top_p": (12, "medium"),
    "sample": (10, "medium"),
    "generate": (15, "medium"),
    "decay_groups": (8, "easy"),
    "adamw": (20, "hard"),
    "schedule": (8, "easy"),
    "clip": (8, "easy"),
    "loss": (8, "easy"),
    "train_step": (10, "medium"),
}

TASK_DRILLS = tuple(Drill(t.id, (t.id,), *_TASK_TIMES[t.id]) for t in TASKS if t.id in _TASK_TIMES)

SET_DRILLS = (
    Drill("llama_block25", ("rmsnorm", "swiglu", "block"), 25, "medium"),
    Drill("rope_attention40", ("rope", "gqa", "attention", "kv_cache"), 40, "hard"),
    Drill("sampling30", ("top_k", "top_p", "sample", "generate"), 30, "hard"),
    Drill("optim35", ("decay_groups", "adamw", "schedule", "clip"), 35, "hard"),
    Drill("lm_training25", ("loss", "schedule", "train_step"), 25, "medium"),
    Drill("llama60", ("rmsnorm", "rope", "swiglu", "gqa", "attention", "block"), 60, "hard"),
)

DRILLS = TASK_DRILLS + SET_DRILLS

TASK_TEXTS = {"zh": practice_tasks.ZH}


# -- numeric answers, computed from the reference -----------------------------------------------------------


def _numel(module):
    return sum(p.numel() for p in module.parameters())


_BYTES = {"float32": 4, "float16": 2, "bfloat16": 2}


def ans_kv_cache_mib(ref, num_layers, dim, num_heads, num_kv_heads, seq_len, batch, dtype):
    """The KV cache after a forward over ``batch`` rows of ``seq_len`` tokens, in MiB, measured on the
    ``meta`` device (every cache tensor's bytes: keys and values of every layer)."""
    import torch

    with torch.device("meta"):
        model = ref.get("DecoderLM")(256, dim, num_layers, num_heads, 4 * dim, num_kv_heads=num_kv_heads)
        model = model.to(getattr(torch, dtype))
        caches = model.new_cache()
        model(torch.zeros(batch, seq_len, dtype=torch.long), caches)
    total = sum(t.numel() * t.element_size() for c in caches for t in (c.keys, c.values))
    return total / 2**20


def ans_gqa_saving(ref, dim, num_heads, num_kv_heads, seq_len):
    """How many times larger one layer's cache is with plain multi-head attention than with ``num_kv_heads``."""
    import torch

    sizes = []
    for kv in (num_heads, num_kv_heads):
        with torch.device("meta"):
            attn = ref.get("CausalSelfAttention")(dim, num_heads, kv)
            cache = ref.get("KVCache")()
            attn(torch.zeros(1, seq_len, dim), cache)
        sizes.append(cache.keys.numel() + cache.values.numel())
    return sizes[0] / sizes[1]


def _rotate_unit(ref, head_dim, base, i, position):
    """RoPE applied to the unit vector e_i at ``position``, in float64."""
    import torch

    x = torch.zeros(1, 1, head_dim, dtype=torch.float64)
    x[..., i] = 1.0
    return ref.get("RotaryEmbedding")(head_dim, base)(x, offset=position)[0, 0]


def ans_rope_theta(ref, head_dim, base, i):
    """θ_i: the angle pair ``i`` turns by per position (read off e_i rotated at position 1)."""
    y = _rotate_unit(ref, head_dim, base, i, 1)
    return math.atan2(float(y[i + head_dim // 2]), float(y[i]))


def ans_rope_wavelength(ref, head_dim, base):
    """Positions per full turn of the slowest pair (the last, ``i = head_dim/2 - 1``): 2π / θ."""
    return 2 * math.pi / ans_rope_theta(ref, head_dim, base, head_dim // 2 - 1)


def ans_rope_partner(ref, head_dim, i):
    """The coordinate that e_i moves into when rotated: its pairing partner."""
    y = _rotate_unit(ref, head_dim, 10000.0, i, 1)
    others = [j for j in range(head_dim) if j != i and abs(float(y[j])) > 1e-12]
    [partner] = others
    return partner


def ans_params_total(ref, vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads):
    return ref.get("count_parameters")(vocab_size, dim, num_layers, num_heads, hidden_dim, num_kv_heads)


def ans_params_attention(ref, dim, num_heads, num_kv_heads):
    import torch

    with torch.device("meta"):
        return _numel(ref.get("CausalSelfAttention")(dim, num_heads, num_kv_heads))


def ans_params_swiglu(ref, dim, hidden_dim):
    import torch

    with torch.device("meta"):
        return _numel(ref.get("SwiGLU")(dim, hidden_dim))


def ans_tied_saving(ref, vocab_size, dim):
    """What tying saves: the head's weight, which is the embedding (counted once by ``parameters()``)."""
    import torch

    with torch.device("meta"):
        model = ref.get("DecoderLM")(vocab_size, dim, 1, 2, 2 * dim)
    assert model.lm_head.weight is model.embed.weight
    return model.lm_head.weight.numel()


def ans_warmup_lr(ref, step, max_lr, warmup_steps, total_steps):
    return ref.get("cosine_lr")(step, max_lr, 0.1 * max_lr, warmup_steps, total_steps)


def ans_cosine_lr(ref, step, max_lr, min_lr, warmup_steps, total_steps):
    return ref.get("cosine_lr")(step, max_lr, min_lr, warmup_steps, total_steps)


def _kept(filtered):
    import torch

    return int(torch.isfinite(filtered).sum())


def ans_top_p_kept(ref, probs, p):
    import torch

    return _kept(ref.get("top_p_filter")(torch.tensor(probs, dtype=torch.float64).log(), p))


def ans_top_k_kept(ref, logits, k):
    import torch

    return _kept(ref.get("top_k_filter")(torch.tensor(logits, dtype=torch.float64), k))


def ans_decay_tensors(ref, num_layers):
    """How many parameter tensors ``param_groups`` puts in the decayed group."""
    model = ref.get("DecoderLM")(50, 16, num_layers, 2, 32)
    return len(ref.get("param_groups")(model, 0.1)[0]["params"])


def ans_no_decay_numel(ref, dim, num_layers):
    import torch

    with torch.device("meta"):
        model = ref.get("DecoderLM")(50, dim, num_layers, 2, 2 * dim)
    return sum(p.numel() for p in ref.get("param_groups")(model, 0.1)[1]["params"])


def ans_clip_value(ref, a, b, c, max_norm):
    """The second gradient's entry after ``clip_grad_norm_`` over two tensors ``[a, b]`` and ``[c]``."""
    import torch

    p1 = torch.zeros(2, dtype=torch.float64, requires_grad=True)
    p2 = torch.zeros(1, dtype=torch.float64, requires_grad=True)
    p1.grad = torch.tensor([a, b], dtype=torch.float64)
    p2.grad = torch.tensor([c], dtype=torch.float64)
    ref.get("clip_grad_norm_")([p1, p2], max_norm)
    return float(p2.grad[0])


def ans_loss_targets(ref, length, pad1, pad2):
    """How many targets ``lm_loss`` counts in two rows of ``length`` tokens ending in ``pad1`` and ``pad2``
    padding tokens: the positions whose logits receive a gradient."""
    import torch

    pad_id, vocab, pads = 0, 5, (pad1, pad2)
    tokens = torch.ones(len(pads), length, dtype=torch.long)
    for b, n in enumerate(pads):
        if n:
            tokens[b, length - n :] = pad_id
    logits = torch.zeros(len(pads), length, vocab, dtype=torch.float64, requires_grad=True)
    ref.get("lm_loss")(logits, tokens, pad_id).backward()
    return int((logits.grad.abs().sum(dim=-1) > 0).sum())


def ans_uniform_loss(ref, vocab_size):
    """The loss of a model that gives every token the same logit."""
    import torch

    logits = torch.zeros(1, 3, vocab_size, dtype=torch.float64)
    return float(ref.get("lm_loss")(logits, torch.zeros(1, 3, dtype=torch.long)))


def ans_cache_after_generate(ref, prompt_len, max_new_tokens):
    """The KV cache length when ``generate`` returns, read from the caches it asked the model for."""
    import torch

    torch.manual_seed(0)
    model = ref.get("DecoderLM")(11, 8, 1, 2, 16)
    made = []
    new_cache = model.new_cache
    model.new_cache = lambda: made.append(new_cache()) or made[-1]
    prompt = torch.ones(1, prompt_len, dtype=torch.long)
    ref.get("generate")(model, prompt, max_new_tokens, temperature=0)
    [caches] = made
    return caches[0].length


# -- drawn values ---------------------------------------------------------------------------------------------


def _cache_config(rng):
    dim, heads = rng.choice(((2048, 16), (2048, 32), (4096, 32), (5120, 40)))
    return dict(
        num_layers=rng.choice((16, 24, 32)),
        dim=dim,
        num_heads=heads,
        num_kv_heads=rng.choice([h for h in (1, 4, 8, heads) if heads % h == 0]),
        seq_len=rng.choice((1024, 2048, 4096)),
        batch=rng.choice((1, 2, 8)),
        dtype=rng.choice(("float16", "bfloat16", "float32")),
    )


def _gqa(rng):
    dim, heads = rng.choice(((1024, 16), (2048, 32), (4096, 32), (4096, 64)))
    return dict(
        dim=dim,
        num_heads=heads,
        num_kv_heads=rng.choice([h for h in (1, 2, 4, 8) if heads % h == 0]),
        seq_len=rng.choice((8, 16)),
    )


def _lm_config(rng):
    dim, heads = rng.choice(((256, 4), (512, 8), (768, 12), (1024, 16)))
    return dict(
        vocab_size=rng.choice((1000, 32000, 50257)),
        dim=dim,
        num_layers=rng.choice((2, 4, 6, 12)),
        num_heads=heads,
        hidden_dim=rng.choice((2, 3, 4)) * dim,
        num_kv_heads=rng.choice([h for h in (1, 2, 4, heads) if heads % h == 0]),
    )


def _top_p(rng):
    probs = rng.choice(
        (
            (0.5, 0.2, 0.15, 0.1, 0.05),
            (0.4, 0.3, 0.2, 0.06, 0.04),
            (0.35, 0.25, 0.2, 0.12, 0.08),
            (0.6, 0.25, 0.1, 0.05),
        )
    )
    partial = [sum(probs[:n]) for n in range(1, len(probs) + 1)]
    p = rng.choice([q for q in (0.3, 0.55, 0.7, 0.78, 0.85, 0.92, 0.97) if min(abs(q - s) for s in partial) > 0.01])
    return dict(probs=list(probs), p=p)


def _top_k(rng):
    logits = rng.choice(
        (
            (3.0, 1.0, 2.0, 2.0, 0.0),
            (1.5, 4.0, 1.5, 0.5, 1.5, 3.0),
            (2.0, 2.0, 2.0, 1.0, 5.0),
            (0.0, 7.0, 3.0, 3.0, 3.0, 1.0),
        )
    )
    return dict(logits=list(logits), k=rng.choice((1, 2, 3, 4)))


def _rope(rng):
    head_dim = rng.choice((64, 128))
    return dict(head_dim=head_dim, base=rng.choice((10000, 500000)), i=rng.choice((0, 1, 2, 8, 16)))


def _warmup(rng):
    warmup = rng.choice((100, 500, 2000))
    return dict(
        step=rng.choice((0, 9, 49, 99)),
        max_lr=rng.choice((3e-4, 6e-4, 1e-3)),
        warmup_steps=warmup,
        total_steps=warmup * 10,
    )


def _cosine(rng):
    warmup, total = rng.choice(((100, 1100), (200, 2200), (500, 10500)))
    frac = rng.choice((0.25, 0.5, 0.75))
    return dict(
        step=warmup + int(frac * (total - warmup)),
        max_lr=rng.choice((3e-4, 1e-3)),
        min_lr=rng.choice((0.0, 3e-5)),
        warmup_steps=warmup,
        total_steps=total,
    )


def _clip(rng):
    a, b, c = rng.choice(((3, 4, 12), (2, 3, 6), (1, 2, 2), (2, 6, 9)))
    return dict(a=a, b=b, c=c, max_norm=rng.choice((1, 2, 5)))


QUESTIONS = (
    # -- attention ---------------------------------------------------------------------------------------------
    Question("lm_gqa_what", "attention", "b"),
    Question("lm_causal_offset", "attention", "d"),
    Question("lm_mqa_cost", "attention", "a"),
    Question("lm_gqa_saving", "attention", ans_gqa_saving, _gqa),
    Question(
        "lm_params_attention",
        "attention",
        ans_params_attention,
        lambda r: dict(
            zip(
                ("dim", "num_heads", "num_kv_heads"),
                r.choice(((512, 8, 2), (1024, 16, 4), (2048, 16, 8), (4096, 32, 8))),
            )
        ),
    ),
    # -- positions ---------------------------------------------------------------------------------------------
    Question("lm_rope_relative", "positions", "c"),
    Question("lm_rope_qk_only", "positions", "a"),
    Question("lm_rope_pairing", "positions", "d"),
    Question("lm_rope_theta", "positions", ans_rope_theta, _rope, rel_tol=0.01),
    Question(
        "lm_rope_wavelength",
        "positions",
        ans_rope_wavelength,
        lambda r: dict(head_dim=r.choice((64, 128)), base=r.choice((10000, 500000))),
        rel_tol=0.01,
    ),
    Question(
        "lm_rope_partner",
        "positions",
        ans_rope_partner,
        lambda r: dict(head_dim=r.choice((8, 64, 128)), i=r.choice((0, 1, 3))),
    ),
    # -- norm --------------------------------------------------------------------------------------------------
    Question("lm_rmsnorm_drop", "norm", "b"),
    Question("lm_prenorm", "norm", "c"),
    # -- KV cache ----------------------------------------------------------------------------------------------
    Question("lm_cache_why_kv", "cache", "a"),
    Question("lm_cache_offset", "cache", "b"),
    Question("lm_decode_bound", "cache", "c"),
    Question("lm_kv_cache_mib", "cache", ans_kv_cache_mib, _cache_config, rel_tol=0.01),
    Question(
        "lm_cache_after_generate",
        "cache",
        ans_cache_after_generate,
        lambda r: dict(prompt_len=r.choice((3, 5, 8)), max_new_tokens=r.choice((4, 10, 16))),
    ),
    # -- sampling ----------------------------------------------------------------------------------------------
    Question("lm_temperature", "sampling", "d"),
    Question("lm_top_p_adapts", "sampling", "a"),
    Question("lm_filter_order", "sampling", "c"),
    Question("lm_top_p_kept", "sampling", ans_top_p_kept, _top_p),
    Question("lm_top_k_kept", "sampling", ans_top_k_kept, _top_k),
    # -- training ----------------------------------------------------------------------------------------------
    Question("lm_adamw_decoupled", "training", "b"),
    Question("lm_no_decay", "training", "d"),
    Question("lm_clip_global", "training", "a"),
    Question("lm_warmup_adam", "training", "c"),
    Question("lm_decay_tensors", "training", ans_decay_tensors, lambda r: dict(num_layers=r.choice((1, 2, 4, 12)))),
    Question(
        "lm_no_decay_numel",
        "training",
        ans_no_decay_numel,
        lambda r: dict(dim=r.choice((64, 512, 768)), num_layers=r.choice((2, 6, 12))),
    ),
    Question("lm_warmup_lr", "training", ans_warmup_lr, _warmup, rel_tol=0.01),
    Question("lm_cosine_lr", "training", ans_cosine_lr, _cosine, rel_tol=0.01),
    Question("lm_clip_value", "training", ans_clip_value, _clip, rel_tol=0.01),
    Question(
        "lm_loss_targets",
        "training",
        ans_loss_targets,
        lambda r: dict(length=r.choice((6, 8, 10)), pad1=r.choice((0, 1, 2)), pad2=r.choice((2, 3))),
    ),
    Question(
        "lm_uniform_loss",
        "training",
        ans_uniform_loss,
        lambda r: dict(vocab_size=r.choice((1334, 32000, 50257, 128256))),
        rel_tol=0.01,
    ),
    # -- sizes -------------------------------------------------------------------------------------------------
    Question("lm_swiglu_hidden", "sizes", "d"),
    Question("lm_tied_why", "sizes", "b"),
    Question("lm_params_total", "sizes", ans_params_total, _lm_config),
    Question(
        "lm_params_swiglu",
        "sizes",
        ans_params_swiglu,
        lambda r: dict(dim=(d := r.choice((512, 768, 4096))), hidden_dim=r.choice((2, 3, 4)) * d),
    ),
    Question(
        "lm_tied_saving",
        "sizes",
        ans_tied_saving,
        lambda r: dict(vocab_size=r.choice((32000, 50257, 128256)), dim=r.choice((512, 2048, 4096))),
    ),
)
