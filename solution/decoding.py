r"""Greedy decoding: one token at a time, always the most likely.

    y_0 = BOS,    y_{t+1} = argmax_v  P(v | y_0..y_t, src)

Rows that have produced EOS are padded with PAD; decoding stops once every
row has produced EOS, or after ``max_len`` new tokens.
"""

import torch

from .masks import padding_mask, target_mask


@torch.no_grad()
def greedy_decode(model, src, *, max_len, bos_idx, eos_idx, pad_idx):
    """Decode a batch greedily.

    Args:
        model: a ``Transformer`` (uses ``encode``, ``decode`` and ``output_proj``).
        src: ``[B, Ls]`` source token ids.
        max_len: the most new tokens to generate.
        bos_idx, eos_idx, pad_idx: special token ids.

    Returns:
        long ``[B, 1 + T]`` with ``T <= max_len``: column 0 is ``bos_idx``;
        after a row's EOS the row holds ``pad_idx``.

    Hints:
        The next token comes from the *last* position's logits
        (``logits[:, -1]``). Encode the source once, outside the loop.
        Keep track of which rows are finished.
    """
    src_mask = padding_mask(src, pad_idx)  # [B, 1, 1, Ls]
    memory = model.encode(src, src_mask)  # [B, Ls, D]
    B = src.size(0)
    ys = torch.full((B, 1), bos_idx, dtype=torch.long, device=src.device)  # [B, 1]
    done = torch.zeros(B, dtype=torch.bool, device=src.device)  # [B]
    for _ in range(max_len):
        hidden = model.decode(ys, memory, target_mask(ys, pad_idx), src_mask)  # [B, t, D]
        next_token = model.output_proj(hidden[:, -1]).argmax(dim=-1)  # [B, D] -> [B, V] -> [B]
        next_token = next_token.masked_fill(done, pad_idx)  # finished rows get padding
        ys = torch.cat([ys, next_token.unsqueeze(1)], dim=1)  # [B, t + 1]
        done = done | (next_token == eos_idx)
        if done.all():
            break
    return ys
