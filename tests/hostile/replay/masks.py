r"""Keep-masks: ``True`` = may attend, ``False`` = blocked.

padding_mask[b, 0, 0, j] = tokens[b, j] != pad
causal_mask[0, 0, i, j]  = j <= i
target_mask             = padding_mask & causal_mask
"""

import torch


def padding_mask(tokens, pad_idx):
    """Mask out padded *keys*.

    Args:
        tokens: ``[B, L]`` token ids.
        pad_idx: the padding id.

    Returns:
        bool ``[B, 1, 1, L]``, ``True`` where ``tokens != pad_idx``. The two
        singleton axes broadcast over heads and query positions.

    Hints:
        Padding hides keys (the last axis), not queries.
    """
    # TODO(masks): True where tokens != pad_idx, shaped [B, 1, 1, L].
    raise NotImplementedError("masks: padding_mask is not implemented yet")


def causal_mask(size, device=None):
    """Let position i see positions 0..i and nothing later.

    Args:
        size: sequence length L.
        device: where to build the mask.

    Returns:
        bool ``[1, 1, L, L]``, ``True`` on and below the diagonal.

    Hints:
        A position may always see itself (the diagonal is ``True``).
        Build the mask on ``device``: a mask on the CPU fails against
        inputs on a GPU.
    """
    # TODO(masks): a lower-triangular bool mask (diagonal included) of shape [1, 1, size, size] on `device`.
    raise NotImplementedError("masks: causal_mask is not implemented yet")


def target_mask(tgt, pad_idx):
    """The decoder's self-attention mask: no padding keys and no future.

    Args:
        tgt: ``[B, L]`` target token ids.
        pad_idx: the padding id.

    Returns:
        bool ``[B, 1, L, L]`` = ``padding_mask(tgt) & causal_mask(L)``, on
        ``tgt.device``.
    """
    # TODO(masks): padding_mask(tgt) & causal_mask(L) on tgt.device.
    raise NotImplementedError("masks: target_mask is not implemented yet")
