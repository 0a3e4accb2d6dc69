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
    # TODO(greedy): encode once; loop up to max_len: decode, argmax of the last position, pad finished rows, stop when all rows have produced EOS.
    raise NotImplementedError("greedy: greedy_decode is not implemented yet")
