"""A short end-to-end demo: train the reference decoder-only LM on classical poems, then let it write some.

``run_demo()`` trains a small ``DecoderLM`` of the reference (``assignments/decoder_lm/reference``) on the
shipped poems (``assignments.decoder_lm.corpus``), character by character, with the reference's own pieces:
``param_groups`` and ``AdamW``, ``cosine_lr`` (warm-up, then cosine), ``train_step`` (``lm_loss`` with the
padding ignored, ``clip_grad_norm_``). Then ``generate`` samples a few poems, each from a newline and a first
character, with temperature, top-k and top-p and a seeded ``torch.Generator``, decoding with the KV cache. It
runs on the CPU in well under a minute::

    gradekit demo --assignment decoder_lm [--steps N] [--seed S]

``run_demo(pieces=...)`` runs the same training and sampling with a student's ``PIECES`` instead (``gradekit demo
--assignment decoder_lm --submission PATH``, ``grader.demo``): that run happens in a process of its own, which
imports this module and must never load the reference, so the reference's pieces are imported only when first
asked for (``__getattr__``).
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from assignments.decoder_lm.corpus import NEWLINE, PAD, PoemTask, batches, build_task, first_line
from grader.author import columns, demo, for_terminal, pad, text

STARTS = "春月山江白"
"""The first characters of the sampled poems (one poem each, in this order)."""

PIECES = ("DecoderLM", "param_groups", "AdamW", "cosine_lr", "train_step", "generate")
"""The contract names the demo runs: the model, the optimiser and its groups, the schedule, the training step and
the sampling. The reference's by default; a student's with ``gradekit demo --submission``."""

__getattr__ = demo.lazy_reference(
    __name__,
    {
        name: f"assignments.decoder_lm.reference.{module}"
        for name, module in (
            ("DecoderLM", "model"),
            ("param_groups", "optim"),
            ("AdamW", "optim"),
            ("cosine_lr", "optim"),
            ("train_step", "training"),
            ("generate", "sampling"),
        )
    },
)
"""The reference's ``PIECES``, imported on first use: importing this module loads no reference code."""


@dataclass
class DemoResult:
    """What a demo run did.

    Attributes:
        first_loss: the training loss of the first step (about ``ln V`` for an untrained model).
        final_loss: the mean training loss over the last logging window.
        seconds: wall time of training plus sampling.
        n_params: the model's parameter count.
        vocab_size: V, the characters and the two specials.
        samples: the sampled poems, each starting with its ``STARTS`` character and cut at its newline.
        losses: ``(step, mean loss of the window ending there)`` at every logged step.
    """

    first_loss: float
    final_loss: float
    seconds: float
    n_params: int
    vocab_size: int
    samples: list[str] = field(default_factory=list)
    losses: list[tuple[int, float]] = field(default_factory=list)


def sample_poems(
    model: torch.nn.Module | None,
    task: PoemTask,
    starts: str = STARTS,
    *,
    max_chars: int | None = None,
    temperature: float = 0.8,
    top_k: int | None = 20,
    top_p: float | None = 0.9,
    seed: int = 0,
    generate: Callable[..., Any] | None = None,
) -> list[str]:
    """One poem per character of ``starts``: ``generate`` from ``NEWLINE`` and that character, all rows in one
    batch, drawn with ``torch.Generator().manual_seed(seed)``; each is cut at the first newline it writes.

    Args:
        model: a trained ``DecoderLM`` over ``task.vocab``.
        task: the corpus (its vocabulary).
        starts: first characters, each in the vocabulary.
        max_chars: new characters to sample per poem (default: the longest poem's length).
        temperature, top_k, top_p: passed to ``generate``.
        seed: the generator's seed: the same seed gives the same poems.
        generate: the sampling function (default: the reference's).
    """
    sample = generate if generate is not None else demo.pieces_of(__name__, PIECES)["generate"]
    max_chars = task.max_row - 2 if max_chars is None else max_chars
    prompt = torch.tensor([[NEWLINE, *task.vocab.encode(ch)] for ch in starts], dtype=torch.long)  # (S, 2)
    generator = torch.Generator().manual_seed(seed)
    out = sample(
        model, prompt, max_chars, temperature=temperature, top_k=top_k, top_p=top_p, generator=generator
    )  # (S, 2 + max_chars)
    return [first_line(task.vocab.decode(row[1:])) for row in out]


def run_demo(
    *,
    steps: int = 250,
    seed: int = 0,
    dim: int = 96,
    num_layers: int = 2,
    num_heads: int = 4,
    num_kv_heads: int = 2,
    hidden_dim: int = 256,
    batch_size: int = 32,
    max_lr: float = 3e-3,
    min_lr: float = 3e-4,
    warmup: int = 40,
    weight_decay: float = 0.1,
    max_grad_norm: float = 1.0,
    log_every: int = 50,
    starts: str = STARTS,
    log: Callable[[str], object] | None = print,
    pieces: Mapping[str, Any] | None = None,
) -> DemoResult:
    """Train a small decoder-only LM on the poems, then sample one poem per character of ``starts``.

    The defaults (width 96, two layers, four query heads sharing two key/value heads, 250 steps of 32 poems)
    take about 30 s of CPU time on one thread and bring the loss from ``ln V`` (about 7.2) to about 0.5: a
    model this size learns most of the 188 poems by heart, so from a first character it mostly recites a poem
    that starts with it (and runs on past its end where it has not learnt where the poem stops). Fewer steps
    (``--steps 120``, loss about 3.5) give new text that only resembles the poems: short runs of characters
    between commas and full stops, repeated characters, no sense. ``torch.manual_seed(seed)`` fixes the
    initialisation, ``seed`` the batches and the samples.

    Args:
        steps: optimizer steps (the cosine ends at the last one).
        seed: seed of the model, the batches and the sampling.
        dim, num_layers, num_heads, num_kv_heads, hidden_dim: the model's sizes.
        batch_size: poems per step.
        max_lr, min_lr, warmup: the schedule (``cosine_lr``; the warm-up is at most a fifth of ``steps``).
        weight_decay: AdamW's λ for the matrices (norm weights get none: ``param_groups``).
        max_grad_norm: gradient clipping.
        log_every: print the mean loss every this many steps.
        starts: the sampled poems' first characters.
        log: where progress lines go; ``None`` for silence.
        pieces: ``{name: object}`` for each of ``PIECES`` (a student's); ``None``: the reference's.

    Returns:
        a ``DemoResult``.
    """
    if steps < 1:
        raise ValueError(f"steps must be at least 1, got {steps}")
    use = demo.pieces_of(__name__, PIECES, pieces)
    emit: Callable[[str], object] = log if log is not None else (lambda _line: None)
    start = time.perf_counter()
    torch.manual_seed(seed)
    task = build_task()
    model = use["DecoderLM"](len(task.vocab), dim, num_layers, num_heads, hidden_dim, num_kv_heads=num_kv_heads)
    optimizer = use["AdamW"](use["param_groups"](model, weight_decay), lr=max_lr, betas=(0.9, 0.95))
    n_params = sum(p.numel() for p in model.parameters())
    emit(
        f"classical poems, one character per token: {len(task.poems)} poems, vocabulary {len(task.vocab)} "
        f"(ln V = {math.log(len(task.vocab)):.2f})"
    )
    emit(
        f"DecoderLM dim={dim} layers={num_layers} heads={num_heads} kv_heads={num_kv_heads} "
        f"hidden={hidden_dim}, {n_params:,} parameters; {steps} steps of {batch_size} poems"
    )

    data = batches(task, batch_size, seed=seed)
    warm = min(warmup, steps // 5)  # a short run still spends most of its steps after the warm-up
    window: list[float] = []
    losses: list[tuple[int, float]] = []
    first_loss = final_loss = float("nan")
    model.train()
    for step in range(steps):
        lr = float(use["cosine_lr"](step, max_lr, min_lr, warm, steps))
        loss = float(use["train_step"](model, next(data), optimizer, pad_id=PAD, max_grad_norm=max_grad_norm, lr=lr))
        if step == 0:
            first_loss = loss
        window.append(loss)
        if (step + 1) % log_every == 0 or step + 1 == steps:
            final_loss = sum(window) / len(window)
            losses.append((step + 1, final_loss))
            emit(f"  step {step + 1:4d}  loss {final_loss:.3f}  lr {lr:.2e}  {time.perf_counter() - start:5.1f}s")
            window = []

    model.eval()
    samples = sample_poems(model, task, starts, seed=seed, generate=use["generate"])
    seconds = time.perf_counter() - start
    emit("")
    emit("sampled (temperature 0.8, top-k 20, top-p 0.9, with the KV cache):")
    for sample in samples:
        emit(f"  {sample}")
    emit("")
    emit(f"loss {first_loss:.2f} -> {final_loss:.2f} in {seconds:.1f}s")
    return DemoResult(
        first_loss=first_loss,
        final_loss=final_loss,
        seconds=seconds,
        n_params=n_params,
        vocab_size=len(task.vocab),
        samples=samples,
        losses=losses,
    )


def side_by_side(reference: DemoResult, yours: DemoResult, *, lang: str = "en") -> list[str]:
    """The poems the reference and the student's model wrote from the same first characters, one under the other,
    and where each loss started: what ``gradekit demo --submission`` shows. ``yours`` came from the student's
    process: every string of it is made safe for the terminal."""
    lines = [text("demo.poems.sampled", lang)]
    label_ref, label_yours = text("demo.reference", lang), text("demo.yours", lang)
    width = max(columns(label_ref), columns(label_yours)) + 1
    mine = [for_terminal(s) for s in yours.samples]
    for i, ref in enumerate(reference.samples):
        lines.append(f"  {pad(label_ref, width)} {ref}")
        lines.append(f"  {pad(label_yours, width)} {mine[i] if i < len(mine) else ''}")
    lines += [
        "",
        text(
            "demo.poems.first_loss",
            lang,
            yours=f"{float(yours.first_loss):.2f}",
            reference=f"{reference.first_loss:.2f}",
            ln_v=f"{math.log(reference.vocab_size):.2f}",
        ),
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    """``gradekit demo --assignment decoder_lm [--steps N] [--seed S] [--quiet] [--submission PATH [--lang zh]]``;
    returns the exit status."""
    return demo.main(
        argv,
        prog="gradekit demo --assignment decoder_lm",
        assignment=__package__,
        description="Train the reference decoder-only LM on classical Chinese poems and sample a few.",
        steps=250,
        quiet_help="print only the samples and the loss line",
        run_demo=run_demo,
        quiet_lines=lambda r: [*r.samples, f"loss {r.first_loss:.2f} -> {r.final_loss:.2f} in {r.seconds:.1f}s"],
    )


if __name__ == "__main__":
    sys.exit(main())
