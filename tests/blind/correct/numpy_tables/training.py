"""Loss, learning-rate schedule, one training step, parameter count."""

import math

import numpy as np
import torch.nn.functional as F
from torch import nn

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    vocab = logits.size(-1)
    return F.cross_entropy(logits.reshape(-1, vocab), targets.reshape(-1),
                           ignore_index=pad_idx, label_smoothing=label_smoothing)


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    step = max(int(step), 1)
    rate = np.minimum(step ** -0.5, step * math.pow(warmup_steps, -1.5))
    return float(factor * math.pow(d_model, -0.5) * rate)


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
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
    D, F_ = d_model, d_ff
    linear = lambda n_in, n_out: n_in * n_out + n_out          # weight + bias
    layer_norm = 2 * D                                          # weight + bias
    attention = 4 * linear(D, D)                                # w_q, w_k, w_v, w_o
    feed_forward = linear(D, F_) + linear(F_, D)                # linear1, linear2

    breakdown = {
        "encoder.embed": src_vocab_size * D,
        "encoder.layers": num_layers * (attention + feed_forward + 2 * layer_norm),
        "encoder.norm": layer_norm if norm_first else 0,
        "decoder.embed": tgt_vocab_size * D,
        "decoder.layers": num_layers * (2 * attention + feed_forward + 3 * layer_norm),
        "decoder.norm": layer_norm if norm_first else 0,
        "output_proj": linear(D, tgt_vocab_size),
    }
    return int(sum(breakdown.values()))
