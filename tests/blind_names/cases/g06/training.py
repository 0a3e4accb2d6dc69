import torch
import torch.nn.functional as F
from torch import nn

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    vocab = logits.size(-1)
    x = torch.log_softmax(logits.reshape(-1, vocab), dim=-1)
    target = targets.reshape(-1)
    true_dist = x.detach().clone()
    true_dist.fill_(label_smoothing / (vocab - 2))
    true_dist.scatter_(1, target.unsqueeze(1), 1.0 - label_smoothing)
    true_dist[:, pad_idx] = 0
    pad_rows = target == pad_idx
    true_dist[pad_rows] = 0.0
    ntokens = (~pad_rows).sum()
    return F.kl_div(x, true_dist, reduction="sum") / ntokens


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    s = max(step, 1)
    return float(factor * d_model ** -0.5 * min(s ** -0.5, s * warmup_steps ** -1.5))


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    model.train()
    dec_in = tgt[:, :-1]
    dec_out = tgt[:, 1:]
    src_mask = padding_mask(src, pad_idx)
    tgt_mask = target_mask(dec_in, pad_idx)
    optimizer.zero_grad()
    logits = model(src, dec_in, src_mask, tgt_mask)
    loss = sequence_loss(logits, dec_out, pad_idx, label_smoothing)
    loss.backward()
    if max_grad_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    D, Fh, N = d_model, d_ff, num_layers
    mha = 4 * (D * D + D)
    ffn = D * Fh + Fh + Fh * D + D
    ln = 2 * D
    enc_layer = mha + ffn + 2 * ln
    dec_layer = 2 * mha + ffn + 3 * ln
    total = src_vocab_size * D + tgt_vocab_size * D
    total += N * (enc_layer + dec_layer)
    if norm_first:
        total += 2 * ln
    total += D * tgt_vocab_size + tgt_vocab_size
    return int(total)
