class KVCache:
    """A buffer that doubles its capacity when full."""

    def __init__(self):
        self._kbuf = None
        self._vbuf = None
        self._size = 0

    @property
    def length(self):
        return 0 if self._kbuf is None else self._kbuf.shape[2]

    @property
    def keys(self):
        if self._kbuf is None:
            return None
        return self._kbuf[:, :, : self._size]

    @property
    def values(self):
        if self._vbuf is None:
            return None
        return self._vbuf[:, :, : self._size]

    def _reserve(self, like_k, like_v, n):
        cap = 0 if self._kbuf is None else self._kbuf.shape[2]
        if n <= cap:
            return
        while cap < n:
            cap = max(1, cap * 2)
        B, Hkv, _, Dh = like_k.shape
        kbuf = like_k.new_zeros(B, Hkv, cap, Dh)
        vbuf = like_v.new_zeros(B, Hkv, cap, like_v.shape[3])
        if self._size:
            kbuf[:, :, : self._size] = self._kbuf[:, :, : self._size]
            vbuf[:, :, : self._size] = self._vbuf[:, :, : self._size]
        self._kbuf, self._vbuf = kbuf, vbuf

    def update(self, keys, values):
        n = self._size + keys.shape[2]
        self._reserve(keys, values, n)
        self._kbuf[:, :, self._size : n] = keys
        self._vbuf[:, :, self._size : n] = values
        self._size = n
        return self.keys, self.values
