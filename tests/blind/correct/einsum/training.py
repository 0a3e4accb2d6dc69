import torch
from torch import nn

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    V = logits.shape[-1]
    logp = torch.log_softmax(logits.reshape(-1, V), dim=-1)
    t = targets.reshape(-1)
    keep = t != pad_idx
    safe_t = torch.where(keep, t, torch.zeros_like(t))
    nll = -logp.gather(1, safe_t[:, None]).squeeze(1)
    # uniform part: F.cross_entropy spreads label_smoothing / V over every class (target included)
    smooth = -logp.mean(dim=-1)
    per_token = (1.0 - label_smoothing) * nll + label_smoothing * smooth
    per_token = torch.where(keep, per_token, torch.zeros_like(per_token))
    return per_token.sum() / keep.sum()


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    if step == 0:
        step = 1
    return factor * (d_model ** -0.5) * min(step ** -0.5, step * warmup_steps ** -1.5)


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    dec_in = tgt[:, :-1]
    dec_target = tgt[:, 1:]
    src_mask = padding_mask(src, pad_idx)
    tgt_mask = target_mask(dec_in, pad_idx)
    logits = model(src, dec_in, src_mask=src_mask, tgt_mask=tgt_mask)
    loss = sequence_loss(logits, dec_target, pad_idx, label_smoothing)
    optimizer.zero_grad()
    loss.backward()
    if max_grad_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return float(loss.item())


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    D, Fh = d_model, d_ff
    mha = 4 * (D * D + D)
    ff = 2 * D * Fh + Fh + D
    norm = 2 * D
    encoder = src_vocab_size * D + num_layers * (mha + ff + 2 * norm)
    decoder = tgt_vocab_size * D + num_layers * (2 * mha + ff + 3 * norm)
    if norm_first:
        encoder += norm
        decoder += norm
    head = D * tgt_vocab_size + tgt_vocab_size
    return encoder + decoder + head
