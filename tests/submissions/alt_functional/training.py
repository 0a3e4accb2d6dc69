import torch.nn.functional as F
from torch.nn.utils import clip_grad_norm_

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    return F.cross_entropy(logits.flatten(0, -2), targets.flatten(), ignore_index=pad_idx,
                           label_smoothing=label_smoothing)


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    step = step or 1
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    model.train()
    optimizer.zero_grad()
    x, y = tgt[:, :-1], tgt[:, 1:]
    loss = sequence_loss(model(src, x, padding_mask(src, pad_idx), target_mask(x, pad_idx)), y, pad_idx,
                         label_smoothing)
    loss.backward()
    if max_grad_norm is not None:
        clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    D, F_ = d_model, d_ff
    block = 4 * D * D + 4 * D + 2 * D * F_ + F_ + D  # attention + ffn
    enc = block + 4 * D
    dec = block + 4 * D * D + 4 * D + 6 * D
    return (src_vocab_size + tgt_vocab_size) * D + num_layers * (enc + dec) + 4 * D * norm_first \
        + (D + 1) * tgt_vocab_size
