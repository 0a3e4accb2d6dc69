"""Loss (written out by hand), Noam schedule, one training step, parameter count."""

from __future__ import annotations

from typing import Optional

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from .masks import padding_mask, target_mask


def sequence_loss(logits: Tensor, targets: Tensor, pad_idx: int, label_smoothing: float = 0.0) -> Tensor:
    # logits [B, L, V], targets [B, L] -> scalar (float32)
    eps: float = float(label_smoothing)
    logp: Tensor = F.log_softmax(logits.float(), dim=-1)                     # [B, L, V]
    keep: Tensor = targets != pad_idx                                        # [B, L]
    safe_t: Tensor = targets.masked_fill(~keep, 0)                           # [B, L], valid index everywhere
    nll: Tensor = -logp.gather(-1, safe_t.unsqueeze(-1)).squeeze(-1)         # [B, L]
    uniform: Tensor = -logp.sum(dim=-1) / logp.shape[-1]                     # [B, L]  (1/V) sum_c -log p_c
    per_tok: Tensor = (1.0 - eps) * nll + eps * uniform                      # [B, L]
    per_tok = torch.where(keep, per_tok, torch.zeros_like(per_tok))
    return per_tok.sum() / keep.sum()


def noam_lr(step: int, d_model: int, warmup_steps: int, factor: float = 1.0) -> float:
    step = max(step, 1)
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def train_step(model: nn.Module, src: Tensor, tgt: Tensor, optimizer: torch.optim.Optimizer, *,
               pad_idx: int, label_smoothing: float = 0.0, max_grad_norm: Optional[float] = None) -> float:
    dec_in: Tensor = tgt[:, :-1]                                             # [B, Lt-1]
    gold: Tensor = tgt[:, 1:]                                                # [B, Lt-1]
    logits: Tensor = model(src, dec_in, padding_mask(src, pad_idx), target_mask(dec_in, pad_idx))  # [B, Lt-1, V]
    loss: Tensor = sequence_loss(logits, gold, pad_idx, label_smoothing)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    if max_grad_norm is not None:
        torch.nn.utils.clip_grad_norm_(model.parameters(), max_norm=max_grad_norm)
    optimizer.step()
    return float(loss.detach())


def count_parameters(src_vocab_size: int, tgt_vocab_size: int, d_model: int, num_heads: int, d_ff: int,
                     num_layers: int, norm_first: bool = False) -> int:
    # encoder layer: 4D^2 + 2DF + F + 9D ; decoder layer: 8D^2 + 2DF + F + 15D
    # => per (enc + dec) pair: 12D^2 + 4DF + 2F + 24D ; Pre-LN adds 2 * 2D ; output proj D*Vt + Vt
    D, Fh, N = d_model, d_ff, num_layers
    Vs, Vt = src_vocab_size, tgt_vocab_size
    return D * (Vs + 2 * Vt) + Vt + N * (12 * D * D + 4 * D * Fh + 2 * Fh + 24 * D) + (4 * D if norm_first else 0)
