"""Loss, learning-rate schedule, one training step, and the parameter count."""

import torch
import torch.nn.functional as F
from torch import nn

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    # written out: (1 - eps) * NLL + eps * mean_v(-log p_v), averaged over non-pad targets
    logp = F.log_softmax(logits.float(), dim=-1)
    keep = targets != pad_idx
    safe_targets = targets.masked_fill(~keep, 0)
    nll = -logp.gather(-1, safe_targets.unsqueeze(-1)).squeeze(-1)
    smooth = -logp.mean(dim=-1)
    per_token = (1.0 - label_smoothing) * nll + label_smoothing * smooth
    per_token = torch.where(keep, per_token, torch.zeros_like(per_token))
    return per_token.sum() / keep.sum()


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    s = step if step > 0 else 1
    return float(factor * (d_model ** -0.5) * min(s ** -0.5, s * warmup_steps ** -1.5))


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    decoder_in, labels = tgt[:, :-1], tgt[:, 1:]
    logits = model(src, decoder_in, padding_mask(src, pad_idx), target_mask(decoder_in, pad_idx))
    loss = sequence_loss(logits, labels, pad_idx, label_smoothing=label_smoothing)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if max_grad_norm is not None:
        nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return float(loss.detach())


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    D, F_ = d_model, d_ff
    linear = lambda i, o: i * o + o  # noqa: E731
    mha = 4 * linear(D, D)
    ff = linear(D, F_) + linear(F_, D)
    norm = 2 * D
    encoder = src_vocab_size * D + num_layers * (mha + ff + 2 * norm) + (norm if norm_first else 0)
    decoder = tgt_vocab_size * D + num_layers * (2 * mha + ff + 3 * norm) + (norm if norm_first else 0)
    return encoder + decoder + linear(D, tgt_vocab_size)
