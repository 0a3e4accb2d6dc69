class KVCache:
    """Keys and values in buffers that double when full; keys/values read the filled part."""

    def __init__(self):
        self._k = None
        self._v = None
        self._n = 0

    @property
    def keys(self):
        return None if self._k is None else self._k[:, :, : self._n]

    @property
    def values(self):
        return None if self._v is None else self._v[:, :, : self._n]

    @property
    def length(self):
        return self._n

    def _grow(self, needed):
        cap = 0 if self._k is None else self._k.shape[2]
        if needed <= cap:
            return
        new_cap = max(needed, 2 * cap, 16)
        for name in ("_k", "_v"):
            old = getattr(self, name)
            buf = old.new_empty(old.shape[0], old.shape[1], new_cap, old.shape[3])
            buf[:, :, : self._n] = old[:, :, : self._n]
            setattr(self, name, buf)

    def update(self, keys, values):
        L = keys.shape[2]
        if self._k is None:
            self._k = keys.new_empty(keys.shape[0], keys.shape[1], max(L, 16), keys.shape[3])
            self._v = values.new_empty(values.shape[0], values.shape[1], max(L, 16), values.shape[3])
        self._grow(self._n + L)
        self._k[:, :, self._n : self._n + L] = keys
        self._v[:, :, self._n : self._n + L] = values
        self._n += L
        return self.keys, self.values
