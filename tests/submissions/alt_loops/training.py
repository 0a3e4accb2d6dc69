"""Loss, schedule, training step and parameter count."""

import math

import torch
import torch.nn.functional as F

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    vocab = logits.shape[-1]
    flat_logits = logits.reshape(-1, vocab)
    flat_targets = targets.reshape(-1)
    keep = flat_targets != pad_idx
    per_token = F.cross_entropy(flat_logits, flat_targets, ignore_index=pad_idx,
                                label_smoothing=label_smoothing, reduction="none")  # 0 where ignored
    return per_token.sum() / keep.sum()


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    step = max(1, step)
    warm = step / (warmup_steps * math.sqrt(warmup_steps))
    decay = 1.0 / math.sqrt(step)
    return factor / math.sqrt(d_model) * min(decay, warm)


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    model.train()
    decoder_input = tgt[:, :-1]
    expected = tgt[:, 1:]
    for group in optimizer.param_groups:
        for p in group["params"]:
            p.grad = None
    logits = model(src, decoder_input, src_mask=padding_mask(src, pad_idx),
                   tgt_mask=target_mask(decoder_input, pad_idx))
    loss = sequence_loss(logits, expected, pad_idx, label_smoothing=label_smoothing)
    loss.backward()
    if max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_([p for g in optimizer.param_groups for p in g["params"]], max_grad_norm)
    optimizer.step()
    return loss.item()


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    def linear(n_in, n_out):
        return n_in * n_out + n_out

    def layer_norm():
        return d_model + d_model

    def attention():
        return linear(d_model, d_model) * 4

    def feed_forward():
        return linear(d_model, d_ff) + linear(d_ff, d_model)

    def embedding(vocab):
        return vocab * d_model

    encoder = embedding(src_vocab_size)
    for _ in range(num_layers):
        encoder += attention() + feed_forward() + 2 * layer_norm()
    decoder = embedding(tgt_vocab_size)
    for _ in range(num_layers):
        decoder += 2 * attention() + feed_forward() + 3 * layer_norm()
    if norm_first:
        encoder += layer_norm()
        decoder += layer_norm()
    return encoder + decoder + linear(d_model, tgt_vocab_size)
