import torch
import torch.nn.functional as F
from torch import nn

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    logp = F.log_softmax(logits.float(), dim=-1)             # [B, L, V]
    safe_targets = targets.masked_fill(targets == pad_idx, 0)
    nll = -logp.gather(-1, safe_targets.unsqueeze(-1)).squeeze(-1)   # [B, L]
    smooth = -logp.mean(dim=-1)                               # uniform over all V classes
    per_token = (1.0 - label_smoothing) * nll + label_smoothing * smooth
    keep = (targets != pad_idx).float()
    return (per_token * keep).sum() / keep.sum()


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    if step < 1:
        step = 1
    return factor * (d_model ** -0.5) * min(step ** -0.5, step * warmup_steps ** -1.5)


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    optimizer.zero_grad()
    decoder_in = tgt[:, :-1]
    gold = tgt[:, 1:]
    logits = model(src, decoder_in, padding_mask(src, pad_idx), target_mask(decoder_in, pad_idx))
    loss = sequence_loss(logits, gold, pad_idx, label_smoothing=label_smoothing)
    loss.backward()
    if max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_grad_norm)
    optimizer.step()
    return float(loss.detach())


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    D, Fh = d_model, d_ff
    linear = lambda i, o: i * o + o  # noqa: E731
    mha = 4 * linear(D, D)
    ffn = linear(D, Fh) + linear(Fh, D)
    norm = 2 * D
    encoder = src_vocab_size * D + num_layers * (mha + ffn + 2 * norm) + (norm if norm_first else 0)
    decoder = tgt_vocab_size * D + num_layers * (2 * mha + ffn + 3 * norm) + (norm if norm_first else 0)
    return encoder + decoder + linear(D, tgt_vocab_size)
