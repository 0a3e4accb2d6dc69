r"""The key/value cache of one attention layer, for incremental decoding.

    step 0 (the prompt):   keys [B, Hkv, L0, Dh]          -> cache holds positions 0 … L0 - 1
    step s (one token):    keys [B, Hkv, 1, Dh] appended  -> cache holds positions 0 … T - 1

A decoder's keys and values at earlier positions never change (causal attention: nothing later can affect
them), so they are computed once and kept; each new token then costs one row of work instead of a whole
forward over the prefix.
"""

import torch  # noqa: F401 - for your code


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
        # TODO(kv_cache): keys and values start as None.
        raise NotImplementedError("kv_cache: KVCache.__init__ is not implemented yet")

    @property
    def length(self):
        # TODO(kv_cache): 0 while empty, else the size of the sequence axis (dim 2).
        raise NotImplementedError("kv_cache: KVCache.length is not implemented yet")

    def update(self, keys, values):
        # TODO(kv_cache): append keys and values along dim 2 (or store them if empty); return the whole cache.
        raise NotImplementedError("kv_cache: KVCache.update is not implemented yet")
