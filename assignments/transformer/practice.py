"""The Transformer's drills (``gradekit practice``) and quiz (``gradekit quiz``): the kit's ``grader.practice``
runs them.

``DRILLS``: one per task a candidate writes alone (all but ``overfit``, which needs the whole submission),
then the interview sets. ``QUESTIONS``: what interviewers ask after "hand-write a Transformer". The texts are
in ``messages/practice_<lang>.py``: ``practice.title.<drill>``, ``practice.hint.<task>.<level>`` (levels
1..``grader.practice.session.HINT_LEVELS``), ``quiz.<id>.*`` and ``quiz.topic.<topic>``. ``TASK_TEXTS``: the
drilled names' task text (the skeleton's docstrings) in the languages other than the skeleton's English, from
``messages/practice_tasks.py``.

A choice question's options are written so that nothing but the content tells the right one: the distractors
are as long and as plausible as the answer, and the right letters are spread over a to d (``tests/unit/test_quiz.py``
measures both; each quiz also shows the options in an order of its own).

Every numeric answer is computed from the reference, never typed in: the parameter counts come from
``count_parameters`` or from counting a built module, learning rates from ``noam_lr``, shapes and mask sizes
from running the reference. Each answer function gets the reference as ``ref`` (``ref.get(name)``: a contract
name as the reference defines it) and the drawn values.
"""

import math

from assignments.transformer import TASKS
from assignments.transformer.messages import practice_tasks
from grader.author import Drill, Question

# (minutes, level) per task id: what a candidate who knows the material needs, from a blank stub.
_TASK_TIMES = {
    "sdpa": (10, "easy"),
    "mha": (20, "medium"),
    "embedding": (5, "easy"),
    "positional": (15, "medium"),
    "layernorm": (10, "easy"),
    "feedforward": (8, "easy"),
    "masks": (10, "easy"),
    "encoder_layer": (15, "medium"),
    "decoder_layer": (20, "medium"),
    "model": (25, "hard"),
    "greedy": (20, "medium"),
    "training": (25, "hard"),
    "param_count": (15, "medium"),
}

TASK_DRILLS = tuple(Drill(t.id, (t.id,), *_TASK_TIMES[t.id]) for t in TASKS if t.id in _TASK_TIMES)

SET_DRILLS = (
    Drill("attention20", ("sdpa", "mha"), 20, "medium"),
    Drill("encoder30", ("embedding", "positional", "feedforward", "encoder_layer"), 30, "medium"),
    Drill("decoder30", ("masks", "decoder_layer", "greedy"), 30, "hard"),
    Drill("classic45", ("sdpa", "mha", "positional", "layernorm", "masks"), 45, "hard"),
    Drill("train30", ("training", "param_count"), 30, "hard"),
)

DRILLS = TASK_DRILLS + SET_DRILLS

TASK_TEXTS = {"zh": practice_tasks.ZH}


# -- numeric answers, computed from the reference -----------------------------------------------------------


def _numel(module):
    return sum(p.numel() for p in module.parameters())


def ans_params_total(ref, src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, norm_first):
    return ref.get("count_parameters")(
        src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, norm_first=norm_first
    )


def ans_params_mha(ref, d_model, num_heads):
    return _numel(ref.get("MultiHeadAttention")(d_model, num_heads))


def ans_params_ffn(ref, d_model, d_ff):
    return _numel(ref.get("FeedForward")(d_model, d_ff))


def ans_params_layernorm(ref, d_model):
    return _numel(ref.get("LayerNorm")(d_model))


def ans_head_dim(ref, d_model, num_heads):
    return ref.get("MultiHeadAttention")(d_model, num_heads).d_head


def ans_scale(ref, d_model, num_heads):
    return math.sqrt(ans_head_dim(ref, d_model, num_heads))


def _weights(ref, batch, heads, lq, lk, d_head=4):
    import torch

    q, k = torch.zeros(batch, heads, lq, d_head), torch.zeros(batch, heads, lk, d_head)
    return ref.get("scaled_dot_product_attention")(q, k, torch.zeros(batch, heads, lk, d_head))[1]


def ans_score_entries(ref, batch, heads, length):
    return _weights(ref, batch, heads, length, length).numel()


def ans_cross_shape_last(ref, lt, ls):
    return _weights(ref, 1, 1, lt, ls).shape[-1]


def ans_score_growth(ref, length):
    return _weights(ref, 1, 1, 2 * length, 2 * length).numel() // _weights(ref, 1, 1, length, length).numel()


def ans_causal_true(ref, length):
    return int(ref.get("causal_mask")(length).sum())


def ans_target_true(ref, length, pads):
    import torch

    tgt = torch.ones(1, length, dtype=torch.long)
    tgt[0, length - pads :] = 0
    return int(ref.get("target_mask")(tgt, 0).sum())


def ans_noam_peak(ref, d_model, warmup):
    noam_lr = ref.get("noam_lr")
    return max(range(1, 3 * warmup + 1), key=lambda step: noam_lr(step, d_model, warmup))


def ans_noam_value(ref, step, d_model, warmup):
    return ref.get("noam_lr")(step, d_model, warmup)


def ans_embed_scale(ref, d_model):
    import torch

    emb = ref.get("TokenEmbedding")(3, d_model)
    with torch.no_grad():
        emb.embed.weight.fill_(1.0)
        return float(emb(torch.zeros(1, 1, dtype=torch.long))[0, 0, 0])


def ans_smoothed_true(ref, vocab, eps):
    # The gradient of the loss at uniform logits is p - q with p uniform: q, the smoothed target, follows.
    import torch

    logits = torch.zeros(1, 1, vocab, dtype=torch.float64, requires_grad=True)
    ref.get("sequence_loss")(logits, torch.zeros(1, 1, dtype=torch.long), pad_idx=-1, label_smoothing=eps).backward()
    return 1.0 / vocab - float(logits.grad[0, 0, 0])


# -- drawn values ---------------------------------------------------------------------------------------------


def _config(rng):
    d = rng.choice((32, 64, 128))
    return dict(
        src_vocab=rng.choice((100, 1000, 5000)),
        tgt_vocab=rng.choice((100, 1000, 5000)),
        d_model=d,
        num_heads=rng.choice((2, 4, 8)),
        d_ff=4 * d,
        num_layers=rng.choice((1, 2, 3)),
        norm_first=rng.choice((False, True)),
    )


def _heads(rng):
    d, h = rng.choice(((512, 8), (768, 12), (1024, 16), (256, 4), (512, 16)))
    return dict(d_model=d, num_heads=h)


QUESTIONS = (
    # -- attention ---------------------------------------------------------------------------------------------
    Question("scale_why", "attention", "c"),
    Question("softmax_axis", "attention", "b"),
    Question("mask_neg_inf", "attention", "a"),
    Question("multihead_cost", "attention", "d"),
    Question("cross_attn_qkv", "attention", "b"),
    Question("head_dim", "attention", ans_head_dim, _heads),
    Question("scale_value", "attention", ans_scale, _heads, rel_tol=1e-3),
    Question(
        "score_entries",
        "attention",
        ans_score_entries,
        lambda r: dict(batch=r.choice((2, 4, 8)), heads=r.choice((4, 8)), length=r.choice((10, 16, 50))),
    ),
    Question(
        "cross_shape",
        "attention",
        ans_cross_shape_last,
        lambda r: dict(lt=r.choice((5, 7, 12)), ls=r.choice((9, 20, 31))),
    ),
    # -- positions ---------------------------------------------------------------------------------------------
    Question("sincos_why", "positions", "a"),
    Question("no_position", "positions", "c"),
    Question("embed_scale_why", "positions", "d"),
    Question("embed_scale", "positions", ans_embed_scale, lambda r: dict(d_model=r.choice((64, 256, 1024)))),
    # -- norm and residuals ------------------------------------------------------------------------------------
    Question("ln_vs_bn", "norm", "b"),
    Question("pre_post_ln", "norm", "c"),
    Question("residual_why", "norm", "a"),
    # -- masks -------------------------------------------------------------------------------------------------
    Question("padding_mask_what", "masks", "d"),
    Question("encoder_decoder_masks", "masks", "b"),
    Question("train_infer_masks", "masks", "a"),
    Question("causal_true", "masks", ans_causal_true, lambda r: dict(length=r.choice((4, 5, 6, 8)))),
    Question(
        "target_true", "masks", ans_target_true, lambda r: dict(length=r.choice((5, 6, 7)), pads=r.choice((1, 2)))
    ),
    # -- training ----------------------------------------------------------------------------------------------
    Question("right_shift", "training", "c"),
    Question("label_smoothing_why", "training", "b"),
    Question("warmup_why", "training", "d"),
    Question("dropout_where", "training", "c"),
    Question("eval_mode", "training", "a"),
    Question("logits_not_probs", "training", "b"),
    Question(
        "noam_peak",
        "training",
        ans_noam_peak,
        lambda r: dict(d_model=r.choice((256, 512)), warmup=r.choice((400, 1000, 4000))),
    ),
    Question(
        "noam_value",
        "training",
        ans_noam_value,
        lambda r: dict(step=r.choice((100, 1000, 8000)), d_model=r.choice((256, 512)), warmup=r.choice((1000, 4000))),
        rel_tol=0.01,
    ),
    Question(
        "smoothed_true",
        "training",
        ans_smoothed_true,
        lambda r: dict(vocab=r.choice((4, 5, 10)), eps=r.choice((0.1, 0.2))),
        rel_tol=0.01,
    ),
    # -- decoding ----------------------------------------------------------------------------------------------
    Question("kv_cache", "decoding", "c"),
    Question("greedy_last", "decoding", "a"),
    # -- sizes -------------------------------------------------------------------------------------------------
    Question("dff_4x", "sizes", "b"),
    Question("complexity", "sizes", "d"),
    Question("score_growth", "sizes", ans_score_growth, lambda r: dict(length=r.choice((128, 256, 512)))),
    Question("params_total", "sizes", ans_params_total, _config),
    Question("params_mha", "sizes", ans_params_mha, _heads),
    Question(
        "params_ffn", "sizes", ans_params_ffn, lambda r: dict(d_model=(d := r.choice((256, 512, 768))), d_ff=4 * d)
    ),
    Question("params_layernorm", "sizes", ans_params_layernorm, lambda r: dict(d_model=r.choice((256, 512, 768)))),
)
