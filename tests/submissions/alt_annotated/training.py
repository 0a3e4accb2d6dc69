"""Loss, rate schedule, one step, parameter count."""

import torch
import torch.nn.functional as F

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    # cross_entropy wants the class axis second: [B, V, L] against [B, L]
    return F.cross_entropy(logits.transpose(1, 2), targets, ignore_index=pad_idx,
                           label_smoothing=label_smoothing)


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    "we have to default the step to 1 for LambdaLR function to avoid zero raising to negative power."
    if step == 0:
        step = 1
    if step < warmup_steps:
        rate = step * warmup_steps ** (-1.5)
    else:
        rate = step ** (-0.5)
    return factor * (d_model ** (-0.5) * rate)


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    model.train()
    src_mask = padding_mask(src, pad_idx)
    tgt_in = tgt[:, :-1]
    tgt_y = tgt[:, 1:]
    tgt_mask = target_mask(tgt_in, pad_idx)
    optimizer.zero_grad(set_to_none=True)
    out = model.forward(src, tgt_in, src_mask, tgt_mask)
    loss = sequence_loss(out, tgt_y, pad_idx, label_smoothing)
    loss.backward()
    if max_grad_norm:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    d = d_model
    total = (src_vocab_size + tgt_vocab_size) * d  # embeddings
    total += d * tgt_vocab_size + tgt_vocab_size  # generator
    per_attn = 4 * d * (d + 1)
    per_ffn = d_ff * (d + 1) + d * (d_ff + 1)
    total += num_layers * (per_attn + per_ffn + 4 * d)  # encoder layers, two norms
    total += num_layers * (2 * per_attn + per_ffn + 6 * d)  # decoder layers, three norms
    if norm_first:
        total += 4 * d
    return total
