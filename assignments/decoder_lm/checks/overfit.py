"""The overfit check (task ``overfit``): the whole submission learns ten poems by heart and recites them.

Everything is the submission's own: ``DecoderLM`` (from the reference's initial weights, in float32),
``param_groups`` and ``AdamW``, ``cosine_lr``, ``train_step`` (``lm_loss``, ``clip_grad_norm_``), then greedy
``generate`` (temperature 0, with the KV cache) from each poem's opening newline and first character. A model
that computes the contract's function learns ten short poems in a few dozen steps; one that leaks, mis-rotates,
decays its norms or steps the wrong way does not. A defect here is charged where a task beneath names it too:
this check has no work of its own but the whole (the report says which tasks beneath fail).
"""

from assignments.decoder_lm.corpus import PAD, Vocab, load_poems, make_batch
from grader.author import Fail, check, judge_losses

POEMS = 10
MAX_CHARS = 24
"""Ten poems of at most 24 characters (five-character quatrains), each with its own first character, so that the
first two tokens say which poem to recite."""
STEPS = 60
MAX_LR, MIN_LR, WARMUP = 2e-2, 2e-3, 10
WEIGHT_DECAY, MAX_GRAD_NORM, BETAS = 0.1, 1.0, (0.9, 0.95)
MODEL = {"dim": 32, "num_layers": 1, "num_heads": 4, "hidden_dim": 64, "num_kv_heads": 2}
LOSS_TARGET = 0.2
"""Below what no model reaches without learning the poems: the first character after the newline cannot be
predicted (one of ten: ln 10 / 25 targets a row = 0.092 of the mean is out of reach), the reference ends at about
0.10 after STEPS steps, an untrained model starts at ln V = 5.0."""


def overfit_poems():
    """The ten poems: the first ``POEMS`` of the corpus of at most ``MAX_CHARS`` characters whose first
    characters all differ."""
    chosen, firsts = [], set()
    for poem in load_poems():
        if len(poem.text) <= MAX_CHARS and poem.text[0] not in firsts:
            chosen.append(poem.text)
            firsts.add(poem.text[0])
        if len(chosen) == POEMS:
            break
    return chosen


def training_run(initial):
    """``(texts, tokens, arguments)``: the ten poems, their batch and the ``lm_overfit`` probe's arguments, the
    check's whole training run. ``initial(kwargs)``: the reference's initial parameters of a ``DecoderLM`` built with
    ``kwargs`` (its N(0, 0.02²) start)."""
    texts = overfit_poems()
    vocab = Vocab.build(texts)
    tokens = make_batch(texts, vocab)  # [10, 26]: newline, poem, newline, padding
    kwargs = dict(MODEL, vocab_size=len(vocab))
    model = {"kwargs": kwargs, "state": {k: v.float() for k, v in initial(kwargs).items()}}
    arguments = dict(
        model=model,
        tokens=tokens,
        pad_id=PAD,
        steps=STEPS,
        max_lr=MAX_LR,
        min_lr=MIN_LR,
        warmup=WARMUP,
        weight_decay=WEIGHT_DECAY,
        betas=BETAS,
        max_grad_norm=MAX_GRAD_NORM,
        prompt=2,
    )
    return texts, tokens, arguments


@check("overfit", "ten_poems", points=10, examples=(1, 1), profiles=("quick", "full"), diagnose=False)
def ten_poems(ctx):
    """Your model, optimiser, schedule and train_step learn ten poems (loss below 0.2 in 60 steps), then greedy
    generate recites each from its first character."""
    texts, tokens, arguments = training_run(lambda kw: ctx.ref("params", name="DecoderLM", kwargs=kw)["values"])
    got = ctx.sub("lm_overfit", **arguments)
    losses = got["losses"]
    ex = {
        "config": dict(
            MODEL,
            vocab_size=arguments["model"]["kwargs"]["vocab_size"],
            poems=POEMS,
            steps=STEPS,
            optimizer=f"AdamW(param_groups(model, {WEIGHT_DECAY}), betas={BETAS})",
            schedule=f"cosine_lr(step, {MAX_LR}, {MIN_LR}, {WARMUP}, {STEPS})",
            max_grad_norm=MAX_GRAD_NORM,
            dtype="float32",
        ),
        "shapes": {"tokens": list(tokens.shape)},
        "first_loss": round(losses[0], 4) if losses else None,
        "last_loss": round(losses[-1], 4) if losses else None,
    }
    artifacts = judge_losses(
        losses,
        steps=STEPS,
        target=LOSS_TARGET,
        example=ex,
        nonfinite_key="fail.lm_overfit_nonfinite",
        loss_key="fail.lm_overfit_loss",
    )
    recited = got["out"]
    wrong = []
    for i, text in enumerate(texts):
        n = len(text) + 2  # the poem between its newlines; what follows the closing newline is free
        row = recited[i].tolist() if i < recited.size(0) else []
        if row[:n] != tokens[i, :n].tolist():
            wrong.append(text[:5] + "…")
    if wrong:
        raise Fail(
            "fail.lm_overfit_recite",
            wrong=len(wrong),
            total=POEMS,
            examples="、".join(wrong[:3]),
            example=ex,
            artifacts=artifacts,
        )
    ctx.artifacts = artifacts
