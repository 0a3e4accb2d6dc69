"""The conceptual quiz: the questions interviewers ask after "hand-write a Transformer", auto-marked.

A question is multiple choice (options ``a``..``d``, the right letter fixed here) or numeric. Every
numeric answer is computed from the reference implementation (``solution``), never typed in: the
parameter counts come from ``count_parameters`` or from counting a built module, learning rates from
``noam_lr``, shapes and mask sizes from running the reference. The texts live in the message catalogue:
``quiz.<id>.q`` (the question, with the drawn values), ``quiz.<id>.a``.. (options), ``quiz.<id>.why``.
"""

import math
import random
from dataclasses import dataclass, field

LETTERS = "abcd"
TOPICS = ("attention", "positions", "norm", "masks", "training", "decoding", "sizes")


@dataclass(frozen=True)
class Question:
    """One question as the catalogue holds it."""

    id: str
    """Suffix of its message keys (``quiz.<id>.q``)."""
    topic: str
    """One of ``TOPICS``."""
    answer: object
    """Choice: the right letter. Numeric: ``answer(**params)`` computes it from the reference."""
    params: object = None
    """Numeric: ``params(rng)`` draws the values the question is asked about (a dict)."""
    rel_tol: float = 0.0
    """Numeric: accepted relative error (0: an exact integer)."""

    @property
    def kind(self):
        return "number" if callable(self.answer) else "choice"


@dataclass
class Asked:
    """A question with its values drawn and its answer computed."""

    question: Question
    """The question."""
    params: dict = field(default_factory=dict)
    """The drawn values (empty for a choice question)."""
    answer: object = None
    """The right letter, or the number."""


# -- numeric answers, computed from the reference -----------------------------------------------------------

def _numel(module):
    return sum(p.numel() for p in module.parameters())


def ans_params_total(src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, norm_first):
    from solution.training import count_parameters
    return count_parameters(src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, norm_first=norm_first)


def ans_params_mha(d_model, num_heads):
    from solution.attention import MultiHeadAttention
    return _numel(MultiHeadAttention(d_model, num_heads))


def ans_params_ffn(d_model, d_ff):
    from solution.feedforward import FeedForward
    return _numel(FeedForward(d_model, d_ff))


def ans_params_layernorm(d_model):
    from solution.norm import LayerNorm
    return _numel(LayerNorm(d_model))


def ans_head_dim(d_model, num_heads):
    from solution.attention import MultiHeadAttention
    return MultiHeadAttention(d_model, num_heads).d_head


def ans_scale(d_model, num_heads):
    return math.sqrt(ans_head_dim(d_model, num_heads))


def _weights(batch, heads, lq, lk, d_head=4):
    import torch

    from solution.attention import scaled_dot_product_attention
    q, k = torch.zeros(batch, heads, lq, d_head), torch.zeros(batch, heads, lk, d_head)
    return scaled_dot_product_attention(q, k, torch.zeros(batch, heads, lk, d_head))[1]


def ans_score_entries(batch, heads, length):
    return _weights(batch, heads, length, length).numel()


def ans_cross_shape_last(lt, ls):
    return _weights(1, 1, lt, ls).shape[-1]


def ans_score_growth(length):
    return _weights(1, 1, 2 * length, 2 * length).numel() // _weights(1, 1, length, length).numel()


def ans_causal_true(length):
    from solution.masks import causal_mask
    return int(causal_mask(length).sum())


def ans_target_true(length, pads):
    import torch

    from solution.masks import target_mask
    tgt = torch.ones(1, length, dtype=torch.long)
    tgt[0, length - pads:] = 0
    return int(target_mask(tgt, 0).sum())


def ans_noam_peak(d_model, warmup):
    from solution.training import noam_lr
    return max(range(1, 3 * warmup + 1), key=lambda step: noam_lr(step, d_model, warmup))


def ans_noam_value(step, d_model, warmup):
    from solution.training import noam_lr
    return noam_lr(step, d_model, warmup)


def ans_embed_scale(d_model):
    import torch

    from solution.embedding import TokenEmbedding
    emb = TokenEmbedding(3, d_model)
    with torch.no_grad():
        emb.embed.weight.fill_(1.0)
        return float(emb(torch.zeros(1, 1, dtype=torch.long))[0, 0, 0])


def ans_smoothed_true(vocab, eps):
    # The gradient of the loss at uniform logits is p - q with p uniform: q, the smoothed target, follows.
    import torch

    from solution.training import sequence_loss
    logits = torch.zeros(1, 1, vocab, dtype=torch.float64, requires_grad=True)
    sequence_loss(logits, torch.zeros(1, 1, dtype=torch.long), pad_idx=-1, label_smoothing=eps).backward()
    return 1.0 / vocab - float(logits.grad[0, 0, 0])


# -- drawn values ---------------------------------------------------------------------------------------------

def _config(rng):
    d = rng.choice((32, 64, 128))
    return dict(src_vocab=rng.choice((100, 1000, 5000)), tgt_vocab=rng.choice((100, 1000, 5000)), d_model=d,
                num_heads=rng.choice((2, 4, 8)), d_ff=4 * d, num_layers=rng.choice((1, 2, 3)),
                norm_first=rng.choice((False, True)))


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
    Question("score_entries", "attention", ans_score_entries,
             lambda r: dict(batch=r.choice((2, 4, 8)), heads=r.choice((4, 8)), length=r.choice((10, 16, 50)))),
    Question("cross_shape", "attention", ans_cross_shape_last,
             lambda r: dict(lt=r.choice((5, 7, 12)), ls=r.choice((9, 20, 31)))),
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
    Question("target_true", "masks", ans_target_true,
             lambda r: dict(length=r.choice((5, 6, 7)), pads=r.choice((1, 2)))),
    # -- training ----------------------------------------------------------------------------------------------
    Question("right_shift", "training", "c"),
    Question("label_smoothing_why", "training", "b"),
    Question("warmup_why", "training", "d"),
    Question("dropout_where", "training", "c"),
    Question("eval_mode", "training", "a"),
    Question("logits_not_probs", "training", "b"),
    Question("noam_peak", "training", ans_noam_peak,
             lambda r: dict(d_model=r.choice((256, 512)), warmup=r.choice((400, 1000, 4000)))),
    Question("noam_value", "training", ans_noam_value,
             lambda r: dict(step=r.choice((100, 1000, 8000)), d_model=r.choice((256, 512)),
                            warmup=r.choice((1000, 4000))), rel_tol=0.01),
    Question("smoothed_true", "training", ans_smoothed_true,
             lambda r: dict(vocab=r.choice((4, 5, 10)), eps=r.choice((0.1, 0.2))), rel_tol=0.01),
    # -- decoding ----------------------------------------------------------------------------------------------
    Question("kv_cache", "decoding", "c"),
    Question("greedy_last", "decoding", "a"),
    # -- sizes -------------------------------------------------------------------------------------------------
    Question("dff_4x", "sizes", "b"),
    Question("complexity", "sizes", "d"),
    Question("score_growth", "sizes", ans_score_growth, lambda r: dict(length=r.choice((128, 256, 512)))),
    Question("params_total", "sizes", ans_params_total, _config),
    Question("params_mha", "sizes", ans_params_mha, _heads),
    Question("params_ffn", "sizes", ans_params_ffn,
             lambda r: dict(d_model=(d := r.choice((256, 512, 768))), d_ff=4 * d)),
    Question("params_layernorm", "sizes", ans_params_layernorm, lambda r: dict(d_model=r.choice((256, 512, 768)))),
)

QUESTION_BY_ID = {q.id: q for q in QUESTIONS}


def ask(question, rng):
    """``question`` with its values drawn from ``rng`` and its answer computed."""
    if question.kind == "choice":
        return Asked(question, {}, question.answer)
    params = question.params(rng)
    return Asked(question, params, question.answer(**params))


def draw(*, n=10, seed=None, topics=None):
    """``(seed, [Asked, ...])``: ``n`` questions (0 or more than there are: all) on ``topics``, in a seeded order."""
    if n < 0:
        raise ValueError(f"--n must be 0 (all) or more, got {n}")
    unknown = [t for t in topics or () if t not in TOPICS]
    if unknown:
        raise ValueError(f"unknown topic(s) {', '.join(unknown)}; expected some of: {', '.join(TOPICS)}")
    if seed is None:
        seed = random.randrange(10000)
    rng = random.Random(seed)
    pool = [q for q in QUESTIONS if not topics or q.topic in topics]
    rng.shuffle(pool)
    if n:
        pool = pool[:n]
    return seed, [ask(q, random.Random(f"{seed}:{q.id}")) for q in pool]


def parse(asked, reply):
    """The reply as an answer (a letter or a float), or ``None`` when it is not one."""
    reply = (reply or "").strip().lower()
    if asked.question.kind == "choice":
        return reply if len(reply) == 1 and reply in LETTERS else None
    try:
        return float(reply.replace("_", "").replace(",", "").replace(" ", ""))
    except ValueError:
        return None


def mark(asked, reply):
    """Whether ``reply`` (text) is right."""
    value = parse(asked, reply)
    if value is None:
        return False
    if asked.question.kind == "choice":
        return value == asked.answer
    if asked.question.rel_tol:
        return math.isclose(value, asked.answer, rel_tol=asked.question.rel_tol)
    return value == asked.answer


def show_answer(asked):
    """The right answer as text (``"b"``, ``"64"``, ``"0.000698"``)."""
    a = asked.answer
    if isinstance(a, str):
        return a
    if isinstance(a, float) and not a.is_integer():
        return f"{a:.3g}"
    return str(int(a))


def question_text(asked, lang, cols=100, head=""):
    from grader.messages import text
    from grader.practice.render import wrap
    qid = asked.question.id
    lines = [wrap(text(f"quiz.{qid}.q", lang, **asked.params), cols, indent="", first=head)]
    if asked.question.kind == "choice":
        lines += [wrap(text(f"quiz.{qid}.{letter}", lang), cols, indent="      ", first=f"  ({letter}) ")
                  for letter in LETTERS]
        lines.append(text("quiz.prompt_choice", lang))
    else:
        lines.append(text("quiz.prompt_number_tol" if asked.question.rel_tol else "quiz.prompt_number", lang))
    return "\n".join(lines)


def run(questions, *, lang="en", answers=None, stdin=None, out=None, interactive=False, replay="", cols=100):
    """Ask ``questions``, reading each reply from ``answers`` (an iterator) or ``stdin``; returns how many were right.

    ``replay`` is the command that asks the same questions again; ``cols`` the width to fold the texts to.
    """
    from grader.messages import text
    from grader.practice.render import wrap
    write = out.write
    write(wrap(text("quiz.header", lang, n=len(questions), replay=replay), cols, indent="") + "\n")
    right = 0
    for i, asked in enumerate(questions, start=1):
        head = f"{i}/{len(questions)} [{text('quiz.topic.' + asked.question.topic, lang)}] "
        write("\n" + question_text(asked, lang, cols, head) + "\n")
        reply = None
        while True:
            if answers is not None:
                reply = next(answers, None)
                if reply is not None:
                    write(f"> {reply}\n")
            else:
                write("> ")
                out.flush()
                line = stdin.readline()
                reply = line.rstrip("\n") if line else None
                if not interactive and reply is not None:
                    write(reply + "\n")
            if reply is None or parse(asked, reply) is not None or not interactive or not reply.strip():
                break
            write(text(f"quiz.retry_{asked.question.kind}", lang) + "\n")
        qid = asked.question.id
        why = text(f"quiz.{qid}.why", lang, answer=show_answer(asked), **asked.params)
        if mark(asked, reply):
            right += 1
            write(text("quiz.right", lang) + "\n")
        else:
            shown = "" if reply is None else reply.strip()
            key = "quiz.wrong" if parse(asked, shown) is not None else "quiz.unreadable" if shown else "quiz.unanswered"
            write(text(key, lang, reply=shown, answer=show_answer(asked)) + "\n")
        write(wrap(why, cols, indent="  ") + "\n")
    pct = 100.0 * right / len(questions) if questions else 0.0
    write("\n" + text("quiz.score", lang, right=right, total=len(questions), pct=f"{pct:.0f}") + "\n")
    return right
