"""Loss, schedule, one training step (model.train(), set_to_none zeroing, torch's clip_grad_norm_), count."""

import torch
import torch.nn.functional as F

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    return F.cross_entropy(logits.reshape(-1, logits.size(-1)), targets.reshape(-1), ignore_index=pad_idx,
                           label_smoothing=label_smoothing)


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    step = max(step, 1)
    return float(factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5))


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    model.train()
    decoder_in, target = tgt[:, :-1], tgt[:, 1:]
    optimizer.zero_grad(set_to_none=True)
    logits = model(src, decoder_in, src_mask=padding_mask(src, pad_idx), tgt_mask=target_mask(decoder_in, pad_idx))
    loss = sequence_loss(logits, target, pad_idx, label_smoothing=label_smoothing)
    loss.backward()
    if max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    d, f = d_model, d_ff
    attention = 4 * (d * d + d)
    feedforward = 2 * d * f + f + d
    encoder_layer = attention + feedforward + 2 * 2 * d
    decoder_layer = 2 * attention + feedforward + 3 * 2 * d
    total = src_vocab_size * d + tgt_vocab_size * d
    total += num_layers * (encoder_layer + decoder_layer)
    if norm_first:
        total += 2 * 2 * d
    total += d * tgt_vocab_size + tgt_vocab_size
    return total
