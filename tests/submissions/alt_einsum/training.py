"""Loss, schedule, training step, parameter count."""

import torch


def sequence_loss(logits, targets, pad_idx, label_smoothing=0.0):
    keep = targets != pad_idx
    logp = torch.log_softmax(logits, dim=-1)
    idx = targets.masked_fill(~keep, 0).unsqueeze(-1)
    nll = -torch.gather(logp, -1, idx).squeeze(-1)
    uniform = -logp.mean(dim=-1)
    eps = label_smoothing
    per_token = (1.0 - eps) * nll + eps * uniform
    per_token = torch.where(keep, per_token, torch.zeros_like(per_token))
    return per_token.sum() / keep.sum()


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    s = 1 if step < 1 else step
    return factor * (d_model ** -0.5) * min(s ** -0.5, s * warmup_steps ** -1.5)


def train_step(model, src, tgt, optimizer, *, pad_idx, label_smoothing=0.0, max_grad_norm=None):
    from .masks import padding_mask, target_mask

    model.train()
    optimizer.zero_grad()
    dec_in = tgt[:, :-1]
    gold = tgt[:, 1:]
    logits = model(src, dec_in, padding_mask(src, pad_idx), target_mask(dec_in, pad_idx))
    loss = sequence_loss(logits, gold, pad_idx, label_smoothing)
    loss.backward()
    if max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_grad_norm)
    optimizer.step()
    return float(loss.detach())


def count_parameters(src_vocab_size, tgt_vocab_size, d_model, num_heads, d_ff, num_layers, norm_first=False):
    d, f = d_model, d_ff
    linear = lambda i, o: i * o + o  # noqa: E731
    mha = 4 * linear(d, d)
    ffn = linear(d, f) + linear(f, d)
    ln = 2 * d
    parts = {
        "src_embed": src_vocab_size * d,
        "tgt_embed": tgt_vocab_size * d,
        "encoder_layers": num_layers * (mha + ffn + 2 * ln),
        "decoder_layers": num_layers * (2 * mha + ffn + 3 * ln),
        "final_norms": 2 * ln if norm_first else 0,
        "output_proj": linear(d, tgt_vocab_size),
    }
    return sum(parts.values())
