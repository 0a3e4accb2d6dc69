r"""The key/value cache of one attention layer, for incremental decoding.

    step 0 (the prompt):   keys [B, Hkv, L0, Dh]          -> cache holds positions 0 … L0 - 1
    step s (one token):    keys [B, Hkv, 1, Dh] appended  -> cache holds positions 0 … T - 1

A decoder's keys and values at earlier positions never change (causal attention: nothing later can affect
them), so they are computed once and kept; each new token then costs one row of work instead of a whole
forward over the prefix.
"""

import torch


class KVCache:
    """The keys and values one layer has seen so far; a model holds one per layer.

    Attributes ``keys`` and ``values``: ``None`` while empty, then tensors ``[B, Hkv, T, Dh]``: the keys
    after RoPE and the values, with the layer's ``Hkv`` key/value heads (not repeated to ``H``), every
    position seen so far, oldest first.

    ``length`` (a property): ``T`` as an ``int``, 0 while empty.

    ``update(keys [B, Hkv, L, Dh], values [B, Hkv, L, Dh]) -> (keys, values)``: appends along the
    sequence axis (dim 2) and returns the whole cache, ``[B, Hkv, T + L, Dh]`` each.

    Hints:
        Store keys after the rotation: a cached key must not be rotated again at a later step. The
        position of the next token is ``length``.
    """

    def __init__(self):
        self.keys = None
        self.values = None

    @property
    def length(self):
        return 0 if self.keys is None else self.keys.size(2)

    def update(self, keys, values):
        if self.keys is None:
            self.keys, self.values = keys, values
        else:
            self.keys = torch.cat([self.keys, keys], dim=2)  # (B, Hkv, T + L, Dh)
            self.values = torch.cat([self.values, values], dim=2)
        return self.keys, self.values
