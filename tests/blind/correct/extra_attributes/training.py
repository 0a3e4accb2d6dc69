"""Loss, learning-rate schedule, one training step, parameter count."""

import torch
import torch.nn.functional as F
from torch import nn

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    per_token = F.cross_entropy(logits.transpose(1, 2), targets, reduction="none",
                                ignore_index=pad_idx, label_smoothing=label_smoothing)          # [B, L]
    keep = (targets != pad_idx).to(per_token.dtype)
    return (per_token * keep).sum() / keep.sum()


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    "we have to default the step to 1 for LambdaLR function to avoid zero raising to negative power."
    if step == 0:
        step = 1
    return factor * (d_model ** (-0.5) * min(step ** (-0.5), step * warmup_steps ** (-1.5)))


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    optimizer.zero_grad(set_to_none=True)
    tgt_y = tgt[:, 1:]
    tgt = tgt[:, :-1]
    src_mask = padding_mask(src, pad_idx)
    tgt_mask = target_mask(tgt, pad_idx)
    out = model.forward(src, tgt, src_mask, tgt_mask)
    loss = sequence_loss(out, tgt_y, pad_idx, label_smoothing=label_smoothing)
    loss.backward()
    if max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return float(loss.detach())


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    D, V_s, V_t, N = d_model, src_vocab_size, tgt_vocab_size, num_layers
    attn = 4 * (D * D + D)
    ffn = 2 * D * d_ff + d_ff + D
    ln = 2 * D
    enc = V_s * D + N * (attn + ffn + 2 * ln) + (ln if norm_first else 0)
    dec = V_t * D + N * (2 * attn + ffn + 3 * ln) + (ln if norm_first else 0)
    return enc + dec + D * V_t + V_t
