"""Loss by boolean indexing; train_step zeroes in place and clips a generator of parameters."""

import math

import torch
import torch.nn.functional as F

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    keep = targets != pad_idx
    return F.cross_entropy(logits[keep], targets[keep], label_smoothing=label_smoothing)


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    step = step or 1
    return factor / math.sqrt(d_model) * min(1.0 / math.sqrt(step), step / warmup_steps ** 1.5)


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    optimizer.zero_grad(set_to_none=False)
    tgt_in = tgt[:, :-1]
    logits = model(src, tgt_in, padding_mask(src, pad_idx), target_mask(tgt_in, pad_idx))
    loss = sequence_loss(logits, tgt[:, 1:], pad_idx, label_smoothing)
    loss.backward()
    if max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_((p for p in model.parameters()), max_norm=max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    D, F_ = d_model, d_ff
    per_attention = 4 * D * D + 4 * D
    per_ffn = D * F_ + F_ + F_ * D + D
    encoder = src_vocab_size * D + num_layers * (per_attention + per_ffn + 4 * D)
    decoder = tgt_vocab_size * D + num_layers * (2 * per_attention + per_ffn + 6 * D)
    final_norms = 4 * D if norm_first else 0
    head = D * tgt_vocab_size + tgt_vocab_size
    return encoder + decoder + final_norms + head
