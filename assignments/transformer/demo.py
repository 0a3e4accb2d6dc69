"""A short end-to-end demo: train the reference Transformer on pinyin -> characters.

``run_demo()`` trains a small ``solution.model.Transformer`` on the shipped corpus
(``assignments.transformer.corpus``) with ``solution.training.train_step``, then greedy-decodes the
held-out phrases with ``solution.decoding.greedy_decode`` and reports exact-match
accuracy. It runs on the CPU in well under a minute::

    python -m assignments.transformer.demo   # or: from assignments.transformer.demo import main; main([])

``run_demo(pieces=...)`` runs the same training with a student's ``PIECES`` instead (``gradekit demo
--submission PATH``, ``grader.demo``): that run happens in a process of its own, which imports this module and
must never load the reference, so the reference's pieces are imported only when first asked for (``__getattr__``).
"""

from __future__ import annotations

import random
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import torch

from assignments.transformer.corpus import BOS, EOS, PAD, PinyinTask, build_task, make_batch
from grader.author import columns, demo, for_terminal, pad, text

Example = tuple[str, str, str]  # (pinyin, expected, predicted)

PIECES = ("Transformer", "train_step", "greedy_decode")
"""The contract names the demo runs: the model, its training step, its decoding. The reference's by default; a
student's with ``gradekit demo --submission``."""

__getattr__ = demo.lazy_reference(
    __name__, {"Transformer": "solution.model", "train_step": "solution.training", "greedy_decode": "solution.decoding"}
)
"""The reference's ``PIECES``, imported on first use: importing this module loads no reference code."""


@dataclass
class DemoResult:
    """What a demo run achieved on the held-out phrases.

    Attributes:
        accuracy: exact-match accuracy in ``[0, 1]`` (``0.0`` when there is no test pair).
        n_test: number of held-out phrases.
        seconds: wall time of training plus decoding.
        final_loss: mean training loss (label-smoothed) over the last logging window.
        examples: ``(pinyin, expected, predicted)`` for every held-out phrase.
        losses: ``(step, mean loss of the window ending there)`` at every logged step.
    """

    accuracy: float
    n_test: int
    seconds: float
    final_loss: float
    examples: list[Example] = field(default_factory=list)
    losses: list[tuple[int, float]] = field(default_factory=list)

    @property
    def n_correct(self) -> int:
        """How many held-out phrases were decoded exactly."""
        return sum(expected == predicted for _, expected, predicted in self.examples)


def _decode_all(
    model: torch.nn.Module,
    task: PinyinTask,
    pairs: list[tuple[str, str]],
    batch_size: int = 256,
    *,
    greedy_decode: Callable[..., Any] | None = None,
) -> list[str]:
    """Greedy-decode the pinyin of ``pairs`` into character strings (with ``greedy_decode``, default the
    reference's)."""
    decode = greedy_decode if greedy_decode is not None else demo.pieces_of(__name__, PIECES)["greedy_decode"]
    model.eval()
    out: list[str] = []
    for start in range(0, len(pairs), batch_size):
        chunk = pairs[start : start + batch_size]
        src, _ = make_batch(chunk, task.src_vocab, task.tgt_vocab)
        ys = decode(model, src, max_len=src.size(1) + 2, bos_idx=BOS, eos_idx=EOS, pad_idx=PAD)
        out.extend("".join(task.tgt_vocab.decode(row)) for row in ys)
    return out


def run_demo(
    *,
    steps: int = 500,
    seed: int = 0,
    d_model: int = 64,
    num_heads: int = 4,
    d_ff: int = 128,
    num_layers: int = 1,
    dropout: float = 0.1,
    norm_first: bool = True,
    batch_size: int = 64,
    lr: float = 5e-3,
    warmup: int = 50,
    label_smoothing: float = 0.1,
    max_grad_norm: float | None = 1.0,
    holdout: float = 0.1,
    log_every: int = 100,
    log: Callable[[str], object] | None = print,
    pieces: Mapping[str, Any] | None = None,
) -> DemoResult:
    """Train a small Transformer on the pinyin corpus and score it on held-out phrases.

    The defaults (Pre-LN, one encoder and one decoder layer of width 64, 500 steps
    of 64 pairs) reach about 90-100% exact match in roughly 15-25 s on two CPU
    cores; two layers, or Post-LN, learned less in the same time.

    Adam with a linear warm-up to ``lr`` over ``warmup`` steps, then a linear decay
    to a tenth of it; label smoothing; gradient clipping. ``torch.manual_seed(seed)``
    fixes the initialisation and dropout, ``random.Random(seed)`` the batches.

    Args:
        steps: optimizer steps.
        seed: seed of the model, batches and train/test split.
        d_model, num_heads, d_ff, num_layers, dropout, norm_first: the model's sizes.
        batch_size: pairs per step.
        lr, warmup: peak learning rate and warm-up steps.
        label_smoothing, max_grad_norm: passed to ``train_step``.
        holdout: fraction of the corpus held out for testing.
        log_every: print the mean loss every this many steps.
        log: where progress lines go; ``None`` for silence.
        pieces: ``{name: object}`` for each of ``PIECES`` (a student's); ``None``: the reference's.

    Returns:
        a ``DemoResult``.
    """
    use = demo.pieces_of(__name__, PIECES, pieces)
    emit: Callable[[str], object] = log if log is not None else (lambda _line: None)
    start = time.perf_counter()
    torch.manual_seed(seed)
    rng = random.Random(seed)
    task = build_task(holdout=holdout, seed=seed)
    max_len = 2 + max(len(c) for _, c in task.train + task.test)
    model = use["Transformer"](
        len(task.src_vocab),
        len(task.tgt_vocab),
        d_model=d_model,
        num_heads=num_heads,
        d_ff=d_ff,
        num_layers=num_layers,
        max_len=max(max_len, 64),
        dropout=dropout,
        norm_first=norm_first,
    )
    optimizer = torch.optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98), eps=1e-9)

    def lr_at(step: int) -> float:  # step counts from 1
        if step <= warmup:
            return lr * step / max(warmup, 1)
        frac = (step - warmup) / max(steps - warmup, 1)
        return lr * (1.0 - 0.9 * frac)

    n_params = sum(p.numel() for p in model.parameters())
    emit(
        f"pinyin -> characters: {len(task.train)} training / {len(task.test)} held-out phrases, "
        f"vocab {len(task.src_vocab)} syllables / {len(task.tgt_vocab)} characters"
    )
    emit(
        f"Transformer d_model={d_model} heads={num_heads} d_ff={d_ff} layers={num_layers} "
        f"{'Pre-LN' if norm_first else 'Post-LN'}, {n_params:,} parameters; {steps} steps of {batch_size}"
    )

    order: list[int] = []
    window: list[float] = []
    losses: list[tuple[int, float]] = []
    final_loss = float("nan")
    for step in range(1, steps + 1):
        if len(order) < batch_size:  # reshuffle each epoch; batches never straddle epochs
            order = list(range(len(task.train)))
            rng.shuffle(order)
        batch, order = [task.train[i] for i in order[:batch_size]], order[batch_size:]
        src, tgt = make_batch(batch, task.src_vocab, task.tgt_vocab)
        for group in optimizer.param_groups:
            group["lr"] = lr_at(step)
        window.append(
            float(
                use["train_step"](
                    model,
                    src,
                    tgt,
                    optimizer,
                    pad_idx=PAD,
                    label_smoothing=label_smoothing,
                    max_grad_norm=max_grad_norm,
                )
            )
        )
        if step % log_every == 0 or step == steps:
            final_loss = sum(window) / len(window)
            losses.append((step, final_loss))
            emit(f"  step {step:4d}  loss {final_loss:.3f}  lr {lr_at(step):.2e}  {time.perf_counter() - start:5.1f}s")
            window = []

    predicted = _decode_all(model, task, task.test, greedy_decode=use["greedy_decode"]) if task.test else []
    examples = [(p, c, pred) for (p, c), pred in zip(task.test, predicted)]
    seconds = time.perf_counter() - start
    n_correct = sum(c == pred for _, c, pred in examples)
    accuracy = n_correct / len(examples) if examples else 0.0
    result = DemoResult(
        accuracy=accuracy,
        n_test=len(examples),
        seconds=seconds,
        final_loss=final_loss,
        examples=examples,
        losses=losses,
    )

    if examples:
        width = max(len(p) for p, _, _ in examples)
        emit("")
        emit(f"  {'pinyin':<{width}}  expected  predicted")
        for p, c, pred in examples:
            mark = "✓" if pred == c else "✗"
            emit(f"  {p:<{width}}  {_pad_wide(c, 8)}  {_pad_wide(pred, 8)}  {mark}")
        emit("")
    emit(
        f"exact match on {len(examples)} held-out phrases: {n_correct}/{len(examples)} "
        f"({100 * accuracy:.1f}%) in {seconds:.1f}s"
    )
    return result


def _pad_wide(text: str, chars: int) -> str:
    """Left-justify ``text`` to ``chars`` double-width (CJK) columns."""
    width = sum(2 if ord(ch) > 0x2E80 else 1 for ch in text)
    return text + " " * max(0, 2 * chars - width)


def side_by_side(reference: DemoResult, yours: DemoResult, *, lang: str = "en") -> list[str]:
    """The held-out phrases with the reference's translation and the student's beside it, then both exact-match
    counts: what ``gradekit demo --submission`` shows. ``yours`` came from the student's process: every string
    of it is made safe for the terminal."""
    yours_by_pinyin = {str(p): for_terminal(pred) for p, _, pred in yours.examples}
    rows = [(str(p), str(c), str(ref), yours_by_pinyin.get(str(p), "")) for p, c, ref in reference.examples]
    heads = [
        text("demo.pinyin.col_pinyin", lang),
        text("demo.pinyin.col_expected", lang),
        text("demo.reference", lang),
        text("demo.yours", lang),
    ]
    widths = [max([columns(h)] + [columns(row[i]) + (2 if i >= 2 else 0) for row in rows]) for i, h in enumerate(heads)]
    lines = ["  " + "  ".join(pad(h, w) for h, w in zip(heads, widths)).rstrip()]
    for p, c, ref, mine in rows:
        cells = [p, c, f"{ref} {'✓' if ref == c else '✗'}", f"{mine} {'✓' if mine == c else '✗'}"]
        lines.append("  " + "  ".join(pad(cell, w) for cell, w in zip(cells, widths)).rstrip())
    n = reference.n_test
    n_yours = sum(str(c) == str(pred) for _, c, pred in yours.examples)
    lines += [
        "",
        text(
            "demo.pinyin.exact",
            lang,
            n=n,
            yours=n_yours,
            reference=reference.n_correct,
            yours_pct=f"{100 * n_yours / n:.1f}" if n else "0.0",
            reference_pct=f"{100 * reference.accuracy:.1f}",
        ),
    ]
    return lines


def main(argv: list[str] | None = None) -> int:
    """``gradekit demo [--steps N] [--seed S] [--quiet] [--submission PATH [--lang zh]]``; returns the exit
    status."""
    return demo.main(
        argv,
        prog="gradekit demo",
        assignment=__package__,
        description="Train the reference Transformer on pinyin -> characters and decode held-out phrases.",
        steps=500,
        quiet_help="print only the accuracy line",
        run_demo=run_demo,
        quiet_lines=lambda r: [
            f"exact match on {r.n_test} held-out phrases: {r.n_correct}/{r.n_test} "
            f"({100 * r.accuracy:.1f}%) in {r.seconds:.1f}s"
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
