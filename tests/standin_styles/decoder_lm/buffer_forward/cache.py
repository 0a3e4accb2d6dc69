"""A cache with a preallocated buffer that doubles when full; keys/values are views of the filled part."""


class KVCache:
    def __init__(self):
        self._k = None
        self._v = None
        self._used = 0

    @property
    def keys(self):
        return None if self._k is None else self._k[:, :, : self._used]

    @property
    def values(self):
        return None if self._v is None else self._v[:, :, : self._used]

    @property
    def length(self):
        return self._used

    def _grow(self, keys, values, needed):
        capacity = max(needed, 2 * (0 if self._k is None else self._k.shape[2]), 16)
        b, hkv, _, dh = keys.shape
        new_k = keys.new_zeros((b, hkv, capacity, dh))
        new_v = values.new_zeros((b, hkv, capacity, values.shape[-1]))
        if self._used:
            new_k[:, :, : self._used] = self._k[:, :, : self._used]
            new_v[:, :, : self._used] = self._v[:, :, : self._used]
        self._k, self._v = new_k, new_v

    def update(self, keys, values):
        needed = self._used + keys.shape[2]
        if self._k is None or needed > self._k.shape[2]:
            self._grow(keys, values, needed)
        self._k[:, :, self._used: needed] = keys
        self._v[:, :, self._used: needed] = values
        self._used = needed
        return self.keys, self.values
