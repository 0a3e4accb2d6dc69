"""Loss, learning-rate schedule, one training step, and the parameter count."""

import torch.nn.functional as F
from torch import nn

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    V = logits.size(-1)
    return F.cross_entropy(
        logits.reshape(-1, V),
        targets.reshape(-1),
        ignore_index=pad_idx,
        label_smoothing=label_smoothing,
    )


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    model.train()
    tgt_in = tgt[:, :-1]
    tgt_out = tgt[:, 1:]
    src_mask = padding_mask(src, pad_idx)
    tgt_mask = target_mask(tgt_in, pad_idx)
    logits = model(src, tgt_in, src_mask, tgt_mask)
    loss = sequence_loss(logits, tgt_out, pad_idx, label_smoothing)
    optimizer.zero_grad()
    loss.backward()
    if max_grad_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    D = d_model

    def linear(n_in, n_out):
        return n_in * n_out + n_out

    mha = 4 * linear(D, D)
    ffn = linear(D, d_ff) + linear(d_ff, D)
    ln = 2 * D

    total = src_vocab_size * D + tgt_vocab_size * D
    for _ in range(num_layers):
        total += mha + ffn + 2 * ln  # encoder layer: self-attn, ffn, two norms
        total += 2 * mha + ffn + 2 * ln  # decoder layer: self-attn, cross-attn, ffn, norms
    if norm_first:
        total += 2 * ln
    total += linear(D, tgt_vocab_size)
    return total
