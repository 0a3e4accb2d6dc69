"""The overfit check (task ``overfit``): the whole submission learns 10 samples and decodes them back."""

from assignments.transformer.corpus import BOS, EOS, PAD, build_task, make_batch, sample_pairs
from grader.author import Fail, check, judge_losses, ref_state

STEPS = 100
LR = 5e-3
LOSS_TARGET = 0.05  # the reference reaches about 0.009 in STEPS steps


@check("overfit", "ten_samples", points=10, examples=(1, 1), profiles=("quick", "full"), diagnose=False)
def ten_samples(ctx):
    """Reference weights, dropout 0, your train_step (Adam): near-zero loss, then greedy_decode gives all 10 back."""
    task = build_task()
    pairs = sample_pairs(10)
    src, tgt = make_batch(pairs, task.src_vocab, task.tgt_vocab)
    kw = {
        "src_vocab_size": len(task.src_vocab),
        "tgt_vocab_size": len(task.tgt_vocab),
        "d_model": 32,
        "num_heads": 4,
        "d_ff": 64,
        "num_layers": 2,
        "max_len": 64,
        "dropout": 0.0,
        "norm_first": True,
    }
    state = {k: v.float() for k, v in ref_state(ctx, "Transformer", kw, 0).items()}
    state = {k: (v * 0.35 if v.dim() > 1 else v) for k, v in state.items()}
    got = ctx.sub(
        "overfit",
        model={"kwargs": kw, "state": state},
        src=src,
        tgt=tgt,
        pad_idx=PAD,
        bos_idx=BOS,
        eos_idx=EOS,
        steps=STEPS,
        lr=LR,
        max_len=tgt.size(1) + 2,
    )
    losses = got["losses"]
    ex = {
        "config": {"samples": 10, "steps": STEPS, "optimizer": f"Adam(lr={LR:g})", "d_model": 32, "num_layers": 2},
        "first_loss": round(losses[0], 4) if losses else None,
        "last_loss": round(losses[-1], 4) if losses else None,
    }
    artifacts = judge_losses(
        losses,
        steps=STEPS,
        target=LOSS_TARGET,
        example=ex,
        nonfinite_key="fail.overfit_nonfinite",
        loss_key="fail.overfit_loss",
    )
    decoded = got["decoded"]
    wrong = []
    for i in range(len(pairs)):
        expected = tgt[i][tgt[i] != PAD].tolist()
        row = decoded[i].tolist() if i < decoded.size(0) else []
        row = row[: row.index(EOS) + 1] if EOS in row else row
        if row != expected:
            wrong.append(pairs[i][0])
    if wrong:
        raise Fail("fail.overfit_decode", wrong=len(wrong), examples=wrong[:3], example=ex, artifacts=artifacts)
    ctx.artifacts = artifacts
