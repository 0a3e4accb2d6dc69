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
    V = logits.size(-1)
    return F.cross_entropy(
        logits.reshape(-1, V),  # [B * L, V]
        targets.reshape(-1),  # [B * L]
        ignore_index=pad_idx,
        label_smoothing=label_smoothing,
    )


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
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


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
    model.train()
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]  # [B, Lt - 1] each
    logits = model(src, tgt_in, padding_mask(src, pad_idx), target_mask(tgt_in, pad_idx))  # [B, Lt - 1, V]
    loss = sequence_loss(logits, tgt_out, pad_idx, label_smoothing)
    optimizer.zero_grad()
    loss.backward()
    if max_grad_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


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
    D, F_ = d_model, d_ff
    attn = 4 * (D * D + D)
    ffn = D * F_ + F_ + F_ * D + D
    norm = 2 * D
    encoder_layer = attn + ffn + 2 * norm
    decoder_layer = 2 * attn + ffn + 3 * norm
    final_norms = 2 * norm if norm_first else 0
    embeddings = (src_vocab_size + tgt_vocab_size) * D
    output_proj = D * tgt_vocab_size + tgt_vocab_size
    return embeddings + num_layers * (encoder_layer + decoder_layer) + final_norms + output_proj
