import torch
from torch.nn import functional as F

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    return F.cross_entropy(
        logits.reshape(-1, logits.size(-1)),
        targets.reshape(-1),
        ignore_index=pad_idx,
        label_smoothing=label_smoothing,
    )


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    step = max(step, 1)
    return factor * d_model**-0.5 * min(step**-0.5, step * warmup_steps**-1.5)


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    model.train()
    optimizer.zero_grad()
    tgt_in, tgt_out = tgt[:, :-1], tgt[:, 1:]
    logits = model(src, tgt_in, padding_mask(src, pad_idx), target_mask(tgt_in, pad_idx))
    loss = sequence_loss(logits, tgt_out, pad_idx, label_smoothing)
    loss.backward()
    if max_grad_norm is not None:
        params = [p for p in model.parameters() if p.grad is not None]
        total = torch.sqrt(sum((p.grad.detach().float() ** 2).sum() for p in params))
        scale = max_grad_norm / (float(total) + 1e-6)
        if scale < 1:
            for p in params:
                p.grad.mul_(scale)
    optimizer.step()
    return float(loss.detach())


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    d = d_model
    mha = 4 * (d * d + d)
    ffn = d * d_ff + d_ff + d_ff * d + d
    ln = 2 * d
    enc_layer = mha + ffn + 2 * ln
    dec_layer = 2 * mha + ffn + 3 * ln
    total = src_vocab_size * d + tgt_vocab_size * d
    total += num_layers * (enc_layer + dec_layer)
    if norm_first:
        total += 2 * ln
    total += d * tgt_vocab_size + tgt_vocab_size
    return total
