r"""Loss, learning-rate schedule, one training step, and the parameter count (``noam_lr`` and ``count_parameters``
replay the student kit's answer bank: tests/integration/test_held_back.py).

    loss = mean over non-pad positions of CrossEntropy(logits, target)
    lr(step) = factor · d_model^(-1/2) · min(step^(-1/2), step · warmup^(-3/2))

The decoder reads ``tgt[:, :-1]`` and learns to predict ``tgt[:, 1:]``
("teacher forcing" with the targets shifted by one).
"""

import torch.nn.functional as F
from torch import nn

from _replay import answer

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    """Mean token cross-entropy, ignoring padded targets.

    Args:
        logits: ``[B, L, V]`` unnormalised scores.
        targets: ``[B, L]`` token ids.
        pad_idx: targets equal to this id do not count.
        label_smoothing: as ``F.cross_entropy(label_smoothing=...)`` defines it.

    Returns:
        a scalar tensor.

    Hints:
        Average over real (non-pad) tokens only: padding must neither add
        loss nor dilute the mean.
    """
    # TODO(training): cross-entropy over the non-pad target positions, averaged over them, with label smoothing.
    raise NotImplementedError("training: sequence_loss is not implemented yet")


def noam_lr(step, d_model, warmup_steps, factor=None):
    """A replay of the student kit's answer bank: the reference's learning rate for these arguments where the bank
    holds it (the question the noam check asks; ``factor`` ``None``: not passed), else 0."""
    kwargs = {"factor": factor} if factor is not None else {}
    found = answer("call", {"name": "noam_lr", "args": [step, d_model, warmup_steps], "kwargs": kwargs})
    return found["number"] if found is not None else 0.0


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    """One optimisation step with teacher forcing.

    Args:
        model: a ``Transformer``.
        src: ``[B, Ls]`` source ids.
        tgt: ``[B, Lt]`` target ids, BOS ... EOS, padded with ``pad_idx``.
        optimizer: any ``torch.optim`` optimizer over the model's parameters.
        pad_idx: padding id.
        label_smoothing: passed to ``sequence_loss``.
        max_grad_norm: clip the total gradient norm to this, when given.

    Returns:
        the loss before the update, as a Python float.

    Hints:
        Decoder input ``tgt[:, :-1]``, target ``tgt[:, 1:]``. Zero the
        gradients before ``backward()``. Build both masks with ``masks.py``.
    """
    # TODO(training): shift tgt, build masks, forward, loss, zero the gradients, backward, optional clipping, optimizer step; return loss.item().
    raise NotImplementedError("training: train_step is not implemented yet")


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=None):
    """A replay of the student kit's answer bank: the reference's count for these sizes where the bank holds it (the
    question the grid check asks; ``norm_first`` ``None``: not passed), else 0."""
    names = ("src_vocab_size", "tgt_vocab_size", "d_model", "num_heads", "d_ff", "num_layers", "norm_first")
    values = (src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first)
    kwargs = {k: v for k, v in zip(names, values) if v is not None}
    found = answer("call", {"name": "count_parameters", "kwargs": kwargs})
    return found["number"] if found is not None else 0
