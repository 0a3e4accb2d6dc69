"""train_step moves the batch to the model's device (next(model.parameters())) and clips with torch's
clip_grad_norm_ given a generator of parameters and norm_type."""

import torch
import torch.nn.functional as F

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    flat_logits = logits.flatten(0, -2)
    flat_targets = targets.flatten()
    per_token = F.cross_entropy(flat_logits, flat_targets, reduction="none", label_smoothing=label_smoothing,
                                ignore_index=pad_idx)
    count = (flat_targets != pad_idx).sum()
    return per_token.sum() / count


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    step = max(1, step)
    return factor * d_model ** (-0.5) * min(step ** (-0.5), step * warmup_steps ** (-1.5))


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    device = next(model.parameters()).device
    src, tgt = src.to(device), tgt.to(device)
    inputs, targets = tgt[:, :-1], tgt[:, 1:]
    optimizer.zero_grad()
    logits = model.forward(src, inputs, src_mask=padding_mask(src, pad_idx), tgt_mask=target_mask(inputs, pad_idx))
    loss = sequence_loss(logits, targets, pad_idx, label_smoothing=label_smoothing)
    loss.backward()
    if max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_((p for p in model.parameters() if p.requires_grad), max_grad_norm,
                                       norm_type=2.0)
    optimizer.step()
    return loss.detach().cpu().item()


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    d = d_model
    layer_common = 4 * d * d + 4 * d + 2 * d * d_ff + d_ff + d
    enc = num_layers * (layer_common + 4 * d)
    dec = num_layers * (layer_common + 4 * d * d + 4 * d + 6 * d)
    total = (src_vocab_size + tgt_vocab_size) * d + enc + dec + (d + 1) * tgt_vocab_size
    return total + (4 * d if norm_first else 0)
