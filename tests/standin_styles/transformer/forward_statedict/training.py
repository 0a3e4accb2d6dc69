"""Loss written out (log-softmax, smoothing by hand); train_step zeroes through the model and clips a list."""

import torch
import torch.nn.functional as F

from .masks import padding_mask, target_mask


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    work = logits.float() if logits.dtype in (torch.float16, torch.bfloat16) else logits
    logp = F.log_softmax(work, dim=-1)
    nll = -logp.gather(-1, targets.unsqueeze(-1)).squeeze(-1)
    uniform = -logp.mean(dim=-1)
    per_token = (1.0 - label_smoothing) * nll + label_smoothing * uniform
    keep = targets != pad_idx
    loss = torch.where(keep, per_token, torch.zeros_like(per_token)).sum() / keep.sum()
    return loss.to(logits.dtype)


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    s = 1 if step == 0 else step
    return factor * (d_model ** -0.5) * min(s ** -0.5, s * (warmup_steps ** -1.5))


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    decoder_input = tgt[:, :-1]
    expected = tgt[:, 1:]
    src_mask = padding_mask(src, pad_idx)
    tgt_mask = target_mask(decoder_input, pad_idx)
    model.zero_grad(set_to_none=True)
    loss = sequence_loss(model(src, decoder_input, src_mask, tgt_mask), expected, pad_idx, label_smoothing)
    loss.backward()
    if max_grad_norm is not None:
        with_grad = [p for p in model.parameters() if p.grad is not None]
        torch.nn.utils.clip_grad_norm_(with_grad, max_norm=max_grad_norm)
    optimizer.step()
    return float(loss.detach())


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    linear = lambda n_in, n_out: n_in * n_out + n_out  # noqa: E731
    norm = 2 * d_model
    mha = 4 * linear(d_model, d_model)
    ffn = linear(d_model, d_ff) + linear(d_ff, d_model)
    enc = num_layers * (mha + ffn + 2 * norm) + (norm if norm_first else 0)
    dec = num_layers * (2 * mha + ffn + 3 * norm) + (norm if norm_first else 0)
    return src_vocab_size * d_model + enc + tgt_vocab_size * d_model + dec + linear(d_model, tgt_vocab_size)
