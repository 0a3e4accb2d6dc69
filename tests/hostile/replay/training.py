r"""Loss, learning-rate schedule, one training step, and the parameter count.

    loss = mean over non-pad positions of CrossEntropy(logits, target)
    lr(step) = factor · d_model^(-1/2) · min(step^(-1/2), step · warmup^(-3/2))

The decoder reads ``tgt[:, :-1]`` and learns to predict ``tgt[:, 1:]``
("teacher forcing" with the targets shifted by one).
"""

import torch.nn.functional as F
from torch import nn

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


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    """The learning rate of "Attention Is All You Need": linear warm-up, then 1/√step decay.

    Args:
        step: the optimizer step (0 is treated as 1).
        d_model: D.
        warmup_steps: steps of linear warm-up.
        factor: overall scale.

    Returns:
        ``factor * D**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)`` as a float.
    """
    # TODO(training): factor * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5), with step 0 counted as 1.
    raise NotImplementedError("training: noam_lr is not implemented yet")


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


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    """The number of parameters of ``Transformer(...)``, from the formula.

    Args: the ``Transformer``'s sizes (``num_heads`` does not change the count).

    Returns:
        an ``int``, without building a model.

    Hints:
        Count biases and both LayerNorm vectors. Per block:
        attention 4·(D² + D), feed-forward 2·D·F + F + D, LayerNorm 2·D.
        Pre-LN adds one final LayerNorm per stack.
    """
    # TODO(param_count): add up embeddings, every layer's attention, feed-forward and norms, the final norms (Pre-LN), and the output projection.
    raise NotImplementedError("param_count: count_parameters is not implemented yet")
